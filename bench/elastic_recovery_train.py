"""The training job bench/elastic_recovery.py measures: an elastic PyTorch
loop (TorchState, commit every step) that logs when each step completes,
when a worker saw the failure and when it re-joined, as JSON lines in
OUTDIR/worker<id>.jsonl. Not for running by hand."""

import json
import os
import sys
import time

import torch

import kolo.torch as hvd
from kolo.common.settings import setting

outdir, steps = sys.argv[1], int(sys.argv[2])
torch.manual_seed(0)
torch.set_num_threads(1)
hvd.init()
worker = setting("KOLO_ELASTIC_WORKER") or "0"
log = open(os.path.join(outdir, f"worker{worker}.jsonl"), "a", buffering=1)


def note(event, **fields):
    log.write(json.dumps({"event": event, "t": time.time(), "pid": os.getpid(), **fields}) + "\n")


model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.01),
                                     named_parameters=model.named_parameters())
state = hvd.elastic.TorchState(model, optimizer, step=0)
state.register_reset_callbacks([lambda: note("reset", size=hvd.size(), step=state.step)])
data, target = torch.randn(64, 256), torch.randint(0, 10, (64,))


@hvd.elastic.run
def train(state):
    note("joined", size=hvd.size(), step=state.step)
    while state.step < steps:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(data), target).backward()
        try:
            optimizer.step()
        except hvd.KoloInternalError:
            note("failure_seen", step=state.step)
            raise
        state.step += 1
        note("step", step=state.step, size=hvd.size())
        state.commit()
        time.sleep(0.01)


train(state)
note("done", step=state.step)
