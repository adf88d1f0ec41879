"""One rank of test_output_cache.py: out-of-place kolo.torch allreduces under
the KOLO_OUTPUT_CACHE the test sets, checking what the engine's output cache
holds and counting the page faults of steady-state calls.

    output_cache_job.py bound    many outputs freed at once: the cache keeps
                                 at most the limit, and none larger than it
    output_cache_job.py faults   prints "faults per call: N" for 64 MB calls (above
                                 the 32 MB up to which glibc's malloc may start
                                 keeping freed blocks itself)
"""

import resource
import statistics
import sys

import torch

import kolo.torch as hvd
from kolo.common.runtime import runtime

KIB = 1024


def cached():
    return runtime().engine().cached_output_bytes


def check_bound(limit):
    x = torch.ones(64 * KIB)  # 256 KiB outputs, 16 of them: 4x the limit
    outs = [hvd.allreduce(x, op=hvd.Sum, name="bound") for _ in range(16)]
    assert all(torch.all(o == hvd.size()) for o in outs)
    del outs
    assert cached() <= limit, f"the cache holds {cached()} bytes, over its limit {limit}"
    assert cached() >= limit // 2, f"the cache holds only {cached()} of {limit} bytes"
    before = cached()
    big = hvd.allreduce(torch.ones(2 * limit // 4), op=hvd.Sum, name="big")  # 2x the limit
    assert torch.all(big == hvd.size())
    del big
    assert cached() <= limit, "an output larger than the whole cache was kept"
    assert cached() == before, "an output larger than the whole cache evicted others"


def faults_per_call():
    x = torch.ones(16 * KIB * KIB)  # 64 MB
    counts = []
    for i in range(12):
        start = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        out = hvd.allreduce(x, op=hvd.Sum, name="faults")
        counts.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - start)
        assert out[0].item() == hvd.size() and out[-1].item() == hvd.size()
        del out
    return statistics.median(counts[2:])  # after the first calls mapped the output


def main():
    hvd.init()
    if sys.argv[1] == "bound":
        check_bound(int(sys.argv[2]))
        print("bound ok", flush=True)
    else:
        print(f"faults per call: {faults_per_call():.0f}", flush=True)
    hvd.shutdown()


if __name__ == "__main__":
    main()
