"""kolo.numpy's life cycle outside an already running job: use before init,
a single process without a launcher, and init -> shutdown -> init on every
rank of a kolo.run job. Each case runs in fresh processes so the engine
state of this pytest process never matters."""

import os
import subprocess
import sys
import textwrap

import kolo


def _python(code):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KOLO_", "HOROVOD_"))}  # no job around
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=env, timeout=120)


def test_use_before_init_says_what_to_do():
    result = _python("""
        import kolo.numpy as hvd
        assert not hvd.is_initialized()
        for call in (hvd.rank, hvd.size, lambda: hvd.allreduce([1.0])):
            try:
                call()
            except ValueError as error:
                assert "not been initialized" in str(error), error
            else:
                raise AssertionError("no error before init")
        print("ok")
    """)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_a_process_without_a_launcher_is_a_job_of_one():
    result = _python("""
        import sys
        import numpy as np
        import kolo.numpy as hvd
        hvd.init()
        assert (hvd.rank(), hvd.size(), hvd.local_size()) == (0, 1, 1)
        assert hvd.allreduce(np.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
        assert hvd.allgather(np.ones((2, 2))).shape == (2, 2)
        assert hvd.broadcast_object({"a": 1}) == {"a": 1}
        hvd.shutdown()
        assert not hvd.is_initialized()
        assert "torch" not in sys.modules
        print("ok")
    """)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_init_shutdown_init_on_every_rank():
    def cycle():
        import numpy as np

        import kolo.numpy as hvd

        sums = []
        for _ in range(2):
            hvd.init()
            sums.append(float(hvd.allreduce(np.array([hvd.rank() + 1.0]), op=hvd.Sum)[0]))
            hvd.shutdown()
        try:
            hvd.allreduce(np.ones(1))
            after = "no error"
        except ValueError as error:
            after = str(error)
        return sums, after

    for sums, after in kolo.run(cycle, np=3):
        assert sums == [6.0, 6.0]
        assert "not been initialized" in after
