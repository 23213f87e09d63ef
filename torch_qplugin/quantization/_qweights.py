"""Readers of quantized-dtype weights (the compat side): a quantized Linear / Conv / Embedding's
weight or state dict entries -> plain integers and qparams. The plain modules call them when they
load a state dict of the quantized form (torch_qplugin's or torch.ao's); to_plain when it converts
a quantized model. Uses the quantized-tensor API on purpose and imports nothing of torch_qplugin,
so the plain tier can reach it without an import cycle; it goes away with the quantized dtypes.
"""

import torch

_PER_TENSOR = (torch.per_tensor_affine, torch.per_tensor_symmetric)


def split_qweight(qw, axis=0, groups=1):
    """(int8 data, float64 scales [1] or [N], int64 zero points) of a quantized qint8 weight.
    ``axis`` 1 (a transposed conv's weight): per-channel qparams along axis 1, repeated for each of
    the ``groups`` (the plain form holds one per output channel)."""
    if not (isinstance(qw, torch.Tensor) and qw.is_quantized):
        raise TypeError(
            f"to_plain: expected a quantized weight tensor, got {type(qw).__name__}"
            f"{' of dtype ' + str(qw.dtype) if isinstance(qw, torch.Tensor) else ''}"
        )
    data = qw.int_repr().contiguous()
    if qw.qscheme() in _PER_TENSOR:
        return (
            data,
            torch.tensor([qw.q_scale()], dtype=torch.float64),
            torch.tensor([qw.q_zero_point()], dtype=torch.int64),
        )
    if qw.q_per_channel_axis() != axis:
        raise ValueError(f"to_plain: per-channel weight axis should be {axis}, got {qw.q_per_channel_axis()}")
    return (
        data,
        qw.q_per_channel_scales().to(torch.float64).repeat(groups),
        qw.q_per_channel_zero_points().to(torch.int64).repeat(groups),
    )


def split_rows(qw):
    """(codes uint8 [N, D], one a byte, float32 scales, float32 zero points) of a quint8 / quint4x2
    per_channel_affine_float_qparams embedding table; the bit width."""
    if not (
        isinstance(qw, torch.Tensor) and qw.is_quantized and qw.qscheme() == torch.per_channel_affine_float_qparams
    ):
        raise TypeError(
            "to_plain: expected a per_channel_affine_float_qparams quantized embedding table, got "
            f"{qw.qscheme() if isinstance(qw, torch.Tensor) and qw.is_quantized else type(qw).__name__}"
        )
    bits = 4 if qw.dtype == getattr(torch, "quint4x2", None) else 8
    codes = qw.int_repr().reshape(qw.shape[0], -1)  # quint4x2: the packed bytes, flat
    if bits == 4:  # two codes a byte, low nibble first
        codes = torch.stack([codes & 15, codes >> 4], 2).reshape(qw.shape[0], -1)[:, : qw.shape[1]]
    return (codes.contiguous(), qw.q_per_channel_scales().float(), qw.q_per_channel_zero_points().float(), bits)


def embedding_state(state_dict, prefix):
    """split_rows of a quantized Embedding's state dict entry (popped with its dtype)."""
    state_dict.pop(prefix + "_packed_params.dtype", None)
    return split_rows(state_dict.pop(prefix + "_packed_params._packed_weight"))


def quantized_state(state_dict, prefix, axis=0, groups=1):
    """(weight, w_scales, w_zero_points, bias, scale, zero_point) from a quantized Linear / Conv /
    ConvTranspose state dict (torch_qplugin's or torch.ao's: ``_packed_params._packed_params`` =
    (weight, bias), or ``weight`` / ``bias`` entries), popping its keys; None if absent. axis /
    groups: as split_qweight."""
    packed = prefix + "_packed_params._packed_params"
    if packed in state_dict:
        w, b = state_dict.pop(packed)
        state_dict.pop(prefix + "_packed_params.dtype", None)
    elif (
        prefix + "weight" in state_dict
        and isinstance(state_dict[prefix + "weight"], torch.Tensor)
        and state_dict[prefix + "weight"].is_quantized
    ):
        w, b = state_dict.pop(prefix + "weight"), state_dict.pop(prefix + "bias", None)
    else:
        return None
    scale = state_dict.pop(prefix + "scale", torch.tensor(1.0))
    zp = state_dict.pop(prefix + "zero_point", torch.tensor(0))
    data, s, z = split_qweight(w, axis, groups)
    return data, s, z, b, scale, zp
