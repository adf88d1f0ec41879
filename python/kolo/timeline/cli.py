"""`kolo timeline summary FILE`: a timeline read at a glance.

Prints per-phase and per-tensor totals, the slowest ranks and the stalls of a
timeline written with KOLO_TIMELINE (HOROVOD_TIMELINE, kolorun
--timeline-filename), and writes a PNG of where each step's time went.
Exit status: 0 done, 1 the chart could not be written, 2 bad input.
"""

import argparse
import os
import sys

from kolo.timeline.chart import ChartUnavailable, write_chart
from kolo.timeline.report import format_summary
from kolo.timeline.summary import summarize
from kolo.timeline.trace_file import NotATimeline, read_trace

PROG = "kolo timeline"


class _Parser(argparse.ArgumentParser):
    """Bad arguments get one line, not the usage block."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (--help shows the usage)\n")


def _positive(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not above 0")
    return value


def _default_chart_path(path):
    root, ext = os.path.splitext(path)
    return (root if ext == ".json" else path) + ".png"


def build_parser(prog=PROG):
    parser = _Parser(prog=prog, description="Read a Kolo timeline at a glance.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    summary = commands.add_parser(
        "summary", help="totals per phase, tensor and rank, stalls, and a PNG chart per step")
    summary.add_argument("file", help="the timeline (Chrome-trace JSON written by Kolo)")
    chart = summary.add_mutually_exclusive_group()
    chart.add_argument("--chart", metavar="PNG",
                       help="where to write the chart (default: FILE with .png for .json)")
    chart.add_argument("--no-chart", action="store_true", help="write no chart")
    summary.add_argument("--stall-ms", type=_positive, default=100.0, metavar="MS",
                         help="a negotiation this long or longer is a stall (default 100)")
    summary.add_argument("--top", type=int, default=20, metavar="N",
                         help="tensors and stalls to list; 0 lists every tensor (default 20)")
    return parser


def run_summary(args):
    try:
        trace = read_trace(args.file)
    except NotATimeline as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    for warning in trace.warnings:
        print(f"{PROG}: warning: {warning}", file=sys.stderr)
    summary = summarize(trace, args.stall_ms)
    top_stalls = args.top if args.top > 0 else len(summary.stalls)
    print(format_summary(summary, args.file, args.top, top_stalls, args.stall_ms))
    if args.no_chart:
        return 0
    chart_path = args.chart or _default_chart_path(args.file)
    try:
        title = f"Where each step's time went: {os.path.basename(args.file)}"
        write_chart(summary, chart_path, title)
    except (ChartUnavailable, OSError) as e:
        print(f"{PROG}: cannot write the chart '{chart_path}': {e}", file=sys.stderr)
        return 1
    print(f"chart: {chart_path}")
    return 0


def main(argv=None, prog=PROG):
    args = build_parser(prog).parse_args(argv)
    try:
        return run_summary(args)  # the parser accepts no other command
    except BrokenPipeError:
        # `kolo timeline summary FILE | head`: the reader has gone, which is no error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
