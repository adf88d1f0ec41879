"""`kolo timeline summary` on a timeline from a real 2-rank job under kolorun.

The job (timeline_job.py) runs with the response cache off, so every
negotiation goes through rank 0's coordinator and records when each rank
submitted, and over TCP, so allreduces go through the fusion buffer. The
summary's numbers are checked against totals this file recomputes from the
events itself; the chart must be a PNG of the promised size; a file cut short
must still be summarized with a warning; bad input must exit 2 with one line.
"""

import json
import os
import re
import struct
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
STEPS, STALL_STEP, STALL_SECONDS = 8, 5, 0.4
TENSORS = {"warmup", "grad.layer0", "grad.layer1", "grad.layer2", "grad.layer3", "params.epoch",
           "loss"}
PHASES = ("negotiate", "queue", "fusion copies", "collective", "other")


def beside_python(name):
    path = os.path.join(os.path.dirname(sys.executable), name)
    if not os.path.exists(path):
        pytest.skip(f"{name} is not installed beside {sys.executable}")
    return path


@pytest.fixture(scope="module")
def timeline(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("timeline") / "job.json")
    env = dict(os.environ, HOROVOD_CACHE_CAPACITY="0", KOLO_SHM="0")
    job = subprocess.run(
        [beside_python("kolorun"), "-np", "2", "--timeline-filename", path, sys.executable,
         os.path.join(HERE, "timeline_job.py"), str(STEPS), str(STALL_STEP), str(STALL_SECONDS)],
        capture_output=True, text=True, timeout=120, env=env)
    assert job.returncode == 0, f"stdout:\n{job.stdout}\nstderr:\n{job.stderr}"
    with open(path) as f:
        assert f.read().rstrip().endswith("]"), "the finished job's timeline is not closed"
    return path


def summarize(*args, module=False, timeout=60):
    command = ([sys.executable, "-m", "kolo.timeline"] if module
               else [beside_python("kolo"), "timeline"])
    return subprocess.run(command + ["summary", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def recompute(events):
    """Microseconds per tensor and phase, and per-rank lags, straight from the events."""
    names = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    per_tensor = {name: dict.fromkeys(PHASES, 0) for name in names.values()}
    uses = dict.fromkeys(names.values(), 0)
    lags, marks, negotiations = {}, {}, []
    stacks = {pid: [] for pid in names}
    for e in events:
        if e.get("pid") not in names:
            continue
        tensor, stack = names[e["pid"]], stacks[e["pid"]]
        if e["ph"] == "B":
            stack.append((e["name"], e["ts"], []))
            if e["name"].startswith("NEGOTIATE_"):
                uses[tensor] += 1  # marks that came first (a rank ahead of rank 0) are its
        elif e["ph"] == "i":
            marks.setdefault(tensor, []).append((e["args"]["rank"], e["ts"]))
        elif e["ph"] == "E":
            name, begin, children = stack.pop()
            took = e["ts"] - begin
            if stack:
                stack[-1][2].append(took)
                phase = ("queue" if name == "QUEUE" else "fusion copies"
                         if name.startswith("MEMCPY_") else "collective")
                per_tensor[tensor][phase] += took
            elif name.startswith("NEGOTIATE_"):
                per_tensor[tensor]["negotiate"] += took
                negotiations.append((tensor, took))
                ready = marks.pop(tensor, [])
                if len(ready) >= 2:
                    first = min(ts for _, ts in ready)
                    for rank, ts in ready:
                        lags[rank] = lags.get(rank, 0) + ts - first
            else:
                per_tensor[tensor]["other"] += took - sum(children)
    return per_tensor, uses, lags, negotiations


def phase_lines(stdout):
    found = {}
    for phase in PHASES:
        match = re.search(rf"^  {re.escape(phase)} +([0-9.]+) ", stdout, re.M)
        assert match, f"no '{phase}' total in:\n{stdout}"
        found[phase] = float(match.group(1))
    return found


def tensor_rows(stdout):
    rows = {}
    for line in stdout.split("per tensor")[1].split("\n\n")[0].splitlines()[2:]:
        fields = line.split()
        uses, numbers, op, name = int(fields[0]), fields[1:7], fields[7], " ".join(fields[8:])
        rows[name] = (uses, [float(n) for n in numbers], op)
    return rows


def close(ms, us):
    return abs(ms - us / 1000.0) <= 0.0015


def test_summary_matches_the_events(timeline):
    with open(timeline) as f:
        events = json.load(f)
    job = summarize(timeline, "--top", "0", "--no-chart")
    assert job.returncode == 0, job.stderr
    assert job.stderr == ""
    per_tensor, uses, _, _ = recompute(events)
    assert set(per_tensor) == TENSORS
    operations = (len(TENSORS) - 1) * STEPS + 1
    assert f"tensors: {len(TENSORS)}  operations: {operations}  steps: {STEPS}" in job.stdout
    assert re.search(r"^ranks: 2$", job.stdout, re.M), job.stdout

    printed = phase_lines(job.stdout)
    for phase in PHASES:
        expected = sum(t[phase] for t in per_tensor.values())
        assert close(printed[phase], expected), (phase, printed[phase], expected)
    assert sum(t["fusion copies"] for t in per_tensor.values()) > 0, "over TCP allreduces fuse"

    rows = tensor_rows(job.stdout)
    assert set(rows) == TENSORS
    for name, (count, numbers, op) in rows.items():
        assert count == uses[name] == (1 if name == "warmup" else STEPS)
        assert op == ("BROADCAST" if name == "params.epoch" else "ALLREDUCE")
        for phase, value in zip(PHASES, numbers):
            assert close(value, per_tensor[name][phase]), (name, phase, value)
        assert close(numbers[5], sum(per_tensor[name].values()))


def test_stalled_rank_and_step_are_named(timeline):
    with open(timeline) as f:
        _, _, lags, negotiations = recompute(json.load(f))
    job = summarize(timeline, "--no-chart", "--stall-ms", "200", "--top", "0")
    assert job.returncode == 0, job.stderr
    slowest = job.stdout.split("slowest ranks")[1].splitlines()[1:3]
    for line, (rank, lag) in zip(slowest, sorted(lags.items(), key=lambda r: (-r[1], r[0]))):
        match = re.match(r"  rank (\d+): ([0-9.]+) ms lag", line)
        assert match and int(match.group(1)) == rank, job.stdout
        assert close(float(match.group(2)), lag)
    assert lags[1] >= STALL_SECONDS * 1e6 * 0.9, "rank 1 submitted the loss late"
    stalls = job.stdout.split("stalls (negotiations of 200 ms or more): ")[1].splitlines()
    assert int(stalls[0]) == sum(took >= 200000 for _, took in negotiations), job.stdout
    pattern = rf"  [0-9.]+ ms at [0-9.]+ ms, step {STALL_STEP}, last ready: rank 1: loss"
    assert any(re.fullmatch(pattern, line) for line in stalls[1:]), job.stdout


def test_chart_is_a_png_of_the_promised_size(timeline, tmp_path):
    chart = tmp_path / "steps.png"
    job = summarize(timeline, "--chart", str(chart))
    assert job.returncode == 0, job.stderr
    assert job.stdout.rstrip().endswith(f"chart: {chart}")
    data = chart.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    assert struct.unpack(">II", data[16:24]) == (1000, 600)
    image = pytest.importorskip("matplotlib.image").imread(str(chart))
    assert image.shape[:2] == (600, 1000)
    assert image.std() > 0.05, "the chart is blank"


def test_module_form_prints_the_same(timeline):
    by_command = summarize(timeline, "--no-chart")
    by_module = summarize(timeline, "--no-chart", module=True)
    assert by_module.returncode == by_command.returncode == 0, by_module.stderr
    assert by_module.stdout == by_command.stdout


def test_truncated_file_is_summarized_with_a_warning(timeline, tmp_path):
    with open(timeline, "rb") as f:
        text = f.read()
    end = len(text) * 3 // 5
    if text[end - 1:end] == b"\n":
        end += 1  # cut mid-line, as a killed writer may leave it
    cut = text[:end]
    truncated = tmp_path / "cut.json"
    truncated.write_bytes(cut)
    job = summarize(str(truncated), "--no-chart", "--top", "0")
    assert job.returncode == 0, job.stderr
    assert re.fullmatch(r"kolo timeline: warning: '.*cut\.json' is incomplete \(no closing "
                        r"'\]'.*\n", job.stderr), job.stderr
    whole_lines = cut[: cut.rfind(b"\n")].decode().splitlines()[1:]
    negotiations = sum('"name":"NEGOTIATE_' in line and '"ph":"B"' in line
                       for line in whole_lines)
    assert re.search(rf"operations: {negotiations}  ", job.stdout), job.stdout
    depth = {}
    for line in whole_lines:
        event = json.loads(line.lstrip(","))
        depth[event.get("pid")] = depth.get(event.get("pid"), 0) + {"B": 1, "E": -1}.get(
            event["ph"], 0)
    open_rows = sum(d > 0 for d in depth.values())
    if open_rows:
        assert f"operations cut short by the end of the file: {open_rows}" in job.stdout
    else:
        assert "cut short" not in job.stdout
    assert negotiations < (len(TENSORS) - 1) * STEPS


@pytest.mark.parametrize("content", [None, "hello\n", '{"traceEvents": []}\n', "[1, 2, 3]\n",
                                     '[\n{"ph":"X","name":"a","ts":1}\n]\n'])
def test_bad_input_exits_2_with_one_line(tmp_path, content):
    path = tmp_path / "input.json"
    if content is not None:
        path.write_text(content)
    job = summarize(str(path))
    assert job.returncode == 2
    assert job.stdout == ""
    assert job.stderr.count("\n") == 1 and job.stderr.startswith("kolo timeline: "), job.stderr
    assert str(path) in job.stderr
    assert ("cannot read" if content is None else "is not a Kolo timeline") in job.stderr
    assert not (tmp_path / "input.png").exists()


@pytest.mark.parametrize("args", [["summary", "x.json", "--stall-ms", "-1"], ["summary"],
                                  ["frobnicate"]])
def test_bad_arguments_exit_2_with_one_line(args):
    job = subprocess.run([beside_python("kolo"), "timeline", *args], capture_output=True,
                         text=True, timeout=60)
    assert job.returncode == 2
    assert job.stderr.count("\n") == 1 and job.stderr.startswith("kolo timeline"), job.stderr


def test_kolo_without_a_known_command_exits_2():
    job = subprocess.run([beside_python("kolo"), "timelines"], capture_output=True, text=True,
                         timeout=60)
    assert job.returncode == 2
    assert job.stderr.count("\n") == 1 and "unknown command 'timelines'" in job.stderr
