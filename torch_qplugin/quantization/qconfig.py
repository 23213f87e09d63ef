"""QConfig and the defaults chosen for qplugin's kernels.

qplugin's linear/conv kernels accumulate in 32 bits on every ISA, so activations use the full
8-bit range (uint8 0..255, no ``reduce_range``) and weights are per-channel symmetric int8
(-128..127). torch's x86/fbgemm defaults use ``reduce_range=True`` to dodge 16-bit saturation in
its AVX2 kernels; that costs one bit of activation precision and is not needed here.

The dtypes are the plain ones (torch.uint8 / int8, torch.uint4 for 4-bit embedding rows), so these
import and work in a torch without quantized dtypes; torch.quint8 / qint8 / quint4x2 given to an
observer are read as their aliases.
"""

from collections import namedtuple
from typing import Callable

import torch
import torch.nn as nn

from .fake_quantize import FakeQuantize
from .observer import (
    HistogramObserver,
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    MovingAveragePerChannelMinMaxObserver,
    PerChannelMinMaxObserver,
    PlaceholderObserver,
)

__all__ = [
    "QConfig",
    "default_qconfig",
    "default_per_channel_qconfig",
    "default_per_tensor_qconfig",
    "default_histogram_qconfig",
    "default_dynamic_qconfig",
    "default_qat_qconfig",
    "default_observer",
    "default_weight_observer",
    "default_per_channel_weight_observer",
    "default_dynamic_quant_observer",
    "default_fake_quant",
    "default_weight_fake_quant",
    "default_per_channel_weight_fake_quant",
]


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """How to observe (or fake-quantize) activations and weights: two factories (classes or
    ``Observer.with_args(...)``), each called once per module to make a fresh observer."""

    __slots__ = ()

    def __new__(cls, activation: Callable[..., nn.Module], weight: Callable[..., nn.Module]) -> "QConfig":
        if isinstance(activation, nn.Module) or isinstance(weight, nn.Module):
            raise ValueError(
                "QConfig received observer instance, please pass observer class "
                "instead. Use MyObserver.with_args(x=1) to override arguments"
            )
        return super().__new__(cls, activation, weight)


# ---- observers ------------------------------------------------------------------------------
default_observer = MinMaxObserver.with_args(dtype=torch.uint8, qscheme=torch.per_tensor_affine)
default_weight_observer = MinMaxObserver.with_args(dtype=torch.int8, qscheme=torch.per_tensor_symmetric)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(
    dtype=torch.int8, qscheme=torch.per_channel_symmetric
)
default_histogram_observer = HistogramObserver.with_args(dtype=torch.uint8, reduce_range=False)
default_dynamic_quant_observer = PlaceholderObserver.with_args(dtype=torch.uint8, is_dynamic=True)

# ---- fake quantizers (QAT) ------------------------------------------------------------------
default_fake_quant = FakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver,
    quant_min=0,
    quant_max=255,
    dtype=torch.uint8,
    qscheme=torch.per_tensor_affine,
    reduce_range=False,
)
default_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver,
    quant_min=-128,
    quant_max=127,
    dtype=torch.int8,
    qscheme=torch.per_tensor_symmetric,
    reduce_range=False,
)
default_per_channel_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver,
    quant_min=-128,
    quant_max=127,
    dtype=torch.int8,
    qscheme=torch.per_channel_symmetric,
    reduce_range=False,
    ch_axis=0,
)

# ---- qconfigs ---------------------------------------------------------------------------------
#: static post-training quantization: min/max activations (full 8 bits), per-channel weights
default_qconfig = QConfig(activation=default_observer, weight=default_per_channel_weight_observer)
default_per_channel_qconfig = default_qconfig
#: per-tensor symmetric weights (torch's default_qconfig, without reduce_range)
default_per_tensor_qconfig = QConfig(activation=default_observer, weight=default_weight_observer)
#: histogram (L2-optimal range) activations: more accurate with outliers, slower calibration
default_histogram_qconfig = QConfig(activation=default_histogram_observer, weight=default_per_channel_weight_observer)
#: dynamic quantization: weights per-channel int8, activations quantized at run time
default_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer, weight=default_per_channel_weight_observer)
#: quantization-aware training
default_qat_qconfig = QConfig(activation=default_fake_quant, weight=default_per_channel_weight_fake_quant)


# ---- embeddings: weight-only, row-wise float qparams; activations stay float -------------------
default_placeholder_observer = PlaceholderObserver
default_float_qparams_observer = PerChannelMinMaxObserver.with_args(
    dtype=torch.uint8, qscheme=torch.per_channel_affine_float_qparams, ch_axis=0
)
default_float_qparams_observer_4bit = PerChannelMinMaxObserver.with_args(
    dtype=torch.uint4, qscheme=torch.per_channel_affine_float_qparams, ch_axis=0
)
float_qparams_weight_only_qconfig = QConfig(
    activation=default_placeholder_observer, weight=default_float_qparams_observer
)
float_qparams_weight_only_qconfig_4bit = QConfig(
    activation=default_placeholder_observer, weight=default_float_qparams_observer_4bit
)
__all__ += [
    "default_placeholder_observer",
    "default_float_qparams_observer",
    "default_float_qparams_observer_4bit",
    "float_qparams_weight_only_qconfig",
    "float_qparams_weight_only_qconfig_4bit",
]


class QConfigDynamic(namedtuple("QConfigDynamic", ["activation", "weight"])):
    """torch's (deprecated there) dynamic qconfig: only ``weight`` matters; ``activation`` defaults
    to torch.nn.Identity. quantize_dynamic accepts it wherever it accepts a QConfig."""

    __slots__ = ()

    def __new__(
        cls,
        activation: Callable[..., nn.Module] = torch.nn.Identity,
        weight: Callable[..., nn.Module] = torch.nn.Identity,
    ) -> "QConfigDynamic":
        if isinstance(weight, nn.Module):
            raise ValueError(
                "QConfigDynamic received observer instance, please pass observer class "
                "instead. Use MyObserver.with_args(x=1) to override arguments"
            )
        return super().__new__(cls, activation, weight)


__all__ += ["QConfigDynamic"]


# ---- the fp16 dynamic scheme: float16 weights, float activations, no int8 step ------------------
#: Linear / LSTM / GRU / cells with float16 weights (linear_dynamic_fp16), as torch's
float16_dynamic_qconfig = QConfig(
    activation=PlaceholderObserver.with_args(dtype=torch.float16, is_dynamic=True),
    weight=PlaceholderObserver.with_args(dtype=torch.float16),
)
#: torch's name for per-channel int8 dynamic weights (qplugin's default_dynamic_qconfig already is)
per_channel_dynamic_qconfig = default_dynamic_qconfig
__all__ += ["float16_dynamic_qconfig", "per_channel_dynamic_qconfig"]
