"""torch_qplugin.quantization: the eager-mode quantization workflow, without torch.ao.quantization.

import torch_qplugin.quantization as tq
model.qconfig = tq.default_qconfig
tq.prepare(model, inplace=True); tq.calibrate(model, data); tq.convert(model, inplace=True)
"""

import importlib

from .fake_quantize import (
    FakeQuantize,
    FakeQuantizeBase,
    disable_fake_quant,
    disable_observer,
    enable_fake_quant,
    enable_observer,
)
from .fuse import fuse_known_modules, fuse_modules, fuse_modules_qat, get_fuser_method
from .observer import (
    FixedQParamsObserver,
    HistogramObserver,
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    MovingAveragePerChannelMinMaxObserver,
    ObserverBase,
    PerChannelMinMaxObserver,
    PlaceholderObserver,
)
from .qconfig import (
    QConfig,
    default_dynamic_qconfig,
    default_fake_quant,
    default_histogram_qconfig,
    default_observer,
    default_per_channel_qconfig,
    default_per_channel_weight_fake_quant,
    default_per_channel_weight_observer,
    default_per_tensor_qconfig,
    default_qat_qconfig,
    default_qconfig,
    default_weight_fake_quant,
    default_weight_observer,
)
from .qconfig import (
    default_float_qparams_observer,
    default_float_qparams_observer_4bit,
    default_placeholder_observer,
    float_qparams_weight_only_qconfig,
    float_qparams_weight_only_qconfig_4bit,
)
from .observer import NoopObserver, RecordingObserver
from .qconfig import QConfigDynamic, float16_dynamic_qconfig, per_channel_dynamic_qconfig
from .stubs import DeQuantStub, QuantStub, QuantWrapper

# mappings / quantize import torch_qplugin.nn, whose modules import this package: load them on first use
_LAZY = {
    "mappings": [
        "get_default_dynamic_quant_module_mappings",
        "get_default_qat_module_mappings",
        "get_default_qconfig_propagation_list",
        "get_default_static_quant_module_mappings",
        "get_default_plain_static_quant_module_mappings",
        "get_default_plain_dynamic_quant_module_mappings",
        "no_observer_set",
    ],
    "quantize": [
        "add_quant_dequant",
        "calibrate",
        "convert",
        "prepare",
        "prepare_qat",
        "progress",
        "propagate_qconfig_",
        "quantize",
        "quantize_dynamic",
        "quantize_qat",
        "swap_module",
        "default_eval_fn",
        "get_observer_dict",
        "add_observer_",
    ],
    "plain": ["to_plain"],
    "quantize_jit": ["quantize_jit", "quantize_dynamic_jit"],
}
_LAZY_NAMES = {name: mod for mod, names in _LAZY.items() for name in names}


def __getattr__(name: str) -> object:
    if name in _LAZY_NAMES:
        sub = _LAZY_NAMES[name]
        mod = importlib.import_module(f"{__name__}.{sub}")
        # bind every name of that submodule now: importing it set the package attribute
        # `quantize` to the submodule, which must not shadow the function quantize()
        for n in _LAZY[sub]:
            globals()[n] = getattr(mod, n)
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_NAMES))


__all__ = sorted([n for n in globals() if not n.startswith("_") and n != "importlib"] + list(_LAZY_NAMES))
