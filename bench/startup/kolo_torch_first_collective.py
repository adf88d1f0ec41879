# Kolo under torchrun (or any launcher): kolo.torch takes its layout from the
# launcher's variables, allreduces one float, and rank 0 prints the time since
# LAUNCH_START_NS, like kolo_first_collective.cc does for the C++ core.
import os
import time

import torch

import kolo.torch as hvd

hvd.init()
t = hvd.allreduce(torch.ones(1), op=hvd.Sum)
if hvd.rank() == 0 and "LAUNCH_START_NS" in os.environ:
    elapsed = (time.time_ns() - int(os.environ["LAUNCH_START_NS"])) / 1e6
    print(f"first_collective_ms {elapsed:.1f} sum {t.item():g}")
ok = t.item() == hvd.size()
hvd.shutdown()
raise SystemExit(0 if ok else 1)
