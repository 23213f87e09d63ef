"""torch_qplugin.nn.intrinsic.quantized: fused quantized modules (also in torch_qplugin.nn.quantized)."""

from .... import _ops

_ops.require_quantized("torch_qplugin.nn.intrinsic.quantized")

from .modules import BNReLU2d, BNReLU3d, ConvAdd2d, ConvAddReLU2d, ConvReLU1d, ConvReLU2d, ConvReLU3d, LinearReLU  # noqa: E402

__all__ = ["LinearReLU", "ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "ConvAdd2d", "ConvAddReLU2d", "BNReLU2d", "BNReLU3d"]
