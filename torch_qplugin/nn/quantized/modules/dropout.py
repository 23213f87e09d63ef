"""Quantized Dropout: the identity in eval (quantized models run inference only), as torch's."""

from ...plain import _base as B

__all__ = ["Dropout"]


class Dropout(B.Dropout):
    def _get_name(self):
        return "QuantizedDropout"
