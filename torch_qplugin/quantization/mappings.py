"""Module mappings: float / observed / QAT module types -> their qplugin replacements.

Module-level dicts; the ``get_default_*`` functions return copies (edit those freely). They also
plug into torch.ao.quantization.convert(model, mapping=...) for a model prepared with torch's own
workflow: torch's stubs and FloatFunctional are keys too.
"""
import copy

import torch.nn as nn

from . import _compat as C
from .stubs import DeQuantStub, QuantStub
from ..nn import quantized as nnq
from ..nn.intrinsic import quantized as nniq
from ..nn.quantized import dynamic as nnqd

__all__ = [
    "get_default_static_quant_module_mappings", "get_default_dynamic_quant_module_mappings",
    "get_default_qat_module_mappings", "get_default_qconfig_propagation_list",
    "no_observer_set",
]

DEFAULT_STATIC_QUANT_MODULE_MAPPINGS = {
    QuantStub: nnq.Quantize,
    DeQuantStub: nnq.DeQuantize,
    nnq.FloatFunctional: nnq.QFunctional,
    nn.Linear: nnq.Linear,
    nn.modules.linear.NonDynamicallyQuantizableLinear: nnq.Linear,
    nn.Conv1d: nnq.Conv1d,
    nn.Conv2d: nnq.Conv2d,
    nn.Conv3d: nnq.Conv3d,
    nn.ConvTranspose1d: nnq.ConvTranspose1d,
    nn.ConvTranspose2d: nnq.ConvTranspose2d,
    nn.ConvTranspose3d: nnq.ConvTranspose3d,
    nn.ReLU: nnq.ReLU,
    nn.ReLU6: nnq.ReLU6,
    nn.Hardswish: nnq.Hardswish,
    nn.ELU: nnq.ELU,
    nn.LeakyReLU: nnq.LeakyReLU,
    nn.Sigmoid: nnq.Sigmoid,
    nn.Hardsigmoid: nnq.Hardsigmoid,
    nn.MaxPool2d: nnq.MaxPool2d,
    nn.AvgPool2d: nnq.AvgPool2d,
    nn.AdaptiveAvgPool2d: nnq.AdaptiveAvgPool2d,
    nn.BatchNorm2d: nnq.BatchNorm2d,
    nn.BatchNorm3d: nnq.BatchNorm3d,
    nn.GroupNorm: nnq.GroupNorm,
    nn.InstanceNorm1d: nnq.InstanceNorm1d,
    nn.InstanceNorm2d: nnq.InstanceNorm2d,
    nn.InstanceNorm3d: nnq.InstanceNorm3d,
    nn.LayerNorm: nnq.LayerNorm,
    nn.Dropout: nnq.Dropout,
    nn.Softmax: nnq.Softmax,
    nn.PReLU: nnq.PReLU,
    # fused float modules
    C.LinearReLU: nniq.LinearReLU,
    C.ConvReLU1d: nniq.ConvReLU1d,
    C.ConvReLU2d: nniq.ConvReLU2d,
    C.ConvReLU3d: nniq.ConvReLU3d,
    C.ConvAdd2d: nniq.ConvAdd2d,
    C.ConvAddReLU2d: nniq.ConvAddReLU2d,
    C.BNReLU2d: nniq.BNReLU2d,
    C.BNReLU3d: nniq.BNReLU3d,
}
# models written / prepared with torch.ao.quantization
for _k in C.present(C.TorchQuantStub):
    DEFAULT_STATIC_QUANT_MODULE_MAPPINGS[_k] = nnq.Quantize
for _k in C.present(C.TorchDeQuantStub):
    DEFAULT_STATIC_QUANT_MODULE_MAPPINGS[_k] = nnq.DeQuantize
for _k in C.present(C.TorchFloatFunctional, C.TorchFXFloatFunctional):
    DEFAULT_STATIC_QUANT_MODULE_MAPPINGS[_k] = nnq.QFunctional

# 3-d average pooling (issue 16)
DEFAULT_STATIC_QUANT_MODULE_MAPPINGS.update({
    nn.AvgPool3d: nnq.AvgPool3d,
    nn.AdaptiveAvgPool3d: nnq.AdaptiveAvgPool3d,
})

# embeddings, weight-only (issue 16): static and dynamic, as torch
DEFAULT_STATIC_QUANT_MODULE_MAPPINGS.update({
    nn.Embedding: nnq.Embedding,
    nn.EmbeddingBag: nnq.EmbeddingBag,
})

# QAT modules (after prepare_qat) -> quantized
if C.QAT_AVAILABLE:
    _QAT = C.qat
    _IQAT = C.intrinsic_qat
    DEFAULT_STATIC_QUANT_MODULE_MAPPINGS.update({
        _QAT.Linear: nnq.Linear,
        _QAT.Conv1d: nnq.Conv1d,
        _QAT.Conv2d: nnq.Conv2d,
        _QAT.Conv3d: nnq.Conv3d,
        _IQAT.LinearReLU: nniq.LinearReLU,
        _IQAT.LinearBn1d: nnq.Linear,
        _IQAT.ConvBn1d: nnq.Conv1d,
        _IQAT.ConvBn2d: nnq.Conv2d,
        _IQAT.ConvBn3d: nnq.Conv3d,
        _IQAT.ConvReLU1d: nniq.ConvReLU1d,
        _IQAT.ConvReLU2d: nniq.ConvReLU2d,
        _IQAT.ConvReLU3d: nniq.ConvReLU3d,
        _IQAT.ConvBnReLU1d: nniq.ConvReLU1d,
        _IQAT.ConvBnReLU2d: nniq.ConvReLU2d,
        _IQAT.ConvBnReLU3d: nniq.ConvReLU3d,
    })
    DEFAULT_QAT_MODULE_MAPPINGS = {
        nn.Linear: _QAT.Linear,
        nn.Conv1d: _QAT.Conv1d,
        nn.Conv2d: _QAT.Conv2d,
        nn.Conv3d: _QAT.Conv3d,
        C.LinearReLU: _IQAT.LinearReLU,
        C.LinearBn1d: _IQAT.LinearBn1d,
        C.ConvBn1d: _IQAT.ConvBn1d,
        C.ConvBn2d: _IQAT.ConvBn2d,
        C.ConvBn3d: _IQAT.ConvBn3d,
        C.ConvBnReLU1d: _IQAT.ConvBnReLU1d,
        C.ConvBnReLU2d: _IQAT.ConvBnReLU2d,
        C.ConvBnReLU3d: _IQAT.ConvBnReLU3d,
        C.ConvReLU1d: _IQAT.ConvReLU1d,
        C.ConvReLU2d: _IQAT.ConvReLU2d,
        C.ConvReLU3d: _IQAT.ConvReLU3d,
    }
else:  # pragma: no cover
    DEFAULT_QAT_MODULE_MAPPINGS = {}

DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS = {
    nn.Linear: nnqd.Linear,
    nn.modules.linear.NonDynamicallyQuantizableLinear: nnqd.Linear,
    nn.LSTM: nnqd.LSTM,
    nn.GRU: nnqd.GRU,
    nn.LSTMCell: nnqd.LSTMCell,
    nn.GRUCell: nnqd.GRUCell,
    nn.RNNCell: nnqd.RNNCell,
}
if C.QAT_AVAILABLE:
    DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS[C.qat.Linear] = nnqd.Linear
DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS.update({nn.Embedding: nnq.Embedding, nn.EmbeddingBag: nnq.EmbeddingBag})

# modules whose quantized form keeps the input's qparams: no output observer needed
_NO_OBSERVER = {nn.ReLU, nn.ReLU6, nn.MaxPool2d, nn.AvgPool2d, nn.AdaptiveAvgPool2d, nn.Sigmoid,
                nn.Hardsigmoid, nn.Dropout, DeQuantStub, *C.present(C.TorchDeQuantStub)}


_NO_OBSERVER |= {nn.AvgPool3d, nn.AdaptiveAvgPool3d}
_NO_OBSERVER |= {nn.Embedding, nn.EmbeddingBag}  # float outputs


def no_observer_set():
    return set(_NO_OBSERVER)


def get_default_static_quant_module_mappings():
    """float / observed / QAT module type -> qplugin quantized module (a copy)."""
    return copy.deepcopy(DEFAULT_STATIC_QUANT_MODULE_MAPPINGS)


def get_default_dynamic_quant_module_mappings():
    return copy.deepcopy(DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS)


def get_default_qat_module_mappings():
    return copy.deepcopy(DEFAULT_QAT_MODULE_MAPPINGS)


def get_default_qconfig_propagation_list():
    """Module types that get an output observer in prepare()."""
    keys = set(DEFAULT_STATIC_QUANT_MODULE_MAPPINGS) | set(DEFAULT_QAT_MODULE_MAPPINGS) | set(
        DEFAULT_DYNAMIC_QUANT_MODULE_MAPPINGS)
    return keys - _NO_OBSERVER
