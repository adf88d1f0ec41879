"""The TensorFlow multirank tests free the input-pipeline iterators a test
made when that test ends, on every rank alike.

Why: a Keras fit() that raised leaves its tf.data iterator alive in the
reference cycles of the error's traceback, and freeing it much later
(whenever Python's collector next ran, several tests on) blocked its rank
inside a later test's collective: collections of 16-20 s were seen there,
past the 10 s stall warning and close to the 20 s stall shutdown these runs
use (TF 2.21; the iterator's destructor waits for its autotune thread).
Freed when its test ends, it takes a fraction of a second. Only tests that
made an iterator pay for the collection."""

import gc

import pytest

try:
    from tensorflow.python.data.ops import iterator_ops
except ImportError:  # the tests themselves skip, saying why (tf_helpers)
    iterator_ops = None


@pytest.fixture(autouse=True)
def free_the_tests_iterators(monkeypatch):
    if iterator_ops is None:
        yield
        return
    made = []
    init = iterator_ops.OwnedIterator.__init__

    def counting_init(self, *args, **kwargs):
        made.append(1)
        init(self, *args, **kwargs)

    monkeypatch.setattr(iterator_ops.OwnedIterator, "__init__", counting_init)
    yield
    if made:
        gc.collect()
