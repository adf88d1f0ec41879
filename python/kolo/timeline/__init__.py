"""Reading Kolo's timeline (KOLO_TIMELINE): `kolo timeline summary FILE`, or
`python -m kolo.timeline summary FILE`. Needs no torch and starts no engine."""

from kolo.timeline.summary import summarize
from kolo.timeline.trace_file import NotATimeline, read_trace

__all__ = ["NotATimeline", "read_trace", "summarize"]
