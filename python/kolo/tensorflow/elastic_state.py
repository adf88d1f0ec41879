"""What TensorFlow elastic training keeps safe across resets.

    state = hvd.elastic.TensorFlowKerasState(model, optimizer, epoch=0, batch=0)
    state = hvd.elastic.TensorFlowState([w, b], step=0)

Both are ObjectStates (kolo.elastic.state): plain keyword values are saved,
restored and synced as there; on top of that they hold TensorFlow
variables. save() copies every variable's value into host memory (a copy,
not a view: the optimizer updates variables in place), restore() assigns the
copies back, sync() broadcasts rank 0's variables to every rank (one
broadcast per variable, in the same order on every rank) and saves the
result. All of it runs eagerly: these calls belong between training steps,
never inside a tf.function.
"""

import tensorflow as tf

from kolo.elastic.state import ObjectState, _check_attribute_name
from kolo.tensorflow.functions import broadcast_variables


def _require_eager(what):
    if not tf.executing_eagerly():
        raise RuntimeError(f"kolo: {what} runs eagerly, between training steps; it was called "
                           "inside a tf.function (graph mode)")


def optimizer_variables(optimizer):
    """An optimizer's variables, from either Keras: a property in Keras 3,
    a method in tf-keras (and in Keras 2's optimizers)."""
    if optimizer is None:
        return []
    variables = optimizer.variables
    if callable(variables):
        variables = variables()
    return list(variables)


def build_optimizer(optimizer, model):
    """Creates the optimizer's slot variables (moments, iterations, ...) now
    if it has not yet: they appear at the first apply otherwise, after the
    state saved a list without them, and then neither restore nor sync
    would cover them."""
    if optimizer is None or not hasattr(optimizer, "build"):
        return
    # Keras 3 says `built`; tf-keras sets `_built` once built, and neither
    # attribute exists before.
    built = getattr(optimizer, "built", None)
    if built is None:
        built = getattr(optimizer, "_built", False)
    if not built:
        optimizer.build(model.trainable_variables)


class _VariableValues:
    """The saved values of a list of variables, in that list's order."""

    def __init__(self):
        self.values = []

    def save(self, variables):
        self.values = [var.numpy().copy() for var in variables]

    def restore(self, variables, owner):
        if len(variables) != len(self.values):
            raise RuntimeError(
                f"kolo: {owner} has {len(variables)} variables but {len(self.values)} were "
                "saved; variables created after the state (an optimizer that builds at its "
                "first step) must exist before it: build the model and optimizer first")
        for var, value in zip(variables, self.values):
            var.assign(value)


class TensorFlowKerasState(ObjectState):
    """A Keras model and its optimizer (either Keras: Keras 3's tf.keras, or
    tf-keras under TF_USE_LEGACY_KERAS=1), plus plain values as attributes:
    TensorFlowKerasState(model, optimizer=None, backend=None, epoch=0, ...).

    The model must be built (its variables exist). `optimizer` defaults to
    model.optimizer (set by compile); its slot variables are created now if
    they do not exist yet. save/restore/sync cover model.variables (weights
    and non-trainable ones such as batch-norm statistics) and the
    optimizer's variables (iteration count, learning rate, moments).
    `backend` is accepted for Horovod's signature; TF 2 needs no session.
    state.model and state.optimizer may be replaced by new objects: the
    state always works on what they hold at the time.
    """

    def __init__(self, model, optimizer=None, backend=None, **kwargs):
        for name in kwargs:
            _check_attribute_name(type(self), name)
        if not getattr(model, "built", True):
            raise ValueError("kolo: the model must be built before the elastic state is made "
                             "(call model.build(input_shape), or train or predict once)")
        _require_eager("TensorFlowKerasState")
        self.model = model
        self.optimizer = optimizer if optimizer is not None else getattr(model, "optimizer", None)
        self.backend = backend
        build_optimizer(self.optimizer, model)
        self._saved_model = _VariableValues()
        self._saved_optimizer = _VariableValues()
        self._save_variables()
        super().__init__(**kwargs)

    def _variables(self):
        return list(self.model.variables), optimizer_variables(self.optimizer)

    def _save_variables(self):
        model_vars, optimizer_vars = self._variables()
        self._saved_model.save(model_vars)
        self._saved_optimizer.save(optimizer_vars)

    def save(self):
        _require_eager("TensorFlowKerasState.save")
        self._save_variables()
        super().save()

    def restore(self):
        _require_eager("TensorFlowKerasState.restore")
        model_vars, optimizer_vars = self._variables()
        self._saved_model.restore(model_vars, "the model")
        self._saved_optimizer.restore(optimizer_vars, "the optimizer")
        super().restore()

    def sync(self):
        _require_eager("TensorFlowKerasState.sync")
        model_vars, optimizer_vars = self._variables()
        broadcast_variables(model_vars + optimizer_vars, root_rank=0)
        self._save_variables()
        super().sync()


class TensorFlowState(ObjectState):
    """A list of tf.Variables plus plain values as attributes:
    TensorFlowState(variables, session=None, step=0, ...).

    TF 2 has no global variable collection to default to, so `variables`
    must be given (Horovod's default, tf.compat.v1.global_variables(), is
    empty in eager mode and would silently keep nothing). `session` is
    accepted for Horovod's signature and must be None.
    """

    def __init__(self, variables=None, session=None, **kwargs):
        for name in kwargs:
            _check_attribute_name(type(self), name)
        if variables is None:
            raise ValueError("kolo: TensorFlowState needs the list of variables to keep "
                             "(TensorFlow 2 has no global variable collection)")
        if session is not None:
            raise ValueError("kolo: TensorFlowState takes no session: TensorFlow 1 sessions "
                             "are not supported")
        _require_eager("TensorFlowState")
        self.variables = list(variables)
        self.session = None
        self._saved_variables = _VariableValues()
        self._saved_variables.save(self.variables)
        super().__init__(**kwargs)

    def save(self):
        _require_eager("TensorFlowState.save")
        self._saved_variables.save(self.variables)
        super().save()

    def restore(self):
        _require_eager("TensorFlowState.restore")
        self._saved_variables.restore(self.variables, "TensorFlowState")
        super().restore()

    def sync(self):
        _require_eager("TensorFlowState.sync")
        broadcast_variables(self.variables, root_rank=0)
        self._saved_variables.save(self.variables)
        super().sync()


__all__ = ["TensorFlowKerasState", "TensorFlowState"]
