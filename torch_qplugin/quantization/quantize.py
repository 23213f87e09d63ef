"""The eager-mode workflow: propagate_qconfig_, prepare, calibrate, convert (and QAT, dynamic).

Signatures and in-place semantics of torch.ao.quantization's functions of the same names, written
without it (no deprecation warnings); the defaults map onto qplugin modules. Additions: clear
errors where torch silently produces a float or half-converted model, and an optional progress
bar for calibration / QAT loops (``calibrate``, ``progress``).
"""

import copy
import inspect
import itertools
import sys
import warnings
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, Union

import torch
import torch.nn as nn
from torch.nn.utils.parametrize import type_before_parametrizations as _type

from . import _compat as C
from . import plain as _plain
from .fake_quantize import FakeQuantizeBase
from .mappings import (
    get_default_dynamic_quant_module_mappings,
    get_default_plain_dynamic_quant_module_mappings,
    get_default_plain_static_quant_module_mappings,
    get_default_qat_module_mappings,
    get_default_qconfig_propagation_list,
    get_default_static_quant_module_mappings,
)
from .observer import ObserverBase, observer_state
from .qconfig import default_dynamic_qconfig, float16_dynamic_qconfig
from .stubs import DeQuantStub, FloatFunctional, QuantWrapper
from ..nn.plain._base import QFunctional, _name_never_calibrated
from ..quantizer import plain_dtype as _plain_dtype

__all__ = [
    "propagate_qconfig_",
    "prepare",
    "prepare_qat",
    "convert",
    "quantize",
    "quantize_dynamic",
    "quantize_qat",
    "swap_module",
    "add_quant_dequant",
    "calibrate",
    "progress",
]

_FLOAT_FUNCTIONALS = (FloatFunctional, QFunctional) + C.present(C.TorchFloatFunctional, C.TorchFXFloatFunctional)
_DEQUANT_STUBS = (DeQuantStub,) + C.present(C.TorchDeQuantStub)


def _is_observer(m: nn.Module):
    return isinstance(m, (ObserverBase, FakeQuantizeBase) + C.torch_observer_types())


def _check_qconfig(qconfig: Any, module: nn.Module):
    if qconfig is None:
        return
    if not (hasattr(qconfig, "activation") and hasattr(qconfig, "weight")):
        raise TypeError(
            f"qconfig for {type(module).__name__} should be a QConfig(activation, weight), got {type(qconfig).__name__}"
        )


# ---- qconfig propagation ---------------------------------------------------------------------
def _propagate(module: nn.Module, qconfig_dict: Dict[Any, Any], parent_qconfig: Any = None, prefix: str = ""):
    qconfig = qconfig_dict.get(_type(module), parent_qconfig)
    qconfig = qconfig_dict.get(prefix, qconfig)
    qconfig = getattr(module, "qconfig", qconfig)
    _check_qconfig(qconfig, module)
    module.qconfig = qconfig
    for name, child in module.named_children():
        _propagate(child, qconfig_dict, qconfig, f"{prefix}.{name}" if prefix else name)


def propagate_qconfig_(
    module: nn.Module,
    qconfig_dict: Optional[Dict[Any, Any]] = None,
    prepare_custom_config_dict: Optional[Dict[str, Any]] = None,
) -> None:
    """Sets ``.qconfig`` on every submodule: its own, else the one for its name or type in
    ``qconfig_dict``, else its parent's. In place."""
    _propagate(module, qconfig_dict or {})


# ---- observers -------------------------------------------------------------------------------
def _observer_forward_hook(self: nn.Module, input: Tuple[Any, ...], output: Any):
    return self.activation_post_process(output)


def _observer_forward_pre_hook(self: nn.Module, input: Tuple[Any, ...]):
    return self.activation_post_process(input[0])


def _needs_observation(m: nn.Module):
    return getattr(m, "qconfig", None) is not None


def _count_observer_call(obs: nn.Module, args: Tuple[Any, ...]):
    obs._qplugin_calls = obs.__dict__.get("_qplugin_calls", 0) + 1


def _new_observer(qconfig: Any, device: Optional[torch.device]):
    """An activation observer that also counts its calls (``_qplugin_calls``): convert tells a
    module no calibration batch reached (converted, raises if called) from one that was reached
    but recorded no data (an error at convert)."""
    obs = qconfig.activation()
    if device is not None:
        obs.to(device)
    obs._qplugin_calls = 0
    obs.register_forward_pre_hook(_count_observer_call)
    return obs


def _insert_observer(m: nn.Module, device: Optional[torch.device]):
    if _needs_observation(m) and not isinstance(m, _DEQUANT_STUBS):
        m.add_module("activation_post_process", _new_observer(m.qconfig, device))
        m.register_forward_hook(_observer_forward_hook, prepend=True)


def _devices(module: nn.Module):
    return {p.device for p in itertools.chain(module.parameters(), module.buffers()) if p.device.type != "meta"}


def _add_observer_(
    module: nn.Module,
    allow_list: Set[Any],
    non_leaf_module_list: Optional[Set[Any]] = None,
    device: Optional[torch.device] = None,
):
    if device is None:
        devs = _devices(module)
        if len(devs) > 1:
            raise RuntimeError(f"prepare: model should be on one device, got {devs}")
        device = next(iter(devs)) if devs else None
    for child in module.children():
        ctype = _type(child)
        if ctype is nn.Dropout:
            continue
        if issubclass(ctype, _FLOAT_FUNCTIONALS):
            if _needs_observation(child):
                child.activation_post_process = _new_observer(child.qconfig, device)
        elif isinstance(child, C._FusedModule):
            if _needs_observation(child):
                _insert_observer(child, device)
        elif non_leaf_module_list is not None and ctype in non_leaf_module_list:
            if _needs_observation(child):
                _insert_observer(child, device)
        else:
            _add_observer_(child, allow_list, non_leaf_module_list, device)
    if (
        (len(module._modules) == 0 or hasattr(module, "weight_fake_quant"))
        and not isinstance(module, nn.Sequential)
        and _type(module) in allow_list
    ):
        if not hasattr(module, "activation_post_process"):
            _insert_observer(module, device)


def prepare(
    model: nn.Module,
    inplace: bool = False,
    allow_list: Optional[Set[Any]] = None,
    observer_non_leaf_module_list: Optional[Set[Any]] = None,
    prepare_custom_config_dict: Optional[Dict[str, Any]] = None,
) -> nn.Module:
    """Attaches observers (per the propagated qconfig) to the modules that will be quantized.
    Returns the prepared model (a copy unless ``inplace``); then run calibration data through it."""
    if not inplace:
        model = copy.deepcopy(model)
    allow_list = get_default_qconfig_propagation_list() if allow_list is None else allow_list
    propagate_qconfig_(model, qconfig_dict=None)
    if not any(_needs_observation(m) for m in model.modules()):
        warnings.warn(
            "prepare: no submodule got a qconfig. Set model.qconfig (e.g. "
            "torch_qplugin.quantization.default_qconfig) or a submodule's .qconfig first",
            stacklevel=2,
        )
    _add_observer_(model, allow_list, observer_non_leaf_module_list)
    return model


def prepare_qat(model: nn.Module, mapping: Optional[Dict[Any, type]] = None, inplace: bool = False) -> nn.Module:
    """Swaps modules for their QAT versions (fake-quantized weights) and attaches fake-quant
    observers. The model must be in training mode."""
    if not model.training:
        raise RuntimeError("prepare_qat: the model should be in training mode (call model.train())")
    if not C.QAT_AVAILABLE:  # pragma: no cover
        raise RuntimeError("prepare_qat: this torch has no QAT modules (torch.ao.nn.qat)")
    mapping = get_default_qat_module_mappings() if mapping is None else mapping
    if not inplace:
        model = copy.deepcopy(model)
    propagate_qconfig_(model, qconfig_dict=None)
    _convert(model, mapping, inplace=True, check=False)
    prepare(model, observer_non_leaf_module_list=set(mapping.values()), inplace=True)
    return model


# ---- convert ---------------------------------------------------------------------------------
def _remove_observers(module: nn.Module):
    if hasattr(module, "activation_post_process") and _is_observer(module.activation_post_process):
        delattr(module, "activation_post_process")
    for hooks, fn in (
        (module._forward_pre_hooks, _observer_forward_pre_hook),
        (module._forward_hooks, _observer_forward_hook),
    ):
        for hid in [
            k
            for k, h in hooks.items()
            if h is fn or getattr(h, "__name__", "") in ("_observer_forward_hook", "_observer_forward_pre_hook")
        ]:
            hooks.pop(hid)


def _remove_qconfig(module: nn.Module):
    for child in module.children():
        _remove_qconfig(child)
    if hasattr(module, "qconfig"):
        del module.qconfig
    _remove_observers(module)


def swap_module(
    mod: nn.Module,
    mapping: Dict[Any, type],
    custom_module_class_mapping: Optional[Dict[Any, type]] = None,
    use_precomputed_fake_quant: bool = False,
) -> nn.Module:
    """The replacement for ``mod`` per ``mapping`` (``mod`` itself if it has no qconfig or no entry)."""
    custom_module_class_mapping = custom_module_class_mapping or {}
    new_mod = mod
    if getattr(mod, "qconfig", None) is None:
        return mod
    t = _type(mod)
    if t in custom_module_class_mapping:
        new_mod = custom_module_class_mapping[t].from_observed(mod)
    elif t in mapping:
        qmod = mapping[t]
        if "use_precomputed_fake_quant" in inspect.signature(qmod.from_float).parameters:
            new_mod = qmod.from_float(mod, use_precomputed_fake_quant=use_precomputed_fake_quant)
        else:
            new_mod = qmod.from_float(mod)
    else:
        return mod
    for hook in mod._forward_pre_hooks.values():
        if hook is not _observer_forward_pre_hook:
            new_mod.register_forward_pre_hook(hook)
    for hook in mod._forward_hooks.values():
        if hook is not _observer_forward_hook and getattr(hook, "__name__", "") != "_observer_forward_hook":
            new_mod.register_forward_hook(hook)
    devs = _devices(mod)
    if len(devs) == 1:
        new_mod.to(next(iter(devs)))
    return new_mod


def _convert(
    module: nn.Module,
    mapping: Dict[Any, type],
    inplace: bool = True,
    custom_module_class_mapping: Optional[Dict[Any, type]] = None,
    use_precomputed_fake_quant: bool = False,
    check: bool = True,
    prefix: str = "",
    unmapped: Optional[List[Tuple[str, type]]] = None,
):
    custom_module_class_mapping = custom_module_class_mapping or {}
    reassign = {}
    for name, mod in module.named_children():
        path = f"{prefix}.{name}" if prefix else name
        if _is_observer(mod):  # observers / fake quants (e.g. a QAT module's weight_fake_quant)
            continue
        if not isinstance(mod, C._FusedModule) and _type(mod) not in custom_module_class_mapping:
            _convert(mod, mapping, True, custom_module_class_mapping, use_precomputed_fake_quant, check, path, unmapped)
        new = swap_module(mod, mapping, custom_module_class_mapping, use_precomputed_fake_quant)
        if check and new is mod and unmapped is not None and _was_observed(mod):
            unmapped.append((path, _type(mod)))
        if new is not mod:
            _name_never_calibrated(new, path, _type(mod).__name__)
        reassign[name] = new
    for k, v in reassign.items():
        module._modules[k] = v
    return module


def _was_observed(mod: nn.Module):
    return getattr(mod, "qconfig", None) is not None and (
        _is_observer(getattr(mod, "activation_post_process", None)) or hasattr(mod, "weight_fake_quant")
    )


def convert(
    module: nn.Module,
    mapping: Optional[Dict[Any, type]] = None,
    inplace: bool = False,
    remove_qconfig: bool = True,
    is_reference: bool = False,
    convert_custom_config_dict: Optional[Dict[str, Any]] = None,
    use_precomputed_fake_quant: bool = False,
    plain: Optional[bool] = None,
) -> nn.Module:
    """Replaces observed (or QAT) modules by their qplugin quantized versions via ``from_float``.

    ``plain=True`` gives the plain form (torch_qplugin.nn.plain: no quantized-dtype tensor, QTensor
    activations); the default is plain when the running torch has no quantized dtypes.
    Raises if nothing in the model was prepared (no qconfig / observers), or if an observed module
    has no entry in ``mapping`` (torch would silently leave it float)."""
    if is_reference:
        raise NotImplementedError(
            "convert: reference (is_reference=True) models are not supported; "
            "qplugin converts to its own quantized modules"
        )
    plain = _plain.resolve_plain(plain)
    if mapping is None:
        mapping = (
            get_default_plain_static_quant_module_mappings() if plain else get_default_static_quant_module_mappings()
        )
    elif plain:
        _plain.check_plain_coverage(module, mapping, "convert", _type)
        mapping = _plain.plain_mapping(mapping)
    if not inplace:
        module = copy.deepcopy(module)
    if not any(_needs_observation(m) for m in module.modules()):
        raise RuntimeError(
            "convert: no module in the model has a qconfig, so nothing would be quantized. Set "
            "model.qconfig = torch_qplugin.quantization.default_qconfig, call prepare(model), run "
            "calibration data through it, then convert (or use quantize_dynamic for dynamic quantization)"
        )
    static = any(_is_observer(getattr(m, "activation_post_process", None)) for m in module.modules())
    dynamic_only = all(
        _is_dynamic_qconfig(getattr(m, "qconfig", None)) for m in module.modules() if _needs_observation(m)
    )
    if not static and not dynamic_only and not any(hasattr(m, "weight_fake_quant") for m in module.modules()):
        raise RuntimeError(
            "convert: the model has a qconfig but no observers; call "
            "torch_qplugin.quantization.prepare(model) (or prepare_qat) and run calibration data "
            "through it before convert"
        )
    _check_some_observer_saw_data(module)
    custom = (convert_custom_config_dict or {}).get("observed_to_quantized_custom_module_class", {})
    unmapped = []
    _convert(module, mapping, True, custom, use_precomputed_fake_quant, True, "", unmapped)
    if unmapped:
        lines = ", ".join(f"'{p}' ({t.__module__}.{t.__name__})" for p, t in unmapped)
        raise RuntimeError(
            f"convert: no {'plain' if plain else 'quantized'} module for observed module(s) {lines} in the "
            f"mapping{' (no plain form yet: convert with plain=False)' if plain else ''}; add an "
            "entry {FloatType: QuantizedType} to the mapping, or set their .qconfig = None before "
            "prepare to keep them float"
        )
    if remove_qconfig:
        _remove_qconfig(module)
    return module


def _check_some_observer_saw_data(module: nn.Module):
    """A module no calibration batch reached converts to one that raises if called; but when
    *no* activation observer saw data, calibration did not happen (or ran on another copy of
    the model): that is the mistake to report now."""
    observed = [
        (name, m.activation_post_process)
        for name, m in module.named_modules()
        if _is_observer(getattr(m, "activation_post_process", None))
    ]
    if observed and all(observer_state(obs)[0] == "untouched" for _, obs in observed):
        first = observed[0][0] or "<model>"
        raise RuntimeError(
            f"convert: every observer in the model ({len(observed)}, e.g. on '{first}') has seen no data; run "
            "calibration batches through the prepared model before convert() (prepare() returns "
            "a prepared copy unless inplace=True: calibrate the model it returned)"
        )


def _is_dynamic_qconfig(qconfig: Any):
    if qconfig is None:
        return True
    try:
        act = qconfig.activation()
    except Exception:  # noqa: BLE001 - user factories
        return False
    return bool(getattr(act, "is_dynamic", False))


# ---- one-call workflows ----------------------------------------------------------------------
def quantize(
    model: nn.Module,
    run_fn: Callable[..., Any],
    run_args: Sequence[Any],
    mapping: Optional[Dict[Any, type]] = None,
    inplace: bool = False,
    plain: Optional[bool] = None,
) -> nn.Module:
    """prepare -> run_fn(model, *run_args) (calibration) -> convert (``plain``: see convert)."""
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    prepare(model, inplace=True)
    run_fn(model, *run_args)
    convert(model, mapping, inplace=True, plain=plain)
    return model


def quantize_dynamic(
    model: nn.Module,
    qconfig_spec: Optional[Union[Dict[Any, Any], Set[Any]]] = None,
    dtype: Optional[torch.dtype] = None,
    mapping: Optional[Dict[Any, type]] = None,
    inplace: bool = False,
    plain: Optional[bool] = None,
) -> nn.Module:
    """Replaces Linear / LSTM / GRU / cells with dynamically quantized versions: qint8 weights
    (dtype None, torch.qint8 or torch.int8) or float16 weights (dtype=torch.float16, the fp16
    scheme: float activations, no int8 step); ``plain``: see convert."""
    fp16 = dtype == torch.float16
    if dtype is not None and not fp16 and _plain_dtype(dtype) != torch.int8:
        raise ValueError(f"quantize_dynamic: qplugin supports dtype=torch.qint8 or torch.float16, got {dtype}")
    default = float16_dynamic_qconfig if fp16 else default_dynamic_qconfig
    if qconfig_spec is None:
        qconfig_spec = {t: default for t in (nn.Linear, nn.LSTM, nn.GRU, nn.LSTMCell, nn.RNNCell, nn.GRUCell)}
    elif isinstance(qconfig_spec, set):
        qconfig_spec = dict(zip(qconfig_spec, itertools.repeat(default)))
    plain = _plain.resolve_plain(plain)
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    propagate_qconfig_(model, qconfig_spec)
    if mapping is None:
        mapping = (
            get_default_plain_dynamic_quant_module_mappings() if plain else get_default_dynamic_quant_module_mappings()
        )
    elif plain:
        _plain.check_plain_coverage(model, mapping, "quantize_dynamic", _type)
        mapping = _plain.plain_mapping(mapping)
    _convert(model, mapping, True, check=False)
    _remove_qconfig(model)
    return model


def quantize_qat(
    model: nn.Module,
    run_fn: Callable[..., Any],
    run_args: Sequence[Any],
    inplace: bool = False,
    plain: Optional[bool] = None,
) -> nn.Module:
    """prepare_qat -> run_fn(model, *run_args) (training) -> eval -> convert (``plain``: see convert)."""
    if not inplace:
        model = copy.deepcopy(model)
    model.train()
    prepare_qat(model, inplace=True)
    run_fn(model, *run_args)
    model.eval()
    convert(model, inplace=True, plain=plain)
    return model


def add_quant_dequant(module: nn.Module) -> nn.Module:
    """Wraps leaf modules that have a qconfig in QuantWrapper."""
    if len(module._modules) == 0 and getattr(module, "qconfig", None):
        return QuantWrapper(module)
    for name, child in module.named_children():
        module._modules[name] = add_quant_dequant(child)
    return module


# ---- calibration helpers with an optional progress bar ----------------------------------------
class _SimpleBar:
    def __init__(self, iterable: Iterable[Any], desc: str, total: Optional[int]) -> None:
        self.it, self.desc, self.total = iterable, desc, total

    def __iter__(self) -> Iterator[Any]:
        n = 0
        for n, x in enumerate(self.it, 1):
            yield x
            tot = f"/{self.total}" if self.total else ""
            sys.stderr.write(f"\r{self.desc}: {n}{tot}")
            sys.stderr.flush()
        sys.stderr.write("\n")


def progress(
    iterable: Iterable[Any], enabled: bool = True, desc: str = "calibrating", total: Optional[int] = None
) -> Iterable[Any]:
    """Wraps ``iterable`` in a progress bar when ``enabled``: tqdm if it is installed (optional),
    else a one-line counter on stderr."""
    if not enabled:
        return iterable
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _SimpleBar(iterable, desc, total)
    return tqdm(iterable, desc=desc, total=total)


@torch.no_grad()
def calibrate(
    model: nn.Module, data: Iterable[Any], progress_bar: bool = False, desc: str = "calibrating"
) -> nn.Module:
    """Runs every batch of ``data`` through a prepared model (a tuple batch is unpacked into
    positional arguments). Usable as ``quantize(model, calibrate, (data,))``."""
    was_training = model.training
    model.eval()
    for batch in progress(data, enabled=progress_bar, desc=desc):
        if isinstance(batch, (tuple, list)):
            model(*batch)
        else:
            model(batch)
    model.train(was_training)
    return model


# ---- workflow helpers torch.ao.quantization also offers ----------------------------------------
def default_eval_fn(model: nn.Module, calib_data: Iterable[Any]) -> None:
    """Runs ``model(data)`` for every ``(data, target)`` in ``calib_data`` (torch's calibration
    helper; the targets are ignored)."""
    for data, _target in calib_data:
        model(data)


def get_observer_dict(mod: nn.Module, target_dict: Dict[str, Any], prefix: str = "") -> None:
    """Fills ``target_dict`` with every ``activation_post_process`` under ``mod``, keyed by its
    dotted path (``"conv.activation_post_process"``), as torch's get_observer_dict."""

    def key(name: str):
        return name if prefix == "" else prefix + "." + name

    if hasattr(mod, "activation_post_process"):
        target_dict[key("activation_post_process")] = mod.activation_post_process
    for name, child in mod.named_children():
        get_observer_dict(child, target_dict, key(name))


def add_observer_(
    module: nn.Module,
    qconfig_propagation_list: Optional[Set[Any]] = None,
    non_leaf_module_list: Optional[Set[Any]] = None,
    device: Optional[torch.device] = None,
    custom_module_class_mapping: Optional[Dict[Any, type]] = None,
) -> None:
    """Attaches output observers to the modules (of the propagation list's types) that have a
    ``qconfig`` (set it first, e.g. with propagate_qconfig_), in place; prepare() calls this."""
    if custom_module_class_mapping:
        raise NotImplementedError("add_observer_: custom_module_class_mapping is not supported")
    allow_list = (
        get_default_qconfig_propagation_list() if qconfig_propagation_list is None else qconfig_propagation_list
    )
    _add_observer_(module, allow_list, non_leaf_module_list, device)
