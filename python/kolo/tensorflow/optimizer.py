"""kolo.tensorflow.DistributedOptimizer (and the Keras one, which is the
same function): wraps a Keras optimizer (Keras 3 or tf-keras) or a
tf.compat.v1.train optimizer so the gradients it computes or is handed
are averaged over the ranks before they are applied, as one grouped
allreduce (one op in a traced train step)."""

from kolo.common.basics import global_process_set
from kolo.common.reduce_ops import Adasum, Average, Sum, resolve_op
from kolo.tensorflow.accumulation import LocalAccumulation
from kolo.tensorflow.compression import Compression
from kolo.tensorflow.optimizer_families import CompatV1Mixin, family_of
from kolo.tensorflow.reduction import reduce_gradients, resolve_groups


_OPS_MESSAGE = ("kolo: DistributedOptimizer supports op=Average or op=Sum on TensorFlow "
                "(Adasum's delta optimizer is not there yet; hvd.allreduce, grouped_allreduce "
                "and DistributedGradientTape take op=hvd.Adasum)")


def _check(op, gradient_predivide_factor, backward_passes_per_step):
    if op not in (Average, Sum):
        raise ValueError(_OPS_MESSAGE)
    if gradient_predivide_factor != 1.0 and op != Average:
        raise ValueError("kolo: gradient_predivide_factor needs op=Average")
    if isinstance(backward_passes_per_step, bool) or not isinstance(
            backward_passes_per_step, int) or backward_passes_per_step < 1:
        raise ValueError(f"kolo: backward_passes_per_step must be an integer >= 1, got "
                         f"{backward_passes_per_step!r}")


def distributed_class(optimizer):
    """The class a DistributedOptimizer of `optimizer` is an instance of: its
    family's hooks in front of its class, under that class's name and
    module (a model saved with it loads without Kolo)."""
    base = getattr(optimizer.__class__, "_kolo_base", optimizer.__class__)
    family = family_of(optimizer)
    if family is None:
        raise ValueError(f"kolo: DistributedOptimizer wraps a Keras optimizer (Keras 3 or "
                         f"tf-keras) or a tf.compat.v1.train.Optimizer, not "
                         f"{type(optimizer).__name__}")
    return type(base.__name__, (family, base),
                {"__module__": base.__module__, "__qualname__": base.__qualname__,
                 "_kolo_base": base})


def attach(optimizer, compression=Compression.none, sparse_as_dense=False, op=Average,
           gradient_predivide_factor=1.0, backward_passes_per_step=1,
           average_aggregated_gradients=False, groups=None, process_set=global_process_set):
    """Gives an instance of a distributed_class its exchange settings."""
    options = dict(compression=compression, sparse_as_dense=sparse_as_dense, op=op,
                   gradient_predivide_factor=gradient_predivide_factor,
                   process_set=process_set, groups=groups)

    def reduce(grads, variables):
        return reduce_gradients(grads, variables=variables, **options)

    optimizer._kolo_reduce = reduce
    optimizer._kolo_accumulation = None
    if backward_passes_per_step > 1:
        optimizer._kolo_accumulation = LocalAccumulation(
            backward_passes_per_step, average_aggregated_gradients, reduce)
    return optimizer


def DistributedOptimizer(optimizer, name=None, use_locking=False, device_dense="",
                         device_sparse="", compression=Compression.none, sparse_as_dense=False,
                         backward_passes_per_step=1, op=Average, gradient_predivide_factor=1.0,
                         average_aggregated_gradients=False, num_groups=0, groups=None,
                         process_set=global_process_set, scale_local_gradients=True):
    """A new optimizer of `optimizer`'s class and configuration whose
    gradients are reduced (op, Average by default) over the process set.
    backward_passes_per_step=k applies every k-th step the sum (or, with
    average_aggregated_gradients, the mean) of k steps' gradients; groups
    (or the deprecated num_groups) splits the exchange into that many grouped
    allreduces (an int) or groups of variables (a list of lists)."""
    del use_locking, device_dense, device_sparse, scale_local_gradients  # CPU; no local vars
    if op == Adasum:  # before resolve_op, whose Adasum checks do not apply here
        raise ValueError(_OPS_MESSAGE)
    op = resolve_op(op)
    _check(op, gradient_predivide_factor, backward_passes_per_step)
    groups = resolve_groups(num_groups, groups)
    cls = distributed_class(optimizer)
    if issubclass(cls, CompatV1Mixin):
        if backward_passes_per_step > 1:
            raise ValueError("kolo: backward_passes_per_step > 1 needs a Keras optimizer")
        wrapped = cls.__new__(cls)
        wrapped.__dict__.update(optimizer.__dict__)
    else:
        config = optimizer.get_config()
        if name is not None:
            config["name"] = name
        wrapped = cls.from_config(config)
    return attach(wrapped, compression=compression, sparse_as_dense=sparse_as_dense, op=op,
                  gradient_predivide_factor=gradient_predivide_factor,
                  backward_passes_per_step=backward_passes_per_step,
                  average_aggregated_gradients=average_aggregated_gradients, groups=groups,
                  process_set=process_set)
