"""The Keras DistributedOptimizer on an Embedding, whose gradient is
tf.IndexedSlices: gathered over the ranks (sparse_as_dense=False, Horovod's
default) or made dense first (sparse_as_dense=True), in model.fit's traced
step and with run_eagerly; either way N ranks on B/N rows of every batch
end with the weights of one process on the full batch. Runs under Keras 3
and under tf-keras (keras_helpers)."""

import numpy as np
import pytest

from keras_helpers import BATCH, gathered_equal, keras, shard
from tf_helpers import MODES, embedding_data, tf

import kolo.tensorflow.keras as hvd
from kolo.tensorflow import reduction

VOCAB = 7


def embedding_model():
    m = keras.Sequential([keras.Input((2,), dtype="int32"), keras.layers.Embedding(VOCAB, 3),
                          keras.layers.Flatten(), keras.layers.Dense(1)])
    rng = np.random.default_rng(17)
    m.set_weights([rng.normal(size=w.shape).astype(np.float32) for w in m.get_weights()])
    return m


@pytest.fixture
def exchanged_kinds(monkeypatch):
    """Whether each gradient the optimizer handed to a grouped allreduce was
    IndexedSlices (recorded when the step runs eagerly or is traced)."""
    seen = []
    real = reduction.grouped_allreduce

    def spy(tensors, **kwargs):
        seen.extend(isinstance(t, tf.IndexedSlices) for t in tensors)
        return real(tensors, **kwargs)

    monkeypatch.setattr(reduction, "grouped_allreduce", spy)
    return seen


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sparse_as_dense", [False, True], ids=["sparse", "dense"])
def test_embedding_on_shards_equals_one_process_on_the_batch(mode, sparse_as_dense,
                                                             exchanged_kinds):
    ids, y = embedding_data(2 * BATCH, VOCAB)
    n, r = hvd.size(), hvd.rank()
    dist = embedding_model()
    dist.compile(loss="mse", run_eagerly=mode == "eager", optimizer=hvd.DistributedOptimizer(
        keras.optimizers.SGD(0.2), sparse_as_dense=sparse_as_dense))
    dist.fit(shard(ids, r, n), shard(y, r, n), batch_size=BATCH // n, epochs=2, shuffle=False,
             verbose=0)
    # The embedding's gradient reached the exchange sparse only without
    # sparse_as_dense; the Dense layer's two are dense either way.
    assert exchanged_kinds and len(exchanged_kinds) % 3 == 0, exchanged_kinds
    assert exchanged_kinds[:3] == [not sparse_as_dense, False, False], exchanged_kinds
    single = embedding_model()
    single.compile(loss="mse", run_eagerly=mode == "eager", optimizer=keras.optimizers.SGD(0.2))
    single.fit(ids, y, batch_size=BATCH, epochs=2, shuffle=False, verbose=0)
    for got, want in zip(dist.get_weights(), single.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert gathered_equal(hvd, dist.get_weights())
