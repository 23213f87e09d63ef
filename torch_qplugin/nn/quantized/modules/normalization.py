"""Quantized LayerNorm, GroupNorm and InstanceNorm1d / 2d / 3d on qplugin kernels.

Constructor arguments and state_dict keys (weight, bias, scale, zero_point) as
torch.ao.nn.quantized's; forward reads plain float / int qparams."""
from typing import List, Optional

import torch
import torch.nn as nn
from torch import Tensor

from .activation import _QParamsState
from .utils import _act_qparams, _require_quantized

__all__ = ["LayerNorm", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


def _param(t: Optional[Tensor]) -> Optional[nn.Parameter]:
    """A float weight / bias as a frozen Parameter (None stays None)."""
    if t is None:
        return None
    return nn.Parameter(t.detach().clone().float(), requires_grad=False)


class LayerNorm(_QParamsState, nn.LayerNorm):
    def __init__(self, normalized_shape, weight, bias, scale, zero_point, eps=1e-5, elementwise_affine=True,
                 device=None, dtype=None):
        super().__init__(normalized_shape, eps=eps, elementwise_affine=elementwise_affine, device=device,
                         dtype=dtype)
        self.weight = _param(weight)
        self.bias = _param(bias)
        self.scale = float(scale)
        self.zero_point = int(zero_point)
        self._shape: List[int] = [int(s) for s in self.normalized_shape]

    def _get_name(self):
        return "QuantizedLayerNorm"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.LayerNorm")
        return torch.ops.qplugin.layer_norm(input, self._shape, self.weight, self.bias, self.eps, self.scale,
                                            self.zero_point)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp = _act_qparams(mod, "torch_qplugin.nn.quantized.LayerNorm")
        return cls(mod.normalized_shape, mod.weight, mod.bias, scale, zp, mod.eps, mod.elementwise_affine)

    @classmethod
    def from_reference(cls, mod, scale, zero_point):
        return cls(mod.normalized_shape, mod.weight, mod.bias, float(scale), int(zero_point), mod.eps,
                   mod.elementwise_affine)


class GroupNorm(_QParamsState, nn.GroupNorm):
    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups, num_channels, weight, bias, scale, zero_point, eps=1e-5, affine=True,
                 device=None, dtype=None):
        super().__init__(num_groups, num_channels, eps, affine, device=device, dtype=dtype)
        self.weight = _param(weight)
        self.bias = _param(bias)
        self.scale = float(scale)
        self.zero_point = int(zero_point)

    def _get_name(self):
        return "QuantizedGroupNorm"

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.GroupNorm")
        return torch.ops.qplugin.group_norm(input, self.num_groups, self.weight, self.bias, self.eps, self.scale,
                                            self.zero_point)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp = _act_qparams(mod, "torch_qplugin.nn.quantized.GroupNorm")
        return cls(mod.num_groups, mod.num_channels, mod.weight, mod.bias, scale, zp, mod.eps, mod.affine)


class _InstanceNorm(_QParamsState):
    """Statistics of each (n, c) plane in every mode (as torch's quantized InstanceNorm: running
    statistics, if tracked by the float module, are not used)."""

    _NAME = ""

    def __init__(self, num_features, weight, bias, scale, zero_point, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device=device, dtype=dtype)
        self.weight = _param(weight)
        self.bias = _param(bias)
        self.scale = float(scale)
        self.zero_point = int(zero_point)

    def _get_name(self):
        return "Quantized" + self._NAME

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.InstanceNorm")
        return torch.ops.qplugin.instance_norm(input, self.weight, self.bias, self.eps, self.scale,
                                               self.zero_point)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp = _act_qparams(mod, "torch_qplugin.nn.quantized." + cls._NAME)
        return cls.from_reference(mod, scale, zp)

    @classmethod
    def from_reference(cls, mod, scale, zero_point):
        # keywords: torch's from_float passes affine positionally into momentum's place
        return cls(mod.num_features, mod.weight, mod.bias, float(scale), int(zero_point), eps=mod.eps,
                   momentum=mod.momentum, affine=mod.affine, track_running_stats=mod.track_running_stats)


class InstanceNorm1d(_InstanceNorm, nn.InstanceNorm1d):
    _NAME = "InstanceNorm1d"


class InstanceNorm2d(_InstanceNorm, nn.InstanceNorm2d):
    _NAME = "InstanceNorm2d"


class InstanceNorm3d(_InstanceNorm, nn.InstanceNorm3d):
    _NAME = "InstanceNorm3d"
