"""backward_passes_per_step for the DistributedOptimizers: each pass adds
its gradients to local sums; every k-th pass the sums (divided by k with
average_aggregated_gradients) are reduced over the ranks and applied, and
the other passes only count the optimizer's iteration, as Horovod does.

Everything is TF variables and tf.cond, so it runs the same eagerly and
inside Keras's traced train function; every rank takes the same branch
(the counters advance in step), so the collective in the reducing branch
is submitted on all ranks or on none."""

import tensorflow as tf


def _dense(grad):
    return tf.convert_to_tensor(grad) if isinstance(grad, tf.IndexedSlices) else grad


class LocalAccumulation:
    def __init__(self, passes, average, reduce_fn):
        self.passes = int(passes)
        self.average = bool(average)
        self.reduce_fn = reduce_fn  # (grads, variables) -> reduced grads
        self.counter = None
        self.sums = None

    def _create(self, grads, variables):
        # Lifted out of any tf.function: made once, on the first (traced) pass.
        with tf.init_scope():
            self.counter = tf.Variable(0, dtype=tf.int64, trainable=False,
                                       name="kolo_backward_passes")
            self.sums = [None if g is None else
                         tf.Variable(tf.zeros(tf.TensorShape(v.shape), dtype=g.dtype),
                                     trainable=False, name="kolo_gradient_sum")
                         for g, v in zip(grads, variables)]

    def is_boundary(self):
        """True on the pass that reduces and applies (read after add())."""
        if self.counter is None:
            return tf.constant(True)
        return tf.equal(self.counter % self.passes, 0)

    def add(self, grads, variables):
        """Adds this pass's gradients; returns what the optimizer applies on a
        boundary pass: the reduced sums (zeros on the other passes, which
        apply nothing)."""
        grads = list(grads)
        if self.sums is None:
            self._create(grads, variables)
        if len(self.sums) != len(grads):
            raise ValueError(f"kolo: backward_passes_per_step: {len(grads)} gradients now, "
                             f"{len(self.sums)} on the first pass")
        present = [i for i, g in enumerate(grads) if g is not None]
        updates = [self.sums[i].assign_add(_dense(grads[i])) for i in present]
        with tf.control_dependencies(updates):
            count = self.counter.assign_add(1)
        boundary = tf.equal(count % self.passes, 0)

        def reduce_now():
            with tf.control_dependencies(updates):
                values = [self.sums[i].read_value() for i in present]
            if self.average:
                values = [v / tf.cast(self.passes, v.dtype) for v in values]
            reduced = self.reduce_fn(values, [variables[i] for i in present])
            with tf.control_dependencies(reduced):
                resets = [self.sums[i].assign(tf.zeros_like(self.sums[i])) for i in present]
            with tf.control_dependencies(resets):
                return [tf.identity(r) for r in reduced]

        def wait():
            return [tf.zeros_like(self.sums[i]) for i in present]

        if not present:
            return grads
        chosen = tf.cond(boundary, reduce_now, wait)
        out = list(grads)
        for i, value in zip(present, chosen):
            out[i] = value
        return out


def apply_on_boundary(accumulation, apply_fn, iterations):
    """Runs apply_fn() on a boundary pass; otherwise only counts the
    optimizer's iteration, as apply would have."""
    def apply_now():
        apply_fn()
        return tf.constant(True)

    def skip():
        iterations.assign_add(1)
        return tf.constant(False)

    return tf.cond(accumulation.is_boundary(), apply_now, skip)
