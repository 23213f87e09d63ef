"""Quantize / DeQuantize: the converted forms of QuantStub / DeQuantStub."""

from typing import Any, Dict, Optional

import torch
from torch import Tensor

from ...plain import _base as B
from ....quantizer import quantized_dtype

__all__ = ["Quantize", "DeQuantize"]


class Quantize(B.Quantize):
    """float -> quantized (per tensor) with ``scale``, ``zero_point``, ``dtype`` (torch.quint8 /
    qint8 / qint32, or their plain names)."""

    def __init__(
        self, scale: float, zero_point: int, dtype: torch.dtype, factory_kwargs: Optional[Dict[str, Any]] = None
    ) -> None:
        super().__init__(
            scale, zero_point, quantized_dtype(dtype, "torch_qplugin.nn.quantized.Quantize"), factory_kwargs
        )

    def forward(self, X: Tensor) -> Tensor:
        if X.is_quantized:
            raise RuntimeError(
                "torch_qplugin.nn.quantized.Quantize: input is already quantized; expected a float tensor"
            )
        return torch.ops.qplugin.quantize_per_tensor(X, float(self.scale), int(self.zero_point), self.dtype)


class DeQuantize(B.DeQuantize):
    """quantized -> float."""

    def forward(self, Xq: Tensor) -> Tensor:
        return torch.ops.qplugin.dequantize(Xq)
