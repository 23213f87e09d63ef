"""Quantized LayerNorm, GroupNorm and InstanceNorm1d / 2d / 3d on qplugin kernels.

Constructor arguments and state_dict keys (weight, bias, scale, zero_point) as
torch.ao.nn.quantized's (torch_qplugin.nn.plain._base, shared with the plain forms); forward reads
plain float / int qparams."""

import torch
import torch.nn as nn
from torch import Tensor

from ...plain import _base as B
from .utils import _require_quantized

__all__ = ["LayerNorm", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class LayerNorm(B.LayerNorm):
    def _get_name(self):
        return "QuantizedLayerNorm"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.LayerNorm")
        return torch.ops.qplugin.layer_norm(
            input, self._shape, self.weight, self.bias, self.eps, self.scale, self.zero_point
        )


class GroupNorm(B.GroupNorm):
    def _get_name(self):
        return "QuantizedGroupNorm"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.GroupNorm")
        return torch.ops.qplugin.group_norm(
            input, self.num_groups, self.weight, self.bias, self.eps, self.scale, self.zero_point
        )


class _InstanceNorm(B.InstanceNorm):
    _NAME = ""

    def _get_name(self):
        return "Quantized" + self._NAME

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.InstanceNorm")
        return torch.ops.qplugin.instance_norm(input, self.weight, self.bias, self.eps, self.scale, self.zero_point)


class InstanceNorm1d(_InstanceNorm, nn.InstanceNorm1d):
    _NAME = "InstanceNorm1d"


class InstanceNorm2d(_InstanceNorm, nn.InstanceNorm2d):
    _NAME = "InstanceNorm2d"


class InstanceNorm3d(_InstanceNorm, nn.InstanceNorm3d):
    _NAME = "InstanceNorm3d"
