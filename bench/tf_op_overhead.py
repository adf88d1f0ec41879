"""Per-op cost of kolo.tensorflow's allreduce on a tiny tensor (so the
wire time is negligible and what is left is the binding's overhead),
eagerly and inside tf.function, next to the same allreduce through
kolo.numpy (the engine's own cost from Python) and through tf.py_function
inside tf.function (the per-tensor Python path the TF C API kernels avoid).

    kolorun -np 2 .venv/bin/python bench/tf_op_overhead.py [--iters 2000]
Prints one line per path on rank 0: microseconds per allreduce (median of 5 runs).
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import kolo.numpy as kn  # noqa: E402
import kolo.tensorflow as hvd  # noqa: E402

PER_GRAPH = 100  # allreduces in one tf.function call


def timed(fn, calls, ops_per_call):
    fn()  # warm up (traces a tf.function once)
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        runs.append((time.perf_counter() - start) / (calls * ops_per_call) * 1e6)
    return statistics.median(runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=2000, help="allreduces per timed run")
    args = parser.parse_args()
    hvd.init()
    x = tf.ones([4])
    x_np = np.ones(4, dtype=np.float32)

    @tf.function
    def graph():
        return [hvd.allreduce(x, op=hvd.Sum) for _ in range(PER_GRAPH)]

    def numpy_allreduce(t):
        return kn.allreduce(t.numpy(), op=kn.Sum)

    @tf.function
    def py_function_graph():
        return [tf.py_function(numpy_allreduce, [x], tf.float32) for _ in range(PER_GRAPH)]

    calls = max(1, args.iters // PER_GRAPH)
    results = {
        "kolo.numpy allreduce (engine from Python)": timed(
            lambda: kn.allreduce(x_np, op=kn.Sum), args.iters, 1),
        "kolo.tensorflow eager": timed(lambda: hvd.allreduce(x, op=hvd.Sum), args.iters, 1),
        "kolo.tensorflow in tf.function (C API kernel)": timed(graph, calls, PER_GRAPH),
        "tf.py_function in tf.function (avoided)": timed(py_function_graph, calls, PER_GRAPH),
    }
    if hvd.rank() == 0:
        print(f"ranks={hvd.size()} tf={tf.__version__} tensor=4 x float32")
        for name, micros in results.items():
            print(f"{name:48s} {micros:8.1f} us/op")
    hvd.shutdown()


if __name__ == "__main__":
    main()
