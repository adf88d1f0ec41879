"""Horovod's TensorFlow collectives on Kolo's TF ops: one function each for
eager and graph mode alike. Eager calls run the op through TensorFlow's
eager executor; inside tf.function the op becomes a graph node whose C++
kernel submits to the engine, so neither mode goes through Python per
tensor at run time.

Names: in eager mode an unnamed op matches across ranks by call order (the
engine's rule); in a graph an unnamed op gets the graph-unique node name,
which every rank derives identically from tracing the same function.
"""

import tensorflow as tf
from tensorflow.python.eager import context as _context
from tensorflow.python.eager import execute as _execute
from tensorflow.python.framework import op_def_library as _op_def_library

from kolo.common.exceptions import KoloInternalError
from kolo.common.basics import global_process_set
from kolo.common.process_sets import process_set_id
from kolo.common.reduce_ops import Average, Sum, engine_op_name, resolve_op
from kolo.common.runtime import runtime
from kolo.tensorflow import _loader  # noqa: F401  registers the ops
from kolo.tensorflow.compression import Compression

# The engine's ReduceOp values (include/kolo/c_api.h's kolo_reduce_op). The
# kernels hand the value to the engine as it is, so Adasum runs the engine's
# own Adasum (the one kolo.torch uses); the engine refuses it where it is not
# defined (integer tensors, collectives other than allreduce) with its message.
_ENGINE_OPS = {"sum": 0, "average": 1, "min": 2, "max": 3, "product": 4, "adasum": 7}


def _engine_op(op):
    return _ENGINE_OPS[engine_op_name(op)]


# What the ops' type attribute T accepts (tf_kernels.cc's kTypes).
_DTYPES = (tf.uint8, tf.int8, tf.int16, tf.int32, tf.int64, tf.float16, tf.bfloat16, tf.float32,
           tf.float64, tf.bool)


def _check_dtypes(value):
    for tensor in value if isinstance(value, (list, tuple)) else [value]:
        if tensor.dtype not in _DTYPES:
            raise TypeError(f"kolo: unsupported tensor dtype {tensor.dtype.name} (supported: "
                            f"{', '.join(d.name for d in _DTYPES)})")


def _run(op_type, inputs, attrs, num_outputs, name):
    """Runs the Kolo op `op_type`: `inputs` maps input names to tensors (or
    lists of tensors; the first is the one typed T), `attrs` the non-type
    attributes. Returns the outputs."""
    _check_dtypes(next(iter(inputs.values())))
    if tf.executing_eagerly():
        runtime().engine()  # ValueError before init, as in kolo.torch
        flat_inputs = []
        type_attr = None
        for value in inputs.values():
            if isinstance(value, (list, tuple)):
                flat_inputs.extend(value)
                type_attr = [t.dtype.as_datatype_enum for t in value]
            else:
                flat_inputs.append(value)
                if type_attr is None:
                    type_attr = value.dtype.as_datatype_enum
        flat_attrs = ("T", type_attr)
        for key, value in attrs.items():
            flat_attrs += (key, value)
        try:
            outputs = _execute.execute(op_type, num_outputs, flat_inputs, flat_attrs,
                                       ctx=_context.context(), name=None)
        except tf.errors.AbortedError as error:
            # A failure of the job: Horovod's HorovodInternalError, which
            # elastic training catches.
            raise KoloInternalError(error.message) from None
        if _execute.must_record_gradient():  # a GradientTape is watching
            _execute.record_gradient(op_type, flat_inputs, flat_attrs, outputs)
        return outputs
    graph = tf.compat.v1.get_default_graph()
    if not attrs.get("tensor_name"):
        # The name the node is about to get (scope included), unique in the graph.
        attrs = dict(attrs, tensor_name=graph.unique_name(op_type, mark_as_used=False))
    _, _, op, outputs = _op_def_library._apply_op_helper(op_type, name=op_type, **inputs, **attrs)
    if _execute.must_record_gradient():  # a GradientTape inside tf.function
        type_attr = op.get_attr("T")
        if not isinstance(type_attr, list):
            type_attr = op._get_attr_type("T")
        flat_attrs = ("T", type_attr)
        for key in attrs:
            flat_attrs += (key, op.get_attr(key))
        _execute.record_gradient(op_type, op.inputs, flat_attrs, outputs)
    return outputs


def _tensor(value):
    if isinstance(value, tf.IndexedSlices):
        return value
    return tf.convert_to_tensor(value)


def _tensor_list(tensors, what):
    if not isinstance(tensors, (list, tuple)):
        raise ValueError(f"kolo: {what} takes a list of tensors")
    return [tf.convert_to_tensor(t) for t in tensors]


def _first_dim_unknown(out, tensor):
    """`out` with the static shape known of a result whose first dimension
    only the run decides: `tensor`'s other dimensions."""
    out.set_shape(tf.TensorShape([None]).concatenate(tensor.shape[1:]))
    return out


def _name_attr(name):
    return "" if name is None else str(name)


# --- allreduce ---------------------------------------------------------------

def _allreduce_dense(tensor, op, prescale_factor, postscale_factor, name, process_set):
    return _run("KoloAllreduce", {"tensor": tensor},
                {"reduce_op": _engine_op(op), "prescale": float(prescale_factor),
                 "postscale": float(postscale_factor),
                 "process_set": process_set_id(process_set), "tensor_name": _name_attr(name)},
                1, name)[0]


def _allreduce_sparse(slices, op, name, process_set):
    """IndexedSlices as Horovod reduces them: every rank's rows gathered
    (duplicate indices add up when applied), values divided by the set's
    size for Average."""
    if op not in (Average, Sum):
        raise ValueError("kolo: IndexedSlices support only Average and Sum (or pass "
                         "sparse_as_dense=True)")
    base = None if name is None else str(name)
    values = allgather(slices.values, name=None if base is None else f"{base}.values",
                       process_set=process_set)
    indices = allgather(slices.indices, name=None if base is None else f"{base}.indices",
                        process_set=process_set)
    if op == Average:
        values = values / tf.cast(_set_size(process_set), values.dtype)
    return tf.IndexedSlices(values, indices, dense_shape=slices.dense_shape)


def _set_size(process_set):
    return len(runtime().process_set_ranks(process_set_id(process_set)))


def allreduce(tensor, average=None, device_dense="", device_sparse="",
              compression=Compression.none, op=None, prescale_factor=1.0,
              postscale_factor=1.0, name=None, process_set=global_process_set,
              ignore_name_scope=False):
    """Reduces `tensor` (a tf.Tensor, tf.Variable or tf.IndexedSlices) over
    the process set; Average by default."""
    del device_dense, device_sparse, ignore_name_scope  # CPU only; names are Kolo's
    op = resolve_op(op, average)
    tensor = _tensor(tensor)
    if isinstance(tensor, tf.IndexedSlices):
        return _allreduce_sparse(tensor, op, name, process_set)
    compressed, ctx = compression.compress(tensor)
    reduced = _allreduce_dense(compressed, op, prescale_factor, postscale_factor, name,
                               process_set)
    return compression.decompress(reduced, ctx)


def grouped_allreduce(tensors, average=None, device_dense="", device_sparse="",
                      compression=Compression.none, op=None, prescale_factor=1.0,
                      postscale_factor=1.0, process_set=global_process_set, name=None):
    """Reduces a list of tensors as one negotiated, fused unit (IndexedSlices
    members are reduced one by one, as Horovod does)."""
    del device_dense, device_sparse
    op = resolve_op(op, average)
    if not isinstance(tensors, (list, tuple)):
        raise ValueError("kolo: grouped_allreduce takes a list of tensors")
    tensors = [_tensor(t) for t in tensors]
    dense = [i for i, t in enumerate(tensors) if not isinstance(t, tf.IndexedSlices)]
    results = list(tensors)
    for i, t in enumerate(tensors):
        if isinstance(t, tf.IndexedSlices):
            results[i] = _allreduce_sparse(t, op, None if name is None else f"{name}.sparse.{i}",
                                           process_set)
    if dense:
        pairs = [compression.compress(tensors[i]) for i in dense]
        reduced = _run("KoloGroupedAllreduce", {"tensors": [c for c, _ in pairs]},
                       {"reduce_op": _engine_op(op), "prescale": float(prescale_factor),
                        "postscale": float(postscale_factor),
                        "process_set": process_set_id(process_set),
                        "tensor_name": _name_attr(name)}, len(dense), name)
        for i, out, (_, ctx) in zip(dense, reduced, pairs):
            results[i] = compression.decompress(out, ctx)
    return results


# --- allgather, broadcast ------------------------------------------------------

def allgather(tensor, name=None, ignore_name_scope=False, process_set=global_process_set):
    """Concatenates every rank's `tensor` along the first dimension (whose size
    may differ per rank)."""
    del ignore_name_scope
    tensor = tf.convert_to_tensor(tensor)
    if tensor.shape.rank == 0:
        raise ValueError("kolo: allgather needs a tensor of rank >= 1")
    out = _run("KoloAllgather", {"tensor": tensor},
               {"process_set": process_set_id(process_set), "tensor_name": _name_attr(name)},
               1, name)[0]
    return _first_dim_unknown(out, tensor)


def grouped_allgather(tensors, name=None, ignore_name_scope=False,
                      process_set=global_process_set):
    """allgather of every tensor of the list as one negotiated unit (one
    engine group; in a graph, one op)."""
    del ignore_name_scope
    tensors = _tensor_list(tensors, "grouped_allgather")
    for tensor in tensors:
        if tensor.shape.rank == 0:
            raise ValueError("kolo: allgather needs a tensor of rank >= 1")
    if not tensors:
        return []
    outs = _run("KoloGroupedAllgather", {"tensors": tensors},
                {"process_set": process_set_id(process_set), "tensor_name": _name_attr(name)},
                len(tensors), name)
    return [_first_dim_unknown(out, t) for out, t in zip(outs, tensors)]


def broadcast(tensor, root_rank, name=None, ignore_name_scope=False,
              process_set=global_process_set):
    """root_rank's `tensor` (root_rank is a global rank) on every rank of the set."""
    del ignore_name_scope
    ps = process_set_id(process_set)
    root = runtime().set_root(ps, int(root_rank))
    return _run("KoloBroadcast", {"tensor": tf.convert_to_tensor(tensor)},
                {"root_rank": root, "process_set": ps, "tensor_name": _name_attr(name)},
                1, name)[0]


# --- alltoall, reducescatter -----------------------------------------------------

def alltoall(tensor, splits=None, name=None, ignore_name_scope=False,
             process_set=global_process_set):
    """Sends splits[i] rows of `tensor` to rank i of the set (equal parts when
    None); returns (received rows, rows received from each rank)."""
    del ignore_name_scope
    tensor = tf.convert_to_tensor(tensor)
    if splits is None:
        splits = tf.zeros([0], dtype=tf.int64)
    splits = tf.cast(tf.convert_to_tensor(splits), tf.int64)
    out, received = _run("KoloAlltoall", {"tensor": tensor, "splits": splits},
                         {"process_set": process_set_id(process_set),
                          "tensor_name": _name_attr(name)}, 2, name)
    return _first_dim_unknown(out, tensor), tf.cast(received, tf.int32)


def reducescatter(tensor, device_dense="", compression=Compression.none, op=Average, name=None,
                  process_set=global_process_set, ignore_name_scope=False, prescale_factor=1.0,
                  postscale_factor=1.0):
    """Reduces `tensor` over the set; each rank keeps its block of rows (the
    first rows % n ranks get one row more)."""
    del device_dense, ignore_name_scope
    op = resolve_op(op)
    tensor = tf.convert_to_tensor(tensor)
    compressed, ctx = compression.compress(tensor)
    out = _run("KoloReducescatter", {"tensor": compressed},
               {"reduce_op": _engine_op(op), "prescale": float(prescale_factor),
                "postscale": float(postscale_factor), "process_set": process_set_id(process_set),
                "tensor_name": _name_attr(name)}, 1, name)[0]
    return compression.decompress(_first_dim_unknown(out, tensor), ctx)


def grouped_reducescatter(tensors, device_dense="", compression=Compression.none, op=Average,
                          process_set=global_process_set, prescale_factor=1.0,
                          postscale_factor=1.0, name=None):
    """reducescatter of every tensor of the list as one negotiated unit (one
    engine group; in a graph, one op)."""
    del device_dense
    op = resolve_op(op)
    tensors = _tensor_list(tensors, "grouped_reducescatter")
    if not tensors:
        return []
    pairs = [compression.compress(t) for t in tensors]
    outs = _run("KoloGroupedReducescatter", {"tensors": [c for c, _ in pairs]},
                {"reduce_op": _engine_op(op), "prescale": float(prescale_factor),
                 "postscale": float(postscale_factor), "process_set": process_set_id(process_set),
                 "tensor_name": _name_attr(name)}, len(tensors), name)
    return [compression.decompress(_first_dim_unknown(out, t), ctx)
            for out, t, (_, ctx) in zip(outs, tensors, pairs)]
