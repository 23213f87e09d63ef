"""Quantized BatchNorm2d / BatchNorm3d on qplugin kernels (running statistics folded into one
per-channel affine requantize). Constructor and state_dict (weight, bias, running_mean,
running_var, num_batches_tracked, scale, zero_point) as torch.ao.nn.quantized's."""
import torch
import torch.nn as nn
from torch import Tensor

from ....quantization import _compat as C
from .activation import _QParamsState
from .utils import _act_qparams, _require_quantized

__all__ = ["BatchNorm2d", "BatchNorm3d"]


class _BatchNorm(_QParamsState, nn.modules.batchnorm._BatchNorm):
    _NAME = ""
    _DIMS = 4

    def __init__(self, num_features, eps=1e-5, momentum=0.1, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, True, True, device=device, dtype=dtype)
        self.scale = 1.0
        self.zero_point = 0

    def _get_name(self):
        return "Quantized" + self._NAME

    def _check_input_dim(self, input):
        if input.dim() != self._DIMS:
            raise ValueError(f"{self._NAME}: input should be {self._DIMS}-D, got {input.dim()} dims")

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        scale, zp = _act_qparams(mod, "torch_qplugin.nn.quantized." + cls._NAME)
        if isinstance(mod, C._FusedModule):  # BNReLU2d / 3d: (bn, relu)
            mod = mod[0]
        return cls._from_bn(mod, scale, zp)

    @classmethod
    def from_reference(cls, bn, output_scale, output_zero_point):
        return cls._from_bn(bn, float(output_scale), int(output_zero_point))

    @classmethod
    def _from_bn(cls, bn, scale, zp):
        if bn.running_mean is None or bn.running_var is None:
            raise ValueError(f"torch_qplugin.nn.quantized.{cls._NAME}.from_float: the float BatchNorm should "
                             "track running statistics (track_running_stats=True)")
        new = cls(bn.num_features, bn.eps, bn.momentum if bn.momentum is not None else 0.1)
        with torch.no_grad():
            if bn.affine:
                new.weight.copy_(bn.weight)
                new.bias.copy_(bn.bias)
            new.running_mean.copy_(bn.running_mean)
            new.running_var.copy_(bn.running_var)
            if bn.num_batches_tracked is not None:
                new.num_batches_tracked.copy_(bn.num_batches_tracked)
        new.weight.requires_grad_(False)
        new.bias.requires_grad_(False)
        new.scale = float(scale)
        new.zero_point = int(zp)
        return new


class BatchNorm2d(_BatchNorm):
    _NAME = "BatchNorm2d"
    _DIMS = 4

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.BatchNorm2d")
        return torch.ops.qplugin.batch_norm2d(input, self.weight, self.bias, self.running_mean, self.running_var,
                                              self.eps, self.scale, self.zero_point)


class BatchNorm3d(_BatchNorm):
    _NAME = "BatchNorm3d"
    _DIMS = 5

    def forward(self, input: Tensor) -> Tensor:
        _require_quantized(input, "torch_qplugin.nn.quantized.BatchNorm3d")
        return torch.ops.qplugin.batch_norm3d(input, self.weight, self.bias, self.running_mean, self.running_var,
                                              self.eps, self.scale, self.zero_point)
