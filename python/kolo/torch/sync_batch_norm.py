"""SyncBatchNorm: batch normalization whose training-time statistics are
those of the whole batch across the ranks of a process set, so small
per-rank batches normalize as one large batch would.

Forward allgathers each rank's (count, mean, biased variance) per channel
and combines them exactly (Chan's parallel formula, in float64), which stays
accurate where sums of squares would cancel. Backward allreduces the two
per-channel sums the input gradient needs; the weight and bias gradients
stay local (sums over this rank's rows), as the DistributedOptimizer
combines them like any other gradient.
"""

import torch
import torch.nn.functional as F
from torch.nn.modules.batchnorm import _BatchNorm

from kolo.common.basics import global_process_set
from kolo.common.reduce_ops import Sum
from kolo.common.runtime import runtime
from kolo.torch.async_ops import allgather_async, allreduce_async, result


def _channel_view(t, dim):
    """A per-channel vector shaped to broadcast against (N, C, *)."""
    return t.view([1, -1] + [1] * (dim - 2))


class _SyncBatchNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum, process_set):
        x = input.contiguous()
        channels = x.shape[1]
        reduce_dims = [0] + list(range(2, x.dim()))
        count = x.numel() // channels
        if count > 0:
            var, mean = torch.var_mean(x, dim=reduce_dims, unbiased=False)
        else:
            var = mean = x.new_zeros(channels)
        local = torch.cat([torch.tensor([float(count)], dtype=torch.float64),
                           mean.double(), var.double()]).unsqueeze(0)
        stats = result(allgather_async(local, name="sync_batch_norm.stats",
                                       process_set=process_set))
        counts = stats[:, :1]
        means, variances = stats[:, 1:1 + channels], stats[:, 1 + channels:]
        total = float(counts.sum())
        if total <= 1:
            raise ValueError("Expected more than 1 value per channel when training, got input "
                             f"size {list(input.shape)} on this rank ({int(total)} in all)")
        mean64 = (counts * means).sum(0) / total
        m2 = (counts * variances).sum(0) + (counts * (means - mean64) ** 2).sum(0)
        invstd64 = torch.rsqrt(m2 / total + eps)

        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mean64.to(running_mean.dtype), alpha=momentum)
        if running_var is not None:
            unbiased = m2 / (total - 1)
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype), alpha=momentum)

        mean, invstd = mean64.to(x.dtype), invstd64.to(x.dtype)
        scale = invstd if weight is None else invstd * weight
        shift = -mean * scale if bias is None else bias - mean * scale
        ctx.save_for_backward(x, weight, mean, invstd)
        ctx.total = total
        ctx.process_set = process_set
        return torch.addcmul(_channel_view(shift, x.dim()), x, _channel_view(scale, x.dim()))

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mean, invstd = ctx.saved_tensors
        dim = x.dim()
        reduce_dims = [0] + list(range(2, dim))
        g = grad_output.contiguous()
        xhat = (x - _channel_view(mean, dim)) * _channel_view(invstd, dim)
        sum_dy = g.sum(reduce_dims)
        sum_dy_xhat = (g * xhat).sum(reduce_dims)

        grad_input = None
        if ctx.needs_input_grad[0]:
            # dx = w * invstd * (dy - mean(dy) - xhat * mean(dy * xhat)),
            # the means taken over the whole batch of every rank.
            both = result(allreduce_async(torch.cat([sum_dy, sum_dy_xhat]), op=Sum,
                                          name="sync_batch_norm.grad_stats",
                                          process_set=ctx.process_set))
            channels = x.shape[1]
            mean_dy = both[:channels] / ctx.total
            mean_dy_xhat = both[channels:] / ctx.total
            gain = invstd if weight is None else invstd * weight
            grad_input = (g - _channel_view(mean_dy, dim)
                          - xhat * _channel_view(mean_dy_xhat, dim)) * _channel_view(gain, dim)
        grad_weight = sum_dy_xhat if weight is not None and ctx.needs_input_grad[1] else None
        grad_bias = sum_dy if ctx.needs_input_grad[2] else None
        return grad_input, grad_weight, grad_bias, None, None, None, None, None


class SyncBatchNorm(_BatchNorm):
    """Batch normalization over (N, C, ...) input with statistics shared by
    every rank of `process_set` in training. In eval mode it normalizes with
    the running statistics (or, without them, with this rank's batch) and
    communicates nothing, so ranks may evaluate independently.

    Arguments are torch.nn.BatchNorm*d's, plus `process_set` (the ranks whose
    batches form one batch; every member must run each training forward
    and backward).
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_set=global_process_set, device=None,
                 dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats,
                         device=device, dtype=dtype)
        self.process_set = process_set

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _set_size(self):
        if getattr(self.process_set, "process_set_id", None) == 0:
            return runtime().engine().size
        return self.process_set.size()

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked)

        if not self.training or self._set_size() == 1:
            # Eval, or nothing to share: exactly torch's BatchNorm.
            use_batch_stats = self.training or self.running_mean is None
            track = not self.training or self.track_running_stats
            return F.batch_norm(input, self.running_mean if track else None,
                                self.running_var if track else None, self.weight, self.bias,
                                use_batch_stats, factor, self.eps)
        return _SyncBatchNormFunction.apply(
            input, self.weight, self.bias,
            self.running_mean if self.track_running_stats else None,
            self.running_var if self.track_running_stats else None,
            self.eps, factor, self.process_set)


__all__ = ["SyncBatchNorm"]
