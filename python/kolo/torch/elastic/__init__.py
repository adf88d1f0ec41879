"""kolo.torch.elastic (hvd.elastic): elastic training for PyTorch.

    state = hvd.elastic.TorchState(model, optimizer, epoch=1, batch=0)
    state.register_reset_callbacks([on_state_reset])

    @hvd.elastic.run
    def train(state):
        ...
        state.commit()

    train(state)

run, State, ObjectState and the exceptions are kolo.elastic's; TorchState
and ElasticSampler add PyTorch models, optimizers and data sampling.
"""

from kolo.common.exceptions import HostsUpdatedInterrupt, WorkerRemovedError
from kolo.elastic import ObjectState, State, run
from kolo.torch.elastic.sampler import ElasticSampler
from kolo.torch.elastic.state import TorchState

__all__ = ["run", "State", "ObjectState", "TorchState", "ElasticSampler",
           "HostsUpdatedInterrupt", "WorkerRemovedError"]
