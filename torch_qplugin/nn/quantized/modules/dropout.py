"""Quantized Dropout: the identity in eval (quantized models run inference only), as torch's."""
import torch.nn as nn
from torch import Tensor

__all__ = ["Dropout"]


class Dropout(nn.Dropout):
    def _get_name(self):
        return "QuantizedDropout"

    def forward(self, input: Tensor) -> Tensor:
        return input

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls(mod.p, mod.inplace)

    @classmethod
    def from_reference(cls, mod, scale, zero_point):
        return cls(mod.p, mod.inplace)
