# The torchrun counterpart of kolo_first_collective.cc: gloo process group,
# one all_reduce of one float, rank 0 prints the time since LAUNCH_START_NS.
import os
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
t = torch.ones(1)
dist.all_reduce(t)
if dist.get_rank() == 0 and "LAUNCH_START_NS" in os.environ:
    elapsed = (time.time_ns() - int(os.environ["LAUNCH_START_NS"])) / 1e6
    print(f"first_collective_ms {elapsed:.1f} sum {t.item():g}")
dist.destroy_process_group()
