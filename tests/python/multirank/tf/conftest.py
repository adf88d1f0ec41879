"""The TensorFlow multirank tests free the input-pipeline iterators a test
made (Keras fit() makes them) when that test ends, on every rank alike.

Why: Keras leaves its iterators in reference cycles, and freeing a
tf.data iterator much later (whenever Python's collector next runs, maybe
several tests on) blocked its rank for about as long as the iterator had
been idle (TF 2.21: 16-20 s in a later test's collective, past the 10 s
stall warning and close to the 20 s stall shutdown these runs use, while
the others waited for that rank). Freed when its test ends, the same
iterator takes a fraction of a second. Only tests that made an iterator
pay for the collection."""

import gc

import pytest

try:
    from tensorflow.python.data.ops import iterator_ops
except ImportError:  # the tests themselves skip, saying why (tf_helpers)
    iterator_ops = None

_made = [0]  # iterators made so far in this process


def _count_iterators():
    if iterator_ops is None:
        return
    init = iterator_ops.OwnedIterator.__init__

    def counting_init(self, *args, **kwargs):
        _made[0] += 1
        init(self, *args, **kwargs)

    iterator_ops.OwnedIterator.__init__ = counting_init


_count_iterators()


@pytest.fixture(autouse=True)
def free_the_tests_iterators():
    before = _made[0]
    yield
    if _made[0] != before:
        gc.collect()
