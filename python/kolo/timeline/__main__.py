"""`python -m kolo.timeline summary FILE`: the module form of `kolo timeline`."""

import sys

from kolo.timeline.cli import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m kolo.timeline"))
