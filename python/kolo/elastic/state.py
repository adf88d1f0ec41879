"""What elastic training keeps safe between resets: a State is saved at
every commit(), put back after a failure (restore) and made identical on
every rank when a new round starts (sync).

    state = ObjectState(epoch=0, batch=0)
    ...
    state.batch += 1
    state.commit()   # save, then ask whether the set of hosts changed

These classes need no deep-learning framework; kolo.torch.elastic.TorchState
adds models, optimizers and samplers on top of ObjectState.
"""

import abc
import copy

from kolo.common.exceptions import HostsUpdatedInterrupt
from kolo.common.runtime import runtime


class State(abc.ABC):
    """The base of everything run() can retry with.

    Subclasses say how to save(), restore() and sync(); commit() and
    check_host_updates() are collective (every rank calls them at the same
    step) and raise HostsUpdatedInterrupt on every rank when kolorun
    announced that hosts were added or removed.
    """

    def __init__(self):
        self._reset_callbacks = []

    def register_reset_callbacks(self, callbacks):
        """Adds functions (no arguments) to call, in order, after each reset,
        once this process has joined the new round: e.g. to scale the
        learning rate with the new size(). Only workers that were in the
        previous round call them, so they should not run collectives."""
        self._reset_callbacks.extend(callbacks)

    def on_reset(self):
        """Called by run() after every reset: first reset(), then the
        registered callbacks in the order they were registered."""
        self.reset()
        for callback in self._reset_callbacks:
            callback()

    def commit(self):
        """Saves the state (the point a failure rolls back to), then checks
        for host updates. Collective."""
        self.save()
        self._commits = self.commits() + 1
        self.check_host_updates()

    def commits(self):
        """How many times commit() saved this state in this process."""
        return getattr(self, "_commits", 0)  # subclasses need not call __init__

    def check_host_updates(self):
        """Raises HostsUpdatedInterrupt (on every rank alike) when hosts were
        added or removed since this process last looked. When hosts were
        only removed, the surviving ranks already hold the same committed
        state, so the interrupt says the next sync may be skipped.
        Collective; outside an elastic job it returns without communicating."""
        changes = runtime().check_host_updates()
        if changes:
            raise HostsUpdatedInterrupt(skip_sync=(changes == {"removed"}))

    def reset(self):
        """Hook for subclasses: runs after a reset, before the callbacks.
        Keep it local (no collectives): workers that join the job in the
        new round start with sync() and never call it."""

    @abc.abstractmethod
    def save(self):
        """Remembers the current values (in memory)."""

    @abc.abstractmethod
    def restore(self):
        """Puts back the values of the last save()."""

    @abc.abstractmethod
    def sync(self):
        """Makes every rank's values rank 0's (collective)."""


class ObjectState(State):
    """Named Python values kept as attributes: ObjectState(epoch=0, batch=0)
    gives state.epoch and state.batch. save() keeps deep copies, restore()
    puts copies of them back, sync() gives every rank rank 0's saved values.
    Values must be picklable (cloudpickle) for sync()."""

    def __init__(self, **kwargs):
        super().__init__()
        for name in kwargs:
            _check_attribute_name(type(self), name)
        self._saved_state = {}
        self._saved_names = list(kwargs)
        for name, value in kwargs.items():
            setattr(self, name, value)
        ObjectState.save(self)

    def save(self):
        self._saved_state = {name: copy.deepcopy(getattr(self, name))
                             for name in self._saved_names}

    def restore(self):
        for name, value in self._saved_state.items():
            setattr(self, name, copy.deepcopy(value))

    def sync(self):
        if not self._saved_names:
            return
        from kolo.numpy.objects import broadcast_object

        self._saved_state = broadcast_object(self._saved_state, root_rank=0,
                                             name="kolo.elastic.ObjectState.sync")
        ObjectState.restore(self)

    def __repr__(self):
        values = ", ".join(f"{name}={getattr(self, name, None)!r}" for name in self._saved_names)
        return f"{type(self).__name__}({values})"


def _check_attribute_name(cls, name):
    if not name.isidentifier() or name.startswith("_"):
        raise ValueError(f"kolo: state value names must be identifiers not starting with "
                         f"'_'; got {name!r}")
    if hasattr(cls, name):
        raise ValueError(f"kolo: {name!r} would hide {cls.__name__}.{name}; "
                         "give the value another name")


__all__ = ["State", "ObjectState"]
