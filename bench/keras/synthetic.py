"""Keras training throughput on synthetic data: Kolo's DistributedOptimizer or
TensorFlow's own MultiWorkerMirroredStrategy, the same model, data and fit().

    kolorun -np 2 python bench/keras/synthetic.py --backend kolo
    TF_CONFIG=... python bench/keras/synthetic.py --backend mwms   # one per worker

bench/keras/run.py starts both (the MWMS workers with their TF_CONFIG) and
compares them. Each worker fits a small CNN (the PyTorch benchmark's
`smallcnn`: three conv/pool stages and two dense layers, 0.62 M parameters)
on one random batch repeated, with SGD; a callback times the steps after the
warm-up, and the chief (rank 0, worker 0) prints Horovod's report lines,
"Total img/sec on N worker(s): X".

--backend kolo: horovod.tensorflow.keras's DistributedOptimizer (one grouped
allreduce of the gradients per step, inside Keras's traced train step) and
BroadcastGlobalVariablesCallback. --backend mwms: the model is built and
compiled in MultiWorkerMirroredStrategy's scope, which all-reduces the
gradients with TF's collective ops over gRPC (RING, the CPU choice), the
cluster read by TF from TF_CONFIG. Both set the same TF thread counts.
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # before TF loads: no info lines

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

NUM_CLASSES = 10


def worker_parser(description):
    """The arguments every worker script of bench/keras takes; positive_args
    checks the integers after parsing."""
    p = argparse.ArgumentParser(description=description,
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--backend", choices=["kolo", "mwms"], required=True)
    p.add_argument("--batch-size", type=int, default=32, help="images per step on each worker")
    p.add_argument("--intra-threads", type=int, default=1,
                   help="TF intra-op threads per worker (one keeps two workers on two cores "
                        "from oversubscribing them)")
    p.add_argument("--inter-threads", type=int, default=2, help="TF inter-op threads per worker")
    return p


def positive_args(p, args):
    for name, value in vars(args).items():
        if isinstance(value, int) and value < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def parse_args():
    p = worker_parser(__doc__.splitlines()[0])
    p.add_argument("--image-size", type=int, default=32, help="height and width of the images")
    p.add_argument("--num-warmup-batches", type=int, default=10,
                   help="steps before timing (at least 1: the first timed step starts "
                        "where a warm-up step ended)")
    p.add_argument("--num-batches-per-iter", type=int, default=10,
                   help="steps per timed iteration")
    p.add_argument("--num-iters", type=int, default=5, help="timed iterations")
    args = positive_args(p, p.parse_args())
    if args.image_size % 8:
        p.error("--image-size must be a multiple of 8 (three 2x2 poolings)")
    return args


def build_model(image_size):
    width = 32
    layers = tf.keras.layers
    return tf.keras.Sequential([
        tf.keras.Input((image_size, image_size, 3)),
        layers.Conv2D(width, 3, padding="same", activation="relu"), layers.MaxPooling2D(),
        layers.Conv2D(2 * width, 3, padding="same", activation="relu"), layers.MaxPooling2D(),
        layers.Conv2D(4 * width, 3, padding="same", activation="relu"), layers.MaxPooling2D(),
        layers.Flatten(),
        layers.Dense(256, activation="relu"),
        layers.Dense(NUM_CLASSES),
    ])


class StepTimer(tf.keras.callbacks.Callback):
    """Wall time at the end of every step (fit runs one step per call here,
    so a step's end is when its train function returned)."""

    def __init__(self):
        super().__init__()
        self.ends = []

    def on_train_batch_end(self, batch, logs=None):
        self.ends.append(time.perf_counter())


def synthetic_dataset(batch, image_size, seed):
    rng = np.random.default_rng(seed)
    images = rng.standard_normal((batch, image_size, image_size, 3)).astype(np.float32)
    labels = rng.integers(0, NUM_CLASSES, batch).astype(np.int64)
    return tf.data.Dataset.from_tensors((images, labels)).repeat()


def kolo_setup(args):
    """(model, dataset, callbacks, rank, workers) with Horovod's Keras lines."""
    import horovod.tensorflow.keras as hvd

    hvd.init()
    model = build_model(args.image_size)
    opt = hvd.DistributedOptimizer(tf.keras.optimizers.SGD(0.01 * hvd.size()))
    model.compile(optimizer=opt,
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    callbacks = [hvd.callbacks.BroadcastGlobalVariablesCallback(0)]
    dataset = synthetic_dataset(args.batch_size, args.image_size, seed=hvd.rank())
    return model, dataset, callbacks, hvd.rank(), hvd.size()


def mwms_setup(args):
    """The same with MultiWorkerMirroredStrategy: the global batch is the
    per-worker batch times the workers, which the strategy splits; auto-sharding
    is off (every worker's copy of the one batch is as good as any)."""
    options = tf.distribute.experimental.CommunicationOptions(
        implementation=tf.distribute.experimental.CommunicationImplementation.RING)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    resolver = strategy.cluster_resolver
    rank, workers = resolver.task_id or 0, strategy.num_replicas_in_sync
    with strategy.scope():
        model = build_model(args.image_size)
        model.compile(optimizer=tf.keras.optimizers.SGD(0.01 * workers),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    dataset = synthetic_dataset(args.batch_size * workers, args.image_size, seed=rank)
    data_options = tf.data.Options()
    data_options.experimental_distribute.auto_shard_policy = (
        tf.data.experimental.AutoShardPolicy.OFF)
    return model, dataset.with_options(data_options), [], rank, workers


def main():
    args = parse_args()
    tf.config.threading.set_intra_op_parallelism_threads(args.intra_threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.inter_threads)
    setup = kolo_setup if args.backend == "kolo" else mwms_setup
    model, dataset, callbacks, rank, workers = setup(args)
    timer = StepTimer()
    steps = args.num_warmup_batches + args.num_batches_per_iter * args.num_iters
    model.fit(dataset, epochs=1, steps_per_epoch=steps, callbacks=callbacks + [timer],
              verbose=0)
    if rank != 0:
        return
    # Iteration i spans the steps after end[w + i*k - 1] up to end[w + (i+1)*k - 1].
    w, k = args.num_warmup_batches, args.num_batches_per_iter
    ends = timer.ends
    img_secs = []
    for i in range(args.num_iters):
        seconds = ends[w + (i + 1) * k - 1] - ends[w + i * k - 1]
        img_secs.append(args.batch_size * k / seconds)
    print(f"Backend: {args.backend}  TF {tf.__version__}  Keras {tf.keras.__name__}")
    print(f"Batch size: {args.batch_size}  Number of workers: {workers}")
    for i, value in enumerate(img_secs):
        print(f"Iter #{i}: {value:.1f} img/sec per worker")
    mean = statistics.fmean(img_secs)
    conf = 1.96 * float(np.std(img_secs))  # Horovod's 95% interval
    print(f"Img/sec per worker: {mean:.1f} +-{conf:.1f}")
    print(f"Total img/sec on {workers} worker(s): {workers * mean:.1f} +-{workers * conf:.1f}",
          flush=True)


if __name__ == "__main__":
    main()
