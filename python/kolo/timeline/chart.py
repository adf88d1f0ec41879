"""The PNG of `kolo timeline summary`: where each step's time went.

One stacked bar per step (see summary.py): its tensors' time in each phase,
summed, in milliseconds above and as shares of the step below (so a step
dwarfed by a stall still shows its mix). Tensors overlap in time (several
negotiate, queue or run fused together), so a bar can be taller than the step
lasted; the dots give the step's wall-clock span, from its first negotiation
to its last op's end.
"""

from kolo.timeline.operations import PHASES

# Fixed so that the file's size in pixels is known: WIDTH x HEIGHT.
FIGURE_INCHES = (10, 6)
DPI = 100
WIDTH, HEIGHT = FIGURE_INCHES[0] * DPI, FIGURE_INCHES[1] * DPI

COLORS = {
    "negotiate": "#e8a33d",
    "queue": "#9b9b9b",
    "fusion copies": "#5b9bd5",
    "collective": "#3a7d44",
    "other": "#c9c9c9",
}


class ChartUnavailable(Exception):
    pass


def write_chart(summary, path, title):
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        raise ChartUnavailable(
            "writing the chart needs matplotlib (Debian: python3-matplotlib); "
            "--no-chart skips it") from None
    steps = summary.steps
    x = [s.index for s in steps]
    fig, (absolute, shares) = plt.subplots(2, 1, sharex=True, figsize=FIGURE_INCHES, dpi=DPI,
                                           gridspec_kw={"height_ratios": [3, 2]})
    try:
        bottom = [0.0] * len(steps)
        share_bottom = [0.0] * len(steps)
        totals = [sum(s.phases.values()) or 1 for s in steps]
        for phase in PHASES:
            heights = [s.phases[phase] / 1000.0 for s in steps]
            absolute.bar(x, heights, bottom=bottom, width=0.8, color=COLORS[phase], label=phase)
            bottom = [b + h for b, h in zip(bottom, heights)]
            parts = [100.0 * s.phases[phase] / t for s, t in zip(steps, totals)]
            shares.bar(x, parts, bottom=share_bottom, width=0.8, color=COLORS[phase])
            share_bottom = [b + p for b, p in zip(share_bottom, parts)]
        if steps:
            absolute.plot(x, [s.wall() / 1000.0 for s in steps], "k.", label="step wall time")
        absolute.set_ylabel("ms, summed over tensors")
        absolute.set_title(title)
        absolute.legend(loc="upper right", fontsize="small")
        shares.set_ylabel("% of the step")
        shares.set_ylim(0, 100)
        shares.set_xlabel("step (k-th use of the most used tensors)")
        shares.margins(x=0.01)
        fig.tight_layout()
        # No bbox_inches="tight": it would change the size from WIDTH x HEIGHT.
        fig.savefig(path, dpi=DPI, format="png")
    finally:
        plt.close(fig)
