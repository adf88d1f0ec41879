"""kolo.numpy under kolorun -np 2 and -np 3.

Every rank runs these tests in the same order, so each test issues the same
collectives on every rank. Expected values are computed locally from what
every rank contributes (rank_values), never taken from another collective.
"""

import os
import tempfile

import numpy as np
import pytest

import kolo.numpy as hvd
from kolo import KoloInternalError

hvd.init()
RANK = hvd.rank()
SIZE = hvd.size()

pytestmark = pytest.mark.skipif(SIZE < 2, reason="run under kolorun -np 2 or more")

NUMERIC = [np.uint8, np.int8, np.int32, np.int64, np.float16, np.float32, np.float64]
OPS = [hvd.Sum, hvd.Average, hvd.Min, hvd.Max, hvd.Product]
OP_NAMES = {hvd.Sum: "sum", hvd.Average: "average", hvd.Min: "min", hvd.Max: "max",
            hvd.Product: "product"}


def rank_values(r, shape, dtype, op=hvd.Sum):
    """What rank r contributes: small integers (exact in every dtype, no
    overflow even as products of 3 ranks), negative on odd ranks for signed
    types, and sums divisible by the size for Average."""
    base = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) % 4
    if op == hvd.Product:
        values = base % 2 + 1 + r % 2
    elif op == hvd.Average:
        values = base + r * SIZE
    else:
        values = base + r
        if np.issubdtype(dtype, np.signedinteger) or np.issubdtype(dtype, np.floating):
            values = values * (1 - 2 * (r % 2))
    return values.astype(dtype)


def reference(op, contributions):
    stack = np.stack([c.astype(np.float64) for c in contributions])
    result = {hvd.Sum: np.sum, hvd.Min: np.min, hvd.Max: np.max, hvd.Product: np.prod,
              hvd.Average: np.mean}[op](stack, axis=0)
    return result.astype(contributions[0].dtype)


def everyone(shape, dtype, op=hvd.Sum):
    return [rank_values(r, shape, dtype, op) for r in range(SIZE)]


# --- topology ----------------------------------------------------------------


def test_topology_matches_the_launcher():
    assert hvd.is_initialized()
    assert (RANK, SIZE) == (int(os.environ["KOLO_RANK"]), int(os.environ["KOLO_SIZE"]))
    assert hvd.local_rank() == int(os.environ["KOLO_LOCAL_RANK"])
    assert hvd.local_size() == int(os.environ["KOLO_LOCAL_SIZE"])
    assert hvd.cross_rank() == int(os.environ["KOLO_CROSS_RANK"])
    assert hvd.cross_size() == int(os.environ["KOLO_CROSS_SIZE"])
    assert hvd.is_homogeneous() is True  # one host: every host runs SIZE ranks
    assert hvd.global_process_set.ranks == list(range(SIZE))


def test_init_is_idempotent_and_refuses_a_new_comm():
    hvd.init()
    assert hvd.rank() == RANK
    # The communicator is chosen by the first init (tests/python/launcher/
    # test_mpi_backend.py runs init(comm=...) under mpirun).
    with pytest.raises(ValueError, match="comm"):
        hvd.init(comm=[0, 1])


# --- allreduce -----------------------------------------------------------------


@pytest.mark.parametrize("op", OPS, ids=OP_NAMES.get)
@pytest.mark.parametrize("dtype", NUMERIC, ids=lambda d: np.dtype(d).name)
def test_allreduce_every_op_and_dtype(dtype, op):
    shape = (3, 5)
    mine = rank_values(RANK, shape, dtype, op)
    result = hvd.allreduce(mine, op=op, name=f"np.allreduce.{np.dtype(dtype).name}.{OP_NAMES[op]}")
    assert result.dtype == np.dtype(dtype) and result.shape == shape
    np.testing.assert_array_equal(result, reference(op, everyone(shape, dtype, op)))
    np.testing.assert_array_equal(mine, rank_values(RANK, shape, dtype, op))  # input untouched


def test_allreduce_defaults_to_average():
    result = hvd.allreduce(np.full(4, float(RANK)))
    np.testing.assert_allclose(result, np.full(4, (SIZE - 1) / 2))


def test_allreduce_prescale_and_postscale():
    mine = rank_values(RANK, (6,), np.float64)
    result = hvd.allreduce(mine, op=hvd.Sum, prescale_factor=3.0, postscale_factor=0.25)
    np.testing.assert_allclose(result, reference(hvd.Sum, everyone((6,), np.float64)) * 0.75)
    averaged = hvd.allreduce(mine, op=hvd.Average, postscale_factor=2.0)
    np.testing.assert_allclose(averaged,
                               reference(hvd.Sum, everyone((6,), np.float64)) * 2.0 / SIZE)


def test_allreduce_deprecated_average_argument():
    mine = np.full(3, RANK + 1.0)
    summed = hvd.allreduce(mine, average=False)
    np.testing.assert_allclose(summed, np.full(3, SIZE * (SIZE + 1) / 2))
    averaged = hvd.allreduce(mine, average=True)
    np.testing.assert_allclose(averaged, np.full(3, (SIZE + 1) / 2))
    with pytest.raises(ValueError, match="not both"):
        hvd.allreduce(mine, average=True, op=hvd.Sum)


def test_allreduce_bool_arrays():
    mine = np.array([RANK == 0, False, True, RANK % 2 == 1])
    anyone = np.array([True, False, True, SIZE > 1])
    everybody = np.array([False, False, True, False])
    assert hvd.allreduce(mine, op=hvd.Max).dtype == np.bool_
    np.testing.assert_array_equal(hvd.allreduce(mine, op=hvd.Max), anyone)
    np.testing.assert_array_equal(hvd.allreduce(mine, op=hvd.Sum), anyone)
    np.testing.assert_array_equal(hvd.allreduce(mine, op=hvd.Min), everybody)
    np.testing.assert_array_equal(hvd.allreduce(mine, op=hvd.Product), everybody)
    with pytest.raises(ValueError, match="bool"):
        hvd.allreduce(mine, op=hvd.Average)


def test_allreduce_scalars_empty_arrays_and_lists():
    scalar = hvd.allreduce(np.float32(RANK), op=hvd.Sum)
    assert scalar.shape == () and scalar == SIZE * (SIZE - 1) / 2
    assert hvd.allreduce(np.zeros((0, 3), np.float32), op=hvd.Sum).shape == (0, 3)
    np.testing.assert_array_equal(hvd.allreduce([RANK, 1], op=hvd.Sum),
                                  [SIZE * (SIZE - 1) // 2, SIZE])


def test_allreduce_non_contiguous_and_byte_swapped_inputs():
    full = np.arange(24, dtype=np.float32).reshape(4, 6) + RANK
    view = full[::2, 1::2].T  # strided and transposed
    result = hvd.allreduce(view, op=hvd.Sum)
    expected = sum((np.arange(24, dtype=np.float32).reshape(4, 6) + r)[::2, 1::2].T
                   for r in range(SIZE))
    np.testing.assert_array_equal(result, expected)
    swapped = (np.arange(5) + RANK).astype(">i4" if np.little_endian else "<i4")
    assert not swapped.dtype.isnative
    np.testing.assert_array_equal(hvd.allreduce(swapped, op=hvd.Max), np.arange(5) + SIZE - 1)
    in_place = swapped.copy()
    hvd.allreduce_(in_place, op=hvd.Min)
    assert not in_place.dtype.isnative
    np.testing.assert_array_equal(in_place, np.arange(5))


def test_allreduce_accepts_read_only_input_but_not_as_in_place_target():
    mine = rank_values(RANK, (7,), np.float32)
    mine.setflags(write=False)
    np.testing.assert_array_equal(hvd.allreduce(mine, op=hvd.Sum),
                                  reference(hvd.Sum, everyone((7,), np.float32)))
    with pytest.raises(ValueError, match="read-only"):
        hvd.allreduce_(mine, op=hvd.Sum)


def test_inputs_reach_the_engine_without_copies_when_the_layout_allows():
    from kolo.numpy import _arrays

    contiguous = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert _arrays.engine_input(contiguous).array is contiguous
    flags = np.array([True, False])
    as_bytes = _arrays.engine_input(flags)
    assert as_bytes.dtype_name == "bool" and np.shares_memory(as_bytes.array, flags)
    read_only = np.arange(4.0)
    read_only.setflags(write=False)
    alias = _arrays.engine_input(read_only).array
    assert alias.flags.writeable and np.shares_memory(alias, read_only)
    strided = contiguous[:, ::2]
    copied = _arrays.engine_input(strided).array
    assert copied.flags.c_contiguous and not np.shares_memory(copied, contiguous)


def test_allreduce_in_place():
    mine = rank_values(RANK, (2, 3), np.int32)
    returned = hvd.allreduce_(mine, op=hvd.Sum)
    assert returned is mine
    np.testing.assert_array_equal(mine, reference(hvd.Sum, everyone((2, 3), np.int32)))
    # A strided view: the result lands in the caller's memory all the same.
    base = np.zeros((3, 4), np.float64)
    base[:, ::2] = RANK + 1
    view = base[:, ::2]
    hvd.allreduce_(view, op=hvd.Sum)
    np.testing.assert_array_equal(base[:, ::2], np.full((3, 2), SIZE * (SIZE + 1) / 2))
    np.testing.assert_array_equal(base[:, 1::2], 0)
    flags = np.array([RANK == 0, True])
    hvd.allreduce_(flags, op=hvd.Min)
    np.testing.assert_array_equal(flags, [False, True])
    with pytest.raises(TypeError, match="ndarray"):
        hvd.allreduce_([1.0, 2.0])


def test_allreduce_async_poll_and_synchronize():
    mine = rank_values(RANK, (100,), np.float32)
    handle = hvd.allreduce_async(mine, op=hvd.Sum, name="np.async.allreduce")
    assert isinstance(handle, int)
    result = hvd.synchronize(handle)
    np.testing.assert_array_equal(result, reference(hvd.Sum, everyone((100,), np.float32)))
    in_place = rank_values(RANK, (5,), np.float64)
    handle = hvd.allreduce_async_(in_place, op=hvd.Max)
    assert hvd.synchronize(handle) is in_place
    np.testing.assert_array_equal(in_place, reference(hvd.Max, everyone((5,), np.float64)))


def test_poll_becomes_true_and_synchronize_spends_the_handle():
    handle = hvd.allreduce_async(np.ones(3), op=hvd.Sum, name="np.async.spent")
    while not hvd.poll(handle):
        pass
    np.testing.assert_array_equal(hvd.synchronize(handle), np.full(3, float(SIZE)))
    with pytest.raises(ValueError, match="unknown or already synchronized handle"):
        hvd.synchronize(handle)
    with pytest.raises(ValueError, match="unknown or already synchronized handle"):
        hvd.poll(handle)
    with pytest.raises(ValueError, match="unknown or already synchronized handle"):
        hvd.synchronize(10 ** 9)


# --- grouped allreduce -------------------------------------------------------------


def test_grouped_allreduce_mixed_shapes_and_dtypes():
    shapes = [(4,), (2, 3), (1,), (0,)]
    dtypes = [np.float32, np.int64, np.float64, np.int32]
    tensors = [rank_values(RANK, s, d) for s, d in zip(shapes, dtypes)]
    results = hvd.grouped_allreduce(tensors, op=hvd.Sum, name="np.grouped")
    assert len(results) == len(tensors)
    for result, shape, dtype in zip(results, shapes, dtypes):
        assert result.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(result, reference(hvd.Sum, everyone(shape, dtype)))
    assert hvd.grouped_allreduce([]) == []


def test_grouped_allreduce_in_place_and_async():
    tensors = [rank_values(RANK, (3,), np.float32), rank_values(RANK, (2, 2), np.float64)]
    returned = hvd.grouped_allreduce_(tensors, op=hvd.Min)
    assert all(a is b for a, b in zip(returned, tensors))
    np.testing.assert_array_equal(tensors[0], reference(hvd.Min, everyone((3,), np.float32)))
    np.testing.assert_array_equal(tensors[1], reference(hvd.Min, everyone((2, 2), np.float64)))
    handle = hvd.grouped_allreduce_async([np.full(2, RANK, np.int32)] * 2, op=hvd.Sum)
    for result in hvd.synchronize(handle):
        np.testing.assert_array_equal(result, np.full(2, SIZE * (SIZE - 1) // 2))
    flags = [np.array([True, RANK == 0]), np.array([RANK == 1])]
    hvd.synchronize(hvd.grouped_allreduce_async_(flags, op=hvd.Max))
    np.testing.assert_array_equal(flags[0], [True, True])
    np.testing.assert_array_equal(flags[1], [True])


def test_grouped_allreduce_refuses_bool_mixed_with_numbers():
    with pytest.raises(TypeError, match="mix bool"):
        hvd.grouped_allreduce([np.zeros(2, bool), np.zeros(2, np.float32)])
    with pytest.raises(TypeError, match="list of arrays"):
        hvd.grouped_allreduce(np.zeros(3))


# --- allgather ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", NUMERIC + [np.bool_], ids=lambda d: np.dtype(d).name)
def test_allgather_uneven_first_dimension(dtype):
    mine = np.full((RANK + 1, 2), RANK % 2 if dtype == np.bool_ else RANK, dtype=dtype)
    gathered = hvd.allgather(mine, name=f"np.allgather.{np.dtype(dtype).name}")
    expected = np.concatenate([np.full((r + 1, 2), r % 2 if dtype == np.bool_ else r,
                                       dtype=dtype) for r in range(SIZE)])
    assert gathered.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(gathered, expected)


def test_allgather_output_is_an_ordinary_writable_array():
    gathered = hvd.allgather(np.arange(3) + RANK)
    assert gathered.flags.writeable
    gathered += 1  # users modify results in place
    np.testing.assert_array_equal(gathered, np.concatenate([np.arange(3) + r + 1
                                                            for r in range(SIZE)]))
    again = hvd.allgather(np.arange(3) + RANK)  # a later result is independent
    np.testing.assert_array_equal(again, np.concatenate([np.arange(3) + r for r in range(SIZE)]))


def test_grouped_allgather_and_async():
    tensors = [np.full((RANK + 1,), RANK, np.int64), np.full((1, 3), RANK, np.float32)]
    first, second = hvd.grouped_allgather(tensors)
    np.testing.assert_array_equal(first, np.concatenate([np.full(r + 1, r) for r in range(SIZE)]))
    np.testing.assert_array_equal(second, np.repeat(np.arange(SIZE), 3).reshape(SIZE, 3))
    gathered = hvd.synchronize(hvd.allgather_async(np.array([RANK * 10])))
    np.testing.assert_array_equal(gathered, np.arange(SIZE) * 10)
    (gathered,) = hvd.synchronize(hvd.grouped_allgather_async([np.array([RANK])]))
    np.testing.assert_array_equal(gathered, np.arange(SIZE))


# --- broadcast ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_], ids=lambda d: np.dtype(d).name)
def test_broadcast_from_every_root(dtype):
    for root in range(SIZE):
        mine = np.full((2, 3), RANK, dtype=dtype)
        result = hvd.broadcast(mine, root_rank=root, name=f"np.bcast.{root}")
        np.testing.assert_array_equal(result, np.full((2, 3), root, dtype=dtype))
        np.testing.assert_array_equal(mine, np.full((2, 3), RANK, dtype=dtype))  # untouched


def test_broadcast_in_place_and_async():
    mine = np.full(4, RANK, np.float64)
    assert hvd.broadcast_(mine, root_rank=SIZE - 1) is mine
    np.testing.assert_array_equal(mine, np.full(4, SIZE - 1))
    result = hvd.synchronize(hvd.broadcast_async(np.array([RANK, RANK]), root_rank=0))
    np.testing.assert_array_equal(result, [0, 0])
    target = np.array([RANK], np.int32)
    hvd.synchronize(hvd.broadcast_async_(target, root_rank=1))
    np.testing.assert_array_equal(target, [1])


# --- alltoall ----------------------------------------------------------------


def test_alltoall_equal_parts():
    mine = np.arange(SIZE * 2, dtype=np.float32) + 100 * RANK
    received, splits = hvd.alltoall(mine)
    expected = np.concatenate([np.arange(RANK * 2, RANK * 2 + 2) + 100 * r for r in range(SIZE)])
    np.testing.assert_array_equal(received, expected)
    assert splits.dtype == np.int32
    np.testing.assert_array_equal(splits, np.full(SIZE, 2))


def test_alltoall_with_splits_and_async():
    # Rank r sends j+1 rows to rank j; every row holds (sender, receiver).
    splits = [j + 1 for j in range(SIZE)]
    rows = np.concatenate([np.tile([RANK, j], (j + 1, 1)) for j in range(SIZE)]).astype(np.int64)
    received, received_splits = hvd.alltoall(rows, splits=np.array(splits))
    np.testing.assert_array_equal(received_splits, np.full(SIZE, RANK + 1))
    expected = np.concatenate([np.tile([r, RANK], (RANK + 1, 1)) for r in range(SIZE)])
    np.testing.assert_array_equal(received, expected)
    received, _ = hvd.synchronize(hvd.alltoall_async(rows, splits=splits))
    np.testing.assert_array_equal(received, expected)
    with pytest.raises(ValueError, match="1-D list of integers"):
        hvd.alltoall(rows, splits=[[1], [2]])


# --- reducescatter -------------------------------------------------------------


@pytest.mark.parametrize("op", [hvd.Sum, hvd.Average], ids=OP_NAMES.get)
def test_reducescatter_uneven_rows(op):
    rows = 2 * SIZE + 1  # the first (rows % SIZE) ranks get one row more
    mine = rank_values(RANK, (rows, 2), np.float64, op)
    result = hvd.reducescatter(mine, op=op)
    full = reference(op, everyone((rows, 2), np.float64, op))
    counts = [rows // SIZE + (1 if r < rows % SIZE else 0) for r in range(SIZE)]
    start = sum(counts[:RANK])
    np.testing.assert_allclose(result, full[start:start + counts[RANK]])


def test_reducescatter_default_op_is_average_and_grouped_and_async():
    mine = np.full((SIZE, 3), float(RANK))
    np.testing.assert_allclose(hvd.reducescatter(mine), np.full((1, 3), (SIZE - 1) / 2))
    first, second = hvd.grouped_reducescatter(
        [np.full((SIZE,), RANK + 1, np.int32), np.full((SIZE * 2, 2), 1.0, np.float32)],
        op=hvd.Sum)
    np.testing.assert_array_equal(first, [SIZE * (SIZE + 1) // 2])
    np.testing.assert_array_equal(second, np.full((2, 2), float(SIZE)))
    result = hvd.synchronize(hvd.reducescatter_async(np.ones(SIZE * 2), op=hvd.Sum))
    np.testing.assert_array_equal(result, [SIZE, SIZE])
    (result,) = hvd.synchronize(hvd.grouped_reducescatter_async([np.ones(SIZE)], op=hvd.Sum,
                                                                postscale_factor=0.5))
    np.testing.assert_array_equal(result, [SIZE * 0.5])


# --- barrier, join -------------------------------------------------------------


def test_barrier_and_join():
    hvd.barrier()
    last = hvd.join()
    assert 0 <= last < SIZE
    # Every rank learns the same last rank.
    np.testing.assert_array_equal(hvd.allgather(np.array([last])), np.full(SIZE, last))


def test_allreduce_with_a_joined_rank_counts_it_as_zeros():
    # The last rank joins at once; the others allreduce without it.
    if RANK == SIZE - 1:
        last = hvd.join()
    else:
        result = hvd.allreduce(np.full(3, RANK + 1.0), op=hvd.Sum, name="np.joined.allreduce")
        np.testing.assert_array_equal(result, np.full(3, (SIZE - 1) * SIZE / 2))
        last = hvd.join()
    assert 0 <= last < SIZE


# --- process sets --------------------------------------------------------------


def test_collectives_on_an_added_process_set():
    pair = hvd.add_process_set([0, 1])
    try:
        assert pair.process_set_id > 0 and pair.size() == 2
        assert pair.included() == (RANK in (0, 1))
        if pair.included():
            summed = hvd.allreduce(np.array([RANK + 1.0]), op=hvd.Sum, process_set=pair)
            np.testing.assert_array_equal(summed, [3.0])
            gathered = hvd.allgather(np.array([RANK]), process_set=pair)
            np.testing.assert_array_equal(gathered, [0, 1])
            # Roots are global ranks, as in Horovod.
            result = hvd.broadcast(np.array([RANK]), root_rank=1, process_set=pair)
            np.testing.assert_array_equal(result, [1])
            with pytest.raises(ValueError, match="not in process set"):
                hvd.broadcast(np.array([RANK]), root_rank=2, process_set=pair)
            # The set's id names it as well as the object does.
            result = hvd.allreduce(np.array([RANK]), op=hvd.Max,
                                   process_set=pair.process_set_id)
            np.testing.assert_array_equal(result, [1])
            assert hvd.broadcast_object(f"from {RANK}", root_rank=1, process_set=pair) == "from 1"
            assert hvd.allgather_object(RANK, process_set=pair) == [0, 1]
            hvd.barrier(process_set=pair)
        else:
            with pytest.raises(ValueError, match="not a member"):
                hvd.allreduce(np.ones(1), process_set=pair)
    finally:
        assert hvd.remove_process_set(pair) is True
    assert hvd.remove_process_set(pair) is False
    with pytest.raises(ValueError, match="not registered"):
        hvd.allreduce(np.ones(1), process_set=pair)


# --- errors ------------------------------------------------------------------


def test_mismatched_shapes_fail_on_every_rank_with_the_reason():
    mine = np.ones(RANK + 2, np.float32)
    with pytest.raises(KoloInternalError, match="(?i)mismatched shapes.*np.mismatch.shape"):
        hvd.allreduce(mine, name="np.mismatch.shape")
    handle = hvd.allreduce_async(mine, name="np.mismatch.shape.async")
    with pytest.raises(KoloInternalError, match="(?i)mismatched shapes"):
        hvd.synchronize(handle)
    with pytest.raises(ValueError, match="unknown or already synchronized"):
        hvd.synchronize(handle)  # a failed handle is spent too
    # The job goes on after a rejected operation.
    np.testing.assert_array_equal(hvd.allreduce(np.ones(2), op=hvd.Sum), np.full(2, SIZE))


def test_mismatched_dtypes_and_trailing_dims_fail_on_every_rank():
    mine = np.ones(4, np.float32 if RANK % 2 == 0 else np.float64)
    with pytest.raises(KoloInternalError, match="(?i)type"):
        hvd.allreduce(mine, name="np.mismatch.dtype")
    with pytest.raises(KoloInternalError, match="(?i)shape"):
        hvd.allgather(np.ones((2, RANK + 1)), name="np.mismatch.allgather")
    with pytest.raises(KoloInternalError, match="(?i)root"):
        hvd.broadcast(np.ones(2), root_rank=RANK, name="np.mismatch.root")


def test_arguments_rejected_before_anything_runs():
    with pytest.raises(TypeError, match="complex64"):
        hvd.allreduce(np.ones(3, np.complex64))
    with pytest.raises(TypeError, match="object"):
        hvd.allgather(np.array([object()]))
    with pytest.raises(ValueError, match="unknown reduction op"):
        hvd.allreduce(np.ones(3), op="median")
    with pytest.raises(ValueError, match="does not exist"):
        hvd.allreduce(np.ones(3), process_set=99)
    with pytest.raises(ValueError, match="not in process set"):
        hvd.broadcast(np.ones(3), root_rank=SIZE)
    with pytest.raises(ValueError, match="scalar"):
        hvd.allgather(np.float32(1))
    with pytest.raises(TypeError, match="prescale_factor"):
        hvd.allreduce(np.ones(3), prescale_factor="x")


def test_a_name_in_flight_cannot_be_reused():
    # Deterministic: the operation cannot finish while one rank (`late`)
    # has not submitted it, and `late` submits only after the barrier.
    for late in (0, 1):
        name = f"np.inflight.{late}"
        if RANK == late:
            hvd.barrier()
            handle = hvd.allreduce_async(np.ones(2), op=hvd.Sum, name=name)
        else:
            handle = hvd.allreduce_async(np.ones(2), op=hvd.Sum, name=name)
            with pytest.raises(ValueError, match="already in use"):
                hvd.allreduce(np.ones(2), name=name)
            hvd.barrier()
        np.testing.assert_array_equal(hvd.synchronize(handle), np.full(2, SIZE))


# --- objects -------------------------------------------------------------------


def test_broadcast_object_from_each_root():
    for root in range(SIZE):
        obj = {"root": RANK, "payload": list(range(RANK * 100))} if RANK == root else None
        received = hvd.broadcast_object(obj, root_rank=root)
        assert received == {"root": root, "payload": list(range(root * 100))}


def test_broadcast_object_sends_closures():
    offset = 7
    fn = (lambda x: x + offset + RANK) if RANK == 0 else None
    assert hvd.broadcast_object(fn, root_rank=0)(1) == 8  # rank 0's closure, RANK bound to 0


def test_allgather_object_different_sizes():
    obj = {"rank": RANK, "blob": "x" * (RANK * 1000)}
    gathered = hvd.allgather_object(obj)
    assert gathered == [{"rank": r, "blob": "x" * (r * 1000)} for r in range(SIZE)]


# --- timeline ------------------------------------------------------------------


def test_timeline_records_operations():
    # pytest's tmp_path is shared by the ranks' pytest processes, which
    # clean each other's directories up; each rank makes its own.
    with tempfile.TemporaryDirectory(prefix="kolo-np-timeline-") as directory:
        path = os.path.join(directory, "timeline.json")
        hvd.start_timeline(path)
        hvd.allreduce(np.ones(8), name="np.timeline.tensor")
        hvd.stop_timeline()
        if RANK == 0:  # rank 0 writes the job's timeline
            with open(path) as f:
                assert "np.timeline.tensor" in f.read()
        hvd.barrier()
