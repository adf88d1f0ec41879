"""kolo.tensorflow.elastic on every rank of a plain kolorun job (-np 2 and
-np 3): TensorFlowKerasState and TensorFlowState (commit, restore, sync
from rank 0) and run()'s retries. The job is not elastic, so the tests
cause the failures themselves, at the same call on every rank: a real
collective that fails inside a tf.function (the engine refuses mismatched
shapes) or a HostsUpdatedInterrupt; each retry is a real shutdown and init.

Models and variables start from rank-dependent values, so a sync that did
not happen, or came from the wrong rank, shows. Run under either Keras
(scripts/run-python-tests.sh runs this file again with
TF_USE_LEGACY_KERAS=1)."""

import numpy as np
import pytest

from tf_helpers import tf

import kolo.tensorflow as hvd
from kolo.common.runtime import runtime
from kolo.elastic import ObjectState, State
from kolo.tensorflow.elastic import TensorFlowKerasState, TensorFlowState, is_kolo_failure

from tf_elastic_helpers import (
    counting, engine_works, every_rank_holds_the_same, make_model, snapshot, train_locally)


def assert_snapshots_equal(got, want):
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_elastic_is_reachable_from_both_packages():
    import horovod.tensorflow
    import horovod.tensorflow.elastic
    import kolo.elastic
    import kolo.tensorflow.elastic

    assert hvd.elastic is kolo.tensorflow.elastic
    assert horovod.tensorflow.elastic is horovod.tensorflow.elastic  # bound by the package
    for module in (hvd.elastic, horovod.tensorflow.elastic):
        assert module.TensorFlowKerasState is TensorFlowKerasState
        assert module.TensorFlowState is TensorFlowState
        assert module.run is kolo.tensorflow.elastic.run
        assert module.ObjectState is ObjectState and module.State is State
        assert module.HostsUpdatedInterrupt is hvd.HostsUpdatedInterrupt
        for name in module.__all__:
            assert hasattr(module, name), name
    assert "elastic" in hvd.__all__ and "elastic" in horovod.tensorflow.__all__


# --- TensorFlowKerasState -------------------------------------------------------------

def test_keras_state_restores_model_and_optimizer_to_the_commit():
    model = make_model(seed=hvd.rank())
    train_locally(model, seed=1)
    state = TensorFlowKerasState(model, epoch=1, batch=0)
    assert state.optimizer is model.optimizer
    committed = snapshot(state)
    train_locally(model, seed=2)
    state.epoch, state.batch = 3, 7
    assert not all(np.array_equal(a, b) for a, b in zip(snapshot(state), committed))
    state.restore()
    assert_snapshots_equal(snapshot(state), committed)
    assert (state.epoch, state.batch) == (1, 0)

    train_locally(model, seed=3)
    state.epoch = 2
    state.commit()
    committed = snapshot(state)
    train_locally(model, seed=4)
    state.epoch = 9
    state.restore()
    assert_snapshots_equal(snapshot(state), committed)
    assert state.epoch == 2


def test_keras_state_covers_optimizer_variables_made_before_the_first_step():
    model = make_model(seed=0)  # compiled, never trained: the optimizer has no slots yet
    state = TensorFlowKerasState(model, step=0)
    names = [v.name for v in state._variables()[1]]
    assert len(names) > 2, f"the optimizer was not built: {names}"
    committed = snapshot(state)
    train_locally(model, seed=5)
    assert len(state._variables()[1]) == len(names)  # training made no new variables
    state.restore()
    assert_snapshots_equal(snapshot(state), committed)


def test_keras_state_sync_gives_every_rank_rank0s_model_optimizer_and_values():
    model = make_model(seed=10 + hvd.rank())
    train_locally(model, seed=hvd.rank())
    state = TensorFlowKerasState(model, model.optimizer, epoch=hvd.rank(), tag=f"r{hvd.rank()}")
    mine = snapshot(state)
    everyone = hvd.allgather_object([a.tolist() for a in mine], name="tfelastic.before")
    if hvd.size() > 1:
        assert everyone[0] != everyone[1]
    state.sync()
    assert (state.epoch, state.tag) == (0, "r0")
    synced = snapshot(state)
    assert_snapshots_equal(synced, [np.array(a) for a in everyone[0]])
    every_rank_holds_the_same(synced, "tfelastic.after")
    train_locally(model, seed=7)  # sync also saved: a restore comes back to rank 0's values
    state.restore()
    assert_snapshots_equal(snapshot(state), synced)


def test_keras_state_refuses_an_unbuilt_model_and_graph_mode():
    unbuilt = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="must be built"):
        TensorFlowKerasState(unbuilt)
    state = TensorFlowKerasState(make_model(seed=0), x=1)

    @tf.function
    def inside():
        state.save()

    with pytest.raises(RuntimeError, match="tf.function"):
        inside()
    with pytest.raises(ValueError, match="commit"):
        TensorFlowKerasState(make_model(seed=0), commit=1)


@pytest.mark.parametrize("changes, skip_sync", [({"removed"}, True), ({"added"}, False)])
def test_keras_state_commit_saves_then_raises_on_host_updates(monkeypatch, changes, skip_sync):
    model = make_model(seed=0)
    state = TensorFlowKerasState(model, epoch=0)
    assert state.check_host_updates() is None  # not an elastic job: nothing changes
    monkeypatch.setattr(runtime(), "check_host_updates", lambda: set(changes))
    train_locally(model, seed=8)
    state.epoch = 4
    with pytest.raises(hvd.elastic.HostsUpdatedInterrupt) as info:
        state.commit()
    assert info.value.skip_sync is skip_sync
    committed = snapshot(state)
    train_locally(model, seed=9)
    state.epoch = 5
    state.restore()
    assert_snapshots_equal(snapshot(state), committed)  # commit saved before it checked
    assert state.epoch == 4


# --- TensorFlowState ----------------------------------------------------------------

def test_tensorflow_state_commit_restore_and_sync():
    w = tf.Variable(np.full((2, 3), float(hvd.rank() + 1), np.float32))
    step = tf.Variable(hvd.rank() * 10, dtype=tf.int64)
    state = TensorFlowState([w, step], batch=hvd.rank())
    state.sync()
    np.testing.assert_array_equal(w.numpy(), np.ones((2, 3), np.float32))
    assert int(step.numpy()) == 0 and state.batch == 0
    w.assign_add(tf.ones((2, 3)))
    step.assign(5)
    state.batch = 4
    state.commit()
    w.assign(tf.zeros((2, 3)))
    step.assign(6)
    state.batch = 5
    state.restore()
    np.testing.assert_array_equal(w.numpy(), np.full((2, 3), 2.0, np.float32))
    assert int(step.numpy()) == 5 and state.batch == 4


def test_tensorflow_state_refuses_what_tf2_cannot_keep():
    with pytest.raises(ValueError, match="list of variables"):
        TensorFlowState()
    with pytest.raises(ValueError, match="session"):
        TensorFlowState([tf.Variable(1.0)], session=object())


# --- run() --------------------------------------------------------------------------

def mismatched_allreduce():
    """A collective every rank submits with a different shape, inside a
    tf.function: the engine fails it on every rank, and TensorFlow raises
    the kernel's AbortedError from the function call."""
    @tf.function
    def step(x):
        return hvd.allreduce(x, name="tfelastic.mismatch")

    return step(tf.ones([hvd.rank() + 1]))


def test_a_failed_collective_in_a_tf_function_is_a_kolo_failure():
    if hvd.size() < 2:
        pytest.skip("a shape mismatch needs two ranks")
    with pytest.raises(tf.errors.AbortedError) as info:
        mismatched_allreduce()
    assert is_kolo_failure(info.value), info.value.message
    assert not is_kolo_failure(tf.errors.AbortedError(None, None, "a queue was closed"))
    assert not is_kolo_failure(tf.errors.InvalidArgumentError(None, None, "KoloAllreduce"))
    hvd.shutdown()  # the failed job's engine is done; start the next test on a new one
    hvd.init()
    assert engine_works()


def test_run_restores_the_commit_after_a_failure_inside_a_tf_function():
    if hvd.size() < 2:
        pytest.skip("a shape mismatch needs two ranks")
    model = make_model(seed=20 + hvd.rank())
    state = counting(TensorFlowKerasState)(model, epoch=0, value=hvd.rank())
    resets = []
    state.register_reset_callbacks([lambda: resets.append(hvd.size())])
    engine_before = runtime().engine()
    calls, committed = [], {}

    @hvd.elastic.run
    def train(state):
        calls.append((state.epoch, state.value, snapshot(state)))
        if len(calls) == 1:
            train_locally(state.model, seed=1)
            state.epoch, state.value = 1, 42
            state.commit()
            committed["snapshot"] = snapshot(state)
            train_locally(state.model, seed=2)  # lost in the failure
            state.epoch, state.value = 2, 99
            mismatched_allreduce()
        return state.epoch, state.value

    assert train(state) == (1, 42)
    assert len(calls) == 2
    assert calls[0][:2] == (0, 0)  # the first sync gave everyone rank 0's values
    every_rank_holds_the_same(calls[0][2], "tfelastic.first")
    assert calls[1][:2] == (1, 42)
    assert_snapshots_equal(calls[1][2], committed["snapshot"])
    assert state.counts == {"sync": 2, "restore": 1, "reset": 1}
    assert resets == [hvd.size()]
    assert runtime().engine() is not engine_before
    assert engine_works()


def test_run_does_not_retry_tensorflows_own_errors():
    state = counting(ObjectState)(x=1)

    @hvd.elastic.run
    def train(state):
        raise tf.errors.AbortedError(None, None, "a queue was closed")

    with pytest.raises(tf.errors.AbortedError, match="queue"):
        train(state)
    assert state.counts == {"sync": 1}


@pytest.mark.parametrize("skip_sync", [True, False])
def test_run_after_hosts_updated_keeps_the_state(skip_sync):
    w = tf.Variable([float(hvd.rank())])
    state = counting(TensorFlowState)([w], value=hvd.rank())
    calls = []

    @hvd.elastic.run
    def train(state):
        calls.append(float(w.numpy()[0]))
        if len(calls) == 1:
            w.assign([10.0 + hvd.rank()])
            state.commit()
            raise hvd.elastic.HostsUpdatedInterrupt(skip_sync=skip_sync)
        return float(w.numpy()[0])

    result = train(state)
    assert calls[0] == 0.0
    assert result == (10.0 + hvd.rank() if skip_sync else 10.0)
    assert state.counts == ({"sync": 1, "reset": 1} if skip_sync else {"sync": 2, "reset": 1})
    assert engine_works()
