"""Where each kind of optimizer gets its gradients exchanged. A
DistributedOptimizer is an instance of a class made at wrap time from one
of these mixins and the user's optimizer class (same name and module, so a
model saved with it loads without Kolo):

- Keras 3 (tf.keras on TF >= 2.16): model.fit hands the gradients to
  apply(); they are reduced there, before Keras unscales, clips and steps.
- tf-keras (TF_USE_LEGACY_KERAS=1) optimizer_v2 ("legacy") optimizers:
  minimize() computes them in _compute_gradients(), TF1-style Keras in
  get_gradients(); both reduce, as Horovod's Keras optimizer does.
- tf-keras's newer optimizers: minimize() computes them in
  compute_gradients().
- tf.compat.v1.train optimizers: compute_gradients() (no accumulation).

With backward_passes_per_step > 1 the reducing hook accumulates instead
(accumulation.py) and the apply step runs on every k-th pass only."""

import tensorflow as tf

from kolo.tensorflow.accumulation import apply_on_boundary


class _Common:
    """State every family shares; set by kolo.tensorflow.optimizer after
    the optimizer is built from the user's config."""

    def _kolo_exchange(self, grads, variables):
        grads, variables = list(grads), list(variables)
        if self._kolo_accumulation is not None:
            return self._kolo_accumulation.add(grads, variables)
        return self._kolo_reduce(grads, variables)

    def _kolo_apply(self, apply_fn, iterations):
        if self._kolo_accumulation is None:
            return apply_fn()
        return apply_on_boundary(self._kolo_accumulation, apply_fn, iterations)


class Keras3Mixin(_Common):
    def apply(self, grads, trainable_variables=None):
        if trainable_variables is None:
            if not self.built:  # Keras's own error says what to do
                return super().apply(grads, trainable_variables)
            trainable_variables = self._trainable_variables
        elif not self.built:
            self.build(list(trainable_variables))
        variables = list(trainable_variables)
        grads = self._kolo_exchange(grads, variables)
        parent = super()
        return self._kolo_apply(lambda: parent.apply(grads, variables), self._iterations)


class LegacyKerasMixin(_Common):
    def _compute_gradients(self, loss, var_list, grad_loss=None, tape=None):
        tape = tf.GradientTape() if tape is None else tape
        pairs = super()._compute_gradients(loss, var_list, grad_loss, tape=tape)
        grads, variables = zip(*pairs)
        return list(zip(self._kolo_exchange(grads, variables), variables))

    def get_gradients(self, loss, params):
        return self._kolo_exchange(super().get_gradients(loss, params), params)

    def apply_gradients(self, grads_and_vars, *args, **kwargs):
        pairs = list(grads_and_vars)
        if self._kolo_accumulation is not None:
            with tf.init_scope():  # slots made outside the conditional apply
                self._create_all_weights([v for g, v in pairs if g is not None])
        parent = super()
        return self._kolo_apply(lambda: parent.apply_gradients(pairs, *args, **kwargs),
                                self.iterations)


class TfKerasMixin(_Common):
    def compute_gradients(self, loss, var_list, tape=None):
        pairs = super().compute_gradients(loss, var_list, tape)
        grads, variables = zip(*pairs)
        return list(zip(self._kolo_exchange(grads, variables), variables))

    def apply_gradients(self, grads_and_vars, *args, **kwargs):
        pairs = list(grads_and_vars)
        if self._kolo_accumulation is not None:
            with tf.init_scope():
                self.build([v for _, v in pairs])
        parent = super()
        return self._kolo_apply(lambda: parent.apply_gradients(pairs, *args, **kwargs),
                                self.iterations)


class CompatV1Mixin(_Common):
    def compute_gradients(self, *args, **kwargs):
        pairs = super().compute_gradients(*args, **kwargs)
        grads, variables = zip(*pairs)
        return list(zip(self._kolo_exchange(grads, variables), variables))


def family_of(optimizer):
    """The mixin for `optimizer`'s kind, or None when it is no optimizer Kolo
    knows. Duck-typed, so neither Keras needs importing to tell them apart."""
    if isinstance(optimizer, tf.compat.v1.train.Optimizer):
        return CompatV1Mixin
    if hasattr(optimizer, "stateless_apply") and hasattr(optimizer, "apply"):
        return Keras3Mixin
    if hasattr(optimizer, "_compute_gradients") and hasattr(optimizer, "get_gradients"):
        return LegacyKerasMixin
    if hasattr(optimizer, "compute_gradients") and hasattr(optimizer, "apply_gradients"):
        return TfKerasMixin
    return None
