"""Quantized BatchNorm2d / BatchNorm3d on qplugin kernels (running statistics folded into one
per-channel affine requantize). Constructor and state_dict (weight, bias, running_mean,
running_var, num_batches_tracked, scale, zero_point) as torch.ao.nn.quantized's
(torch_qplugin.nn.plain._base, shared with the plain forms)."""

import torch
from torch import Tensor

from ...plain import _base as B
from .utils import _require_quantized

__all__ = ["BatchNorm2d", "BatchNorm3d"]


class _BatchNorm(B.BatchNorm):
    def _get_name(self):
        return "Quantized" + self._NAME


class BatchNorm2d(_BatchNorm):
    _NAME = "BatchNorm2d"
    _DIMS = 4

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.BatchNorm2d")
        return torch.ops.qplugin.batch_norm2d(
            input, self.weight, self.bias, self.running_mean, self.running_var, self.eps, self.scale, self.zero_point
        )


class BatchNorm3d(_BatchNorm):
    _NAME = "BatchNorm3d"
    _DIMS = 5

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.BatchNorm3d")
        return torch.ops.qplugin.batch_norm3d(
            input, self.weight, self.bias, self.running_mean, self.running_var, self.eps, self.scale, self.zero_point
        )
