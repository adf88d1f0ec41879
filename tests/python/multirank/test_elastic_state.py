"""hvd.elastic states and run() on every rank of a plain kolorun job (-np 2 and -np 3): the
job is not elastic, so no host updates arrive by themselves; the tests
raise KoloInternalError and HostsUpdatedInterrupt from the training
function, at the same call on every rank, to drive run()'s retries (each a
real shutdown and init of the engine).

States start from rank-dependent values, so a sync that did not happen,
or came from the wrong rank, shows."""

import copy
import gc
import weakref

import pytest
import torch

import kolo.torch as hvd
from kolo.common.runtime import runtime
from kolo.elastic import ObjectState, State
from kolo.torch.elastic import ElasticSampler, TorchState

from elastic_helpers import *  # noqa: F401,F403


# --- names --------------------------------------------------------------------------

def test_elastic_is_reachable_from_both_packages():
    import sys

    import horovod.torch
    import kolo.elastic
    import kolo.torch.elastic

    assert hvd.elastic is kolo.torch.elastic
    assert horovod.torch.elastic is sys.modules["horovod.torch.elastic"]
    for module in (hvd.elastic, horovod.torch.elastic):
        assert module.TorchState is TorchState and module.ElasticSampler is ElasticSampler
        assert module.run is kolo.elastic.run
        assert module.ObjectState is ObjectState and module.State is State
        assert module.HostsUpdatedInterrupt is hvd.HostsUpdatedInterrupt
        for name in module.__all__:
            assert hasattr(module, name), name
    assert "elastic" in hvd.__all__ and "elastic" in horovod.torch.__all__
    assert set(kolo.elastic.__all__) <= set(hvd.elastic.__all__)


# --- ObjectState --------------------------------------------------------------------

def test_object_state_commit_and_restore():
    state = ObjectState(epoch=0, batch=0, history=[])
    state.batch = 5
    state.history.append("a")
    state.commit()
    state.epoch, state.batch = 3, 9
    state.history.append("b")
    state.restore()
    assert (state.epoch, state.batch, state.history) == (0, 5, ["a"])
    state.history.append("c")  # restore hands out copies: the saved list stays intact
    state.restore()
    assert state.history == ["a"]


def test_object_state_sync_gives_every_rank_rank0s_saved_values():
    state = ObjectState(epoch=10 + hvd.rank(), tag=f"rank{hvd.rank()}")
    state.epoch = 100  # not saved: sync sends saved values
    state.sync()
    assert (state.epoch, state.tag) == (10, "rank0")
    state.epoch = 7
    state.restore()  # the synced values are the saved ones now
    assert state.epoch == 10


def test_object_state_refuses_names_that_hide_methods():
    with pytest.raises(ValueError, match="commit"):
        ObjectState(commit=1)
    with pytest.raises(ValueError, match="_private"):
        ObjectState(_private=1)
    with pytest.raises(ValueError, match="restore"):
        TorchState(restore=1)


def test_reset_callbacks_run_in_registration_order_after_reset_hook():
    calls = []

    class Recording(ObjectState):
        def reset(self):
            calls.append("reset")

    state = Recording(x=1)
    state.register_reset_callbacks([lambda: calls.append("a"), lambda: calls.append("b")])
    state.register_reset_callbacks([lambda: calls.append("c")])
    state.on_reset()
    assert calls == ["reset", "a", "b", "c"]
    state.on_reset()
    assert calls == ["reset", "a", "b", "c"] * 2


def test_state_is_abstract():
    with pytest.raises(TypeError):
        State()


def test_host_updates_outside_an_elastic_job_are_none():
    assert not runtime().is_elastic()
    assert runtime().check_host_updates() is None
    state = ObjectState(x=1)
    assert state.check_host_updates() is None
    state.x = 2
    state.commit()  # saves, raises nothing
    state.x = 3
    state.restore()
    assert state.x == 2


@pytest.mark.parametrize("changes, skip_sync", [
    ({"removed"}, True), ({"added"}, False), ({"added", "removed"}, False)])
def test_host_updates_become_interrupts(monkeypatch, changes, skip_sync):
    monkeypatch.setattr(runtime(), "check_host_updates", lambda: set(changes))
    state = ObjectState(x=1)
    state.x = 2
    with pytest.raises(hvd.elastic.HostsUpdatedInterrupt) as info:
        state.commit()
    assert info.value.skip_sync is skip_sync
    state.x = 3
    state.restore()
    assert state.x == 2  # commit saved before it checked


# --- TorchState ---------------------------------------------------------------------

@pytest.mark.parametrize("wrap", ["plain", "distributed"])
def test_torch_state_restores_model_and_optimizer(wrap):
    model, optimizer = make_trained(seed=hvd.rank())
    if wrap == "distributed":
        optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())
    state = TorchState(model, optimizer, epoch=1, batch=0)
    assert state.model is model and state.optimizer is optimizer

    def snapshot():
        return copy.deepcopy((model.state_dict(), optimizer.state_dict(), state.epoch))

    committed = snapshot()
    for seed in (1, 2):
        local_step(model, optimizer, seed)  # DistributedOptimizer: same collectives on all ranks
    optimizer.param_groups[0]["lr"] = 0.5
    state.epoch = 3
    assert differs(snapshot(), committed)
    state.restore()
    assert_same(snapshot(), committed)
    assert optimizer.param_groups[0]["lr"] == 0.1

    local_step(model, optimizer, 3)
    state.epoch = 2
    state.commit()
    committed = snapshot()
    local_step(model, optimizer, 4)
    state.epoch = 9
    state.restore()
    assert_same(snapshot(), committed)


def test_torch_state_sync_overwrites_other_ranks_with_rank0():
    model, optimizer = make_trained(seed=hvd.rank())
    state = TorchState(model, optimizer, epoch=hvd.rank(), batch=5 * hvd.rank())
    before = hvd.allgather_object(model.state_dict(), name="elastic.before")
    if hvd.size() > 1:
        assert differs(before[0], before[1])
    state.sync()
    reference_model, reference_optimizer = make_trained(seed=0)
    assert_same(model.state_dict(), reference_model.state_dict())
    assert_same(optimizer.state_dict(), reference_optimizer.state_dict())
    assert (state.epoch, state.batch) == (0, 0)
    everyone = hvd.allgather_object((model.state_dict(), optimizer.state_dict()),
                                    name="elastic.after")
    for theirs in everyone:
        assert_same(theirs, everyone[0])
    # sync also made rank 0's values the ones a restore goes back to
    local_step(model, optimizer, 7)
    state.restore()
    assert_same(model.state_dict(), reference_model.state_dict())
    assert_same(optimizer.state_dict(), reference_optimizer.state_dict())


def test_torch_state_attributes():
    model, optimizer = make_trained(seed=0)
    state = TorchState(model=model, optimizer=optimizer, epoch=1, batch=0)
    visited = []
    for state.epoch in range(state.epoch, 3):
        visited.append(state.epoch)
    assert visited == [1, 2] and state.epoch == 2

    # a new model assigned to state.model is what save/restore work on from then on
    other = make_model(seed=5)
    state.model = other
    assert state.model is other
    kept = copy.deepcopy(other.state_dict())
    with torch.no_grad():
        for p in other.parameters():
            p.add_(1.0)
    state.restore()
    assert_same(other.state_dict(), kept)
    with pytest.raises(TypeError, match="Module"):
        state.model = 42

    empty = TorchState(epoch=0)
    assert empty.model is None and empty.optimizer is None
    assert "epoch" in repr(empty)


# --- run() --------------------------------------------------------------------------

def test_run_passes_arguments_and_returns_the_result():
    state = counting(ObjectState)(value=hvd.rank())

    @hvd.elastic.run
    def train(state, a, b=0):
        """Docstring kept."""
        return state.value, a, b

    assert train(state, 1, b=2) == (0, 1, 2)  # synced before the first call
    assert train.__doc__ == "Docstring kept." and train.__name__ == "train"
    assert state.counts == {"sync": 1}


def test_run_retries_after_internal_error():
    model, optimizer = make_trained(seed=hvd.rank())
    state = counting(TorchState)(model, optimizer, epoch=0, value=hvd.rank())
    resets = []
    state.register_reset_callbacks([lambda: resets.append(("first", hvd.size())),
                                    lambda: resets.append(("second", hvd.size()))])
    engine_before = runtime().engine()
    size_before, rank_before = hvd.size(), hvd.rank()
    calls, committed = [], {}

    @hvd.elastic.run
    def train(state):
        calls.append((state.epoch, state.value, copy.deepcopy(state.model.state_dict())))
        if len(calls) == 1:
            local_step(state.model, state.optimizer, 1)
            state.epoch, state.value = 1, 42
            state.commit()
            committed["model"] = copy.deepcopy(state.model.state_dict())
            committed["optimizer"] = copy.deepcopy(state.optimizer.state_dict())
            local_step(state.model, state.optimizer, 2)  # lost in the failure
            state.epoch, state.value = 2, 99
            raise hvd.KoloInternalError("simulated failure of a collective")
        return state.epoch, state.value

    assert train(state) == (1, 42)
    assert len(calls) == 2
    reference, _ = make_trained(seed=0)
    assert calls[0][:2] == (0, 0)  # the first sync gave everyone rank 0's values
    assert_same(calls[0][2], reference.state_dict())
    assert calls[1][:2] == (1, 42)
    assert_same(calls[1][2], committed["model"])  # the model came back to the commit
    assert_same(model.state_dict(), committed["model"])
    assert_same(optimizer.state_dict(), committed["optimizer"])
    assert state.counts == {"sync": 2, "restore": 1, "reset": 1}
    assert resets == [("first", size_before), ("second", size_before)]
    assert runtime().engine() is not engine_before  # a new engine joined the (same) world
    assert (hvd.size(), hvd.rank()) == (size_before, rank_before)
    assert engine_works()


@pytest.mark.parametrize("failure", ["internal error", "hosts updated"])
def test_run_frees_the_failed_attempt_before_retrying(failure):
    """What the failed attempt left in reference cycles (its frames, kept by
    the error's traceback) is freed before the retry starts, not at some
    later collection inside a collective (a TF input pipeline's iterator then
    blocked its rank for tens of seconds). Automatic collection is off here,
    so only run()'s own collection can free the cycle."""
    left_behind = []  # a weak reference to the first attempt's cycle

    class Cycle:
        def __init__(self):
            self.me = self

    @hvd.elastic.run
    def train(state):
        if left_behind:  # the retry
            return left_behind[0]() is None
        cycle = Cycle()
        left_behind.append(weakref.ref(cycle))
        if failure == "internal error":
            raise hvd.KoloInternalError("simulated failure of a collective")
        raise hvd.elastic.HostsUpdatedInterrupt(skip_sync=False)

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        freed = train(counting(ObjectState)(epoch=0))
    finally:
        if was_enabled:
            gc.enable()
    assert freed
    assert engine_works()


@pytest.mark.parametrize("skip_sync", [True, False])
def test_run_after_hosts_updated_syncs_unless_skipped(skip_sync):
    state = counting(ObjectState)(value=hvd.rank())
    resets = []
    state.register_reset_callbacks([lambda: resets.append(hvd.size())])
    engine_before = runtime().engine()
    calls = []

    @hvd.elastic.run
    def train(state):
        calls.append(state.value)
        if len(calls) == 1:
            state.value = 10 + hvd.rank()
            state.commit()
            raise hvd.elastic.HostsUpdatedInterrupt(skip_sync=skip_sync)
        return state.value

    result = train(state)
    assert calls[0] == 0
    if skip_sync:
        assert result == 10 + hvd.rank()  # every rank kept its own committed value
        assert state.counts == {"sync": 1, "reset": 1}
    else:
        assert result == 10  # rank 0's
        assert state.counts == {"sync": 2, "reset": 1}
    assert resets == [hvd.size()]
    assert runtime().engine() is not engine_before
    assert engine_works()


def test_run_exits_cleanly_when_the_worker_is_removed(monkeypatch, capsys):
    def removed(*args, **kwargs):
        raise hvd.elastic.WorkerRemovedError("its host left the discovered set")

    state = counting(ObjectState)(value=1)
    monkeypatch.setattr(runtime(), "init", removed)

    @hvd.elastic.run
    def train(state):
        raise hvd.elastic.HostsUpdatedInterrupt(skip_sync=True)

    with pytest.raises(SystemExit) as info:
        train(state)
    assert info.value.code == 0
    assert ("kolo: this worker left the elastic job: its host left the discovered set\n"
            in capsys.readouterr().err)
    assert not hvd.is_initialized()
    assert state.counts["reset"] == 0  # no round joined, nothing reset
    monkeypatch.undo()
    hvd.init()
    assert engine_works()
