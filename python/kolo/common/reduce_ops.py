"""Horovod's reduction-op constants and how they map onto the engine.
The numeric values are Horovod's, so scripts that compare or store them
keep working."""

Average = 0
Sum = 1
Adasum = 2
Min = 3
Max = 4
Product = 5

_ENGINE_NAMES = {Average: "average", Sum: "sum", Adasum: "adasum", Min: "min", Max: "max",
                 Product: "product"}


def _check_adasum_world():
    """Horovod's rule and words: Adasum pairs every rank at every level of its
    vector halving, so the number of ranks must be a power of two (the engine
    checks the process set again when the operation is enqueued)."""
    from kolo.common.runtime import runtime  # imported late: runtime imports the engine
    if not runtime().is_initialized():
        return  # the operation itself reports that init() was not called
    size = runtime().engine().size
    if size & (size - 1):
        raise NotImplementedError("Running Adasum with non-power of 2 ranks is not supported yet.")


def resolve_op(op=None, average=None):
    """The op an allreduce runs, from Horovod's `op` and deprecated `average`."""
    if op is not None and average is not None:
        raise ValueError("kolo: pass either op or the deprecated average, not both")
    if op is None:
        op = Average if average is None or average else Sum
    if op not in _ENGINE_NAMES:
        raise ValueError(f"kolo: unknown reduction op {op!r}")
    if op == Adasum:
        _check_adasum_world()
    return op


def engine_op_name(op):
    return _ENGINE_NAMES[op]


__all__ = ["Average", "Sum", "Adasum", "Min", "Max", "Product"]
