"""kolo.run: a Python function on N ranks, results back in rank order.

Each test starts real jobs through the bundled kolorun. The functions are
defined inside the tests, as in a notebook, so cloudpickle sends them by
value; one test covers a function the ranks cannot import.
"""

import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import kolo
from kolo.launch import launcher_path
from kolo.runner import LaunchError, RankFailedError, RunError, RunTimeoutError


@pytest.mark.parametrize("np_", [2, 3])
def test_returns_each_ranks_result_in_rank_order(np_):
    def train(scale):
        import numpy as np

        import kolo.numpy as hvd

        hvd.init()
        total = hvd.allreduce(np.array([hvd.rank() + 1.0]), op=hvd.Sum)
        return {"rank": hvd.rank(), "size": hvd.size(), "total": float(total[0]) * scale}

    results = kolo.run(train, args=(2.0,), np=np_)
    expected_total = np_ * (np_ + 1) / 2 * 2.0
    assert results == [{"rank": r, "size": np_, "total": expected_total} for r in range(np_)]


def test_lambdas_closures_args_and_kwargs():
    offset = 100
    captured = {"label": "closure"}

    class Point:  # a class local to the test travels by value too
        def __init__(self, x):
            self.x = x

    results = kolo.run(lambda a, b=0: (a + b + offset, captured["label"], Point(a).x),
                       args=(1,), kwargs={"b": 2}, np=2)
    assert results == [(103, "closure", 1)] * 2
    assert kolo.run(lambda: Point(5), np=2)[1].x == 5  # results may be local classes


def test_functions_of_an_interactive_session_need_no_main_guard():
    # As in a notebook: __main__ has no file and no `if __name__ == "__main__"`.
    session = textwrap.dedent("""
        import os
        import kolo

        def shard(n):
            return [i for i in range(n) if i % int(os.environ["KOLO_SIZE"])
                    == int(os.environ["KOLO_RANK"])]

        print(kolo.run(shard, args=(7,), np=3))
    """)
    result = subprocess.run([sys.executable, "-"], input=session, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[[0, 3, 6], [1, 4], [2, 5]]"


def test_exception_on_rank_1_names_the_rank_and_the_original_error():
    def fails_on_one():
        rank = int(os.environ["KOLO_RANK"])
        if rank == 1:
            raise ValueError(f"bad shard {rank * 7}")
        return rank

    with pytest.raises(RankFailedError) as caught:
        kolo.run(fails_on_one, np=2)
    error = caught.value
    assert error.rank == 1
    assert "rank 1 raised: ValueError: bad shard 7" in str(error)
    assert 'raise ValueError(f"bad shard {rank * 7}")' in error.remote_traceback
    assert "Traceback on rank 1" in str(error)
    assert isinstance(error.exception, ValueError) and error.__cause__ is error.exception
    assert set(error.failures) == {1}
    assert isinstance(error, RuntimeError)


def test_rank_output_reaches_the_callers_stdout(capsys):
    def talk():
        import sys

        rank = int(os.environ["KOLO_RANK"])
        print(f"hello from rank {rank}")
        print(f"warning from rank {rank}", file=sys.stderr)
        return rank

    assert kolo.run(talk, np=2) == [0, 1]
    captured = capsys.readouterr()  # sys.stdout, as a notebook cell's stream would be
    for rank in (0, 1):
        assert f"[{rank}]<stdout>:hello from rank {rank}" in captured.out
        assert f"[{rank}]<stderr>:warning from rank {rank}" in captured.err


def test_env_reaches_the_ranks_but_the_secret_does_not_linger():
    def look():
        return os.environ.get("KOLO_RUN_TEST_VALUE"), "KOLO_RUN_SECRET" in os.environ

    assert kolo.run(look, np=2, env={"KOLO_RUN_TEST_VALUE": "seen"}) == [("seen", False)] * 2


def _gone(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] == "Z"  # a zombie has ended
    except (FileNotFoundError, ProcessLookupError):  # gone before, or while, reading
        return True


def test_timeout_stops_the_job_and_its_ranks(tmp_path):
    def hang(directory):
        with open(os.path.join(directory, f"pid.{os.environ['KOLO_RANK']}"), "w") as f:
            f.write(str(os.getpid()))
        time.sleep(600)

    started = time.monotonic()
    with pytest.raises(RunTimeoutError, match="timeout of 3 s") as caught:
        kolo.run(hang, args=(str(tmp_path),), np=2, timeout=3)
    assert isinstance(caught.value, TimeoutError)
    assert time.monotonic() - started < 40
    pids = [int((tmp_path / f"pid.{r}").read_text()) for r in range(2)]
    deadline = time.monotonic() + 10
    while not all(_gone(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert all(_gone(p) for p in pids), f"ranks {pids} outlived kolo.run's timeout"


def test_ranks_stop_when_the_caller_dies(tmp_path):
    # A notebook kernel killed mid-job must not leave ranks running unseen.
    session = textwrap.dedent(f"""
        import os, time
        import kolo

        def hang():
            path = os.path.join({str(tmp_path)!r}, "pid." + os.environ["KOLO_RANK"])
            with open(path + ".tmp", "w") as f:
                f.write(str(os.getpid()))
            os.replace(path + ".tmp", path)  # complete once visible
            time.sleep(600)

        kolo.run(hang, np=2)
    """)
    caller = subprocess.Popen([sys.executable, "-c", session], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while len(list(tmp_path.glob("pid.[0-9]"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        pids = [int(p.read_text()) for p in tmp_path.glob("pid.[0-9]")]
        assert len(pids) == 2, "the ranks never started"
    finally:
        caller.kill()
        caller.wait()
    deadline = time.monotonic() + 15
    while not all(_gone(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert all(_gone(p) for p in pids), f"ranks {pids} outlived their caller"


def test_unreachable_host_raises_with_kolorun_error_output():
    with pytest.raises(LaunchError) as caught:
        kolo.run(lambda: 1, np=2, hosts="nosuchhost.invalid:2", start_timeout=10)
    error = caught.value
    assert error.exit_code not in (0, None)
    assert "kolorun failed" in str(error) and error.stderr in str(error)
    if shutil.which("ssh"):
        assert "nosuchhost.invalid" in error.stderr


def test_function_the_ranks_cannot_import_is_reported_as_a_load_failure():
    # Module-level functions of an importable module travel by reference;
    # this test module is importable here (pytest put its directory on
    # sys.path) but not in the ranks.
    with pytest.raises(RankFailedError, match="could not load the function") as caught:
        kolo.run(module_level_function, np=2)
    assert "No module named" in str(caught.value)
    assert "importable on every host" in str(caught.value)


def module_level_function():
    return 1


def test_results_that_cannot_be_pickled_are_reported():
    with pytest.raises(RankFailedError, match="cannot be sent back"):
        kolo.run(lambda: threading.Lock(), np=2)


def test_arguments_checked_before_anything_starts():
    lock = threading.Lock()
    with pytest.raises(TypeError, match="cannot send the function"):
        kolo.run(lambda: lock.locked(), np=2)
    with pytest.raises(ValueError, match="num_proc must be a positive integer"):
        kolo.run(lambda: 1, num_proc=0)
    with pytest.raises(ValueError, match="hosts or hostfile"):
        kolo.run(lambda: 1, hosts="localhost:2", hostfile="hosts.txt")
    with pytest.raises(ValueError, match="reset_limit only apply to elastic jobs"):
        kolo.run(lambda: 1, reset_limit=1)
    with pytest.raises(ValueError, match="min_num_proc must be a positive integer"):
        kolo.run(lambda: 1, min_num_proc=0)
    with pytest.raises(ValueError, match="cooldown_range must be"):
        kolo.run(lambda: 1, min_num_proc=1, cooldown_range=5)
    with pytest.raises(ValueError, match="use_gloo or use_mpi"):
        kolo.run(lambda: 1, use_gloo=True, use_mpi=True)
    with pytest.raises(ValueError, match="mpi_args= is only used with use_mpi"):
        kolo.run(lambda: 1, mpi_args="-x FOO")
    with pytest.raises(TypeError, match="unexpected keyword argument 'nprocs'"):
        kolo.run(lambda: 1, nprocs=2)
    with pytest.raises(TypeError, match="callable"):
        kolo.run("train.py")


def test_horovod_spelling_of_arguments():
    # Horovod's num_proc overrides np; use_gloo and disable_cache change nothing.
    results = kolo.run(lambda: int(os.environ["KOLO_SIZE"]), num_proc=3, use_gloo=True,
                       disable_cache=True)
    assert results == [3, 3, 3]


def test_hosts_on_this_machine_run_locally(tmp_path):
    hostfile = tmp_path / "hostfile"
    hostfile.write_text("# this machine twice\nlocalhost slots=2\n")
    assert kolo.run(lambda: os.environ["KOLO_RANK"], np=2, hostfile=str(hostfile)) == ["0", "1"]
    assert kolo.run(lambda: os.environ["KOLO_LOCAL_SIZE"], np=2, hosts="localhost:2") == ["2"] * 2


def test_rank_ending_its_process_without_a_result():
    def vanish():
        os._exit(0)

    with pytest.raises(RunError, match="exited without reporting a result"):
        kolo.run(vanish, np=2)


def test_horovod_defaults_one_process_and_np_is_the_older_name():
    assert kolo.run(lambda: int(os.environ["KOLO_SIZE"])) == [1]
    assert kolo.run(lambda: int(os.environ["KOLO_SIZE"]), np=2) == [2, 2]
    # Positional as in horovod.run: func, args, kwargs, num_proc.
    assert kolo.run(lambda a, b: a + b, (1,), {"b": 2}, 2) == [3, 3]


def test_elastic_arguments_run_an_elastic_job():
    def layout():
        import kolo.torch as hvd
        hvd.init()
        return os.environ.get("KOLO_ELASTIC"), hvd.size(), hvd.rank()

    results = kolo.run(layout, num_proc=2, min_num_proc=1, max_num_proc=2, reset_limit=1,
                       cooldown_range=(1, 5), hosts="localhost:2")
    assert results == [("1", 2, 0), ("1", 2, 1)]
    # min_np / max_np: horovod.run's older names.
    assert kolo.run(layout, num_proc=2, min_np=2, max_np=2) == [("1", 2, 0), ("1", 2, 1)]


def test_network_interface_reaches_the_ranks():
    assert kolo.run(lambda: os.environ.get("KOLO_IFACE"), num_proc=2,
                    network_interface="lo") == ["lo", "lo"]
    with pytest.raises(LaunchError, match="run-nosuchif0"):
        kolo.run(lambda: 1, num_proc=2, network_interface="run-nosuchif0")


def test_use_mpi_starts_the_ranks_through_kolorun_mpi():
    help_text = subprocess.run([launcher_path(), "--help"], capture_output=True, text=True,
                               timeout=30).stdout
    if "--mpi" not in help_text.split():
        # This kolorun has no --mpi yet: its own refusal must come through.
        with pytest.raises(LaunchError, match="--mpi"):
            kolo.run(lambda: 1, num_proc=2, use_mpi=True)
        return
    # mpirun started the ranks (its variables), and each is its own rank.
    assert kolo.run(lambda: (int(os.environ["OMPI_COMM_WORLD_SIZE"]),
                             int(os.environ["OMPI_COMM_WORLD_RANK"])),
                    num_proc=2, use_mpi=True) == [(2, 0), (2, 1)]
