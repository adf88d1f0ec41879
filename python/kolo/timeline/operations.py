"""Rebuilding each tensor's operations from a timeline's begin/end events.

Each tensor has its own row (a pid named by a "process_name" event). On it the
engine writes, per use of the tensor: NEGOTIATE_<OP> (with an instant event
per rank that became ready, where the engine records them), then the <OP>
span holding QUEUE, MEMCPY_IN_FUSION_BUFFER, the collective and
MEMCPY_OUT_FUSION_BUFFER. One Operation is one such use.
"""

QUEUE = "QUEUE"
FUSION_COPIES = ("MEMCPY_IN_FUSION_BUFFER", "MEMCPY_OUT_FUSION_BUFFER")
NEGOTIATE_PREFIX = "NEGOTIATE_"


class Operation:
    """One use of a tensor: its negotiation, its op span and the activities in it.

    Times are the file's microseconds. `cut_short` is set when the file ended
    before one of its spans did (they are then ended at the file's last time).
    """

    def __init__(self, tensor, index):
        self.tensor = tensor
        self.index = index  # the how-many-th use of this tensor, from 0
        self.step = index  # summary.assign_steps may move it
        self.op = None
        self.negotiate = None  # [start, end]
        self.span = None  # [start, end] of the op
        self.activities = []  # [name, start, end]
        self.ready = []  # (rank, time) in the order the engine recorded them
        self.cut_short = False

    def start(self):
        return (self.negotiate or self.span)[0]

    def end(self):
        return (self.span or self.negotiate)[1]

    def phase_times(self):
        """Microseconds per phase: negotiate, queue, fusion copies, collective, other."""
        times = {"negotiate": 0, "queue": 0, "fusion copies": 0, "collective": 0, "other": 0}
        if self.negotiate:
            times["negotiate"] = self.negotiate[1] - self.negotiate[0]
        inside = 0
        for name, start, end in self.activities:
            if name == QUEUE:
                phase = "queue"
            elif name in FUSION_COPIES:
                phase = "fusion copies"
            else:
                phase = "collective"
            times[phase] += end - start
            inside += end - start
        if self.span:
            times["other"] = max(0, self.span[1] - self.span[0] - inside)
        return times


PHASES = ("negotiate", "queue", "fusion copies", "collective", "other")


class _Row:
    def __init__(self, tensor):
        self.tensor = tensor
        self.operations = []
        self.open = []  # (name, start, kind) of the open spans, outermost first
        self.ready_waiting = []  # rank-ready events seen before their negotiation began

    def current(self):
        return self.operations[-1] if self.operations else None

    def new_operation(self):
        op = Operation(self.tensor, len(self.operations))
        op.ready.extend(self.ready_waiting)
        self.ready_waiting = []
        self.operations.append(op)
        return op


def _begin(row, name, ts):
    if not row.open:
        current = row.current()
        if name.startswith(NEGOTIATE_PREFIX):
            op = row.new_operation()
            op.op = name[len(NEGOTIATE_PREFIX):]
            op.negotiate = [ts, ts]
            row.open.append((name, "negotiate"))
        else:
            # An op follows its negotiation; without one (dropped) it is a use of its own.
            if current is None or current.span is not None or current.negotiate is None:
                current = row.new_operation()
            current.op = name
            current.span = [ts, ts]
            row.open.append((name, "op"))
    else:
        row.current().activities.append([name, ts, ts])
        row.open.append((name, "activity"))


def _end(row, ts):
    if not row.open:
        return  # the writer never leaves one unmatched; a hand-made file might
    _, kind = row.open.pop()
    op = row.current()
    if kind == "negotiate":
        op.negotiate[1] = ts
    elif kind == "op":
        op.span[1] = ts
    else:
        op.activities[-1][2] = ts


def _ready(row, event):
    rank = event.get("args", {}).get("rank")
    if not isinstance(rank, int):
        return
    current = row.current()
    if row.open and row.open[0][1] == "negotiate":
        current.ready.append((rank, event["ts"]))
    else:
        row.ready_waiting.append((rank, event["ts"]))


def rebuild_operations(events):
    """Returns (operations in start order, tensor names in row order, cut-short count)."""
    rows = {}
    order = []
    last_ts = 0
    for event in events:
        pid = event.get("pid")
        ph = event.get("ph")
        if isinstance(event.get("ts"), (int, float)):
            last_ts = max(last_ts, event["ts"])
        if ph == "M" and event.get("name") == "process_name":
            tensor = event.get("args", {}).get("name", f"row {pid}")
            rows[pid] = _Row(tensor)
            order.append(tensor)
            continue
        row = rows.get(pid)
        if row is None:
            continue  # global markers such as CYCLE_START
        if ph == "B":
            _begin(row, event["name"], event["ts"])
        elif ph == "E":
            _end(row, event["ts"])
        elif ph == "i":
            _ready(row, event)
    cut_short = 0
    operations = []
    for row in rows.values():
        if row.open:
            row.current().cut_short = True
            cut_short += 1
            while row.open:
                _end(row, last_ts)
        operations.extend(row.operations)
    operations.sort(key=lambda op: op.start())
    return operations, order, cut_short
