"""Quantize / DeQuantize: the converted forms of QuantStub / DeQuantStub."""
import torch
import torch.nn as nn
from torch import Tensor

from .utils import _act_qparams, _guard_never_calibrated

__all__ = ["Quantize", "DeQuantize"]


class Quantize(nn.Module):
    """float -> quantized (per tensor) with ``scale``, ``zero_point``, ``dtype``."""

    scale: Tensor
    zero_point: Tensor

    def __init__(self, scale, zero_point, dtype, factory_kwargs=None):
        factory_kwargs = nn.factory_kwargs(factory_kwargs)
        super().__init__()
        self.register_buffer("scale", torch.tensor([scale], **factory_kwargs))
        self.register_buffer("zero_point", torch.tensor(
            [zero_point], dtype=torch.long, **{k: v for k, v in factory_kwargs.items() if k != "dtype"}))
        self.dtype = dtype

    def forward(self, X: Tensor) -> Tensor:
        if X.is_quantized:
            raise RuntimeError("torch_qplugin.nn.quantized.Quantize: input is already quantized; "
                               "expected a float tensor")
        return torch.ops.qplugin.quantize_per_tensor(X, float(self.scale), int(self.zero_point), self.dtype)

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        scale, zp = _act_qparams(mod, "torch_qplugin.nn.quantized.Quantize")
        return _guard_never_calibrated(Quantize(scale, zp, mod.activation_post_process.dtype), mod)

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}"


class DeQuantize(nn.Module):
    """quantized -> float."""

    def forward(self, Xq: Tensor) -> Tensor:
        return torch.ops.qplugin.dequantize(Xq)

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        return DeQuantize()
