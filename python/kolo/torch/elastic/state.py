"""TorchState: ObjectState that also keeps PyTorch models, optimizers and
ElasticSamplers safe across resets.

    state = hvd.elastic.TorchState(model, optimizer, epoch=1, batch=0)

Values are recognised by type, whatever their names: a torch.nn.Module,
a torch.optim.Optimizer (a DistributedOptimizer too) or an ElasticSampler
is saved as a deep copy of its state_dict() and restored with
load_state_dict(); anything else is a plain ObjectState value.
"""

import abc
import copy

import torch

from kolo.common.exceptions import KoloInternalError
from kolo.elastic.state import ObjectState, State, _check_attribute_name
from kolo.torch.elastic.sampler import ElasticSampler
from kolo.torch.functions import (
    allgather_object, broadcast_object, broadcast_optimizer_state, broadcast_parameters)
from kolo.torch.ops import allgather


class _Handler(abc.ABC):
    """Saves, restores and syncs one value of a TorchState. The value itself
    lives on the state (state.<name>); handlers are given it at every call,
    so assigning a new model to state.model is all it takes to swap it."""

    kind = None

    def __init__(self, name):
        self.name = name
        self.saved = None

    def accepts(self, value):
        return isinstance(value, self.kind)

    def save(self, value):
        self.saved = copy.deepcopy(value.state_dict())

    def restore(self, value):
        value.load_state_dict(copy.deepcopy(self.saved))

    @abc.abstractmethod
    def sync(self, value):
        """Makes every rank's value equal to rank 0's (collective)."""

    def reset(self, value):
        """After a reset, before the state's reset callbacks; local (workers
        that just joined the job do not reset)."""


class _ModelHandler(_Handler):
    kind = torch.nn.Module

    def restore(self, value):
        value.load_state_dict(self.saved)  # copies into the module's own tensors

    def sync(self, value):
        broadcast_parameters(value.state_dict(), root_rank=0)
        self.save(value)


class _OptimizerHandler(_Handler):
    kind = torch.optim.Optimizer

    def restore(self, value):
        _drop_reductions_in_flight(value)
        super().restore(value)

    def sync(self, value):
        broadcast_optimizer_state(value, root_rank=0)
        self.save(value)

    def reset(self, value):
        _drop_reductions_in_flight(value)


def _drop_reductions_in_flight(optimizer):
    """A DistributedOptimizer interrupted during backward still holds the
    gradient reductions of the failed step (or of the round that ended);
    finishing them clears them and restarts its step bookkeeping. Their
    failure is the one being recovered from, so it is not raised again."""
    finish = getattr(optimizer, "_finish_in_flight", None)
    if finish is None:
        return
    try:
        finish()
    except (KoloInternalError, ValueError):
        pass  # ValueError: the handles belonged to the engine of a round that ended


class _SamplerHandler(_Handler):
    kind = ElasticSampler

    def __init__(self, name):
        super().__init__(name)
        self.shared = (None, set())  # (epoch, processed samples every rank knows of)

    def share_progress(self, value):
        """At commit (and host checks): every rank learns which samples the
        others processed since the last exchange, so a rank that dies later
        does not take its committed progress with it. Only processed_indices grows; this
        rank's current partition (and record_batch's numbering) stays."""
        epoch, known = self.shared
        if epoch != value.epoch or not known <= value.processed_indices:
            known = set()  # a new epoch (or a sampler loaded from elsewhere)
        new = sorted(value.processed_indices - known)
        mine = torch.tensor([int(value.epoch), len(new)] + new, dtype=torch.int64)
        stream = allgather(mine, name=f"kolo.elastic.{self.name}.progress").tolist()
        at = 0
        while at < len(stream):
            their_epoch, count = stream[at], stream[at + 1]
            if their_epoch == value.epoch:  # ranks in lockstep always are
                value.processed_indices.update(stream[at + 2:at + 2 + count])
            at += 2 + count
        self.shared = (value.epoch, set(value.processed_indices))

    def sync(self, value):
        """Every rank's processed samples become everyone's; rank 0's epoch
        wins; the rest of the epoch is spread over the current ranks."""
        gathered = allgather_object(value.processed_indices,
                                    name=f"kolo.elastic.{self.name}.processed")
        state = value.state_dict()
        state["processed_indices"] = set().union(*gathered)
        value.load_state_dict(broadcast_object(state, root_rank=0,
                                               name=f"kolo.elastic.{self.name}.state"))
        self.save(value)
        self.shared = (value.epoch, set(value.processed_indices))

    def reset(self, value):
        # Spread the rest of the epoch over the ranks of the new round. The
        # ranks agree on what was processed: a commit or host check shared
        # it, and a sync follows unless hosts were only removed.
        value.reset()


_HANDLERS = (_ModelHandler, _OptimizerHandler, _SamplerHandler)


def _handler_for(name, value):
    for handler in _HANDLERS:
        if isinstance(value, handler.kind):
            return handler(name)
    return None


class TorchState(ObjectState):
    """The state of PyTorch training: TorchState(model, optimizer, **values).

    save()/restore() cover the model's state_dict (parameters and buffers),
    the optimizer's state_dict (its state and hyperparameters such as lr)
    and ElasticSamplers' progress; sync() broadcasts rank 0's model and
    optimizer, unions the samplers' processed samples of every rank, and
    broadcasts rank 0's saved plain values. model=None or optimizer=None
    are plain values.
    """

    def __init__(self, model=None, optimizer=None, **kwargs):
        values = dict(model=model, optimizer=optimizer, **kwargs)
        handlers, plain = {}, {}
        for name, value in values.items():
            _check_attribute_name(type(self), name)
            handler = _handler_for(name, value)
            if handler is None:
                plain[name] = value
            else:
                handlers[name] = handler
        object.__setattr__(self, "_handlers", {})
        super().__init__(**plain)
        for name, handler in handlers.items():
            object.__setattr__(self, name, values[name])
            handler.save(values[name])
            self._handlers[name] = handler

    def __setattr__(self, name, value):
        handler = self.__dict__.get("_handlers", {}).get(name)
        if handler is not None:
            if not handler.accepts(value):
                raise TypeError(f"kolo: state.{name} holds a {handler.kind.__name__}; "
                                f"cannot replace it with {type(value).__name__}")
            object.__setattr__(self, name, value)
            handler = self._handlers[name] = type(handler)(name)
            handler.save(value)  # a new object starts from its own current state
            return
        super().__setattr__(name, value)

    def commit(self):
        """Saves, then checks for host updates, as State.commit() does; the
        ElasticSamplers first share their progress with every rank (one
        allgather each), so the saved state holds every rank's."""
        self._share_sampler_progress()
        self.save()
        State.check_host_updates(self)

    def check_host_updates(self):
        """State.check_host_updates(), after the ElasticSamplers shared their
        progress: if this raises HostsUpdatedInterrupt and the next sync is
        skipped, the ranks still agree on what is left of the epoch."""
        self._share_sampler_progress()
        super().check_host_updates()

    def _share_sampler_progress(self):
        for name, handler in self._handlers.items():
            if isinstance(handler, _SamplerHandler):
                handler.share_progress(getattr(self, name))

    def save(self):
        for name, handler in self._handlers.items():
            handler.save(getattr(self, name))
        super().save()

    def restore(self):
        for name, handler in self._handlers.items():
            handler.restore(getattr(self, name))
        super().restore()

    def sync(self):
        for name, handler in self._handlers.items():
            handler.sync(getattr(self, name))
        super().sync()

    def reset(self):
        for name, handler in self._handlers.items():
            handler.reset(getattr(self, name))
        super().reset()

    def __repr__(self):
        names = list(self._handlers) + list(self._saved_names)
        return f"{type(self).__name__}({', '.join(names)})"


__all__ = ["TorchState"]
