"""Module mappings: float / observed / QAT module types -> their qplugin replacements.

The plain tables (float type -> torch_qplugin.nn.plain class) are the primary ones: convert(...,
plain=True) uses them and they name no quantized-tier class. The quantized tables are derived from
them, each plain class replaced by its quantized twin (quantization/_to_plain.py's PLAIN_OF),
and are built on first use, so that this module imports without the quantized tier.

Module-level dicts; the ``get_default_*`` functions return copies (edit those freely). The
quantized tables also plug into torch.ao.quantization.convert(model, mapping=...) for a model
prepared with torch's own workflow: torch's stubs and FloatFunctional are keys too.
"""

import copy
import functools
from typing import Dict, Set

import torch.nn as nn

from . import _compat as C
from .stubs import DeQuantStub, FloatFunctional, QuantStub
from ..nn.plain import modules as P

__all__ = [
    "get_default_static_quant_module_mappings",
    "get_default_dynamic_quant_module_mappings",
    "get_default_qat_module_mappings",
    "get_default_qconfig_propagation_list",
    "no_observer_set",
    "get_default_plain_static_quant_module_mappings",
    "get_default_plain_dynamic_quant_module_mappings",
]

DEFAULT_PLAIN_STATIC_QUANT_MODULE_MAPPINGS = {
    QuantStub: P.Quantize,
    DeQuantStub: P.DeQuantize,
    FloatFunctional: P.QFunctional,
    nn.Linear: P.Linear,
    nn.modules.linear.NonDynamicallyQuantizableLinear: P.Linear,
    nn.Conv1d: P.Conv1d,
    nn.Conv2d: P.Conv2d,
    nn.Conv3d: P.Conv3d,
    nn.ConvTranspose1d: P.ConvTranspose1d,
    nn.ConvTranspose2d: P.ConvTranspose2d,
    nn.ConvTranspose3d: P.ConvTranspose3d,
    nn.ReLU: P.ReLU,
    nn.ReLU6: P.ReLU6,
    nn.Hardswish: P.Hardswish,
    nn.ELU: P.ELU,
    nn.LeakyReLU: P.LeakyReLU,
    nn.Sigmoid: P.Sigmoid,
    nn.Hardsigmoid: P.Hardsigmoid,
    nn.MaxPool2d: P.MaxPool2d,
    nn.AvgPool2d: P.AvgPool2d,
    nn.AdaptiveAvgPool2d: P.AdaptiveAvgPool2d,
    nn.BatchNorm2d: P.BatchNorm2d,
    nn.BatchNorm3d: P.BatchNorm3d,
    nn.GroupNorm: P.GroupNorm,
    nn.InstanceNorm1d: P.InstanceNorm1d,
    nn.InstanceNorm2d: P.InstanceNorm2d,
    nn.InstanceNorm3d: P.InstanceNorm3d,
    nn.LayerNorm: P.LayerNorm,
    nn.Dropout: P.Dropout,
    nn.Softmax: P.Softmax,
    nn.PReLU: P.PReLU,
    # fused float modules
    C.LinearReLU: P.LinearReLU,
    C.ConvReLU1d: P.ConvReLU1d,
    C.ConvReLU2d: P.ConvReLU2d,
    C.ConvReLU3d: P.ConvReLU3d,
    C.ConvAdd2d: P.ConvAdd2d,
    C.ConvAddReLU2d: P.ConvAddReLU2d,
    C.BNReLU2d: P.BNReLU2d,
    C.BNReLU3d: P.BNReLU3d,
}
# models written / prepared with torch.ao.quantization
for _k in C.present(C.TorchQuantStub):
    DEFAULT_PLAIN_STATIC_QUANT_MODULE_MAPPINGS[_k] = P.Quantize
for _k in C.present(C.TorchDeQuantStub):
    DEFAULT_PLAIN_STATIC_QUANT_MODULE_MAPPINGS[_k] = P.DeQuantize
for _k in C.present(C.TorchFloatFunctional, C.TorchFXFloatFunctional):
    DEFAULT_PLAIN_STATIC_QUANT_MODULE_MAPPINGS[_k] = P.QFunctional

# 3-d average pooling
DEFAULT_PLAIN_STATIC_QUANT_MODULE_MAPPINGS.update(
    {
        nn.AvgPool3d: P.AvgPool3d,
        nn.AdaptiveAvgPool3d: P.AdaptiveAvgPool3d,
    }
)

# embeddings, weight-only: static and dynamic, as torch
DEFAULT_PLAIN_STATIC_QUANT_MODULE_MAPPINGS.update(
    {
        nn.Embedding: P.Embedding,
        nn.EmbeddingBag: P.EmbeddingBag,
    }
)

# QAT modules (after prepare_qat) -> plain
if C.QAT_AVAILABLE:
    _QAT = C.qat
    _IQAT = C.intrinsic_qat
    DEFAULT_PLAIN_STATIC_QUANT_MODULE_MAPPINGS.update(
        {
            _QAT.Linear: P.Linear,
            _QAT.Conv1d: P.Conv1d,
            _QAT.Conv2d: P.Conv2d,
            _QAT.Conv3d: P.Conv3d,
            _IQAT.LinearReLU: P.LinearReLU,
            _IQAT.LinearBn1d: P.Linear,
            _IQAT.ConvBn1d: P.Conv1d,
            _IQAT.ConvBn2d: P.Conv2d,
            _IQAT.ConvBn3d: P.Conv3d,
            _IQAT.ConvReLU1d: P.ConvReLU1d,
            _IQAT.ConvReLU2d: P.ConvReLU2d,
            _IQAT.ConvReLU3d: P.ConvReLU3d,
            _IQAT.ConvBnReLU1d: P.ConvReLU1d,
            _IQAT.ConvBnReLU2d: P.ConvReLU2d,
            _IQAT.ConvBnReLU3d: P.ConvReLU3d,
        }
    )
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

DEFAULT_PLAIN_DYNAMIC_QUANT_MODULE_MAPPINGS = {
    nn.Linear: P.DynamicLinear,
    nn.modules.linear.NonDynamicallyQuantizableLinear: P.DynamicLinear,
    nn.LSTM: P.LSTM,
    nn.GRU: P.GRU,
    nn.LSTMCell: P.LSTMCell,
    nn.GRUCell: P.GRUCell,
    nn.RNNCell: P.RNNCell,
}
if C.QAT_AVAILABLE:
    DEFAULT_PLAIN_DYNAMIC_QUANT_MODULE_MAPPINGS[C.qat.Linear] = P.DynamicLinear
DEFAULT_PLAIN_DYNAMIC_QUANT_MODULE_MAPPINGS.update({nn.Embedding: P.Embedding, nn.EmbeddingBag: P.EmbeddingBag})

# modules whose quantized form keeps the input's qparams: no output observer needed
_NO_OBSERVER = {
    nn.ReLU,
    nn.ReLU6,
    nn.MaxPool2d,
    nn.AvgPool2d,
    nn.AdaptiveAvgPool2d,
    nn.Sigmoid,
    nn.Hardsigmoid,
    nn.Dropout,
    DeQuantStub,
    *C.present(C.TorchDeQuantStub),
}


_NO_OBSERVER |= {nn.AvgPool3d, nn.AdaptiveAvgPool3d}
_NO_OBSERVER |= {nn.Embedding, nn.EmbeddingBag}  # float outputs


def no_observer_set() -> Set[type]:
    return set(_NO_OBSERVER)


@functools.lru_cache(maxsize=None)
def _quantized_tables():
    """(static, dynamic): the plain tables with each plain class replaced by its quantized twin."""
    from ._to_plain import PLAIN_OF

    twin = {p: q for q, p in PLAIN_OF.items()}
    return tuple(
        {k: twin[v] for k, v in table.items()}
        for table in (DEFAULT_PLAIN_STATIC_QUANT_MODULE_MAPPINGS, DEFAULT_PLAIN_DYNAMIC_QUANT_MODULE_MAPPINGS)
    )


def get_default_static_quant_module_mappings() -> Dict[type, type]:
    """float / observed / QAT module type -> qplugin quantized module (a copy)."""
    return copy.deepcopy(_quantized_tables()[0])


def get_default_dynamic_quant_module_mappings() -> Dict[type, type]:
    return copy.deepcopy(_quantized_tables()[1])


def get_default_plain_static_quant_module_mappings() -> Dict[type, type]:
    """float / observed / QAT module type -> torch_qplugin.nn.plain module (a copy)."""
    return copy.deepcopy(DEFAULT_PLAIN_STATIC_QUANT_MODULE_MAPPINGS)


def get_default_plain_dynamic_quant_module_mappings() -> Dict[type, type]:
    return copy.deepcopy(DEFAULT_PLAIN_DYNAMIC_QUANT_MODULE_MAPPINGS)


def get_default_qat_module_mappings() -> Dict[type, type]:
    return copy.deepcopy(DEFAULT_QAT_MODULE_MAPPINGS)


def get_default_qconfig_propagation_list() -> Set[type]:
    """Module types that get an output observer in prepare()."""
    keys = (
        set(DEFAULT_PLAIN_STATIC_QUANT_MODULE_MAPPINGS)
        | set(DEFAULT_QAT_MODULE_MAPPINGS)
        | set(DEFAULT_PLAIN_DYNAMIC_QUANT_MODULE_MAPPINGS)
    )
    return keys - _NO_OBSERVER
