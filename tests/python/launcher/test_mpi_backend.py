"""Kolo over MPI: jobs that `mpirun -np N python ...` starts itself (no kolorun,
no rendezvous server), with KOLO_BACKEND=mpi or hvd.init(comm=...), and the
build facts (mpi_built, mpi_enabled, gloo_*, ...) in each case.

Every rank prints one line "ok <rank>" when its checks passed; each job has a
time limit. Skipped where OpenMPI's mpirun or mpi4py is missing."""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from kolo import _core

MPIRUN = shutil.which("mpirun")
pytestmark = pytest.mark.skipif(MPIRUN is None, reason="mpirun is not installed")


def _mpirun(np_, code, extra_env=None, timeout=120):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KOLO_", "HOROVOD_"))}
    # OpenMPI as root, and more ranks than cores (CI). Python's stdout stays
    # block-buffered: each rank's lines then reach mpirun in one write, where
    # unbuffered prints ("ok", " ", "1", "\n" written apart) interleave with
    # the other ranks' into lines like "okok 1".
    env.pop("PYTHONUNBUFFERED", None)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    env.update(extra_env or {})
    command = [MPIRUN, "-np", str(np_)]
    for name in sorted(extra_env or {}):
        command += ["-x", name]
    command += [sys.executable, "-c", textwrap.dedent(code)]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)


def _oks(result):
    return sorted(line for line in result.stdout.splitlines() if line.startswith("ok "))


def test_torch_collectives_over_kolo_backend_mpi():
    result = _mpirun(2, """
        import torch
        import kolo.torch as hvd
        hvd.init()
        r, n = hvd.rank(), hvd.size()
        assert n == 2 and hvd.local_size() == 2 and hvd.cross_size() == 1
        x = torch.arange(5, dtype=torch.float32) + r
        assert hvd.allreduce(x, op=hvd.Sum).tolist() == [1.0, 3.0, 5.0, 7.0, 9.0]
        assert hvd.allreduce(x).tolist() == [0.5, 1.5, 2.5, 3.5, 4.5]  # average
        h = torch.tensor([1.5, -2.0], dtype=torch.float16) * (r + 1)
        assert hvd.allreduce(h, op=hvd.Sum).tolist() == [4.5, -6.0]
        b = torch.tensor([0.25] * 3, dtype=torch.bfloat16) * (r + 1)
        assert hvd.allreduce(b, op=hvd.Max).tolist() == [0.5] * 3
        g = hvd.allgather(torch.full((r + 1, 2), r, dtype=torch.int64))
        assert g.tolist() == [[0, 0], [1, 1], [1, 1]]
        y = torch.full((4,), float(r + 10))
        assert hvd.broadcast(y, root_rank=1).tolist() == [11.0] * 4
        assert hvd.broadcast_object({"from": r}, root_rank=0) == {"from": 0}
        assert hvd.mpi_built() and hvd.mpi_enabled() and hvd.mpi_threads_supported()
        assert hvd.gloo_built() and not hvd.gloo_enabled() and not hvd.nccl_built()
        hvd.shutdown()
        assert not hvd.mpi_enabled() and not hvd.gloo_enabled()
        hvd.init()  # MPI stays initialised across init -> shutdown -> init
        assert hvd.allreduce(torch.ones(3), op=hvd.Sum).tolist() == [2.0] * 3
        print(f"ok {r}\\n", end="")  # one write: ranks share mpirun's stdout
    """, extra_env={"KOLO_BACKEND": "mpi"})
    assert _oks(result) == ["ok 0", "ok 1"], result.stdout + result.stderr


def test_adasum_over_kolo_backend_mpi():
    # Adasum runs over the MPI library's point-to-point messages: identical
    # tensors come back unchanged, orthogonal ones add up, and a general one
    # matches Horovod's tree of the formula; fused and alone.
    result = _mpirun(4, """
        import numpy as np
        import torch
        import kolo.torch as hvd
        hvd.init()
        r, n = hvd.rank(), hvd.size()
        same = torch.tensor([1.0, -2.0, 4.0])
        apart = torch.zeros(n, dtype=torch.float64)
        apart[r] = 3.0
        out = hvd.grouped_allreduce([same, apart], op=hvd.Adasum)
        assert out[0].tolist() == same.tolist() and out[1].tolist() == [3.0] * n

        def pair(a, b):
            d = a @ b
            return (1 - d / (2 * (a @ a))) * a + (1 - d / (2 * (b @ b))) * b

        def tree(vs):
            return vs[0] if len(vs) == 1 else pair(tree(vs[:len(vs) // 2]),
                                                   tree(vs[len(vs) // 2:]))

        inputs = [np.random.default_rng(k).standard_normal(101) + 0.5 for k in range(n)]
        got = hvd.allreduce(torch.from_numpy(inputs[r]), op=hvd.Adasum).numpy()
        assert np.allclose(got, tree(inputs), rtol=1e-12, atol=1e-12)
        print(f"ok {r}\\n", end="")
    """, extra_env={"KOLO_BACKEND": "mpi"})
    assert _oks(result) == ["ok 0", "ok 1", "ok 2", "ok 3"], result.stdout + result.stderr


def test_init_with_mpi4py_comm_world():
    pytest.importorskip("mpi4py")
    result = _mpirun(2, """
        from mpi4py import MPI
        import torch
        import kolo.torch as hvd
        hvd.init(comm=MPI.COMM_WORLD)
        assert (hvd.rank(), hvd.size()) == (MPI.COMM_WORLD.Get_rank(), 2)
        assert hvd.mpi_enabled() and hvd.mpi_built() and not hvd.gloo_enabled()
        # mpi4py asks for MPI_THREAD_MULTIPLE; Kolo reports what MPI gave.
        assert hvd.mpi_threads_supported() == (MPI.Query_thread() == MPI.THREAD_MULTIPLE)
        x = hvd.allreduce(torch.tensor([float(hvd.rank() + 1)]), op=hvd.Sum)
        # The program's own MPI traffic goes on beside Kolo's duplicate.
        assert MPI.COMM_WORLD.allreduce(hvd.rank()) == 1
        assert x.tolist() == [3.0]
        hvd.shutdown()
        print(f"ok {MPI.COMM_WORLD.Get_rank()}\\n", end="")
    """)
    assert _oks(result) == ["ok 0", "ok 1"], result.stdout + result.stderr


def test_init_with_a_list_of_ranks_leaves_the_others_out():
    # Horovod's meaning: the job is MPI_COMM_WORLD's ranks 0 and 1, renumbered
    # 0..1; rank 2 is not part of it and its init(comm=[0, 1]) is refused.
    result = _mpirun(3, """
        import torch
        import kolo.torch as hvd
        from kolo import _core
        world_rank = int(__import__("os").environ["OMPI_COMM_WORLD_RANK"])
        if world_rank == 2:
            try:
                hvd.init(comm=[0, 1])
            except ValueError as error:
                assert "rank 2 of MPI_COMM_WORLD is not in the list" in str(error), error
                assert not hvd.is_initialized() and not hvd.mpi_enabled()
                print(f"ok {world_rank}\\n", end="")
            raise SystemExit(0)
        hvd.init(comm=[0, 1])
        assert (hvd.rank(), hvd.size()) == (world_rank, 2)
        assert hvd.mpi_enabled() and not hvd.gloo_enabled()
        s = hvd.allreduce(torch.tensor([world_rank + 1]), op=hvd.Sum)
        assert s.tolist() == [3], s
        hvd.shutdown()
        print(f"ok {world_rank}\\n", end="")
    """)
    assert _oks(result) == ["ok 0", "ok 1", "ok 2"], result.stdout + result.stderr


def test_build_facts_without_mpi():
    # A process of its own, over Kolo's transports: MPI is built (the plugin
    # loads here) but not enabled, Gloo's role is Kolo's own.
    code = textwrap.dedent("""
        import kolo.torch as hvd
        assert not hvd.mpi_enabled() and not hvd.gloo_enabled()  # before init
        hvd.init()
        assert hvd.mpi_built() and not hvd.mpi_enabled()
        assert hvd.gloo_built() and hvd.gloo_enabled() and not hvd.nccl_built()
        try:
            hvd.mpi_threads_supported()
        except ValueError as error:
            assert "not running over MPI" in str(error)
        else:
            raise AssertionError("mpi_threads_supported() without MPI")
        print("ok 0")
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KOLO_", "HOROVOD_"))}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                            timeout=60)
    assert result.stdout.strip() == "ok 0", result.stdout + result.stderr


def test_the_plugin_is_installed_next_to_core():
    folder = os.path.dirname(_core.__file__)
    assert os.path.exists(os.path.join(folder, "libkolo_mpi.so"))
    assert _core.mpi_available() == (True, "")
