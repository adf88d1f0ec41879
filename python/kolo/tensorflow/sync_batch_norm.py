"""SyncBatchNormalization: Keras batch normalization whose batch statistics
cover every rank's batch, not just this rank's.

    model = tf.keras.Sequential([..., hvd.SyncBatchNormalization(), ...])

In training, each rank sums, per channel, its element count, sum and sum of
squares; one allreduce (Sum) of the three adds them over the ranks, and
mean = S / N, variance = SS / N - mean^2 follow: exactly the statistics one
process would compute on the concatenated batch, also when the ranks' batch
sizes (or masks) differ. Gradients flow through the allreduce (its
registered gradient sums the incoming gradients of every rank), so the
backward pass is that of the full batch as well. Inference uses the moving
statistics, which every rank updates with the same global values.

The base class is whatever tf.keras is when this module is imported: Keras 3
(which computes moments in `_moments`) or tf-keras under
TF_USE_LEGACY_KERAS=1 (`_calculate_mean_and_var`, and a fused kernel that
would bypass it, so fused must stay False).
"""

import tensorflow as tf

from kolo.common.reduce_ops import Sum
from kolo.tensorflow.ops import allreduce

_BatchNormalization = tf.keras.layers.BatchNormalization
_LEGACY_KERAS = hasattr(_BatchNormalization, "_calculate_mean_and_var")


def global_moments(x, axes, keepdims, weights=None):
    """Mean and variance of `x` over `axes` and over every rank, each rank's
    elements weighted by `weights` (broadcastable to x; None: all 1).
    Half-precision inputs are summed in float32; the results have x's dtype."""
    compute = tf.float32 if x.dtype in (tf.float16, tf.bfloat16) else x.dtype
    y = tf.cast(x, compute)
    if weights is None:
        local_sum = tf.reduce_sum(y, axis=axes, keepdims=True)
        local_squares = tf.reduce_sum(tf.square(y), axis=axes, keepdims=True)
        elements = tf.reduce_prod(tf.gather(tf.shape(y), axes))
        local_count = tf.cast(elements, compute) * tf.ones_like(local_sum)
    else:
        w = tf.broadcast_to(tf.cast(weights, compute), tf.shape(y))
        local_sum = tf.reduce_sum(y * w, axis=axes, keepdims=True)
        local_squares = tf.reduce_sum(tf.square(y) * w, axis=axes, keepdims=True)
        local_count = tf.reduce_sum(w, axis=axes, keepdims=True)
    # One collective per layer and step: the three statistics travel together.
    count, total, squares = tf.unstack(_allreduce_sum(tf.stack([local_count, local_sum,
                                                                local_squares])))
    count = tf.maximum(count, 1.0)  # an empty global batch: zeros, not NaN
    mean = total / count
    # E[x^2] - E[x]^2 can round below zero when the variance is ~0.
    variance = tf.maximum(squares / count - tf.square(mean), 0.0)
    if not keepdims:
        mean = tf.squeeze(mean, axis=axes)
        variance = tf.squeeze(variance, axis=axes)
    return tf.cast(mean, x.dtype), tf.cast(variance, x.dtype)


def _allreduce_sum(tensor):
    """allreduce(Sum). In a graph its node is named at the top level, not in
    the layer's name scope: an unnamed op matches across ranks by its node
    name, and Keras numbers layers and models per process ("sequential_3/
    sync_batch_normalization_1/"), which differs between ranks as soon as one
    of them made a model the others did not. At the top level the name says
    only how many such ops the traced function made before, the same on
    every rank."""
    if tf.executing_eagerly():
        return allreduce(tensor, op=Sum)  # eager ops match by call order
    with tf.compat.v1.get_default_graph().name_scope(None):
        return allreduce(tensor, op=Sum)


def _mask_weights(mask, inputs):
    """A Keras mask (one value per timestep) as weights over the channels."""
    if mask is None:
        return None
    return tf.expand_dims(tf.cast(mask, inputs.dtype), axis=-1)


class SyncBatchNormalization(_BatchNormalization):
    """BatchNormalization with statistics synchronized over all ranks in
    training (see the module's docstring). Takes BatchNormalization's
    arguments; `fused` must be False (the fused kernel computes the
    statistics itself), and `synchronized` is ignored (this layer always
    is, through Kolo rather than a tf.distribute strategy)."""

    def __init__(self, fused=False, **kwargs):
        if fused in (True, None):
            raise ValueError("kolo: SyncBatchNormalization does not support fused=True "
                             "(the fused kernel computes batch statistics on one rank only)")
        kwargs.pop("synchronized", None)
        if _LEGACY_KERAS:
            kwargs["fused"] = False
        super().__init__(**kwargs)

    if _LEGACY_KERAS:
        def _calculate_mean_and_var(self, inputs, reduction_axes, keep_dims, mask=None):
            return global_moments(inputs, list(reduction_axes), keep_dims,
                                  _mask_weights(mask, inputs))
    else:
        def _moments(self, inputs, mask):
            return global_moments(inputs, list(self._reduction_axes), False,
                                  _mask_weights(mask, inputs))


__all__ = ["SyncBatchNormalization"]
