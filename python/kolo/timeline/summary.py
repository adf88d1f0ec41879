"""Totals of a timeline: per tensor, per phase, per step, per rank, and its stalls.

A step is the k-th use of the tensors used most often: a training loop that
reduces each gradient once per iteration thus gets one step per iteration,
without the timeline having to mark iterations. Tensors used less often (a
broadcast of the parameters at the start, a metric once per epoch) count in
the step during which they began, rather than stretching the first steps
over the whole run.
"""

import bisect
from collections import Counter

from kolo.timeline.operations import PHASES, rebuild_operations


def assign_steps(operations):
    """Sets `op.step` on every operation; returns the number of steps."""
    if not operations:
        return 0
    uses = Counter(op.tensor for op in operations)
    most = max(uses.values())
    starts = [None] * most
    for op in operations:
        if uses[op.tensor] == most:
            op.step = op.index
            if starts[op.index] is None or op.start() < starts[op.index]:
                starts[op.index] = op.start()
    for op in operations:
        if uses[op.tensor] != most:
            op.step = max(0, bisect.bisect_right(starts, op.start()) - 1)
    return most


class TensorTotals:
    def __init__(self, name):
        self.name = name
        self.ops = set()
        self.count = 0
        self.phases = dict.fromkeys(PHASES, 0)

    def total(self):
        return sum(self.phases.values())


class StepTotals:
    def __init__(self, index):
        self.index = index
        self.phases = dict.fromkeys(PHASES, 0)
        self.start = None
        self.end = None

    def wall(self):
        return self.end - self.start


class RankLag:
    """How far behind the first ready rank this rank was, over the negotiations it was in."""

    def __init__(self, rank):
        self.rank = rank
        self.negotiations = 0
        self.total_lag = 0
        self.times_last = 0


class Summary:
    def __init__(self, operations, tensor_order, cut_short, stall_us):
        self.operations = operations
        self.cut_short = cut_short
        self.tensors = {name: TensorTotals(name) for name in tensor_order}
        self.phases = dict.fromkeys(PHASES, 0)
        self.ranks = {}
        self.stalls = []
        self.steps = [StepTotals(i) for i in range(assign_steps(operations))]
        for op in operations:
            self._add(op, stall_us)
        self.stalls.sort(key=lambda op: op.negotiate[0] - op.negotiate[1])

    def _add(self, op, stall_us):
        times = op.phase_times()
        tensor = self.tensors.setdefault(op.tensor, TensorTotals(op.tensor))
        tensor.count += 1
        if op.op:
            tensor.ops.add(op.op)
        step = self.steps[op.step]
        step.start = op.start() if step.start is None else min(step.start, op.start())
        step.end = op.end() if step.end is None else max(step.end, op.end())
        for phase, us in times.items():
            tensor.phases[phase] += us
            step.phases[phase] += us
            self.phases[phase] += us
        self._add_ranks(op)
        if op.negotiate and op.negotiate[1] - op.negotiate[0] >= stall_us:
            self.stalls.append(op)

    def _add_ranks(self, op):
        for rank, _ in op.ready:
            self.ranks.setdefault(rank, RankLag(rank))
        if len(op.ready) < 2:
            return
        first = min(ts for _, ts in op.ready)
        last = max(ts for _, ts in op.ready)
        for rank, ts in op.ready:
            lag = self.ranks[rank]
            lag.negotiations += 1
            lag.total_lag += ts - first
            if ts == last and last > first:
                lag.times_last += 1

    def rank_count(self):
        """Ranks seen in per-rank ready events, or None when the file has none."""
        return len(self.ranks) or None

    def slowest_ranks(self):
        return sorted(self.ranks.values(), key=lambda r: (-r.total_lag, r.rank))

    def total(self):
        return sum(self.phases.values())


def summarize(trace, stall_ms):
    operations, order, cut_short = rebuild_operations(trace.events)
    return Summary(operations, order, cut_short, stall_us=stall_ms * 1000.0)
