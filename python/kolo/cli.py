"""The `kolo` command: tools that work on a job's files, one subcommand each.
Launching is `kolorun`'s job; today `kolo timeline` is the one tool here."""

import sys

USAGE = "usage: kolo timeline summary FILE [--chart PNG | --no-chart] [--stall-ms MS] [--top N]"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    if not argv or argv[0] != "timeline":
        what = f"unknown command '{argv[0]}'" if argv else "no command given"
        print(f"kolo: {what}; {USAGE}", file=sys.stderr)
        return 2
    from kolo.timeline.cli import main as timeline_main

    return timeline_main(argv[1:], prog="kolo timeline")


if __name__ == "__main__":
    sys.exit(main())
