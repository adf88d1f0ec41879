"""Every collective of kolo.tensorflow x every dtype where it makes sense x
eager and tf.function, on the global set and on a set of every rank but
rank 0, against results each rank computes itself."""

import numpy as np
import pytest

from tf_helpers import DTYPES, IDS, MODES, NUMERIC, as_np, run, tf, value, value_np

import kolo.tensorflow as hvd
from process_set_case import set_case_fixture

REDUCE_IDS = [d.name for d in NUMERIC]


case = set_case_fixture("tf")


def expected_reduce(op, ranks, rows):
    values = np.stack([value_np(r, rows) for r in ranks])
    return {hvd.Sum: values.sum(0), hvd.Min: values.min(0), hvd.Max: values.max(0),
            hvd.Product: values.prod(0)}[op]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", NUMERIC, ids=REDUCE_IDS)
@pytest.mark.parametrize("op", [hvd.Sum, hvd.Min, hvd.Max, hvd.Product],
                         ids=["sum", "min", "max", "product"])
def test_allreduce(op, dtype, mode, case):
    if not case.included:
        return
    out = run(mode, lambda x: hvd.allreduce(x, op=op, name=case.tag,
                                            process_set=case.process_set),
              value(case.me, 2, dtype))
    assert out.dtype == dtype and out.shape == (2, 3)
    np.testing.assert_array_equal(as_np(out), expected_reduce(op, case.ranks, 2))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [tf.float16, tf.bfloat16, tf.float32, tf.float64],
                         ids=["float16", "bfloat16", "float32", "float64"])
def test_allreduce_average_and_scaling(dtype, mode, case):
    if not case.included:
        return

    def body(x):
        return (hvd.allreduce(x, name=case.tag + ".avg", process_set=case.process_set),
                hvd.allreduce(x, op=hvd.Sum, prescale_factor=0.5, postscale_factor=4.0,
                              name=case.tag + ".scaled", process_set=case.process_set))

    avg, scaled = run(mode, body, value(case.me, 2, dtype))
    total = expected_reduce(hvd.Sum, case.ranks, 2)
    np.testing.assert_allclose(as_np(avg), total / case.n, rtol=1e-2)
    np.testing.assert_allclose(as_np(scaled), total * 2.0, rtol=1e-2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_grouped_allreduce(dtype, mode, case):
    if not case.included:
        return
    a, b = run(mode, lambda x, y: hvd.grouped_allreduce(
        [x, y], op=hvd.Sum, name=case.tag, process_set=case.process_set),
        value(case.me, 1, dtype), value(case.me, 3, dtype))
    assert a.dtype == dtype and b.dtype == dtype
    if dtype == tf.bool:  # Kolo's Sum of bools is a logical or
        for out, rows in ((a, 1), (b, 3)):
            want = np.stack([value(r, rows, tf.bool).numpy() for r in case.ranks]).any(0)
            np.testing.assert_array_equal(out.numpy(), want)
        return
    np.testing.assert_array_equal(as_np(a), expected_reduce(hvd.Sum, case.ranks, 1))
    np.testing.assert_array_equal(as_np(b), expected_reduce(hvd.Sum, case.ranks, 3))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_allgather(dtype, mode, case):
    """Rank k of the set contributes k + 1 rows."""
    if not case.included:
        return
    out = run(mode, lambda x: hvd.allgather(x, name=case.tag, process_set=case.process_set),
              value(case.me, case.k + 1, dtype))
    assert out.dtype == dtype
    want = np.concatenate([as_np(value(r, k + 1, dtype)) for k, r in enumerate(case.ranks)])
    np.testing.assert_array_equal(as_np(out), want)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_grouped_allgather(dtype, mode, case):
    """Three members of different row counts, widths and dtypes: set rank k
    gives k + 1 rows of the first, one of the second, 2(k + 1) of the third."""
    if not case.included:
        return
    k = case.k

    def inputs(r, j):
        return [value(r, j + 1, dtype), value(r, 1, dtype, cols=2),
                value(r, 2 * (j + 1), tf.float64, cols=1)]

    outs = run(mode, lambda *xs: hvd.grouped_allgather(list(xs), name=case.tag,
                                                       process_set=case.process_set),
               *inputs(case.me, k))
    assert [o.dtype for o in outs] == [dtype, dtype, tf.float64]
    for i, out in enumerate(outs):
        want = np.concatenate([as_np(inputs(r, j)[i]) for j, r in enumerate(case.ranks)])
        np.testing.assert_array_equal(as_np(out), want)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_broadcast(dtype, mode, case):
    if not case.included:
        return
    for root in case.ranks:
        out = run(mode, lambda x: hvd.broadcast(x, root_rank=root, name=f"{case.tag}.{root}",
                                                process_set=case.process_set),
                  value(case.me, 2, dtype))
        assert out.dtype == dtype
        np.testing.assert_array_equal(as_np(out), as_np(value(root, 2, dtype)))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_alltoall(dtype, mode, case):
    """Rank k sends j + 1 rows to set rank j, each row tagged with (k, j)."""
    if not case.included:
        return
    n, k = case.n, case.k
    rows = np.concatenate([np.full((j + 1, 2), 10 * k + j) for j in range(n)])
    splits = [j + 1 for j in range(n)]

    def body(x):
        return hvd.alltoall(x, splits=splits, name=case.tag, process_set=case.process_set)

    src = tf.constant(rows % 2 == 0) if dtype == tf.bool else tf.cast(rows, dtype)
    out, received = run(mode, body, src)
    want = np.concatenate([np.full((k + 1, 2), 10 * s + k) for s in range(n)])
    want_t = tf.constant(want % 2 == 0) if dtype == tf.bool else tf.cast(want, dtype)
    np.testing.assert_array_equal(as_np(out), as_np(want_t))
    np.testing.assert_array_equal(received.numpy(), [k + 1] * n)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", NUMERIC, ids=REDUCE_IDS)
def test_reducescatter(dtype, mode, case):
    """n + 1 rows: set rank 0 keeps two, the others one each."""
    if not case.included:
        return
    rows = case.n + 1
    out = run(mode, lambda x: hvd.reducescatter(x, op=hvd.Sum, name=case.tag,
                                                process_set=case.process_set),
              value(case.me, rows, dtype))
    total = expected_reduce(hvd.Sum, case.ranks, rows)
    start = 0 if case.k == 0 else case.k + 1
    stop = 2 if case.k == 0 else case.k + 2
    assert out.dtype == dtype
    np.testing.assert_array_equal(as_np(out), total[start:stop])


def block(rows, n, k):
    """Set rank k's rows of a reducescatter of `rows` rows: the first
    rows % n ranks get one row more."""
    base, extra = divmod(rows, n)
    start = k * base + min(k, extra)
    return slice(start, start + base + (k < extra))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", NUMERIC, ids=REDUCE_IDS)
def test_grouped_reducescatter(dtype, mode, case):
    """Two members, n + 1 and 2n rows (uneven and even blocks), and a
    float64 third: each rank keeps its block of every sum."""
    if not case.included:
        return
    n = case.n

    def inputs(r):
        return [value(r, n + 1, dtype), value(r, 2 * n, dtype, cols=2),
                value(r, n, tf.float64, cols=1)]

    outs = run(mode, lambda *xs: hvd.grouped_reducescatter(
        list(xs), op=hvd.Sum, name=case.tag, process_set=case.process_set), *inputs(case.me))
    assert [o.dtype for o in outs] == [dtype, dtype, tf.float64]
    for i, out in enumerate(outs):
        total = sum(as_np(inputs(r)[i]) for r in case.ranks)
        rows = total.shape[0]
        np.testing.assert_array_equal(as_np(out), total[block(rows, n, case.k)])


@pytest.mark.parametrize("mode", MODES)
def test_grouped_reducescatter_average_scaling_and_fp16(mode, case):
    """Average (the default), then the scale factors, and fp16 compression
    of float32 members (exact here: small integers)."""
    if not case.included:
        return
    n, k = case.n, case.k

    def body(x, y):
        avg = hvd.grouped_reducescatter([x, y], name=case.tag + ".avg",
                                        process_set=case.process_set)
        scaled = hvd.grouped_reducescatter([x, y], op=hvd.Sum, prescale_factor=0.5,
                                           postscale_factor=4.0, name=case.tag + ".scaled",
                                           compression=hvd.Compression.fp16,
                                           process_set=case.process_set)
        return avg + scaled

    outs = run(mode, body, value(case.me, n + 1, tf.float32),
               value(case.me, 2 * n, tf.float64, cols=2))
    assert [o.dtype for o in outs] == [tf.float32, tf.float64] * 2
    for i, (rows, cols) in enumerate([(n + 1, 3), (2 * n, 2)]):
        total = sum(value_np(r, rows, cols) for r in case.ranks)[block(rows, n, k)]
        np.testing.assert_allclose(as_np(outs[i]), total / n, rtol=1e-6)
        np.testing.assert_allclose(as_np(outs[2 + i]), total * 2.0, rtol=1e-6)


def test_grouped_gather_and_scatter_are_one_op_in_a_graph():
    """Inside tf.function a grouped allgather or reducescatter is one Kolo
    op node for the whole list (one negotiation), not one per tensor.
    Tracing only: nothing runs."""
    @tf.function
    def body(x, y):
        return (hvd.grouped_allgather([x, y]), hvd.grouped_reducescatter([x, y]))

    spec = tf.TensorSpec([6, 2], tf.float32)
    types = [op.type for op in body.get_concrete_function(spec, spec).graph.get_operations()]
    kolo_ops = sorted(t for t in types if t.startswith("Kolo"))
    assert kolo_ops == ["KoloGroupedAllgather", "KoloGroupedReducescatter"], kolo_ops


def test_grouped_of_an_empty_list_is_empty():
    assert hvd.grouped_allgather([]) == [] and hvd.grouped_reducescatter([]) == []


@pytest.mark.parametrize("mode", MODES)
def test_variables_and_fp16_compression(mode):
    var = tf.Variable(tf.fill([4], float(hvd.rank() + 1)))

    def body():
        return hvd.allreduce(var, op=hvd.Sum, compression=hvd.Compression.fp16,
                             name="tf.var.fp16")

    out = run(mode, body)
    assert out.dtype == tf.float32
    np.testing.assert_array_equal(out.numpy(), [hvd.size() * (hvd.size() + 1) / 2] * 4)


@pytest.mark.parametrize("mode", MODES)
def test_broadcast_variables(mode):
    variables = [tf.Variable(tf.fill([3], float(hvd.rank()))), tf.Variable(hvd.rank() * 7)]
    root = hvd.size() - 1

    def body():
        hvd.broadcast_variables(variables, root_rank=root)

    run(mode, body)
    np.testing.assert_array_equal(variables[0].numpy(), [float(root)] * 3)
    assert int(variables[1].numpy()) == root * 7


def test_many_unnamed_ops_in_one_function():
    """Many independent collectives in one tf.function: the stateful ops run
    in program order on every rank, so nothing deadlocks however few
    threads TF has."""
    xs = [tf.fill([5], float(hvd.rank() + i)) for i in range(20)]

    @tf.function
    def body():
        return [hvd.allreduce(x, op=hvd.Sum) for x in xs]

    n = hvd.size()
    for _ in range(2):
        outs = body()
        for i, out in enumerate(outs):
            np.testing.assert_array_equal(out.numpy(), [n * (n - 1) / 2 + n * i] * 5)


def test_objects_and_barrier():
    got = hvd.broadcast_object({"rank": hvd.rank()}, root_rank=hvd.size() - 1)
    assert got == {"rank": hvd.size() - 1}
    assert hvd.allgather_object(hvd.rank() * 2) == [r * 2 for r in range(hvd.size())]
    hvd.barrier()


def test_sparse_allreduce_gathers_rows():
    """IndexedSlices as Horovod reduces them: every rank's rows, values
    averaged by the set size."""
    me = hvd.rank()
    slices = tf.IndexedSlices(tf.fill([1, 2], float(me + 1)), tf.constant([me]),
                              dense_shape=tf.constant([hvd.size(), 2]))
    out = hvd.allreduce(slices, name="tf.sparse")
    assert isinstance(out, tf.IndexedSlices)
    np.testing.assert_array_equal(out.indices.numpy(), list(range(hvd.size())))
    np.testing.assert_allclose(out.values.numpy()[:, 0],
                               [(r + 1) / hvd.size() for r in range(hvd.size())])


def test_graph_mode_runs_kolo_kernels_not_python():
    """Inside tf.function a collective is a Kolo op node (a C++ kernel), never
    a Python callback; DistributedGradientTape sends every dense gradient in
    one grouped op. Tracing only: nothing runs."""
    @tf.function
    def step(x):
        weights = [tf.ones([3]), tf.ones([2])]
        with tf.GradientTape() as tape:
            tape.watch(weights)
            loss = tf.reduce_sum(weights[0] * x) + tf.reduce_sum(weights[1])
        grads = hvd.DistributedGradientTape(tape).gradient(loss, weights)
        return hvd.allreduce(x, op=hvd.Sum), grads

    graph = step.get_concrete_function(tf.TensorSpec([3], tf.float32)).graph
    types = [op.type for op in graph.get_operations()]
    assert types.count("KoloAllreduce") == 1 and types.count("KoloGroupedAllreduce") == 1
    assert not set(types) & {"PyFunc", "EagerPyFunc", "PyFuncStateless"}, types
