"""The workflow's plain path (docs/design/plain.md): whether convert gives plain models by default,
user mappings onto torch_qplugin.nn.plain, and ``to_plain``.

No quantized-tensor API and no import of torch's ao package here (test/test_plain_wall.py): reading a
quantized-dtype model is quantization/_to_plain.py's job (the compat side, deleted with the dtypes).
"""

import copy
from typing import Callable, Dict, Optional

import torch
import torch.nn as nn

from ..nn.plain import modules as P

__all__ = ["has_quantized_dtypes", "resolve_plain", "plain_mapping", "to_plain"]


def has_quantized_dtypes() -> bool:
    """Whether the running torch still has the quint8 / qint8 / qint32 dtypes."""
    return all(hasattr(torch, n) for n in ("quint8", "qint8", "qint32"))


def resolve_plain(plain: Optional[bool]) -> bool:
    """``plain`` as given, or (None) the default: plain when torch has no quantized dtypes."""
    return (not has_quantized_dtypes()) if plain is None else bool(plain)


def _plain_class(cls: type):
    """The plain class a mapping value stands for: a plain class itself, or a torch_qplugin quantized
    class's plain form; None if it has none."""
    if isinstance(cls, type) and issubclass(cls, P._Plain):
        return cls
    from ._to_plain import PLAIN_OF  # the compat side: names the quantized classes

    return PLAIN_OF.get(cls)


def plain_mapping(mapping: Dict[type, type]) -> Dict[type, type]:
    """{float / observed / QAT type: plain class} for a user mapping onto plain or quantized classes
    (types whose class has no plain form are left out: ``convert`` names them)."""
    return {k: c for k, c in ((k, _plain_class(v)) for k, v in mapping.items()) if c is not None}


def no_plain_form(mapping: Dict[type, type]) -> Dict[type, type]:
    """The types of ``mapping`` whose module has no plain form."""
    return {k: v for k, v in mapping.items() if _plain_class(v) is None}


def check_plain_coverage(
    model: nn.Module, mapping: Dict[type, type], who: str, type_of: Callable[[nn.Module], type] = type
) -> None:
    """Raises naming the modules of ``model`` that would be quantized (a qconfig, a type in
    ``mapping``) but have no plain form, instead of leaving them float."""
    missing = no_plain_form(mapping)
    left = [
        (name, type_of(m))
        for name, m in model.named_modules()
        if getattr(m, "qconfig", None) is not None and type_of(m) in missing
    ]
    if left:
        names = ", ".join(f"'{n}' ({t.__name__})" for n, t in left)
        raise RuntimeError(
            f"{who}: no plain form for {names}; use plain=False (the quantized-dtype form) or "
            "set their .qconfig = None to keep them float"
        )


def to_plain(model: nn.Module, inplace: bool = False) -> nn.Module:
    """The plain form of a model converted by torch_qplugin or by torch's ao.quantization (eager),
    bit-identical outputs: every quantized module is replaced by its torch_qplugin.nn.plain
    counterpart (weights as plain tensors). A quantized module with no plain form is an error.
    The result takes float input (through its plain Quantize) or QTensors."""
    from . import _to_plain  # the compat side: reads quantized-dtype weights

    if not inplace:
        model = copy.deepcopy(model)
    top = _to_plain.module_to_plain(model, "")
    if top is not model:
        return top
    _swap(model, _to_plain.module_to_plain, "")
    _to_plain.check_all_plain(model, "to_plain")
    return model


def _swap(module: nn.Module, fn: Callable[[nn.Module, str], nn.Module], prefix: str):
    for name, child in list(module.named_children()):
        path = f"{prefix}.{name}" if prefix else name
        new = fn(child, path)
        if new is child:
            _swap(child, fn, path)
        else:
            module._modules[name] = new
