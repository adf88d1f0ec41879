"""Reading a Kolo timeline file, complete or cut short.

The engine (src/core/timeline.h) writes a Chrome trace in JSON Array Format,
one event per line, every line but the first starting with its comma, and the
closing "]" only when the timeline stops. A job that died leaves the file
without the "]" and possibly with a last line cut mid-write; such a file is
still read here, event by event, with a warning saying what was missing.
"""

import json


class NotATimeline(Exception):
    """The file cannot be read or is not a Kolo timeline: one line for the user."""


class TraceFile:
    """The events of one timeline file and what was wrong with it."""

    def __init__(self, path, events, warnings):
        self.path = path
        self.events = events
        self.warnings = warnings


def _looks_like_trace(events):
    return all(isinstance(e, dict) and "ph" in e for e in events)


def _read_line_by_line(text):
    """Events of a file without its closing bracket; returns (events, bad line count)."""
    events = []
    bad = 0
    for line in text.splitlines()[1:]:  # the first line is the opening "["
        line = line.strip()
        if line.startswith(","):
            line = line[1:]
        if not line or line == "]":
            continue
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            bad += 1
    return events, bad


def read_trace(path):
    """Reads `path`; raises NotATimeline with a one-line reason."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise NotATimeline(f"cannot read '{path}': {e.strerror}") from None
    text = raw.decode("utf-8", errors="replace")
    if not text.lstrip().startswith("["):
        raise NotATimeline(f"'{path}' is not a Kolo timeline (not a Chrome-trace JSON array)")
    warnings = []
    try:
        events = json.loads(text)
    except json.JSONDecodeError:
        events, bad = _read_line_by_line(text)
        warnings.append(
            f"'{path}' is incomplete (no closing ']': the job may have died while writing it); "
            f"summarizing the {len(events)} events it holds"
            + (f", {bad} unreadable line(s) skipped" if bad else "")
        )
    if not isinstance(events, list) or not _looks_like_trace(events):
        raise NotATimeline(f"'{path}' is not a Kolo timeline (its entries are not trace events)")
    names_rows = any(e.get("name") == "process_name" and e.get("ph") == "M" for e in events)
    if events and not names_rows:
        raise NotATimeline(f"'{path}' is not a Kolo timeline (it names no tensor rows)")
    return TraceFile(path, events, warnings)
