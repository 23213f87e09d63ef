"""The workflow's plain path (issue 14, docs/design/plain.md): module mappings onto
torch_qplugin.nn.plain, ``to_plain`` and the state_dict reader of the plain weighted modules.

No quantized-tensor API and no import of torch's ao package here (test/test_plain_wall.py): reading a quantized-dtype
model or state dict is quantization/_to_plain.py's job (the compat side, deleted with the dtypes).
"""
import copy

import torch

from ..nn.plain import modules as P

__all__ = ["has_quantized_dtypes", "resolve_plain", "plain_mapping", "to_plain"]


def has_quantized_dtypes():
    """Whether the running torch still has the quint8 / qint8 / qint32 dtypes."""
    return all(hasattr(torch, n) for n in ("quint8", "qint8", "qint32"))


def resolve_plain(plain):
    """``plain`` as given, or (None) the default: plain when torch has no quantized dtypes."""
    return (not has_quantized_dtypes()) if plain is None else bool(plain)


def plain_mapping(mapping):
    """{float / observed / QAT type: plain class} for a mapping onto quantized classes (types whose
    quantized class has no plain form are left out: ``convert`` names them)."""
    return {k: P.PLAIN_OF[v] for k, v in mapping.items() if v in P.PLAIN_OF}


def no_plain_form(mapping):
    """The types of ``mapping`` whose quantized module has no plain form yet."""
    return {k: v for k, v in mapping.items() if v not in P.PLAIN_OF}


def check_plain_coverage(model, mapping, who, type_of=type):
    """Raises naming the modules of ``model`` that would be quantized (a qconfig, a type in
    ``mapping``) but have no plain form yet, instead of leaving them float."""
    missing = no_plain_form(mapping)
    left = [(name, type_of(m)) for name, m in model.named_modules()
            if getattr(m, "qconfig", None) is not None and type_of(m) in missing]
    if left:
        names = ", ".join(f"'{n}' ({t.__name__})" for n, t in left)
        raise RuntimeError(f"{who}: no plain form for {names}; use plain=False (the quantized-dtype form) or "
                           "set their .qconfig = None to keep them float")


def to_plain(model, inplace=False):
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


def _swap(module, fn, prefix):
    for name, child in list(module.named_children()):
        path = f"{prefix}.{name}" if prefix else name
        new = fn(child, path)
        if new is child:
            _swap(child, fn, path)
        else:
            module._modules[name] = new


def plain_state(module, state_dict, prefix):
    """(weight int8, w_scales, w_zero_points, bias, scale, zero_point) for a plain weighted module
    from ``state_dict``: its own keys, or the keys of the quantized form (torch_qplugin's or
    torch's ao Linear / Conv state dicts; popped). None if the keys are missing."""
    own = [prefix + k for k in ("weight", "w_scales", "w_zero_points")]
    if all(k in state_dict for k in own) and state_dict[own[0]].dtype == torch.int8:
        w, s, z = (state_dict.pop(k) for k in own)
        bias = state_dict.pop(prefix + "bias", None)
        state_dict.pop(prefix + "packed", None)  # rebuilt for the running kernel path
        if prefix + "scale" not in state_dict or prefix + "zero_point" not in state_dict:
            return None
        return w, s, z, bias, state_dict.pop(prefix + "scale"), state_dict.pop(prefix + "zero_point")
    from . import _to_plain
    axis = getattr(module, "WEIGHT_AXIS", 0)  # transposed conv: 1, qparams repeated per group
    return _to_plain.quantized_state(state_dict, prefix, axis, module.groups if axis else 1)
