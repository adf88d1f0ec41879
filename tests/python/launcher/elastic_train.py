"""A small, deterministic elastic PyTorch job for the end-to-end tests of
kolorun's elastic mode (test_elastic.py, test_elastic_ssh.py).

    kolorun --min-np 2 ... python elastic_train.py OUTDIR [options]

A linear model learns synthetic data (fixed seeds, one torch thread) with
hvd.DistributedOptimizer under hvd.elastic.run, sampled by an
ElasticSampler, and commits a TorchState after every step. Each worker
(KOLO_ELASTIC_WORKER) appends JSON lines to OUTDIR/worker<id>.jsonl:

    {"event": "start", ...}   every attempt of the training function, after the sync
    {"event": "commit", ...}  every step, just before state.commit() saves it
    {"event": "epoch_end", ...} after the sampler moved to the next epoch
    {"event": "reset", ...}   from the reset callback, after joining a new round
    {"event": "done", ...}    training returned
    {"event": "exit", ...}    elastic.run ended the process (SystemExit)

Every event carries the worker id, pid, round, rank, size, the step (steps
committed so far), epoch, batch and a SHA-256 of the model and optimizer
state ("checksum"); commits also carry the dataset indices of the step's
batch ("indices"). A reset's "restored_step" and "checksum" are the values
the state holds after the reset, before the next sync.

Options to make workers fail: --kill WORKER:STEP (repeatable) SIGKILLs
worker WORKER when it is about to run step STEP+1 (after committing STEP),
at most once per worker id (a marker file in OUTDIR); --die-at-rejoin
WORKER:MS SIGKILLs worker WORKER MS milliseconds after it starts to join its
second round (while the round forms or its members meet); --fail-at-once exits
1 before doing anything (--fail-on-host HOST: only on that host); --step-sleep sleeps before every step, so a test
can change the discovered hosts while the job runs.
"""

import argparse
import hashlib
import json
import os
import signal
import sys
import threading
import time

import torch

import horovod.torch as hvd
from kolo.common.runtime import runtime


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("outdir")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--samples", type=int, default=96)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--step-sleep", type=float, default=0.0)
    parser.add_argument("--kill", action="append", default=[], metavar="WORKER:STEP")
    parser.add_argument("--die-at-rejoin", default="", metavar="WORKER:MS")
    parser.add_argument("--fail-at-once", action="store_true")
    parser.add_argument("--fail-on-host", default="",
                        help="exit 1 at once when started on this host (KOLO_HOSTNAME)")
    parser.add_argument("--marker", default="", help="ignored: tells this job's processes apart")
    return parser.parse_args()


args = parse_args()
worker = int(os.environ.get("KOLO_ELASTIC_WORKER", "-1"))
if args.fail_on_host and os.environ.get("KOLO_HOSTNAME") == args.fail_on_host:
    print(f"elastic_train: worker {worker} fails at once on {args.fail_on_host}",
          file=sys.stderr, flush=True)
    sys.exit(1)
if args.fail_at_once:
    print(f"elastic_train: worker {worker} fails at once", file=sys.stderr, flush=True)
    sys.exit(1)

kills = {}
for spec in args.kill:
    w, s = spec.split(":")
    kills[int(w)] = int(s)

if args.die_at_rejoin and int(args.die_at_rejoin.split(":")[0]) == worker:
    # Every join goes through runtime().init (hvd.init, then elastic.run's
    # rejoin); the second one arms the kill.
    delay = int(args.die_at_rejoin.split(":")[1]) / 1000.0
    join_once = runtime().init
    joins = []

    def join_then_die(*a, **k):
        joins.append(time.monotonic())
        if len(joins) == 2:
            threading.Timer(delay, os.kill, (os.getpid(), signal.SIGKILL)).start()
        return join_once(*a, **k)

    runtime().init = join_then_die

torch.set_num_threads(1)
torch.manual_seed(0)
log_path = os.path.join(args.outdir, f"worker{worker}.jsonl")

hvd.init()

generator = torch.Generator().manual_seed(1234)
features = torch.randn(args.samples, 8, generator=generator)
targets = features @ torch.randn(8, 1, generator=generator) + 0.1 * torch.randn(
    args.samples, 1, generator=generator)
dataset = torch.utils.data.TensorDataset(features, targets, torch.arange(args.samples))

model = torch.nn.Sequential(torch.nn.Linear(8, 6), torch.nn.Tanh(), torch.nn.Linear(6, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())
sampler = hvd.elastic.ElasticSampler(dataset, shuffle=True, seed=7)
loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)


def checksum(state):
    digest = hashlib.sha256()
    for name, tensor in state.model.state_dict().items():
        digest.update(name.encode())
        digest.update(tensor.detach().contiguous().numpy().tobytes())
    for group in state.optimizer.state_dict()["state"].values():
        for key in sorted(group):
            value = group[key]
            if torch.is_tensor(value):
                digest.update(value.detach().contiguous().numpy().tobytes())
    return digest.hexdigest()


def log(event, state, **fields):
    engine = runtime()._engine
    record = {"event": event, "worker": worker, "pid": os.getpid(), "time": time.time(),
              "round": engine.elastic_round if engine is not None else None,
              "rank": engine.rank if engine is not None else None,
              "size": engine.size if engine is not None else None,
              "step": state.step, "epoch": state.epoch, "batch": state.batch,
              "checksum": checksum(state)}
    record.update(fields)
    with open(log_path, "a") as f:
        f.write(json.dumps(record) + "\n")


def kill_if_asked(step):
    if kills.get(worker) != step:
        return
    marker = os.path.join(args.outdir, f"killed-worker{worker}")
    if os.path.exists(marker):
        return
    with open(marker, "w") as f:
        f.write(str(step))
    os.kill(os.getpid(), signal.SIGKILL)


state = hvd.elastic.TorchState(model, optimizer, sampler=sampler, epoch=0, batch=0, step=0)


def on_reset():
    log("reset", state, restored_step=state.step)


state.register_reset_callbacks([on_reset])


@hvd.elastic.run
def train(state):
    log("start", state)
    while state.epoch < args.epochs:
        for index, (x, y, ids) in enumerate(loader):
            kill_if_asked(state.step)
            if args.step_sleep:
                time.sleep(args.step_sleep)
            state.optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(state.model(x), y)
            loss.backward()
            state.optimizer.step()
            state.sampler.record_batch(index, args.batch_size)
            state.batch += 1
            state.step += 1
            log("commit", state, indices=ids.tolist(), loss=loss.item())
            state.commit()
        state.epoch += 1
        state.batch = 0
        state.sampler.set_epoch(state.epoch)
        log("epoch_end", state)
        state.commit()


try:
    train(state)
except SystemExit as exit_:
    log("exit", state, code=exit_.code)
    raise
log("done", state)
