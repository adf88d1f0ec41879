"""Every operation of the engine's table (kolo._core.operations(), from
src/core/operation_table.h) has its method on _core.Engine and its
functions in kolo.torch and kolo.numpy, under Horovod's names. An operation
added to the table without them fails here; no engine is started."""

import pytest

import horovod.numpy
import horovod.torch
import kolo.numpy
import kolo.torch
from kolo import _core

OPERATIONS = _core.operations()
FRAMEWORKS = [kolo.torch, kolo.numpy, horovod.torch, horovod.numpy]


def expected_functions(operation):
    """Horovod's names for one operation: the call itself; for data-moving
    ones the _async form, the in-place forms where the caller owns the
    output, and the grouped forms where the engine has a grouped call."""
    name = operation["name"]
    if not operation["moves_data"]:
        return [name]
    forms = [name, name + "_async"]
    if operation["output"] == "caller":
        forms += [name + "_", name + "_async_"]
    if hasattr(_core.Engine, "grouped_" + name):
        forms += ["grouped_" + form for form in forms]
    return forms


def test_the_table_lists_the_engine_operations_in_op_type_order():
    names = [operation["name"] for operation in OPERATIONS]
    assert names[:6] == ["allreduce", "allgather", "broadcast", "alltoall", "reducescatter",
                         "barrier"]
    assert len(names) == len(set(names))
    assert {"join", "add_process_set", "remove_process_set"} <= set(names)


def test_expected_functions_follow_horovod():
    by_name = {operation["name"]: operation for operation in OPERATIONS}
    assert sorted(expected_functions(by_name["allreduce"])) == sorted([
        "allreduce", "allreduce_async", "allreduce_", "allreduce_async_", "grouped_allreduce",
        "grouped_allreduce_async", "grouped_allreduce_", "grouped_allreduce_async_"])
    assert sorted(expected_functions(by_name["alltoall"])) == ["alltoall", "alltoall_async"]
    assert expected_functions(by_name["barrier"]) == ["barrier"]


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda operation: operation["name"])
def test_engine_has_a_method(operation):
    assert callable(getattr(_core.Engine, operation["name"], None)), operation["name"]


@pytest.mark.parametrize("framework", FRAMEWORKS, ids=lambda module: module.__name__)
@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda operation: operation["name"])
def test_framework_has_the_functions(framework, operation):
    missing = [name for name in expected_functions(operation)
               if not callable(getattr(framework, name, None)) or name not in framework.__all__]
    assert not missing, f"{framework.__name__} lacks {missing} for {operation['name']}"
