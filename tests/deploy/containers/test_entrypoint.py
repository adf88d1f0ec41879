"""The CPU image's entrypoint (deploy/docker/entrypoint.sh) in real
containers: bad input is one line and exit 2; RUN runs its arguments as the
non-root user; DATA_URL fetches into DATA_DIR once (from an HTTP server in a
container beside it); MAIN runs kolorun on a hostfile with KOLO_ARGS; a
WORKER turns healthy when its sshd answers."""

import shutil
import tarfile
import time
import uuid

import pytest

from conftest import readable_by_all
from docker_host import docker

# The first test builds or reuses the image (minutes on a fresh machine).
pytestmark = pytest.mark.timeout(3600)


def run(image, env, *args, volumes=(), network=None, timeout=180):
    command = ["run", "--rm"]
    for key, value in env.items():
        command += ["-e", f"{key}={value}"]
    for volume in volumes:
        command += ["-v", volume]
    if network:
        command += ["--network", network]
    return docker(*command, image, *args, check=False, timeout=timeout)


@pytest.mark.parametrize(
    "env, args, words",
    [
        ({"MODE": "TRAIN"}, ["true"], "MODE must be MAIN, WORKER or RUN, not 'TRAIN'"),
        ({}, ["true"], "MODE must be MAIN, WORKER or RUN, not ''"),
        ({"MODE": "RUN", "DATA_URL": "s3://bucket/x/"}, ["true"], "DATA_URL is set but DATA_DIR is not"),
        ({"MODE": "RUN", "DATA_DIR": "/nowhere"}, ["true"], "DATA_DIR '/nowhere' does not exist"),
        ({"MODE": "WORKER", "WORKER_PORT": "22x"}, [], "WORKER_PORT must be a port number"),
        ({"MODE": "MAIN"}, [], "MODE=MAIN needs the program to run"),
        ({"MODE": "MAIN", "MIN_NP": "3", "MAX_NP": "2"}, ["true"], "MAX_NP must be a whole number >= MIN_NP (3)"),
        ({"MODE": "MAIN", "KOLO_ARGS": "--verbose 'unclosed"}, ["true"], "KOLO_ARGS/HOROVOD_ARGS cannot be split"),
    ],
    ids=["unknown-mode", "no-mode", "url-without-dir", "missing-dir", "bad-port", "main-no-program",
         "max-below-min", "bad-quoting"],
)
def test_bad_input_is_one_line_and_exit_2(cpu_image, env, args, words):
    result = run(cpu_image, env, *args)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kolo-entrypoint: ") and words in lines[0], result.stderr


def test_run_mode_runs_its_arguments_as_the_non_root_user(cpu_image):
    result = run(cpu_image, {"MODE": "RUN"}, "sh", "-c", "id -un; id -u; python -c 'import horovod.torch'")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["kolo", "1000"]


def test_data_url_is_fetched_into_data_dir_once(cpu_image, tmp_path):
    payload = tmp_path / "srv"
    payload.mkdir()
    (tmp_path / "hello.txt").write_text("digits\n")
    with tarfile.open(payload / "data.tar.gz", "w:gz") as archive:
        archive.add(tmp_path / "hello.txt", arcname="hello.txt")
    readable_by_all(payload)
    name = f"kolotest{uuid.uuid4().hex[:10]}"
    docker("network", "create", name)
    try:
        docker("run", "-d", "--name", f"{name}-srv", "--network", name, "-v", f"{payload}:/srv:ro",
               "-e", "MODE=RUN", cpu_image, "python3", "-m", "http.server", "8000", "--directory", "/srv")
        deadline = time.monotonic() + 60
        while "Serving HTTP" not in docker("logs", f"{name}-srv", check=False).stdout + docker(
                "logs", f"{name}-srv", check=False).stderr:
            assert time.monotonic() < deadline, "the HTTP server did not start"
            time.sleep(0.5)
        env = {"MODE": "RUN", "DATA_URL": f"http://{name}-srv:8000/data.tar.gz", "DATA_DIR": "/kolo/artifacts/data"}
        volumes = [f"{name}-artifacts:/kolo/artifacts"]
        first = run(cpu_image, env, "cat", "/kolo/artifacts/data/hello.txt", volumes=volumes, network=name)
        assert first.returncode == 0 and first.stdout == "digits\n", first.stderr
        assert "fetched http://" in first.stderr
        again = run(cpu_image, env, "cat", "/kolo/artifacts/data/hello.txt", volumes=volumes, network=name)
        assert again.returncode == 0 and again.stdout == "digits\n", again.stderr
        assert "already holds" in again.stderr
    finally:
        docker("rm", "-f", f"{name}-srv", check=False)
        docker("volume", "rm", "-f", f"{name}-artifacts", check=False)
        docker("network", "rm", name, check=False)


def test_main_runs_kolorun_on_a_hostfile_with_kolo_args(cpu_image, tmp_path):
    job = tmp_path / "job"
    job.mkdir()
    (job / "hostfile").write_text("localhost slots=2\n")
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    shutil.chown(artifacts, 1000, 1000)
    readable_by_all(job)
    program = ("import torch, horovod.torch as hvd; hvd.init(); "
               "print('sum', hvd.allreduce(torch.ones(1), op=hvd.Sum).item(), 'of', hvd.size())")
    # A quoted word with a space: KOLO_ARGS is split as a shell splits it.
    env = {"MODE": "MAIN", "DISCOVERY_SCRIPT": "", "HOSTFILE": "/job/hostfile", "MAX_NP": "2",
           "KOLO_ARGS": "--timeline-filename '/kolo/artifacts/my timeline.json'"}
    result = run(cpu_image, env, "python", "-c", program,
                 volumes=[f"{job}:/job:ro", f"{artifacts}:/kolo/artifacts"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("sum 2.0 of 2") == 2, result.stdout
    assert "--hostfile /job/hostfile" in result.stderr
    assert (artifacts / "my timeline.json").is_file()
    assert sorted(p.name for p in (artifacts / "logs").iterdir()), "no per-rank logs under ARTIFACTS_DIR/logs"


def test_a_worker_is_healthy_once_sshd_answers(cpu_image):
    name = f"kolotest{uuid.uuid4().hex[:10]}"
    docker("run", "-d", "--name", name, "-e", "MODE=WORKER", cpu_image)
    try:
        deadline = time.monotonic() + 90
        status = ""
        while status != "healthy":
            assert time.monotonic() < deadline, f"health is '{status}'\n{docker('logs', name, check=False).stderr}"
            time.sleep(1)
            status = docker("inspect", "-f", "{{.State.Health.Status}}", name).stdout.strip()
    finally:
        docker("rm", "-f", name, check=False)
