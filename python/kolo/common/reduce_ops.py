"""Horovod's reduction-op constants and how they map onto the engine.
The numeric values are Horovod's, so scripts that compare or store them
keep working."""

Average = 0
Sum = 1
Adasum = 2
Min = 3
Max = 4
Product = 5

_ENGINE_NAMES = {Average: "average", Sum: "sum", Min: "min", Max: "max", Product: "product"}


def resolve_op(op=None, average=None):
    """The op an allreduce runs, from Horovod's `op` and deprecated `average`."""
    if op is not None and average is not None:
        raise ValueError("kolo: pass either op or the deprecated average, not both")
    if op is None:
        op = Average if average is None or average else Sum
    if op == Adasum:
        raise NotImplementedError("kolo: the Adasum reduction is not supported; use Average or Sum")
    if op not in _ENGINE_NAMES:
        raise ValueError(f"kolo: unknown reduction op {op!r}")
    return op


def engine_op_name(op):
    return _ENGINE_NAMES[op]


__all__ = ["Average", "Sum", "Adasum", "Min", "Max", "Product"]
