"""A one-process TensorFlow job exchanges no gradients, as Horovod's does:
the traced step of DistributedGradientTape and of the Keras
DistributedOptimizer holds no Kolo op and the gradients are the plain ones.
An elastic job of one process keeps the exchange, because its traced step
must still be right when workers join."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("tensorflow", reason="TensorFlow is not installed (make test installs "
                    "tensorflow-cpu into the venv)")

KOLORUN = os.path.join(os.path.dirname(sys.executable), "kolorun")

# Prints one JSON line: the Kolo op types of a traced tape step and of a
# traced Keras optimizer step, and whether the tape's gradients equal the
# plain tape's.
SCRIPT = textwrap.dedent("""
    import json
    import numpy as np
    import tensorflow as tf
    import horovod.tensorflow as hvd
    import horovod.tensorflow.keras as hvd_keras

    hvd.init()
    keras = tf.keras
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    x = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))

    def loss_of():
        return tf.reduce_sum(model(x) ** 2)

    def kolo_ops(graph):
        return [op.type for op in graph.get_operations() if op.type.startswith("Kolo")]

    @tf.function
    def tape_step():
        with tf.GradientTape() as tape:
            loss = loss_of()
        return hvd.DistributedGradientTape(tape).gradient(loss, model.trainable_variables)

    with tf.GradientTape() as plain:
        plain_loss = loss_of()
    want = plain.gradient(plain_loss, model.trainable_variables)
    same = all(np.allclose(g, w) for g, w in zip(tape_step(), want))

    opt = hvd_keras.DistributedOptimizer(keras.optimizers.SGD(0.1))
    model_variables = model.trainable_variables

    @tf.function
    def keras_step():
        with tf.GradientTape() as tape:
            loss = loss_of()
        if hasattr(opt, "stateless_apply"):  # Keras 3
            opt.apply(tape.gradient(loss, model_variables), model_variables)
        else:  # tf-keras
            opt.minimize(loss, model_variables, tape=tape)
        return loss

    print(json.dumps({
        "tape": kolo_ops(tape_step.get_concrete_function().graph),
        "keras": kolo_ops(keras_step.get_concrete_function().graph),
        "same": bool(same)}), flush=True)
""")


def _run(tmp_path, *kolorun_args):
    script = tmp_path / "one_process.py"
    script.write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KOLO_", "HOROVOD_"))}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    job = subprocess.run([KOLORUN, *kolorun_args, sys.executable, str(script)],
                         capture_output=True, text=True, env=env, timeout=240)
    report = f"exit {job.returncode}\nstdout:\n{job.stdout}\nstderr:\n{job.stderr}"
    assert job.returncode == 0, report
    # kolorun tags each line of rank 0's output "[0]<stdout>:".
    lines = [line.split(":", 1)[1] for line in job.stdout.splitlines()
             if line.startswith("[0]<stdout>:{")]
    assert len(lines) == 1, report
    return json.loads(lines[0]), report


@pytest.mark.timeout(300)
def test_one_process_exchanges_nothing_and_keeps_the_plain_gradients(tmp_path):
    found, report = _run(tmp_path, "-np", "1")
    assert found == {"tape": [], "keras": [], "same": True}, report


@pytest.mark.timeout(300)
def test_an_elastic_job_of_one_process_still_exchanges(tmp_path):
    found, report = _run(tmp_path, "-np", "1", "--min-np", "1", "--max-np", "2",
                         "--host-discovery-script", "echo localhost:1")
    assert found["tape"] == ["KoloGroupedAllreduce"], report
    assert found["keras"] == ["KoloGroupedAllreduce"], report
    assert found["same"], report
