"""The text of `kolo timeline summary`: times in milliseconds with microsecond
precision (the file's), so the numbers can be checked against the events."""

from kolo.timeline.operations import PHASES


def _ms(us):
    return f"{us / 1000.0:.3f}"


def _share(part, whole):
    return f"{100.0 * part / whole:5.1f}%" if whole else "    -"


def _ranks_line(summary):
    count = summary.rank_count()
    if count is None:
        return ("ranks: unknown (the file has no per-rank ready events: only rank 0 writes the "
                "timeline, and it records ranks only in full negotiations)")
    return f"ranks: {count}"


def format_summary(summary, path, top_tensors, top_stalls, stall_ms):
    lines = [f"timeline: {path}"]
    lines.append(f"tensors: {len(summary.tensors)}  operations: {len(summary.operations)}  "
                 f"steps: {len(summary.steps)}")
    lines.append(_ranks_line(summary))
    if summary.cut_short:
        lines.append(f"operations cut short by the end of the file: {summary.cut_short}")

    total = summary.total()
    lines.append("")
    lines.append("phase totals (ms, summed over tensors):")
    for phase in PHASES:
        us = summary.phases[phase]
        lines.append(f"  {phase:<14} {_ms(us):>12}  {_share(us, total)}")
    lines.append(f"  {'total':<14} {_ms(total):>12}")

    lines.append("")
    tensors = sorted(summary.tensors.values(), key=lambda t: (-t.total(), t.name))
    shown = tensors if top_tensors <= 0 else tensors[:top_tensors]
    lines.append(f"per tensor (ms), {len(shown)} of {len(tensors)} by total time:")
    header = "".join(f"{p:>15}" for p in PHASES)
    lines.append(f"  {'uses':>6}{header}{'total':>15}  op  tensor")
    for t in shown:
        cells = "".join(f"{_ms(t.phases[p]):>15}" for p in PHASES)
        ops = ",".join(sorted(t.ops)) or "-"
        lines.append(f"  {t.count:>6}{cells}{_ms(t.total()):>15}  {ops}  {t.name}")

    lines.append("")
    slowest = summary.slowest_ranks()
    if summary.rank_count() is None:
        lines.append("slowest ranks: not in this timeline (no per-rank ready events)")
    else:
        lines.append("slowest ranks (lag behind the first ready rank, summed over negotiations):")
        for lag in slowest:
            lines.append(f"  rank {lag.rank}: {_ms(lag.total_lag)} ms lag over "
                         f"{lag.negotiations} negotiations, last in {lag.times_last}")

    lines.append("")
    stalls = summary.stalls
    lines.append(f"stalls (negotiations of {stall_ms:g} ms or more): {len(stalls)}")
    for op in stalls[:top_stalls]:
        waited = op.negotiate[1] - op.negotiate[0]
        last = ""
        if op.ready:
            last_rank = max(op.ready, key=lambda r: r[1])[0]
            last = f", last ready: rank {last_rank}"
        lines.append(f"  {_ms(waited)} ms at {_ms(op.negotiate[0])} ms, step {op.step}{last}: "
                     f"{op.tensor}")
    return "\n".join(lines)
