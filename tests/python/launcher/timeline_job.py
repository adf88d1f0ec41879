"""A small training-like loop for the timeline tests: after a warmup
allreduce, per step, four gradients reduced asynchronously (so they fuse), a
broadcast and a loss allreduce; at STALL_STEP rank 1 submits the loss late,
which must show as a stall and as rank 1 being the slowest rank.

usage: timeline_job.py STEPS STALL_STEP STALL_SECONDS
"""

import sys
import time

import numpy as np

import kolo.numpy as hvd


def main():
    steps, stall_step, stall_seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    hvd.init()
    # The ranks start at different times; that wait is the warmup's, not a step's.
    hvd.allreduce(np.zeros(1, np.float32), name="warmup")
    for step in range(steps):
        handles = [hvd.allreduce_async(np.full(2000 * (i + 1), step, np.float32),
                                       name=f"grad.layer{i}") for i in range(4)]
        for handle in handles:
            hvd.synchronize(handle)
        hvd.broadcast(np.arange(16, dtype=np.int64), root_rank=0, name="params.epoch")
        if step == stall_step and hvd.rank() == 1:
            time.sleep(stall_seconds)
        loss = hvd.allreduce(np.array([float(hvd.rank())], np.float64), name="loss", op=hvd.Sum)
        assert loss[0] == sum(range(hvd.size())), loss
    print(f"rank {hvd.rank()} done")
    hvd.shutdown()


if __name__ == "__main__":
    main()
