"""Per-step cost of the gradient exchange, eagerly and inside tf.function, for
the gradients of the synthetic benchmark's small CNN (10 tensors, 0.62 M
floats, 2.5 MB).

    kolorun -np 2 python bench/keras/exchange_cost.py --backend kolo
    TF_CONFIG=... python bench/keras/exchange_cost.py --backend mwms   # one per worker

--backend kolo times, on every rank, in rounds that alternate the cases:
  exchange eager / graph   kolo.tensorflow's grouped_allreduce (Average) of
                           the gradient list, the call DistributedGradientTape
                           makes, eagerly and in a tf.function
  step eager / graph       a whole training step (forward, backward, SGD
                           apply) with DistributedGradientTape
  local step eager / graph the same step with a plain GradientTape (no
                           exchange): step - local step is what the exchange
                           adds to a step
--backend mwms times MultiWorkerMirroredStrategy's all-reduce (mean, RING) of
the same gradient list inside a tf.function (strategy.run), its graph mode.
Worker 0 prints one line per case: "<case>: <median ms per call> ms".
"""

import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before TF loads: no info lines

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from synthetic import build_model, positive_args, worker_parser  # noqa: E402


def parse_args():
    p = worker_parser(__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=20, help="calls per case per round")
    p.add_argument("--rounds", type=int, default=5, help="rounds, each case once per round")
    return positive_args(p, p.parse_args())


def median_ms(cases, calls, rounds):
    """{name: median over rounds of ms per call}; the cases alternate within
    each round, so drift in the host's load hits them alike."""
    for fn in cases.values():
        fn()  # warm up: traces the tf.functions, fills the engine's caches
    samples = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            samples[name].append((time.perf_counter() - start) / calls * 1e3)
    return {name: statistics.median(values) for name, values in samples.items()}


def gradient_list(model, seed):
    rng = np.random.default_rng(seed)
    return [tf.constant(rng.standard_normal(v.shape).astype(np.float32))
            for v in model.trainable_variables]


def kolo_cases(args):
    import horovod.tensorflow as hvd

    hvd.init()
    model = build_model(32)
    grads = gradient_list(model, seed=hvd.rank())
    hvd.broadcast_variables(model.variables, root_rank=0)
    opt = tf.keras.optimizers.SGD(0.01)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    rng = np.random.default_rng(hvd.rank())
    images = tf.constant(rng.standard_normal((args.batch_size, 32, 32, 3)).astype(np.float32))
    labels = tf.constant(rng.integers(0, 10, args.batch_size))

    def exchange():
        # .numpy() waits for the result, as the next step's use of it would.
        return hvd.grouped_allreduce(grads, op=hvd.Average)[-1].numpy()

    exchange_graph = tf.function(lambda: hvd.grouped_allreduce(grads, op=hvd.Average))

    def step(distributed):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        if distributed:
            tape = hvd.DistributedGradientTape(tape)
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                model.trainable_variables))
        return loss

    step_graph = tf.function(lambda: step(True))
    local_step_graph = tf.function(lambda: step(False))
    cases = {
        "exchange eager": exchange,
        "exchange graph": lambda: exchange_graph()[-1].numpy(),
        "step eager": lambda: step(True).numpy(),
        "step graph": lambda: step_graph().numpy(),
        "local step eager": lambda: step(False).numpy(),
        "local step graph": lambda: local_step_graph().numpy(),
    }
    return cases, hvd.rank(), hvd.size()


def mwms_cases(args):
    del args
    options = tf.distribute.experimental.CommunicationOptions(
        implementation=tf.distribute.experimental.CommunicationImplementation.RING)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    rank = strategy.cluster_resolver.task_id or 0
    with strategy.scope():
        model = build_model(32)
    grads = gradient_list(model, seed=rank)

    @tf.function
    def exchange_graph():
        def replica_fn():
            return tf.distribute.get_replica_context().all_reduce("mean", grads)
        return strategy.experimental_local_results(strategy.run(replica_fn))[0]

    cases = {"exchange graph": lambda: exchange_graph()[-1].numpy()}
    return cases, rank, strategy.num_replicas_in_sync


def main():
    args = parse_args()
    tf.config.threading.set_intra_op_parallelism_threads(args.intra_threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.inter_threads)
    cases, rank, workers = (kolo_cases if args.backend == "kolo" else mwms_cases)(args)
    results = median_ms(cases, args.calls, args.rounds)
    if rank == 0:
        print(f"Backend: {args.backend}  workers: {workers}  TF {tf.__version__}")
        for name, ms in results.items():
            print(f"{name}: {ms:.3f} ms", flush=True)


if __name__ == "__main__":
    main()
