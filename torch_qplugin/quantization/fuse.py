"""fuse_modules: merge conv/linear with batch norm and relu before quantization.

Eval mode folds batch norm into the conv/linear weights (conv+bn, conv+bn+relu, linear+bn,
conv_transpose+bn: eval mode only, any groups); train
mode (for QAT) keeps them as ConvBn* / LinearBn1d fused modules. conv+relu, linear+relu and
bn+relu become ConvReLU*, LinearReLU, BNReLU*. Signature and in-place semantics as
torch.ao.quantization.fuse_modules: the first module of each group is replaced by the fused
module, the others by nn.Identity.
"""

import copy
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import torch
import torch.nn as nn
from torch.nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval

from . import _compat as C

__all__ = ["fuse_modules", "fuse_known_modules", "get_fuser_method"]

_CONV_RELU = {nn.Conv1d: C.ConvReLU1d, nn.Conv2d: C.ConvReLU2d, nn.Conv3d: C.ConvReLU3d}
_CONV_BN = {nn.Conv1d: C.ConvBn1d, nn.Conv2d: C.ConvBn2d, nn.Conv3d: C.ConvBn3d}
_CONV_BN_RELU = {nn.Conv1d: C.ConvBnReLU1d, nn.Conv2d: C.ConvBnReLU2d, nn.Conv3d: C.ConvBnReLU3d}
# (module types to fuse, in order) -> fuser(is_qat, *modules)
_FuserMapping = Dict[Tuple[type, ...], Callable[..., nn.Module]]
_BN_FOR_CONV = {nn.Conv1d: nn.BatchNorm1d, nn.Conv2d: nn.BatchNorm2d, nn.Conv3d: nn.BatchNorm3d}


def _check_train(a: nn.Module, b: nn.Module):
    if a.training != b.training:
        raise ValueError(
            f"fuse_modules: {type(a).__name__} and {type(b).__name__} should both be in train or both in eval mode"
        )


def _fuse_conv_bn(is_qat: Optional[bool], conv: nn.Module, bn: nn.Module):
    _check_train(conv, bn)
    if is_qat:
        if bn.num_features != conv.out_channels:
            raise ValueError(
                "fuse_modules: batch norm num_features should match conv out_channels, "
                f"got {bn.num_features} vs {conv.out_channels}"
            )
        if not (bn.affine and bn.track_running_stats):
            raise ValueError("fuse_modules: QAT conv-bn fusion needs affine=True and track_running_stats=True")
        return _CONV_BN[type(conv)](conv, bn)
    return fuse_conv_bn_eval(conv, bn)


def _fuse_conv_bn_relu(is_qat: Optional[bool], conv: nn.Module, bn: nn.Module, relu: nn.Module):
    _check_train(conv, bn)
    if is_qat:
        if bn.num_features != conv.out_channels:
            raise ValueError(
                "fuse_modules: batch norm num_features should match conv out_channels, "
                f"got {bn.num_features} vs {conv.out_channels}"
            )
        return _CONV_BN_RELU[type(conv)](conv, bn, relu)
    return _CONV_RELU[type(conv)](fuse_conv_bn_eval(conv, bn), relu)


def _fuse_convtranspose_bn(is_qat: Optional[bool], convt: nn.Module, bn: nn.Module):
    # as torch.ao's fuse_convtranspose_bn: eval mode only (there is no QAT transposed conv)
    if is_qat or convt.training or bn.training:
        raise ValueError(
            "fuse_modules: ConvTranspose + BatchNorm fusion needs both modules in eval mode "
            "(no QAT form); call model.eval() first"
        )
    if bn.num_features != convt.out_channels:
        raise ValueError(
            "fuse_modules: batch norm num_features should match conv out_channels, "
            f"got {bn.num_features} vs {convt.out_channels}"
        )
    # torch's fuse_conv_bn_eval(transpose=True) scales weight dim 1 by all out_channels, which
    # fails for groups > 1 (dim 1 holds out_channels / groups): output channel g * ocg + j is
    # column j of group g's rows
    fused = copy.deepcopy(convt)
    with torch.no_grad():
        scale = torch.rsqrt(bn.running_var + bn.eps)
        if bn.weight is not None:
            scale = scale * bn.weight
        w = convt.weight
        g, ocg = convt.groups, w.shape[1]
        fused.weight.copy_((w.reshape(g, w.shape[0] // g, ocg, -1) * scale.reshape(g, 1, ocg, 1)).reshape(w.shape))
        b = convt.bias if convt.bias is not None else torch.zeros_like(bn.running_mean)
        b = (b - bn.running_mean) * scale + (bn.bias if bn.bias is not None else 0)
        fused.bias = nn.Parameter(b.to(w.dtype))
    return fused


def _fuse_conv_relu(is_qat: Optional[bool], conv: nn.Module, relu: nn.Module):
    return _CONV_RELU[type(conv)](conv, relu)


def _fuse_linear_bn(is_qat: Optional[bool], linear: nn.Module, bn: nn.Module):
    _check_train(linear, bn)
    if is_qat:
        return C.LinearBn1d(linear, bn)
    return fuse_linear_bn_eval(linear, bn)


def _fuse_linear_relu(is_qat: Optional[bool], linear: nn.Module, relu: nn.Module):
    return C.LinearReLU(linear, relu)


def _fuse_bn_relu(is_qat: Optional[bool], bn: nn.Module, relu: nn.Module):
    return (C.BNReLU2d if isinstance(bn, nn.BatchNorm2d) else C.BNReLU3d)(bn, relu)


_FUSERS = {}
for _conv, _bn in _BN_FOR_CONV.items():
    _FUSERS[(_conv, _bn)] = _fuse_conv_bn
    _FUSERS[(_conv, _bn, nn.ReLU)] = _fuse_conv_bn_relu
    _FUSERS[(_conv, nn.ReLU)] = _fuse_conv_relu
for _convt, _bn in (
    (nn.ConvTranspose1d, nn.BatchNorm1d),
    (nn.ConvTranspose2d, nn.BatchNorm2d),
    (nn.ConvTranspose3d, nn.BatchNorm3d),
):
    _FUSERS[(_convt, _bn)] = _fuse_convtranspose_bn
_FUSERS[(nn.Linear, nn.BatchNorm1d)] = _fuse_linear_bn
_FUSERS[(nn.Linear, nn.ReLU)] = _fuse_linear_relu
_FUSERS[(nn.BatchNorm2d, nn.ReLU)] = _fuse_bn_relu
_FUSERS[(nn.BatchNorm3d, nn.ReLU)] = _fuse_bn_relu


def get_fuser_method(
    op_list: Sequence[type], additional_fuser_method_mapping: Optional[_FuserMapping] = None
) -> Optional[Callable[..., nn.Module]]:
    mapping = dict(_FUSERS)
    mapping.update(additional_fuser_method_mapping or {})
    return mapping.get(tuple(op_list))


def fuse_known_modules(
    mod_list: Sequence[nn.Module],
    is_qat: Optional[bool] = False,
    additional_fuser_method_mapping: Optional[_FuserMapping] = None,
) -> List[nn.Module]:
    """Fuses a list of modules; returns a list of the same length (fused module, then Identity)."""
    types = tuple(type(m) for m in mod_list)
    fuser = get_fuser_method(types, additional_fuser_method_mapping)
    if fuser is None:
        supported = ", ".join("(" + ", ".join(t.__name__ for t in k) + ")" for k in _FUSERS)
        raise NotImplementedError(
            f"fuse_modules: cannot fuse {tuple(t.__name__ for t in types)}; supported: {supported}"
        )
    fused = fuser(is_qat, *mod_list)
    new_mods = [None] * len(mod_list)
    # keep hooks: pre-hooks of the first module and hooks of the last one move onto the fused one
    for hook in mod_list[0]._forward_pre_hooks.values():
        fused.register_forward_pre_hook(hook)
    mod_list[0]._forward_pre_hooks.clear()
    for hook in mod_list[-1]._forward_hooks.values():
        fused.register_forward_hook(hook)
    mod_list[-1]._forward_hooks.clear()
    new_mods[0] = fused
    for i in range(1, len(mod_list)):
        identity = nn.Identity()
        identity.training = mod_list[0].training
        new_mods[i] = identity
    return new_mods


def _get_module(model: nn.Module, name: str):
    for part in name.split("."):
        if not hasattr(model, part):
            raise AttributeError(f"fuse_modules: model has no submodule '{name}'")
        model = getattr(model, part)
    return model


def _set_module(model: nn.Module, name: str, new: nn.Module):
    parts = name.split(".")
    for part in parts[:-1]:
        model = getattr(model, part)
    setattr(model, parts[-1], new)


def _fuse_modules(
    model: nn.Module,
    modules_to_fuse: Union[List[str], List[List[str]]],
    is_qat: Optional[bool],
    inplace: bool = False,
    fuser_func: Callable[..., List[nn.Module]] = fuse_known_modules,
    fuse_custom_config_dict: Optional[Dict[str, Any]] = None,
):
    if not inplace:
        model = copy.deepcopy(model)
    if all(isinstance(m, str) for m in modules_to_fuse):
        modules_to_fuse = [modules_to_fuse]
    extra = (fuse_custom_config_dict or {}).get("additional_fuser_method_mapping", {})
    for names in modules_to_fuse:
        mods = [_get_module(model, n) for n in names]
        qat = mods[0].training if is_qat is None else is_qat
        new_mods = fuser_func(mods, qat, extra)
        for name, new in zip(names, new_mods):
            _set_module(model, name, new)
    return model


def fuse_modules(
    model: nn.Module,
    modules_to_fuse: Union[List[str], List[List[str]]],
    inplace: bool = False,
    fuser_func: Callable[..., List[nn.Module]] = fuse_known_modules,
    fuse_custom_config_dict: Optional[Dict[str, Any]] = None,
) -> nn.Module:
    """Fuses groups of submodules (names as in ``model.named_modules()``). Batch norm is folded
    away for modules in eval mode, and kept (ConvBn*, LinearBn1d, for QAT) in train mode."""
    return _fuse_modules(
        model,
        modules_to_fuse,
        is_qat=None,
        inplace=inplace,
        fuser_func=fuser_func,
        fuse_custom_config_dict=fuse_custom_config_dict,
    )


def fuse_modules_qat(
    model: nn.Module,
    modules_to_fuse: Union[List[str], List[List[str]]],
    inplace: bool = False,
    fuser_func: Callable[..., List[nn.Module]] = fuse_known_modules,
    fuse_custom_config_dict: Optional[Dict[str, Any]] = None,
) -> nn.Module:
    """Like fuse_modules, keeping batch norm as a QAT-trainable fused module."""
    return _fuse_modules(
        model,
        modules_to_fuse,
        is_qat=True,
        inplace=inplace,
        fuser_func=fuser_func,
        fuse_custom_config_dict=fuse_custom_config_dict,
    )
