#!/usr/bin/env python3
"""torch.distributed (gloo) collectives in the nccl-tests table shape of kolo-bench.

    python bench/torch_collective_bench.py --np 2 allreduce -b 8 -e 64M -f 4 -n 20 -w 5 -c 1

The torch.distributed comparison point of bench/compare: the same sweep, the same columns, the
same size conventions and the same bus bandwidth formulas as kolo-bench and mpi-bench
(bench/common/report.cc), float32 only:

- allreduce (sum) and broadcast (root 0): the size is the tensor's bytes;
- allgather: the size is the gathered total, as nccl-tests and kolo-bench define it; each rank
  sends size / np rounded down to whole float32 elements, and the reported size is that
  count x np x 4 bytes;
- alltoall: the size is what each rank sends (and receives), np blocks of size / np rounded
  down to whole float32 elements, as kolo-bench defines it;
- busbw = algbw x 2(n-1)/n (allreduce), (n-1)/n (allgather, alltoall), 1 (broadcast).

Starts --np local processes itself (this script again, one rank each, meeting through a
FileStore in a fresh temporary directory, gloo over 127.0.0.1 unless GLOO_SOCKET_IFNAME says
otherwise), with one torch thread per process. Per size: one checked run (`#wrong` counts
wrong elements over all ranks), the warm-up iterations, a barrier, the timed iterations; the time
is the slowest rank's mean per iteration, as kolo-bench and mpi-bench report it.

How it calls torch.distributed, as a user would: all_reduce in place on the tensor (the values
keep growing during the timed loop, which does not change the speed: sums of small integers
never become denormals, and inf adds at full speed); all_gather into a list of the np views of
one output tensor (gloo in torch 1.13 has no all_gather_into_tensor); broadcast in place;
all_to_all_single out of place.

Exit status: 0 all checked results right, 1 a wrong result or a failed rank, 2 bad arguments,
124 the run exceeded --timeout.
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

COLLECTIVES = ("allreduce", "allgather", "broadcast", "alltoall")
ELEM = 4  # float32


def parse_size(text):
    """kolo-bench's sizes: 8, 4K, 64M, 1G (binary multiples), optionally with B/KB/KiB."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][0-9]+)?)\s*([A-Za-z]*)\s*", text)
    scale = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20,
             "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}
    if not match or match.group(2).lower() not in scale:
        raise argparse.ArgumentTypeError(f"'{text}' is not a size (e.g. 8, 4K, 256M, 1G)")
    return int(round(float(match.group(1)) * scale[match.group(2).lower()]))


def sweep_sizes(begin, end, factor):
    """As bench/common/report.cc: begin, begin*factor, ... up to end inclusive."""
    sizes, s = [], begin
    while s <= end:
        sizes.append(s)
        following = int(s * factor)
        if following <= s:
            break
        s = following
    return sizes


def bus_factor(collective, n):
    if collective == "allreduce":
        return 2 * (n - 1) / n if n > 1 else 0
    if collective in ("allgather", "alltoall"):
        return (n - 1) / n
    return 1.0


def make_parser():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("collective", choices=COLLECTIVES)
    p.add_argument("--np", type=int, default=2, help="number of local processes (default 2)")
    p.add_argument("-b", "--minbytes", type=parse_size, default=8, help="smallest size (8)")
    p.add_argument("-e", "--maxbytes", type=parse_size, default=64 << 20, help="largest size (64M)")
    p.add_argument("-f", "--stepfactor", type=float, default=2.0, help="size step factor (2)")
    p.add_argument("-n", "--iters", type=int, default=20, help="timed iterations per size (20)")
    p.add_argument("-w", "--warmup_iters", type=int, default=5, help="untimed iterations (5)")
    p.add_argument("-c", "--check", type=int, choices=(0, 1), default=1, help="check results (1)")
    p.add_argument("-t", "--timeout", type=float, default=0,
                   help="stop the whole run after this many seconds (0: no limit)")
    # Internal: set when this script runs as one rank of the job.
    p.add_argument("--rank", type=int, default=-1, help=argparse.SUPPRESS)
    p.add_argument("--store", default="", help=argparse.SUPPRESS)
    return p


def check_args(p, args):
    if args.np < 1:
        p.error("--np must be at least 1")
    if not 1.0001 <= args.stepfactor <= 1e6:
        p.error("-f must be between 1.0001 and 1e6")
    if args.iters < 1 or args.warmup_iters < 0:
        p.error("-n must be at least 1 and -w at least 0")
    if args.minbytes > args.maxbytes:
        p.error(f"-b {args.minbytes} is larger than -e {args.maxbytes}")


# --- one rank ------------------------------------------------------------------------------


def rank_main(args):
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{args.store}", rank=args.rank,
                            world_size=args.np)
    rank, n, c = args.rank, args.np, args.collective

    def inputs(r, count):
        # kolo-bench's and mpi-bench's values: (r * 7 + i) % 4 + 1, exact in float32.
        i = torch.arange(count, dtype=torch.int32)
        return ((i + r * 7) % 4 + 1).to(torch.float32)

    if rank == 0:
        print(f"# torch-bench {c}: {n} ranks, {args.warmup_iters} warm-up + {args.iters} timed "
              f"iterations, torch {torch.__version__} gloo, 1 thread per rank")
        print("# out-of-place" if c in ("allgather", "alltoall") else "# in-place")
        print("#{:>12} {:>12} {:>9} {:>8} {:>6} {:>10} {:>8} {:>8} {:>7}".format(
            "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong"))
        print("#{:>12} {:>12} {:>9} {:>8} {:>6} {:>10} {:>8} {:>8} {:>7}".format(
            "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", ""), flush=True)

    busbw_sum, wrong_total = 0.0, 0
    sizes = sweep_sizes(args.minbytes, args.maxbytes, args.stepfactor)
    for nbytes in sizes:
        elems = nbytes // ELEM
        blocks = c in ("allgather", "alltoall")
        count = elems // n if blocks else elems  # elements of each block a rank sends
        total = count * n if blocks else count  # reported elements
        if count == 0:
            # Nothing to move (fewer than np elements in blocks of np): gloo would divide by zero.
            if rank == 0:
                print(" {:>12} {:>12} {:>9} {:>8} {:>6} {:>10.1f} {:>8.3f} {:>8.3f} {:>7}".format(
                    0, 0, "float32", "sum" if c == "allreduce" else "none",
                    0 if c == "broadcast" else -1, 0.0, 0.0, 0.0, "N/A"), flush=True)
            continue
        if c == "allgather":
            send = inputs(rank, count)
            out = torch.zeros(total, dtype=torch.float32)
            views = list(out.split(count))
            run = lambda: dist.all_gather(views, send)  # noqa: E731
            result = out
            expect = lambda: torch.cat([inputs(r, count) for r in range(n)])  # noqa: E731
        elif c == "alltoall":
            # Block j of rank r's input goes to rank j, as in kolo-bench.
            send = inputs(rank, total)
            out = torch.zeros(total, dtype=torch.float32)
            run = lambda: dist.all_to_all_single(out, send)  # noqa: E731
            result = out
            expect = lambda: torch.cat(  # noqa: E731
                [inputs(q, total)[rank * count:(rank + 1) * count] for q in range(n)])
        elif c == "allreduce":
            buf = inputs(rank, count)
            run = lambda: dist.all_reduce(buf)  # noqa: E731
            result = buf
            expect = lambda: sum(inputs(r, count) for r in range(n))  # noqa: E731
        else:
            buf = inputs(0, count) if rank == 0 else torch.zeros(count, dtype=torch.float32)
            run = lambda: dist.broadcast(buf, src=0)  # noqa: E731
            result = buf
            expect = lambda: inputs(0, count)  # noqa: E731

        wrong = -1
        if args.check:
            run()
            bad = torch.tensor([int((result != expect()).sum())], dtype=torch.int64)
            dist.all_reduce(bad)
            wrong = int(bad.item())
            wrong_total += wrong
        for _ in range(args.warmup_iters):
            run()
        dist.barrier()
        start = time.perf_counter()
        for _ in range(args.iters):
            run()
        us = torch.tensor([(time.perf_counter() - start) * 1e6 / args.iters], dtype=torch.float64)
        # The slowest rank's time: a collective is done when every rank is.
        dist.all_reduce(us, op=dist.ReduceOp.MAX)
        us = float(us.item())
        reported = total * ELEM
        algbw = reported / (us * 1e-6) / 1e9 if us > 0 else 0.0
        busbw = algbw * bus_factor(c, n)
        busbw_sum += busbw
        if rank == 0:
            print(" {:>12} {:>12} {:>9} {:>8} {:>6} {:>10.1f} {:>8.3f} {:>8.3f} {:>7}".format(
                reported, total, "float32", "sum" if c == "allreduce" else "none",
                0 if c == "broadcast" else -1, us, algbw, busbw,
                "N/A" if wrong < 0 else wrong), flush=True)
    if rank == 0:
        print(f"# Out of bounds values : {wrong_total} {'OK' if wrong_total == 0 else 'FAILED'}")
        print(f"# Avg bus bandwidth    : {busbw_sum / max(len(sizes), 1):.4f} GB/s", flush=True)
    dist.barrier()
    dist.destroy_process_group()
    return 0 if wrong_total == 0 else 1


# --- launcher ------------------------------------------------------------------------------


def launch(args, argv):
    store_dir = tempfile.mkdtemp(prefix="kolo-torch-bench-")
    env = dict(os.environ)
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    procs = []
    deadline = time.monotonic() + args.timeout if args.timeout > 0 else None
    status = 0
    try:
        for r in range(args.np):
            procs.append(subprocess.Popen(
                [sys.executable, os.path.abspath(__file__)] + argv
                + ["--rank", str(r), "--store", os.path.join(store_dir, "store")],
                env=env, start_new_session=True,
                stdout=None if r == 0 else subprocess.DEVNULL))
        # Wait for all; the first failure ends the job (the others would wait on it forever).
        remaining = set(range(args.np))
        while remaining:
            for r in sorted(remaining):
                code = procs[r].poll()
                if code is None:
                    continue
                remaining.discard(r)
                if code != 0 and status == 0:
                    status = 1
                    print(f"torch-bench: rank {r} exited with {code}", file=sys.stderr)
            if status != 0 and remaining:
                break
            if deadline is not None and time.monotonic() > deadline and remaining:
                print(f"torch-bench: stopped after --timeout {args.timeout:g} s", file=sys.stderr)
                status = 124
                break
            time.sleep(0.02)
    except KeyboardInterrupt:
        status = 130
    finally:
        for p in procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except OSError:
                    pass
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                pass
        shutil.rmtree(store_dir, ignore_errors=True)
    return status


def stop(signum, _frame):
    raise KeyboardInterrupt(f"signal {signum}")


def main():
    p = make_parser()
    args = p.parse_args()
    check_args(p, args)
    if args.rank >= 0:
        return rank_main(args)
    signal.signal(signal.SIGTERM, stop)  # stop the ranks as on Ctrl-C
    signal.signal(signal.SIGINT, stop)
    try:
        import torch  # noqa: F401  (fail here, once, rather than in every rank)
    except ImportError as error:
        print(f"torch-bench: cannot import torch ({error}); use a Python with torch, e.g. "
              "Debian's python3-torch", file=sys.stderr)
        return 2
    return launch(args, sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
