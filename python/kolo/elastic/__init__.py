"""kolo.elastic: Horovod's elastic training API, without a framework.

A training function decorated with run() is restarted from the last
committed State whenever a worker fails or kolorun changes the hosts:

    import kolo.elastic as elastic

    state = elastic.ObjectState(epoch=0, batch=0)

    @elastic.run
    def train(state):
        for state.epoch in range(state.epoch, epochs):
            ...
            state.commit()

    train(state)

Framework packages add their own states (kolo.torch.elastic.TorchState).
"""

from kolo.common.exceptions import HostsUpdatedInterrupt, WorkerRemovedError
from kolo.elastic.loop import run
from kolo.elastic.state import ObjectState, State

__all__ = ["run", "State", "ObjectState", "HostsUpdatedInterrupt", "WorkerRemovedError"]
