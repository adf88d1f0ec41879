"""kolo.tensorflow.keras: Horovod's Keras API for tf.keras (Keras 3, or
tf-keras with TF_USE_LEGACY_KERAS=1) on Kolo's engine.

    import kolo.tensorflow.keras as hvd   # or horovod.tensorflow.keras, horovod.keras
    hvd.init()
    model.compile(optimizer=hvd.DistributedOptimizer(tf.keras.optimizers.Adam(1e-3)), ...)
    model.fit(..., callbacks=[hvd.callbacks.BroadcastGlobalVariablesCallback(0)])
"""

from kolo.tensorflow.optimizer import DistributedOptimizer

__all__ = ["DistributedOptimizer"]
