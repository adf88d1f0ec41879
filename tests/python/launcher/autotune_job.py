"""A workload whose best autotune settings are known, for test_autotune.py:
each step reduces many small gradients, submitted together as a backward
pass does, then polled until done, as a framework that completes work by
callbacks does. With no caller blocked on a handle, the engine's cycle time
sets the pace (a cycle starts once the burst has been quiet for a tenth of
it: 0.5 ms at 5 ms, 5 ms at 50 ms), so short cycles are clearly best, and a
fusion threshold below the step's bytes splits the step into many
collectives. (A caller blocked in synchronize() starts the cycle at once,
which would make every cycle time nearly as good.)

With a few large tensors over TCP (16 x 4 MiB, KOLO_BACKEND=tcp) the fusion
threshold decides instead: one allreduce per tensor is 2.5-5x as fast as
one fused allreduce of the step (test_autotune.py).

usage: autotune_job.py STEPS TENSORS ELEMENTS
"""

import sys
import time

import numpy as np

import kolo.numpy as hvd


def main():
    steps, tensors, elements = (int(a) for a in sys.argv[1:4])
    hvd.init()
    hvd.allreduce(np.zeros(1, np.float32), name="warmup")
    expected_base = sum(range(hvd.size()))
    for step in range(steps):
        grads = [np.full(elements, hvd.rank() + step, np.float32) for _ in range(tensors)]
        handles = [hvd.allreduce_async(g, name=f"grad.{i}", op=hvd.Sum)
                   for i, g in enumerate(grads)]
        while not all(hvd.poll(h) for h in handles):
            time.sleep(0.0001)
        for handle in handles:
            out = hvd.synchronize(handle)
            assert out[-1] == expected_base + hvd.size() * step, (step, out[-1])
    print(f"rank {hvd.rank()} done")
    hvd.shutdown()


if __name__ == "__main__":
    main()
