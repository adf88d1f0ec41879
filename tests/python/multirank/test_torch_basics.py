"""Topology queries, the timeline, process sets and the init/shutdown life
cycle of kolo.torch. This module shuts the engine down and re-initializes
it, so it leaves the engine initialized for the modules after it."""

import json
import os
import tempfile

import pytest
import torch

import kolo.torch as hvd


def test_topology_on_one_host():
    assert hvd.is_initialized()
    n = int(os.environ.get("KOLO_SIZE", "1"))
    assert hvd.size() == n
    assert 0 <= hvd.rank() < n
    assert hvd.local_size() == n and hvd.local_rank() == hvd.rank()
    assert hvd.cross_size() == 1 and hvd.cross_rank() == 0
    assert hvd.is_homogeneous()
    ranks = hvd.allgather(torch.tensor([hvd.rank()]), name="basics.ranks")
    assert ranks.tolist() == list(range(n))


def test_build_facts():
    # Under kolorun the job runs over Kolo's own transports: Horovod's "Gloo"
    # (the controller without MPI). MPI is built where its plugin loads
    # (install-deps.sh installs OpenMPI), but not in use.
    assert hvd.gloo_built() is True and hvd.gloo_enabled() is True
    assert hvd.mpi_built() is True and hvd.mpi_enabled() is False
    assert hvd.nccl_built() is False and hvd.cuda_built() is False
    with pytest.raises(ValueError, match="not running over MPI"):
        hvd.mpi_threads_supported()


def test_timeline_records_named_ops():
    # Rank 0 writes the timeline; the other ranks' paths stay unused.
    file = os.path.join(tempfile.mkdtemp(prefix="kolo-timeline-"), "timeline.json")
    hvd.start_timeline(file)
    hvd.allreduce(torch.ones(8), name="timeline.tensor")
    hvd.stop_timeline()
    hvd.barrier()
    if hvd.rank() == 0:
        assert os.path.getsize(file) > 0
        with open(file) as f:
            events = json.load(f)
        names = {e.get("args", {}).get("name") for e in events} | {e.get("name") for e in events}
        assert any("timeline.tensor" in str(n) for n in names), names


def test_add_and_remove_process_set():
    n = hvd.size()
    evens = hvd.add_process_set([r for r in range(n) if r % 2 == 0])
    assert evens.process_set_id > 0 and evens.size() == (n + 1) // 2
    if evens.included():
        assert evens.rank() == hvd.rank() // 2
        out = hvd.allreduce(torch.tensor([hvd.rank() + 1.0]), op=hvd.Sum, name="ps.evens",
                            process_set=evens)
        assert out.item() == sum(r + 1 for r in range(0, n, 2))
        got = hvd.broadcast(torch.tensor([hvd.rank()]), root_rank=0, name="ps.bc",
                            process_set=evens)
        assert got.item() == 0
    else:
        assert evens.rank() == -1
        with pytest.raises(ValueError):
            hvd.allreduce(torch.ones(1), name="ps.outsider", process_set=evens)
    assert hvd.remove_process_set(evens) is True
    assert hvd.remove_process_set(evens) is False
    assert hvd.remove_process_set(hvd.global_process_set) is False


def test_process_set_with_repeated_ranks_is_refused():
    with pytest.raises(ValueError, match="repeat"):
        hvd.ProcessSet([0, 0])


def test_shutdown_then_use_raises_then_init_with_process_sets():
    hvd.shutdown()
    assert not hvd.is_initialized()
    with pytest.raises(ValueError, match="not been initialized"):
        hvd.rank()
    with pytest.raises(ValueError, match="not been initialized"):
        hvd.allreduce(torch.ones(1))
    first = hvd.ProcessSet([0])
    everyone = hvd.ProcessSet(range(int(os.environ.get("KOLO_SIZE", "1"))))
    hvd.init(process_sets=[first, everyone])
    assert hvd.is_initialized()
    assert (first.process_set_id, everyone.process_set_id) == (1, 2)
    out = hvd.allreduce(torch.ones(1), op=hvd.Sum, name="ps.init", process_set=everyone)
    assert out.item() == hvd.size()
    hvd.init()  # idempotent while initialized
    assert hvd.is_initialized()
