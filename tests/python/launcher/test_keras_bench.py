"""The Keras benchmark harness (bench/keras/run.py) on a few steps: Kolo
under kolorun and MultiWorkerMirroredStrategy with TF_CONFIG both train, at
1 and 2 workers, and the exchange script runs on both; the report has every
row filled. Speed is not checked here."""

import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("tensorflow", reason="TensorFlow is not installed (make test installs "
                    "tensorflow-cpu into the venv)")
pytest.importorskip("tf_keras", reason="tf-keras is not installed (make test installs it)")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))
RUN = os.path.join(REPO, "bench", "keras", "run.py")
NUMBER = r"([0-9]+\.[0-9]+)"


@pytest.mark.timeout(600)
def test_keras_bench_reports_kolo_and_mwms_at_one_and_two_workers(tmp_path):
    markdown = tmp_path / "table.md"
    args = [sys.executable, RUN, "--rounds", "1", "--markdown", str(markdown),
            "--exchange-calls", "2", "--exchange-rounds", "1", "--",
            "--num-warmup-batches", "1", "--num-batches-per-iter", "2", "--num-iters", "1"]
    job = subprocess.run(args, capture_output=True, text=True, timeout=540, cwd=REPO,
                         env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    report = f"exit status {job.returncode}\nstdout:\n{job.stdout}\nstderr:\n{job.stderr}"
    assert job.returncode == 0, report
    text = markdown.read_text()
    assert text in job.stdout, report
    for row in ("Kolo (horovod.tensorflow.keras)", "MultiWorkerMirroredStrategy (gRPC, RING)"):
        found = re.search(rf"^\| {re.escape(row)} \| {NUMBER} \| {NUMBER} \| {NUMBER}% \|$", text,
                          re.MULTILINE)
        assert found and all(float(v) > 0 for v in found.groups()), text
    assert re.search(rf"^\| Kolo grouped_allreduce \(Average\) \| {NUMBER} \| {NUMBER} \|$",
                     text, re.MULTILINE), text
    assert re.search(rf"^\| MWMS all_reduce \(mean, RING\) in strategy.run \| - \| {NUMBER} \|$",
                     text, re.MULTILINE), text
