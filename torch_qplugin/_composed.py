"""Ops composed from other qplugin kernels, shared by both tiers: 1-D and 3-D max pooling and
nearest upsampling from the 2-D kernels, element-wise functions of 8-bit integers as a 256-entry
table, the element count of a sum. ``x`` is a quantized tensor or a plain integer tensor, and the
2-D op passed in is the tier's own (``qplugin::max_pool2d`` or ``qplugin::plain_max_pool2d``, ...).
Only views of ``x`` reach the 2-D op when ``x`` is contiguous (or channels_last_3d, for
upsampling); other layouts the caller makes contiguous first.
"""

import torch

_q = torch.ops.qplugin


def max_pool1d(x, kernel_size, stride, padding, dilation, ceil_mode, pool2d):
    """The 2-D kernel over a height of 1 (unsqueeze is a view)."""
    out = pool2d(x.unsqueeze(-2), [1] + kernel_size, [1] + stride, [0] + padding, [1] + dilation, ceil_mode)
    return out.squeeze(-2)


def max_pool3d(x, kernel_size, stride, padding, dilation, ceil_mode, pool2d):
    """A max is separable: the 2-D kernel over (H, W) of every depth slice, then over (D, 1) of the
    result seen as (D, H' * W') planes; the windows and their -inf padding are the 3-D ones.
    x: [N, C, D, H, W] or [C, D, H, W], contiguous or channels_last_3d (the result's format)."""
    k, s, p, d = kernel_size, stride, padding, dilation
    batched = x.dim() == 5
    x = x if batched else x.unsqueeze(0)
    hw = _per_depth_slice(x, lambda planes: pool2d(planes, k[1:], s[1:], p[1:], d[1:], ceil_mode))
    n, c, depth, h2, w2 = hw.shape
    out = pool2d(hw.reshape(n, c, depth, h2 * w2), [k[0], 1], [s[0], 1], [p[0], 0], [d[0], 1], ceil_mode)
    out = out.reshape(n, c, out.shape[-2], h2, w2)
    return out if batched else out.squeeze(0)


def _per_depth_slice(x, op2d):
    """op2d over (H, W) of every depth slice of x [N, C, D, H, W] (contiguous: N x C * D planes;
    channels_last_3d: N * D channels_last images), as [N, C, D, H', W'] in x's format. Then
    (N, C, D, H' * W') is a view in both formats (channels_last for channels_last_3d)."""
    n, c, d, h, w = x.shape
    if is_channels_last_3d(x):
        y = op2d(x.permute(0, 2, 1, 3, 4).reshape(n * d, c, h, w))
        return y.reshape(n, d, c, *y.shape[-2:]).permute(0, 2, 1, 3, 4)
    y = op2d(x.reshape(n, c * d, h, w))
    return y.reshape(n, c, d, *y.shape[-2:])


def upsample_nearest1d(x, output_size, up2d):
    """[N, C, W]: the 2-D kernel over a height of 1."""
    return up2d(x.unsqueeze(-2), [1, output_size[0]]).squeeze(-2)


def is_channels_last_3d(x):
    return x.dim() == 5 and x.is_contiguous(memory_format=torch.channels_last_3d) and not x.is_contiguous()


def upsample_nearest3d(x, output_size, up2d):
    """[N, C, D, H, W], contiguous or channels_last_3d: the 2-D kernel over (H, W) of every depth
    slice, then over (D, H' * W') with the width kept (nearest indices are per dimension). The
    result has x's memory format."""
    d2, h2, w2 = output_size
    y = _per_depth_slice(x, lambda planes: up2d(planes, [h2, w2]))
    n, c, d = y.shape[:3]
    return up2d(y.reshape(n, c, d, h2 * w2), [d2, h2 * w2]).reshape(n, c, d2, h2, w2)


def table_of(fn, dtype, scale, zero_point, out_scale, out_zero_point):
    """fn's values at the 256 integers of an 8-bit dtype (torch.uint8 / torch.int8) with qparams
    (scale, zero_point), requantized to (out_scale, out_zero_point): a tensor of that dtype indexed
    by integer - dtype's lowest. Dequantize and quantize are qplugin's (the float function is
    torch's float kernel)."""
    lo = -128 if dtype == torch.int8 else 0
    ints = torch.arange(lo, lo + 256, dtype=torch.int16).to(dtype)
    real = _q.plain_dequantize_per_tensor(ints, scale, zero_point)
    return _q.plain_quantize_per_tensor(fn(real), out_scale, out_zero_point, dtype)


def look_up(table, ints, out):
    """out[...] = table[ints - lowest] (out: a tensor of ints' shape and dtype, any layout)."""
    lo = -128 if ints.dtype == torch.int8 else 0
    out.copy_(table[ints.to(torch.int64) - lo])
    return out


def reduced_count(op, shape, dim):
    """How many elements each output element of a reduction over dim (None or [] for all) of a
    tensor of this shape sums; ValueError naming op when none."""
    ndim = len(shape)
    dims = range(ndim) if dim is None or len(dim) == 0 else [d % max(ndim, 1) for d in dim]
    n = 1
    for d in dims:
        n *= shape[d] if ndim else 1
    if n == 0:
        raise ValueError(f"{op}: the reduced dims should not be empty, got shape {tuple(shape)} and dim {dim}")
    return n


def memory_format_of(x):
    """channels_last / channels_last_3d when x is in that format (and not also contiguous), else
    contiguous_format: the format torch's quantized kernels give their results."""
    if x.dim() == 4 and x.is_contiguous(memory_format=torch.channels_last) and not x.is_contiguous():
        return torch.channels_last
    if is_channels_last_3d(x):
        return torch.channels_last_3d
    return torch.contiguous_format


def nearest_exact(ints, output_size, scales):
    """Nearest-exact upsampling (F.interpolate(mode="nearest-exact")) of the last len(output_size)
    dims of an integer tensor, in the tensor's memory format: source index min(floor((o + 0.5) * scale),
    in - 1) per dim, scale = 1 / the scale factor given, else in / out, both float32, and the
    product rounded to float32 before the floor (aten's nearest_neighbor_exact_compute_source_index)."""
    k = len(output_size)
    scales = list(scales) + [None] * (k - len(scales))
    out = ints
    for axis, size, factor in zip(range(ints.dim() - k, ints.dim()), output_size, scales):
        n = ints.shape[axis]
        if factor is not None and factor > 0:
            scale = torch.tensor(1.0 / factor, dtype=torch.float32)
        else:
            scale = torch.tensor(n, dtype=torch.float32) / size
        src = ((torch.arange(size, dtype=torch.float64) + 0.5) * scale.double()).float().floor()
        out = torch.index_select(out, axis, src.to(torch.int64).clamp_max(n - 1))
    return out.contiguous(memory_format=memory_format_of(ints))
