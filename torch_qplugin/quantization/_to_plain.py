"""The compat side of the plain migration: reads quantized-dtype modules and state dicts
(torch_qplugin's quantized modules, torch.ao.nn.quantized's) into torch_qplugin.nn.plain form.

This file uses the quantized-tensor API on purpose (int_repr, q_scale, ...): it is the one-time
step users run before upgrading to a torch without quantized dtypes (docs/migration.md), and it
goes away with them, like quantization/_compat.py and the QuantizedCPU adapters.
"""
import torch

from ..nn import quantized as nnq
from ..nn.intrinsic import quantized as nniq
from ..nn.plain import modules as P

_PER_TENSOR = (torch.per_tensor_affine, torch.per_tensor_symmetric)


def split_qweight(qw, axis=0, groups=1):
    """(int8 data, float64 scales [1] or [N], int64 zero points) of a quantized qint8 weight.
    ``axis`` 1 (a transposed conv's weight): per-channel qparams along axis 1, repeated for each of
    the ``groups`` (the plain form holds one per output channel)."""
    if not (isinstance(qw, torch.Tensor) and qw.is_quantized):
        raise TypeError(f"to_plain: expected a quantized weight tensor, got {type(qw).__name__}"
                        f"{' of dtype ' + str(qw.dtype) if isinstance(qw, torch.Tensor) else ''}")
    data = qw.int_repr().contiguous()
    if qw.qscheme() in _PER_TENSOR:
        return (data, torch.tensor([qw.q_scale()], dtype=torch.float64),
                torch.tensor([qw.q_zero_point()], dtype=torch.int64))
    if qw.q_per_channel_axis() != axis:
        raise ValueError(f"to_plain: per-channel weight axis should be {axis}, got {qw.q_per_channel_axis()}")
    return (data, qw.q_per_channel_scales().to(torch.float64).repeat(groups),
            qw.q_per_channel_zero_points().to(torch.int64).repeat(groups))


def split_rows(qw):
    """(codes uint8 [N, D], one a byte, float32 scales, float32 zero points) of a quint8 / quint4x2
    per_channel_affine_float_qparams embedding table; the bit width."""
    if not (isinstance(qw, torch.Tensor) and qw.is_quantized and qw.qscheme() == torch.per_channel_affine_float_qparams):
        raise TypeError("to_plain: expected a per_channel_affine_float_qparams quantized embedding table, got "
                        f"{qw.qscheme() if isinstance(qw, torch.Tensor) and qw.is_quantized else type(qw).__name__}")
    bits = 4 if qw.dtype == torch.quint4x2 else 8
    codes = qw.int_repr().reshape(qw.shape[0], -1)  # quint4x2: the packed bytes, flat
    if bits == 4:  # two codes a byte, low nibble first
        codes = torch.stack([codes & 15, codes >> 4], 2).reshape(qw.shape[0], -1)[:, :qw.shape[1]]
    return (codes.contiguous(), qw.q_per_channel_scales().float(), qw.q_per_channel_zero_points().float(), bits)


def embedding_state(state_dict, prefix):
    """split_rows of a quantized Embedding's state dict entry (popped with its dtype)."""
    state_dict.pop(prefix + "_packed_params.dtype", None)
    return split_rows(state_dict.pop(prefix + "_packed_params._packed_weight"))


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
    if t in P.PLAIN_OF:
        return P.PLAIN_OF[t]
    mod = t.__module__
    if mod.startswith("torch.ao.nn.quantized.dynamic"):
        ours = getattr(nnq.dynamic, t.__name__, None)
    elif mod.startswith("torch.ao.nn.intrinsic.quantized"):
        ours = getattr(nniq, t.__name__, None)
    elif mod.startswith("torch.ao.nn.quantized"):
        ours = getattr(nnq, t.__name__, None)  # (FloatFunctional -> ours, which has no plain form: stays)
    else:
        return None
    return P.PLAIN_OF.get(ours)


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
        new = cls(m.in_channels, m.out_channels, m.kernel_size, m.stride, m.padding, m.output_padding, m.groups,
                  b is not None, m.dilation)
    else:
        new = cls(m.in_channels, m.out_channels, m.kernel_size, m.stride, m.padding, m.dilation, m.groups,
                  b is not None, m.padding_mode)
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
    new = cls(m.input_size, m.hidden_size, m.num_layers, m.bias, m.batch_first, m.dropout, m.bidirectional,
              dtype=getattr(m, "dtype", None))
    if hasattr(m, "_dirs"):
        pairs = [qd._weight_bias() for qd in m._dirs]
    else:
        _check_qint8(m, getattr(m, "dtype", None))
        wb = m._weight_bias()
        pairs = []
        for i in range(len(new._dirs)):
            layer, rev = divmod(i, new.num_directions)
            sfx = f"_l{layer}" + ("_reverse" if rev else "")
            pairs.append(tuple((wb["weight"][f"weight_{k}{sfx}"], wb["bias"].get(f"bias_{k}{sfx}"))
                               for k in ("ih", "hh")))
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
        raise TypeError(f"to_plain: {type(m).__module__}.{type(m).__name__} with dtype {dtype} has no plain form "
                        "(torch.ao's dynamic recurrent modules: qint8 weights only)")


def quantized_state(state_dict, prefix, axis=0, groups=1):
    """(weight, w_scales, w_zero_points, bias, scale, zero_point) from a quantized Linear / Conv /
    ConvTranspose state dict (torch_qplugin's or torch.ao's: ``_packed_params._packed_params`` =
    (weight, bias), or ``weight`` / ``bias`` entries), popping its keys; None if absent. axis /
    groups: as split_qweight."""
    packed = prefix + "_packed_params._packed_params"
    if packed in state_dict:
        w, b = state_dict.pop(packed)
        state_dict.pop(prefix + "_packed_params.dtype", None)
    elif prefix + "weight" in state_dict and isinstance(state_dict[prefix + "weight"], torch.Tensor) and \
            state_dict[prefix + "weight"].is_quantized:
        w, b = state_dict.pop(prefix + "weight"), state_dict.pop(prefix + "bias", None)
    else:
        return None
    scale = state_dict.pop(prefix + "scale", torch.tensor(1.0))
    zp = state_dict.pop(prefix + "zero_point", torch.tensor(0))
    data, s, z = split_qweight(w, axis, groups)
    return data, s, z, b, scale, zp


def check_all_plain(model, who):
    """Raises if a module of ``model`` still holds quantized-dtype state (a module the plain
    mappings did not cover)."""
    left = [(name, type(m)) for name, m in model.named_modules()
            if type(m) not in P.PLAIN_OF.values() and _is_quantized_module(m)]
    if left:
        names = ", ".join(f"'{n}' ({t.__module__}.{t.__name__})" for n, t in left)
        raise RuntimeError(f"{who}: no plain form for {names}; convert with plain=False to keep the "
                           "quantized-dtype form")


def _is_quantized_module(m):
    mod = type(m).__module__
    if type(m).__name__ in ("FloatFunctional", "FXFloatFunctional"):  # float modules living there
        return False
    return mod.startswith(("torch_qplugin.nn.quantized", "torch_qplugin.nn.intrinsic.quantized",
                           "torch.ao.nn.quantized", "torch.ao.nn.intrinsic.quantized"))
