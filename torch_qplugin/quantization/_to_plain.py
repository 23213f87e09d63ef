"""The compat side of the plain migration: reads quantized-dtype modules (torch_qplugin's quantized
modules, torch.ao.nn.quantized's) into torch_qplugin.nn.plain form.

This file uses the quantized-tensor API on purpose (int_repr, q_scale, ...): it is the one-time
step users run before upgrading to a torch without quantized dtypes (docs/migration.md), and it
goes away with them, like quantization/_compat.py and the QuantizedCPU adapters.
"""

import torch

from ..nn import quantized as nnq
from ..nn.intrinsic import quantized as nniq
from ..nn.plain import modules as P
from ..nn.quantized import dynamic as nnqd
from ._qweights import split_qweight, split_rows  # noqa: F401

#: torch_qplugin's quantized class -> its plain form (the weightless ones convert by
#: ``from_quantized``, a class change; the others by the weight readers below)
PLAIN_OF = {
    getattr(nnq, name): getattr(P, name)
    for name in (
        "Quantize",
        "DeQuantize",
        "ReLU",
        "ReLU6",
        "Hardswish",
        "ELU",
        "LeakyReLU",
        "Sigmoid",
        "Hardsigmoid",
        "Softmax",
        "MaxPool2d",
        "AvgPool2d",
        "AdaptiveAvgPool2d",
        "AvgPool3d",
        "AdaptiveAvgPool3d",
        "BatchNorm2d",
        "BatchNorm3d",
        "GroupNorm",
        "InstanceNorm1d",
        "InstanceNorm2d",
        "InstanceNorm3d",
        "LayerNorm",
        "PReLU",
        "Dropout",
        "QFunctional",
        "NeverCalibratedQFunctional",
        "Linear",
        "Conv1d",
        "Conv2d",
        "Conv3d",
        "ConvTranspose1d",
        "ConvTranspose2d",
        "ConvTranspose3d",
        "Embedding",
        "EmbeddingBag",
    )
}
PLAIN_OF.update(
    {
        getattr(nniq, name): getattr(P, name)
        for name in (
            "LinearReLU",
            "ConvReLU1d",
            "ConvReLU2d",
            "ConvReLU3d",
            "ConvAdd2d",
            "ConvAddReLU2d",
            "BNReLU2d",
            "BNReLU3d",
        )
    }
)
PLAIN_OF.update(
    {
        nnqd.Linear: P.DynamicLinear,
        nnqd.LSTM: P.LSTM,
        nnqd.GRU: P.GRU,
        nnqd.RNNCell: P.RNNCell,
        nnqd.LSTMCell: P.LSTMCell,
        nnqd.GRUCell: P.GRUCell,
    }
)


def _embedding(m, cls):
    codes, s, z, bits = split_rows(m.weight())
    if cls is P.EmbeddingBag:
        new = cls(m.num_embeddings, m.embedding_dim, m.mode, m.include_last_offset, bits)
    else:
        new = cls(m.num_embeddings, m.embedding_dim, bits)
    new.set_weight(codes, s, z)
    return new


def _plain_class(m):
    """The plain class of a quantized module (ours, or torch.ao's by its class name)."""
    t = type(m)
    if t in PLAIN_OF:
        return PLAIN_OF[t]
    mod = t.__module__
    if mod.startswith("torch.ao.nn.quantized.dynamic"):
        ours = getattr(nnq.dynamic, t.__name__, None)
    elif mod.startswith("torch.ao.nn.intrinsic.quantized"):
        ours = getattr(nniq, t.__name__, None)
    elif mod.startswith("torch.ao.nn.quantized"):
        ours = getattr(nnq, t.__name__, None)  # (FloatFunctional -> ours, which has no plain form: stays)
    else:
        return None
    return PLAIN_OF.get(ours)


def module_to_plain(m, path):
    """The plain form of module m, or m itself if it is not a quantized module."""
    cls = _plain_class(m)
    if cls is None:
        return m
    if cls is P.DynamicLinear and _fp16_dynamic(m):
        return P.DynamicLinearFP16.from_quantized(m)
    if issubclass(cls, P._Weighted):
        return _weighted(m, cls)
    if issubclass(cls, P._RNNBase):
        return _rnn(m, cls)
    if issubclass(cls, P._CellBase):
        return _cell(m, cls)
    if issubclass(cls, P.Embedding):
        return _embedding(m, cls)
    if cls is P.PReLU:
        new = cls(m.scale, m.zero_point, m.num_parameters)
        new.weight = m.weight.dequantize().float().reshape(-1)
        return new
    new = cls.from_quantized(m)
    if isinstance(new, P.LayerNorm) and "_shape" not in new.__dict__:  # torch.ao's LayerNorm
        new._shape = [int(s) for s in new.normalized_shape]
    return new


def _fp16_dynamic(m):
    """Whether a dynamic Linear (ours or torch.ao's) holds float16 weights."""
    return getattr(getattr(m, "_packed_params", None), "dtype", None) == torch.float16


def _weighted(m, cls):
    w, b = m.weight(), m.bias()
    transposed = issubclass(cls, P._ConvTransposeNd)
    data, s, z = split_qweight(w, 1, m.groups) if transposed else split_qweight(w)
    if issubclass(cls, P.Linear):
        new = cls(m.in_features, m.out_features, b is not None)
    elif transposed:
        new = cls(
            m.in_channels,
            m.out_channels,
            m.kernel_size,
            m.stride,
            m.padding,
            m.output_padding,
            m.groups,
            b is not None,
            m.dilation,
        )
    else:
        new = cls(
            m.in_channels,
            m.out_channels,
            m.kernel_size,
            m.stride,
            m.padding,
            m.dilation,
            m.groups,
            b is not None,
            m.padding_mode,
        )
    new.set_weight(data, s, z, b)
    new.scale, new.zero_point = float(getattr(m, "scale", 1.0)), int(getattr(m, "zero_point", 0))
    for hook in m._forward_pre_hooks.values():  # e.g. the never-calibrated guard
        new.register_forward_pre_hook(hook)
    if "_qplugin_uncalibrated" in m.__dict__:
        new._qplugin_uncalibrated = m._qplugin_uncalibrated
    return new


def _rnn(m, cls):
    """Ours (``_dirs`` of packed directions, qint8 or float16) or torch.ao's dynamic LSTM / GRU
    (``_all_weight_values``, read through its ``_weight_bias()``; qint8 only)."""
    new = cls(
        m.input_size,
        m.hidden_size,
        m.num_layers,
        m.bias,
        m.batch_first,
        m.dropout,
        m.bidirectional,
        dtype=getattr(m, "dtype", None),
    )
    if hasattr(m, "_dirs"):
        pairs = [qd._weight_bias() for qd in m._dirs]
    else:
        _check_qint8(m, getattr(m, "dtype", None))
        wb = m._weight_bias()
        pairs = []
        for i in range(len(new._dirs)):
            layer, rev = divmod(i, new.num_directions)
            sfx = f"_l{layer}" + ("_reverse" if rev else "")
            pairs.append(
                tuple((wb["weight"][f"weight_{k}{sfx}"], wb["bias"].get(f"bias_{k}{sfx}")) for k in ("ih", "hh"))
            )
    for (ih, hh), pd in zip(pairs, new._dirs):
        for (w, b), holder in ((ih, pd.ih), (hh, pd.hh)):
            _set_holder(holder, w, b)
    return new


def _set_holder(holder, w, b):
    """A recurrent weight holder from an unpacked weight: float16 (as float) or qint8."""
    if isinstance(holder, P.DynamicLinearFP16):
        holder.set_weight(w, b)
    else:
        holder.set_weight(*split_qweight(w), b)


def _cell(m, cls):
    """Ours (``_weight_bias()`` = ((w_ih, b_ih), (w_hh, b_hh)), qint8 or float16) or torch.ao's dynamic
    cells (a dict; qint8 only)."""
    kwargs = {"nonlinearity": m.nonlinearity} if cls is P.RNNCell else {}
    new = cls(m.input_size, m.hidden_size, m.bias, dtype=getattr(m, "weight_dtype", None), **kwargs)
    wb = m._weight_bias()
    if isinstance(wb, dict):
        _check_qint8(m, getattr(m, "weight_dtype", None))
        wb = tuple((wb["weight"][f"weight_{k}"], wb["bias"].get(f"bias_{k}")) for k in ("ih", "hh"))
    for (w, b), holder in zip(wb, (new.ih, new.hh)):
        _set_holder(holder, w, b)
    return new


def _check_qint8(m, dtype):
    if dtype != torch.qint8:
        raise TypeError(
            f"to_plain: {type(m).__module__}.{type(m).__name__} with dtype {dtype} has no plain form "
            "(torch.ao's dynamic recurrent modules: qint8 weights only)"
        )


def check_all_plain(model, who):
    """Raises if a module of ``model`` still holds quantized-dtype state (a module the plain
    mappings did not cover)."""
    left = [
        (name, type(m))
        for name, m in model.named_modules()
        if type(m) not in PLAIN_OF.values() and _is_quantized_module(m)
    ]
    if left:
        names = ", ".join(f"'{n}' ({t.__module__}.{t.__name__})" for n, t in left)
        raise RuntimeError(
            f"{who}: no plain form for {names}; convert with plain=False to keep the quantized-dtype form"
        )


def _is_quantized_module(m):
    mod = type(m).__module__
    if type(m).__name__ in ("FloatFunctional", "FXFloatFunctional"):  # float modules living there
        return False
    return mod.startswith(
        (
            "torch_qplugin.nn.quantized",
            "torch_qplugin.nn.intrinsic.quantized",
            "torch.ao.nn.quantized",
            "torch.ao.nn.intrinsic.quantized",
        )
    )
