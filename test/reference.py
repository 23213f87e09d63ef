"""Float references written from the definitions (numpy, float64 unless a
definition fixes float32 steps). Tests compare qplugin against these and, while
they exist, against torch's built-in quantized kernels.

Sections per op family; each family adds its references under its own header.
"""

import numpy as np
import torch

QRANGE = {torch.quint8: (0, 255), torch.qint8: (-128, 127), torch.qint32: (-(2**31), 2**31 - 1)}
INT_DTYPE = {torch.quint8: torch.uint8, torch.qint8: torch.int8, torch.qint32: torch.int32}


# ---------------------------------------------------------------------------
# quantize / dequantize (the numerics contract, ../shared/API.md section 2)
# ---------------------------------------------------------------------------
def _f32(a):
    return np.asarray(a, dtype=np.float32)


def _clamp_to_int(v, qdtype, nan_value):
    lo, hi = QRANGE[qdtype]
    v = np.asarray(v, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        out = np.where(np.isnan(v), nan_value, np.clip(np.nan_to_num(v, nan=0.0, posinf=hi, neginf=lo), lo, hi))
    return out.astype(np.int64)


def inv_scale_ref(scale):
    """The reciprocal 8-bit quantize multiplies by: float32(1 / float32(scale)), as torch's
    FakeQuantize and quantize kernels compute it (for a scale that is a float32 value, as every
    observer's is, this is also the float64 reciprocal rounded once)."""
    return np.float32(1.0) / np.asarray(scale, dtype=np.float64).astype(np.float32)


def _quantize8_ref(x, inv, zero_point, qdtype, nan_value):
    """clamp(nearbyint(float32(x * inv)) + zp): the product rounded to float32, rounded half to
    even, then the zero point added to that integer."""
    with np.errstate(over="ignore", invalid="ignore"):
        t = np.rint((x * inv).astype(np.float32)).astype(np.float64)
        return _clamp_to_int(t + np.asarray(zero_point, dtype=np.float64), qdtype, nan_value)


def _quantize32_ref(x, scale, zero_point):
    """clamp(nearbyint(float64(x) / float64(scale)) + zp), all in float64."""
    with np.errstate(over="ignore", invalid="ignore"):
        t = np.rint(x.astype(np.float64) / np.asarray(scale, dtype=np.float64))
        return _clamp_to_int(t + np.asarray(zero_point, dtype=np.float64), torch.qint32, QRANGE[torch.qint32][0])


def quantize_per_tensor_ref(x, scale, zero_point, qdtype):
    """8-bit: q = clamp(nearbyint(float32(x * inv_scale)) + zp), inv_scale = inv_scale_ref(scale).
    qint32: q = clamp(nearbyint(float64(x) / float64(scale)) + zp).
    +inf -> qmax, -inf -> qmin; NaN -> qmax (8-bit) / INT32_MIN (qint32)."""
    x = _f32(x)
    if qdtype == torch.qint32:
        return _quantize32_ref(x, scale, zero_point)
    return _quantize8_ref(x, inv_scale_ref(scale), zero_point, qdtype, QRANGE[qdtype][1])


def quantize_per_channel_ref(x, scales, zero_points, axis, qdtype):
    """quantize_per_tensor_ref with channel c's scale and zero point along ``axis``, except
    NaN -> 0 (8-bit) / INT32_MIN (qint32)."""
    x = _f32(x)
    shape = [1] * x.ndim
    shape[axis] = -1
    s = np.asarray(scales, dtype=np.float64).reshape(shape)
    z = np.asarray(zero_points, dtype=np.int64).reshape(shape)
    if qdtype == torch.qint32:
        return _quantize32_ref(x, s, z)
    return _quantize8_ref(x, inv_scale_ref(s), z, qdtype, 0)


def dequantize_per_tensor_ref(q, scale, zero_point):
    """x = float32(q - zp) * float32(scale)."""
    d = (np.asarray(q, dtype=np.int64) - zero_point).astype(np.float32)
    return d * np.float32(scale)


def dequantize_per_channel_ref(q, scales, zero_points, axis):
    """x = float32(float64(float32(q) - float32(zp_c)) * float64(scale_c)) (aten's per-channel rule)."""
    q = np.asarray(q, dtype=np.int64)
    shape = [1] * q.ndim
    shape[axis] = -1
    s = np.asarray(scales, dtype=np.float64).reshape(shape)
    z = np.asarray(zero_points, dtype=np.int64).reshape(shape)
    d = q.astype(np.float32) - z.astype(np.float32)
    return (d.astype(np.float64) * s).astype(np.float32)


def dequantize_ref(qt: torch.Tensor) -> np.ndarray:
    """Reference dequantize of a torch quantized tensor (reads int_repr and qparams only)."""
    q = qt.int_repr().numpy()
    if qt.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        return dequantize_per_tensor_ref(q, qt.q_scale(), qt.q_zero_point())
    return dequantize_per_channel_ref(
        q, qt.q_per_channel_scales().numpy(), qt.q_per_channel_zero_points().numpy(), qt.q_per_channel_axis()
    )


def requantize_ref(real, scale, zero_point, qdtype):
    """Float64 reference for requantizing ops: round_half_even(real / scale) + zp, clamped.
    Requantizing kernels must be within 1 step of this."""
    lo, hi = QRANGE[qdtype]
    return np.clip(np.rint(np.asarray(real, dtype=np.float64) / scale) + zero_point, lo, hi).astype(np.int64)


def assert_within_steps(actual_q: torch.Tensor, expected_int, steps=1, what=""):
    """int_repr of actual within `steps` quantization steps of the expected integers."""
    quantized = isinstance(actual_q, torch.Tensor) and actual_q.is_quantized
    a = actual_q.int_repr().numpy().astype(np.int64) if quantized else np.asarray(actual_q, np.int64)
    e = np.asarray(expected_int, dtype=np.int64)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
    if a.size:
        d = np.abs(a - e).max()
        assert d <= steps, f"{what}: max difference {d} steps > {steps}"


# ---------------------------------------------------------------------------
# elementwise: add / mul / cat / comparators
# ---------------------------------------------------------------------------
def _deq64(qt):
    """Represented values in float64 (exact: (q - zp) * scale)."""
    q = qt.int_repr().numpy().astype(np.int64)
    return (q - qt.q_zero_point()).astype(np.float64) * qt.q_scale()


def binary_ref(kind, qa, qb, scale, zero_point, relu=False):
    """add / mul of the represented values in float64, requantized to (scale, zero_point);
    relu clamps at zero_point. Broadcasting like numpy / torch."""
    a, b = _deq64(qa), _deq64(qb)
    real = a + b if kind == "add" else a * b
    out = requantize_ref(real, scale, zero_point, qa.dtype)
    return np.maximum(out, zero_point) if relu else out


def add_scalar_qparams_ref(scale, zero_point, c, qdtype):
    """quantized::add_scalar's output qparams: the scalar in steps c_q = round(c / scale) moves
    the zero point; if that leaves the dtype's range the scale widens to keep it."""
    lo, hi = QRANGE[qdtype]
    c_q = int(np.rint(c / scale))
    z = zero_point
    if lo > z - c_q:
        return (hi - (z - c_q)) / (hi - lo) * scale, lo
    if hi < z - c_q:
        return ((z - c_q) - lo) / (hi - lo) * scale, hi
    return scale, z - c_q


def mul_scalar_qparams_ref(scale, zero_point, c, qdtype):
    """quantized::mul_scalar's output qparams: c > 0 scales, c == 0 gives (1.0, 0), c < 0 flips
    the integer grid (q' = qmax + qmin - q) with zero point qmax - (zp - qmin)."""
    lo, hi = QRANGE[qdtype]
    if c > 0:
        return c * scale, zero_point
    if c == 0:
        return 1.0, 0
    return abs(c) * scale, hi - (zero_point - lo)


def scalar_op_ref(kind, qa, c, relu=False):
    """add_scalar / mul_scalar: (float64 reference integers, scale, zero_point)."""
    fn = add_scalar_qparams_ref if kind == "add" else mul_scalar_qparams_ref
    scale, zp = fn(qa.q_scale(), qa.q_zero_point(), c, qa.dtype)
    if kind == "add":  # torch snaps c to the input grid first: c_q = round(c / scale)
        real = _deq64(qa) + np.rint(c / qa.q_scale()) * qa.q_scale()
    else:
        real = _deq64(qa) * c
    out = requantize_ref(real, scale, zp, qa.dtype)
    return (np.maximum(out, zp) if relu else out), scale, zp


def _cat(qxs, dim, scale, zero_point, relu, requant):
    """cat with output qparams (scale, zero_point) (default: the first input's): inputs with those
    qparams copied as-is, the others through requant(qx, scale, zero_point)."""
    scale = qxs[0].q_scale() if scale is None else scale
    zero_point = qxs[0].q_zero_point() if zero_point is None else zero_point
    parts = [
        qx.int_repr().numpy().astype(np.int64)
        if (qx.q_scale(), qx.q_zero_point()) == (scale, zero_point)
        else requant(qx, scale, zero_point)
        for qx in qxs
    ]
    out = np.concatenate(parts, axis=dim)
    return np.maximum(out, zero_point) if relu else out


def cat_ref(qxs, dim, scale=None, zero_point=None, relu=False):
    """cat of the represented values, requantized (float64) to the output qparams
    (default: the first input's); inputs with the output's qparams are copied as-is."""
    return _cat(qxs, dim, scale, zero_point, relu, lambda qx, s, z: requantize_ref(_deq64(qx), s, z, qx.dtype))


def cat_quantize_ref(qxs, dim, scale=None, zero_point=None, relu=False):
    """8-bit cat's exact integers: inputs with other qparams dequantized (float32, dequantize_ref)
    and quantized by the quantize rule (quantize_per_tensor_ref), as qplugin's cat and torch's
    quantized::cat compute them; inputs with the output's qparams copied."""
    return _cat(
        qxs, dim, scale, zero_point, relu, lambda qx, s, z: quantize_per_tensor_ref(dequantize_ref(qx), s, z, qx.dtype)
    )


CMP_OPS = {
    "eq": np.equal,
    "ne": np.not_equal,
    "ge": np.greater_equal,
    "le": np.less_equal,
    "gt": np.greater,
    "lt": np.less,
}


def _exact_sign(d1, s1, d2, s2):
    """sign(d1 * s1 - d2 * s2) in exact rational arithmetic (Python ints): d integer arrays,
    s Fractions (or anything Fraction accepts)."""
    from fractions import Fraction

    f1, f2 = Fraction(s1), Fraction(s2)
    k1, k2 = f1.numerator * f2.denominator, f2.numerator * f1.denominator
    lhs = np.asarray(d1, dtype=np.int64).astype(object) * k1
    rhs = np.asarray(d2, dtype=np.int64).astype(object) * k2
    diff = np.asarray(lhs - rhs, dtype=object)
    return np.vectorize(lambda v: (v > 0) - (v < 0), otypes=[np.int64])(diff) if diff.size else diff.astype(np.int64)


_SIGN_OPS = {
    "eq": lambda s: s == 0,
    "ne": lambda s: s != 0,
    "ge": lambda s: s >= 0,
    "le": lambda s: s <= 0,
    "gt": lambda s: s > 0,
    "lt": lambda s: s < 0,
}


def compare_ref(op, qa, other):
    """Comparators on represented values. 8-bit tensors: exactly as torch compares dequantized
    tensors, float32 (q - zp) * float32(scale), against the other tensor's values or
    float32(other). With a qint32 side: the exact rational (q - zp) * scale (the double scale)
    against the other side's exact value or the scalar as a double (float32 dequantize merges
    distinct qint32 values once |q - zp| > 2^24)."""
    exact = qa.dtype == torch.qint32 or (isinstance(other, torch.Tensor) and other.dtype == torch.qint32)
    if exact:
        da = qa.int_repr().numpy().astype(np.int64) - qa.q_zero_point()
        if isinstance(other, torch.Tensor):
            db = other.int_repr().numpy().astype(np.int64) - other.q_zero_point()
            da, db = np.broadcast_arrays(da, db)
            return _SIGN_OPS[op](_exact_sign(da, qa.q_scale(), db, other.q_scale()))
        c = float(other)
        if np.isnan(c):
            return np.full(da.shape, op == "ne")
        if np.isinf(c):
            return _SIGN_OPS[op](np.full(da.shape, -1 if c > 0 else 1, dtype=np.int64))
        return _SIGN_OPS[op](_exact_sign(da, qa.q_scale(), np.ones_like(da), c))
    a = dequantize_ref(qa)
    if isinstance(other, torch.Tensor):
        b = dequantize_ref(other)
    else:
        with np.errstate(over="ignore"):  # beyond float32: +-inf, as torch's cast
            b = np.float32(other)
    return CMP_OPS[op](a, b)


# ---------------------------------------------------------------------------
# sorting and reductions
# ---------------------------------------------------------------------------
def _per_tensor_real(qt: torch.Tensor) -> np.ndarray:
    """The represented real values (float32, exactly torch's dequantize) of a per-tensor tensor."""
    return dequantize_per_tensor_ref(qt.int_repr().numpy(), qt.q_scale(), qt.q_zero_point())


def sort_ref(qt: torch.Tensor, dim=-1, descending=False):
    """Stable sort by the exact represented real value (q - zp) * scale, scale > 0: the order of
    q (float32 dequantize would merge distinct qint32 values): (sorted integers, int64 indices).
    Descending keeps equal values in their original order, as torch.sort(stable=True)."""
    q = qt.int_repr().numpy().astype(np.int64)
    x = q
    if q.ndim == 0:
        return q.copy(), np.zeros((), np.int64)
    idx = np.argsort(-x if descending else x, axis=dim, kind="stable")
    return np.take_along_axis(q, idx, axis=dim), idx.astype(np.int64)


def topk_values_ref(qt: torch.Tensor, k, dim=-1, largest=True):
    """The integers of the k largest (smallest) represented values along dim, in sorted order."""
    v, _ = sort_ref(qt, dim, descending=largest)
    if v.ndim == 0:
        return v
    return np.take(v, np.arange(k), axis=dim)


def argmax_ref(qt: torch.Tensor, dim=None, keepdim=False, largest=True):
    """First index of the largest (smallest) exact represented value (the order of q), as
    torch.argmax documents."""
    x = qt.int_repr().numpy().astype(np.int64)
    f = np.argmax if largest else np.argmin
    if dim is None:
        r = np.asarray(f(x.reshape(-1)), dtype=np.int64)
        return r.reshape([1] * x.ndim) if keepdim else r
    if x.ndim == 0:
        return np.zeros((), np.int64)
    r = f(x, axis=dim).astype(np.int64)
    return np.expand_dims(r, dim) if keepdim else r


def mean_int_ref(qt: torch.Tensor, dim=None, keepdim=False):
    """Torch's quantized mean semantics, exactly: output qparams = input's and
    q_out = round_half_even(sum(q) / N) on the raw integers (ties broken on q, not on q - zp;
    torch's inner-dim kernel rounds float(sum) / N the same way). Integer arithmetic, no float."""
    q = qt.int_repr().numpy().astype(np.int64)
    axes = tuple(range(q.ndim)) if dim is None or len(dim) == 0 else tuple(d % max(q.ndim, 1) for d in dim)
    if q.ndim == 0:
        return q.copy()
    s = q.sum(axis=axes, keepdims=keepdim)
    n = int(np.prod([q.shape[a] for a in axes]))
    fl = np.floor_divide(s, n)
    rem = s - fl * n
    up = (2 * rem > n) | ((2 * rem == n) & (fl % 2 == 1))
    return fl + up


def sum_ref(qt: torch.Tensor, dim=None, keepdim=False):
    """(integers, scale, zero_point) of a quantized sum with the input's zero point and the scale
    times N (the count summed): round_half_even of the exact sum in units of N * scale, which is
    mean_int_ref's rounding."""
    q = qt.int_repr().numpy()
    axes = range(q.ndim) if dim is None or len(dim) == 0 else dim
    n = int(np.prod([q.shape[a] for a in axes]))
    return mean_int_ref(qt, dim, keepdim), qt.q_scale() * n, qt.q_zero_point()


def mean_real_ref(qt: torch.Tensor, dim=None, keepdim=False):
    """float64 mean of the represented real values (for the within-1-step check)."""
    x = _per_tensor_real(qt).astype(np.float64)
    axes = None if dim is None or len(dim) == 0 or x.ndim == 0 else tuple(dim)
    return np.mean(x, axis=axes, keepdims=keepdim)


# ---------------------------------------------------------------------------
# activations and normalization
# ---------------------------------------------------------------------------


def quantize_bound_ref(value, scale, zero_point, qdtype):
    """One scalar bound (relu6 / clamp) quantized: quantize_per_tensor_ref of float32(value)."""
    return int(quantize_per_tensor_ref(np.float32(value), scale, zero_point, qdtype))


def clamp_int_ref(qt, lo, hi):
    """Integer clamp of int_repr: max with lo first, then min with hi (torch's order)."""
    return np.minimum(np.maximum(qt.int_repr().numpy().astype(np.int64), lo), hi)


def _hardtanh01(x):
    return np.clip(x + 3.0, 0.0, 6.0)


ACTIVATIONS = {
    # name: f(x float64, **params) -> float64, from the definitions
    "leaky_relu": lambda x, negative_slope: np.where(x > 0, x, x * negative_slope),
    "hardswish": lambda x: x * _hardtanh01(x) / 6.0,
    "hardsigmoid": lambda x: _hardtanh01(x) / 6.0,
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "elu": lambda x, alpha, scale, input_scale: np.where(x > 0, x * scale, np.expm1(x * input_scale) * alpha * scale),
    "celu": lambda x, alpha: np.maximum(x, 0.0) + np.minimum(0.0, alpha * np.expm1(x / alpha)),
    "threshold": lambda x, threshold, value: np.where(x > threshold, x, value),
    "tanh": lambda x: np.tanh(x),
}


def activation_ref(name, qt, output_scale, output_zero_point, **params):
    """Float64 activation of the dequantized input, requantized to the output qparams."""
    x = dequantize_ref(qt).astype(np.float64)
    with np.errstate(over="ignore"):
        y = ACTIVATIONS[name](x, **params)
    return requantize_ref(y, output_scale, output_zero_point, qt.dtype)


def prelu_ref(qt, slopes, output_scale, output_zero_point):
    """x if x > 0 else slope * x, slopes broadcast over dim 1 (or one shared slope), requantized."""
    x = dequantize_ref(qt).astype(np.float64)
    w = np.asarray(slopes, dtype=np.float64).reshape(-1)
    if w.size > 1:
        w = w.reshape((1, -1) + (1,) * (x.ndim - 2))
    return requantize_ref(np.where(x > 0, x, w * x), output_scale, output_zero_point, qt.dtype)


def softmax_ref(qt, dim, output_scale, output_zero_point):
    x = dequantize_ref(qt).astype(np.float64)
    if x.ndim == 0:
        return requantize_ref(np.ones_like(x), output_scale, output_zero_point, qt.dtype)
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return requantize_ref(e / e.sum(axis=dim, keepdims=True), output_scale, output_zero_point, qt.dtype)


def layer_norm_ref(qt, normalized_shape, weight, bias, eps, output_scale, output_zero_point):
    x = dequantize_ref(qt).astype(np.float64)
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if weight is not None:
        y = y * np.asarray(weight, dtype=np.float64)
    if bias is not None:
        y = y + np.asarray(bias, dtype=np.float64)
    return requantize_ref(y, output_scale, output_zero_point, qt.dtype)


def batch_norm_ref(qt, weight, bias, mean, var, eps, output_scale, output_zero_point, relu=False):
    """batch_norm over dim 1 of an [N, C, ...] tensor (2d / 3d alike), relu: max(y, 0)."""
    x = dequantize_ref(qt).astype(np.float64)
    c = x.shape[1]
    sh = (1, c) + (1,) * (x.ndim - 2)
    w = np.ones(c) if weight is None else np.asarray(weight, dtype=np.float64)
    b = np.zeros(c) if bias is None else np.asarray(bias, dtype=np.float64)
    m = np.asarray(mean, dtype=np.float64)
    v = np.asarray(var, dtype=np.float64)
    y = (x - m.reshape(sh)) / np.sqrt(v.reshape(sh) + eps) * w.reshape(sh) + b.reshape(sh)
    if relu:
        y = np.maximum(y, 0.0)
    return requantize_ref(y, output_scale, output_zero_point, qt.dtype)


def batch_norm2d_ref(qt, weight, bias, mean, var, eps, output_scale, output_zero_point):
    return batch_norm_ref(qt, weight, bias, mean, var, eps, output_scale, output_zero_point)


def group_norm_ref(qt, num_groups, weight, bias, eps, output_scale, output_zero_point):
    """Statistics (biased variance) over each (n, group) block of an [N, C, ...] tensor, then the
    per-channel affine."""
    x = dequantize_ref(qt).astype(np.float64)
    n, c = x.shape[0], x.shape[1]
    g = x.reshape(n, num_groups, -1)
    mean = g.mean(axis=2, keepdims=True)
    var = ((g - mean) ** 2).mean(axis=2, keepdims=True)
    y = ((g - mean) / np.sqrt(var + eps)).reshape(x.shape)
    sh = (1, c) + (1,) * (x.ndim - 2)
    if weight is not None:
        y = y * np.asarray(weight, dtype=np.float64).reshape(sh)
    if bias is not None:
        y = y + np.asarray(bias, dtype=np.float64).reshape(sh)
    return requantize_ref(y, output_scale, output_zero_point, qt.dtype)


def instance_norm_ref(qt, weight, bias, eps, output_scale, output_zero_point):
    return group_norm_ref(qt, qt.shape[1], weight, bias, eps, output_scale, output_zero_point)


# ---------------------------------------------------------------------------
# pooling and upsampling
# ---------------------------------------------------------------------------


def _pool_out_size(n, k, s, p, d, ceil_mode):
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pair(v):
    v = list(v)
    return (v[0], v[0]) if len(v) == 1 else (v[0], v[1])


def max_pool2d_ref(q, kernel_size, stride, padding, dilation, ceil_mode):
    """Max pooling of integer (or real) data [..., H, W] (numpy), from the definition:
    max over the window taps inside the input; padding never wins."""
    q = np.asarray(q)
    (kh, kw), (ph, pw), (dh, dw) = _pair(kernel_size), _pair(padding), _pair(dilation)
    sh, sw = _pair(stride) if len(stride) else (kh, kw)
    H, W = q.shape[-2:]
    OH, OW = _pool_out_size(H, kh, sh, ph, dh, ceil_mode), _pool_out_size(W, kw, sw, pw, dw, ceil_mode)
    lowest = np.iinfo(q.dtype).min if np.issubdtype(q.dtype, np.integer) else -np.inf
    out = np.full(q.shape[:-2] + (OH, OW), lowest, dtype=q.dtype)
    for oh in range(OH):
        for ow in range(OW):
            for i in range(kh):
                h = oh * sh - ph + i * dh
                if not 0 <= h < H:
                    continue
                for j in range(kw):
                    w = ow * sw - pw + j * dw
                    if 0 <= w < W:
                        out[..., oh, ow] = np.maximum(out[..., oh, ow], q[..., h, w])
    return out


def avg_pool2d_ref(real, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """Float64 average pooling of real values [..., H, W] (padding counts as 0 when included)."""
    real = np.asarray(real, dtype=np.float64)
    (kh, kw), (ph, pw) = _pair(kernel_size), _pair(padding)
    sh, sw = _pair(stride) if len(stride) else (kh, kw)
    H, W = real.shape[-2:]
    OH, OW = _pool_out_size(H, kh, sh, ph, 1, ceil_mode), _pool_out_size(W, kw, sw, pw, 1, ceil_mode)
    out = np.zeros(real.shape[:-2] + (OH, OW))
    for oh in range(OH):
        h0 = oh * sh - ph
        h1 = min(h0 + kh, H + ph)
        for ow in range(OW):
            w0 = ow * sw - pw
            w1 = min(w0 + kw, W + pw)
            pool = (h1 - h0) * (w1 - w0)
            a, b, c, d = max(h0, 0), min(h1, H), max(w0, 0), min(w1, W)
            total = real[..., a:b, c:d].sum(axis=(-2, -1))
            div = divisor_override if divisor_override else (pool if count_include_pad else (b - a) * (d - c))
            out[..., oh, ow] = total / div
    return out


def adaptive_avg_pool2d_ref(real, output_size):
    """Float64 adaptive average pooling: window [floor(o*in/out), ceil((o+1)*in/out))."""
    real = np.asarray(real, dtype=np.float64)
    H, W = real.shape[-2:]
    OH, OW = output_size
    out = np.zeros(real.shape[:-2] + (OH, OW))
    for oh in range(OH):
        a, b = (oh * H) // OH, -((-(oh + 1) * H) // OH)
        for ow in range(OW):
            c, d = (ow * W) // OW, -((-(ow + 1) * W) // OW)
            out[..., oh, ow] = real[..., a:b, c:d].mean(axis=(-2, -1))
    return out


def avg_pool3d_ref(real, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """Float64 3-d average pooling of real values [..., D, H, W], from the definition: the window
    of each output clipped to the input plus padding (padding counts as 0 when included)."""
    real = np.asarray(real, dtype=np.float64)
    k = _triple(kernel_size)
    s = _triple(stride) if len(stride) else k
    p = _triple(padding)
    n = real.shape[-3:]
    o = [_pool_out_size(n[i], k[i], s[i], p[i], 1, ceil_mode) for i in range(3)]
    out = np.zeros(real.shape[:-3] + tuple(o))
    for idx in np.ndindex(*o):
        lo = [idx[i] * s[i] - p[i] for i in range(3)]
        hi = [min(lo[i] + k[i], n[i] + p[i]) for i in range(3)]
        pooled = int(np.prod([hi[i] - lo[i] for i in range(3)]))
        a = [max(lo[i], 0) for i in range(3)]
        b = [min(hi[i], n[i]) for i in range(3)]
        valid = int(np.prod([b[i] - a[i] for i in range(3)]))
        total = real[..., a[0] : b[0], a[1] : b[1], a[2] : b[2]].sum(axis=(-3, -2, -1))
        div = divisor_override if divisor_override else (pooled if count_include_pad else valid)
        out[(Ellipsis,) + idx] = total / div
    return out


def adaptive_avg_pool3d_ref(real, output_size):
    """Float64 3-d adaptive average pooling: window [floor(o*in/out), ceil((o+1)*in/out)) per dim."""
    real = np.asarray(real, dtype=np.float64)
    n = real.shape[-3:]
    out = np.zeros(real.shape[:-3] + tuple(output_size))
    for idx in np.ndindex(*output_size):
        a = [(idx[i] * n[i]) // output_size[i] for i in range(3)]
        b = [-((-(idx[i] + 1) * n[i]) // output_size[i]) for i in range(3)]
        out[(Ellipsis,) + idx] = real[..., a[0] : b[0], a[1] : b[1], a[2] : b[2]].mean(axis=(-3, -2, -1))
    return out


def _triple(v):
    v = list(v)
    return (v[0],) * 3 if len(v) == 1 else tuple(v)


def upsample_bilinear2d_ref(q, output_size, align_corners, scales=(None, None)):
    """Bilinear resize of the integers of q [..., H, W] in float64 from the definition (source
    position per torch's area_pixel rule), rounded half-even: the output keeps q's qparams, so
    this is requantize_ref of the dequantized interpolation."""
    q = np.asarray(q, dtype=np.float64)
    H, W = q.shape[-2], q.shape[-1]
    OH, OW = output_size

    def taps(n_in, n_out, scale):
        if align_corners:
            s = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
            r = s * np.arange(n_out, dtype=np.float64)
        else:
            s = 1.0 / scale if scale else n_in / n_out
            r = np.maximum(s * (np.arange(n_out) + 0.5) - 0.5, 0.0)
        lo = np.minimum(np.floor(r).astype(np.int64), n_in - 1)
        hi = np.where(lo < n_in - 1, lo + 1, lo)
        return lo, hi, r - lo

    y0, y1, fy = taps(H, OH, scales[0])
    x0, x1, fx = taps(W, OW, scales[1])
    top = q[..., y0, :][..., :, x0] * (1 - fx) + q[..., y0, :][..., :, x1] * fx
    bot = q[..., y1, :][..., :, x0] * (1 - fx) + q[..., y1, :][..., :, x1] * fx
    v = top * (1 - fy)[:, None] + bot * fy[:, None]
    return np.rint(v).astype(np.int64)


def upsample_nearest2d_ref(q, output_size):
    """Nearest upsampling [..., H, W] -> [..., OH, OW]: source index floor(o * in / out)."""
    return upsample_nearest_ref(q, output_size)


def upsample_nearest_ref(q, output_size):
    """Nearest upsampling of the last len(output_size) dims: source index floor(o * in / out) per dim."""
    q = np.asarray(q)
    k = len(output_size)
    for axis, out in zip(range(q.ndim - k, q.ndim), output_size):
        n = q.shape[axis]
        q = np.take(q, np.minimum((np.arange(out) * n) // out, n - 1), axis=axis)
    return q


def upsample_nearest_exact_ref(q, output_size):
    """Nearest-exact upsampling of the last len(output_size) dims: source index
    min(floor((o + 1/2) * in / out), in - 1) per dim (pixel centres), in integers."""
    q = np.asarray(q)
    k = len(output_size)
    for axis, out in zip(range(q.ndim - k, q.ndim), output_size):
        n = q.shape[axis]
        q = np.take(q, np.minimum(((2 * np.arange(out) + 1) * n) // (2 * out), n - 1), axis=axis)
    return q


def max_pool_ref(q, kernel_size, stride, padding, dilation, ceil_mode):
    """Max pooling of integer data [..., *spatial] over len(kernel_size) spatial dims, from the
    definition: the max of the window taps inside the input (padding never wins)."""
    q = np.asarray(q)
    k = len(kernel_size)
    stride = stride if len(stride) else kernel_size
    spatial = q.shape[q.ndim - k :]
    outs = [
        _pool_out_size(n, kk, s, p, d, ceil_mode)
        for n, kk, s, p, d in zip(spatial, kernel_size, stride, padding, dilation)
    ]
    out = np.full(q.shape[: q.ndim - k] + tuple(outs), np.iinfo(q.dtype).min, dtype=q.dtype)
    for o in np.ndindex(*outs):
        for tap in np.ndindex(*kernel_size):
            src = [oi * s - p + t * d for oi, s, p, t, d in zip(o, stride, padding, tap, dilation)]
            if all(0 <= i < n for i, n in zip(src, spatial)):
                out[(Ellipsis,) + o] = np.maximum(out[(Ellipsis,) + o], q[(Ellipsis,) + tuple(src)])
    return out


# ---------------------------------------------------------------------------
# linear
# ---------------------------------------------------------------------------


def linear_real_ref(xq: torch.Tensor, wq: torch.Tensor, bias=None) -> np.ndarray:
    """Float64 real result of a quantized linear: dequantize(X) @ dequantize(W).T + bias
    (exact integers times float64 scales; bias taken as float64)."""
    x = (xq.int_repr().numpy().astype(np.float64) - xq.q_zero_point()) * xq.q_scale()
    wi = wq.int_repr().numpy().astype(np.float64)
    if wq.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        w = (wi - wq.q_zero_point()) * wq.q_scale()
    else:
        w = (wi - wq.q_per_channel_zero_points().numpy()[:, None]) * wq.q_per_channel_scales().numpy()[:, None]
    r = x.reshape(-1, x.shape[-1]) @ w.T
    if bias is not None:
        r = r + np.asarray(bias, dtype=np.float64)
    return r.reshape(tuple(x.shape[:-1]) + (w.shape[0],))


def linear_ref(xq, wq, bias, y_scale, y_zero_point, relu=False):
    """quint8 result of linear / linear_relu: requantize_ref of the float64 real result;
    relu clamps at the output zero point (real 0)."""
    q = requantize_ref(linear_real_ref(xq, wq, bias), y_scale, y_zero_point, torch.quint8)
    return np.maximum(q, y_zero_point) if relu else q


def linear_dynamic_ref(x, wq, bias, reduce_range=False, relu=False, x_qparams=None):
    """linear_dynamic: X quantized per tensor to quint8 with the given (scale, zero_point)
    (default: torch's choice on [min(X), max(X)]), then the float64 real result."""
    x = torch.as_tensor(x, dtype=torch.float32)
    if x_qparams is None:
        lo, hi = (float(x.min()), float(x.max())) if x.numel() else (0.0, 0.0)
        x_qparams = choose_qparams_ref(lo, hi, reduce_range)
    s, z = x_qparams
    q = quantize_per_tensor_ref(x.numpy(), s, z, torch.quint8)
    xq = torch._make_per_tensor_quantized_tensor(torch.from_numpy(q.astype(np.uint8)), s, z)
    r = linear_real_ref(xq, wq, bias)
    return np.maximum(r, 0.0) if relu else r


def choose_qparams_ref(lo, hi, reduce_range=False, qmin=0, qmax=255):
    """fbgemm ChooseQuantizationParams (what torch's dynamic ops use): (float32 scale, zero_point)."""
    if reduce_range:
        qmin, qmax = qmin // 2, qmax // 2
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (np.float64(hi) - np.float64(lo)) / (qmax - qmin)
    if np.float32(scale) == 0 or np.isinf(np.float32(1.0) / np.float32(scale)):
        scale = 0.1
    small = float(np.float32(6.1e-5))
    if scale < small:
        org = float(np.float32(scale))
        scale = small
        if lo == 0:
            hi = small * (qmax - qmin)
        elif hi == 0:
            lo = -small * (qmax - qmin)
        else:
            lo, hi = lo * (small / org), hi * (small / org)
    zmin, zmax = qmin - lo / scale, qmax - hi / scale
    emin, emax = abs(qmin) - abs(lo / scale), abs(qmax) - abs(hi / scale)
    zp = zmin if emin < emax else zmax
    zp = qmin if zp < qmin else qmax if zp > qmax else int(np.rint(zp))
    return float(np.float32(scale)), int(zp)


# ---------------------------------------------------------------------------
# convolution
# ---------------------------------------------------------------------------
def conv_ref(x, w, b, stride, padding, dilation, groups):
    """Float64 N-d convolution (cross-correlation, as torch.nn.functional.conv*d) from the
    definition. x: (N, C, *S), w: (OC, C / groups, *K), b: (OC,) or None."""
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    nd = x.ndim - 2
    n, c = x.shape[:2]
    oc, icg = w.shape[:2]
    ks = w.shape[2:]
    ocg = oc // groups
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
    out = [(x.shape[2 + i] + 2 * padding[i] - dilation[i] * (ks[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    y = np.zeros((n, oc, *out), dtype=np.float64)
    for tap in np.ndindex(*ks):
        sl = tuple(
            slice(tap[i] * dilation[i], tap[i] * dilation[i] + (out[i] - 1) * stride[i] + 1, stride[i])
            for i in range(nd)
        )
        xs = xp[(slice(None), slice(None)) + sl]
        for g in range(groups):
            wg = w[(slice(g * ocg, (g + 1) * ocg), slice(None)) + tuple(tap)]  # (ocg, icg)
            y[:, g * ocg : (g + 1) * ocg] += np.einsum("nc...,oc->no...", xs[:, g * icg : (g + 1) * icg], wg)
    if b is not None:
        y += np.asarray(b, dtype=np.float64).reshape((1, -1) + (1,) * nd)
    return y


def conv_transpose_ref(x, w, b, stride, padding, output_padding, dilation, groups):
    """Float64 N-d transposed convolution (torch.nn.functional.conv_transpose*d) from the
    definition: input element x[n, g * icg + ic, i...] adds x * w[g * icg + ic, oc, k...] to
    output position i * stride - padding + k * dilation of channel g * ocg + oc; positions
    outside [0, out) are dropped. x: (N, C, *S), w: (C, OC / groups, *K), b: (OC,) or None.
    out = (in - 1) * stride - 2 * padding + dilation * (K - 1) + output_padding + 1."""
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    nd = x.ndim - 2
    n, c = x.shape[:2]
    icg = c // groups
    ocg = w.shape[1]
    ks = w.shape[2:]
    ins = x.shape[2:]
    out = [
        (ins[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (ks[i] - 1) + output_padding[i] + 1 for i in range(nd)
    ]
    # scatter into a canvas wide enough for every tap, then crop the padding away
    full = [max((ins[i] - 1) * stride[i] + dilation[i] * (ks[i] - 1) + 1, padding[i] + out[i]) for i in range(nd)]
    canvas = np.zeros((n, ocg * groups, *full), dtype=np.float64)
    for tap in np.ndindex(*ks):
        sl = tuple(
            slice(tap[i] * dilation[i], tap[i] * dilation[i] + (ins[i] - 1) * stride[i] + 1, stride[i])
            for i in range(nd)
        )
        for g in range(groups):
            wg = w[(slice(g * icg, (g + 1) * icg), slice(None)) + tuple(tap)]  # (icg, ocg)
            canvas[(slice(None), slice(g * ocg, (g + 1) * ocg)) + sl] += np.einsum(
                "nc...,co->no...", x[:, g * icg : (g + 1) * icg], wg
            )
    y = canvas[(slice(None), slice(None)) + tuple(slice(padding[i], padding[i] + out[i]) for i in range(nd))]
    if b is not None:
        y = y + np.asarray(b, dtype=np.float64).reshape((1, -1) + (1,) * nd)
    return y


def qconv_transpose_ref(qx, qw, b, stride, padding, output_padding, dilation, groups, out_scale, out_zp):
    """Integer output of quantized transposed conv computed in float64, rounded once. qw may be
    per-channel along axis 1 (output channels) or per tensor."""
    real = conv_transpose_ref(
        exact_real(qx),
        exact_real(qw),
        None if b is None else b.double().numpy(),
        stride,
        padding,
        output_padding,
        dilation,
        groups,
    )
    return requantize_ref(real, out_scale, out_zp, torch.quint8)


def exact_real(qt: torch.Tensor) -> np.ndarray:
    """The real value a quantized tensor represents, in float64 without intermediate rounding."""
    q = qt.int_repr().numpy().astype(np.float64)
    if qt.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        return (q - qt.q_zero_point()) * qt.q_scale()
    axis = qt.q_per_channel_axis()
    shape = [1] * q.ndim
    shape[axis] = -1
    s = qt.q_per_channel_scales().numpy().astype(np.float64).reshape(shape)
    z = qt.q_per_channel_zero_points().numpy().astype(np.float64).reshape(shape)
    return (q - z) * s


def qconv_ref(qx, qw, b, stride, padding, dilation, groups, out_scale, out_zp, relu=False, qaccum=None):
    """Integer output of quantized conv (+ residual add, + relu) computed in float64, rounded once."""
    real = conv_ref(
        exact_real(qx), exact_real(qw), None if b is None else b.double().numpy(), stride, padding, dilation, groups
    )
    if qaccum is not None:
        real = real + exact_real(qaccum)
    if relu:
        real = np.maximum(real, 0.0)
    return requantize_ref(real, out_scale, out_zp, torch.quint8)


def _sigmoid64(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # = 1 / (1 + exp(-x)), without overflow


def lstm_cell_ref(gi, gh, c):
    """One LSTM step's pointwise part in float64 (torch.nn.LSTM's definition; chunks i, f, g, o)
    from the two gate projections gi = x W_ih^T + b_ih and gh = h W_hh^T + b_hh; returns (h', c')."""
    s = np.asarray(gi, dtype=np.float64) + np.asarray(gh, dtype=np.float64)
    i, f, g, o = np.split(s, 4, axis=-1)
    c2 = _sigmoid64(f) * np.asarray(c, dtype=np.float64) + _sigmoid64(i) * np.tanh(g)
    return _sigmoid64(o) * np.tanh(c2), c2


def gru_cell_ref(gi, gh, h):
    """One GRU step's pointwise part in float64 (torch.nn.GRU's definition; chunks r, z, n)."""
    ir, iz, inn = np.split(np.asarray(gi, dtype=np.float64), 3, axis=-1)
    hr, hz, hn = np.split(np.asarray(gh, dtype=np.float64), 3, axis=-1)
    r = _sigmoid64(ir + hr)
    z = _sigmoid64(iz + hz)
    n = np.tanh(inn + r * hn)
    return (1.0 - z) * n + z * np.asarray(h, dtype=np.float64)


# ---------------------------------------------------------------------------
# embeddings
# ---------------------------------------------------------------------------


def embedding_bag_ref(codes, scale, bias, indices, starts, mode=0, per_sample_weights=None):
    """Float64 embedding bag over row-wise quantized rows: value = scale * code + bias per row
    (scale, bias as stored), bag b reduces rows indices[starts[b]:starts[b + 1]] (negative: skipped)
    by sum (weighted by per_sample_weights), mean (sum / count) or max (0 for an empty bag)."""
    codes = np.asarray(codes, dtype=np.float64)
    scale = np.asarray(scale, dtype=np.float64)
    bias = np.asarray(bias, dtype=np.float64)
    rows = scale[:, None] * codes + bias[:, None]
    out = np.zeros((len(starts) - 1, codes.shape[1]))
    for b in range(len(starts) - 1):
        sel = [i for i in range(starts[b], starts[b + 1]) if indices[i] >= 0]
        if not sel:
            continue
        vals = rows[[indices[i] for i in sel]]
        if mode == 2:
            out[b] = vals.max(axis=0)
            continue
        w = np.ones(len(sel)) if per_sample_weights is None else np.asarray(per_sample_weights, np.float64)[sel]
        out[b] = (w[:, None] * vals).sum(axis=0)
        if mode == 1:
            out[b] /= starts[b + 1] - starts[b]
    return out


def fused_rows_ref(fused, bits):
    """(codes [rows, D], scale, bias) of torch's fused row-wise format: 8-bit rows are D codes then
    float32 scale and bias; 4-bit rows D / 2 bytes (element 2j in the low nibble) then fp16 scale, bias."""
    fused = np.asarray(fused, dtype=np.uint8)
    if bits == 8:
        codes = fused[:, :-8]
        sb = np.ascontiguousarray(fused[:, -8:]).view(np.float32)
    else:
        packed = fused[:, :-4]
        codes = np.stack([packed & 15, packed >> 4], axis=-1).reshape(len(fused), -1)
        sb = np.ascontiguousarray(fused[:, -4:]).view(np.float16).astype(np.float32)
    return codes.astype(np.int64), sb[:, 0], sb[:, 1]


# ---------------------------------------------------------------------------
# fuzzer result checks (test/fuzz/checks.py): references the op tests did not need
# ---------------------------------------------------------------------------
def quantize_per_tensor_dynamic_ref(x, qdtype, reduce_range):
    """torch.quantize_per_tensor_dynamic: qparams chosen on [min(x), max(x)] (fbgemm's
    ChooseQuantizationParams over the dtype's range, halved by reduce_range), then
    quantize_per_tensor: (integers, scale, zero_point)."""
    x = torch.as_tensor(x, dtype=torch.float32)
    qmin, qmax = QRANGE[qdtype]
    lo, hi = (float(x.min()), float(x.max())) if x.numel() else (0.0, 0.0)
    s, z = choose_qparams_ref(lo, hi, reduce_range, qmin, qmax)
    return quantize_per_tensor_ref(x.numpy(), s, z, qdtype), s, z


def matmul_ref(qa, qb, scale, zero_point):
    """quantized matmul (dequantize, float32 matmul, quantize_per_tensor): the float64 product of
    the float32-dequantized operands requantized, and per element the slack in output steps that
    float32 accumulation may add (K * 2^-23 * sum |a| |b|, rounded up; float, inf for tiny output
    scales): (integers, slack)."""
    a = dequantize_ref(qa).astype(np.float64)
    b = dequantize_ref(qb).astype(np.float64)
    real = np.matmul(a, b)
    k = a.shape[-1] if a.ndim else 1
    bound = np.matmul(np.abs(a), np.abs(b)) * (k * 2.0**-23) + np.abs(real) * 2.0**-23
    with np.errstate(over="ignore"):
        return requantize_ref(real, scale, zero_point, qa.dtype), np.ceil(bound / scale)


def equal_ref(qa, qb):
    """torch.equal on quantized tensors: same dtype, qscheme, shape, qparams and integers."""
    if qa.dtype != qb.dtype or qa.qscheme() != qb.qscheme() or qa.shape != qb.shape:
        return False
    if qa.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        if qa.q_scale() != qb.q_scale() or qa.q_zero_point() != qb.q_zero_point():
            return False
    elif (
        qa.q_per_channel_axis() != qb.q_per_channel_axis()
        or not np.array_equal(qa.q_per_channel_scales().numpy(), qb.q_per_channel_scales().numpy())
        or not np.array_equal(qa.q_per_channel_zero_points().numpy(), qb.q_per_channel_zero_points().numpy())
    ):
        return False
    return bool(np.array_equal(qa.int_repr().numpy(), qb.int_repr().numpy()))


def upsample_nearest2d_index_ref(q, output_size):
    """Nearest upsampling [..., H, W] -> [..., OH, OW] with torch's nearest index rule:
    src = min(floor(float32(o) * float32(in / out)), in - 1), the ratio a float32 division."""
    q = np.asarray(q)
    H, W = q.shape[-2:]
    OH, OW = output_size

    def idx(n_in, n_out):
        r = np.float32(n_in) / np.float32(n_out)
        src = np.floor(np.arange(n_out, dtype=np.float32) * r).astype(np.int64)
        return np.minimum(src, n_in - 1)

    return q[..., idx(H, OH)[:, None], idx(W, OW)[None, :]]


def softmax_exact_ref(qt, dim, output_scale, output_zero_point):
    """softmax from exact differences: exp((q_d - q_max) * scale) in float64 (docs/design/activation.md:
    the result depends only on q_max - q_d), so qint32 values that float32 dequantize merges stay
    apart; requantized to the output qparams."""
    q = qt.int_repr().numpy().astype(np.int64)
    if q.ndim == 0:
        return requantize_ref(np.ones(()), output_scale, output_zero_point, qt.dtype)
    d = (q - q.max(axis=dim, keepdims=True)).astype(np.float64) * qt.q_scale()
    e = np.exp(d)
    return requantize_ref(e / e.sum(axis=dim, keepdims=True), output_scale, output_zero_point, qt.dtype)


def real_f32_scale(qt: torch.Tensor) -> np.ndarray:
    """(q - zp) * float32(scale) in float64: torch's dequantize (which multiplies by the float32
    scale) without rounding the product to float32 (per-tensor)."""
    q = qt.int_repr().numpy().astype(np.int64)
    return (q - qt.q_zero_point()).astype(np.float64) * np.float64(np.float32(qt.q_scale()))


def with_exact_dequantize(fn, *args, **kwargs):
    """Calls a float64 reference above with its quantized inputs read as real_f32_scale instead of
    float32 dequantize: the norms take their statistics from exact integer sums and the float32
    input scale (docs/design/activation.md), while a float32 product merges qint32 values once
    |q - zp| > 2^24."""
    global dequantize_ref
    saved = dequantize_ref
    dequantize_ref = real_f32_scale
    try:
        return fn(*args, **kwargs)
    finally:
        dequantize_ref = saved


# ---- fp16 dynamic linear (qplugin::linear_dynamic_fp16) ---------------------------------------

FP16_MAX = 65504.0


def fp16_weight_ref(w):
    """The weight linear_prepack_fp16 keeps: float32 values saturated to +-65504 (torch's
    HandleWeightsSaturation), rounded to the nearest float16 (ties to even), as float64."""
    w = np.asarray(w, dtype=np.float32)
    return np.clip(w, -FP16_MAX, FP16_MAX).astype(np.float16).astype(np.float64)


def linear_fp16_ref(x, w, bias=None, relu=False):
    """Exact (float64) y = x W16^T + bias with W16 = fp16_weight_ref(w); x float32 as given."""
    x = np.asarray(x, dtype=np.float32).astype(np.float64)
    y = x @ fp16_weight_ref(w).T
    if bias is not None:
        y = y + np.asarray(bias, dtype=np.float32).astype(np.float64)
    return np.maximum(y, 0.0) if relu else y


def linear_fp16_tolerance(x, w, bias=None):
    """Error bound of the kernel's order (K fmas into one float32 accumulator, then + bias:
    K + 1 roundings): gamma(K + 1) * (sum_k |x w16| + |bias|), gamma(n) = n u / (1 - n u),
    u = 2^-24 (Higham, recursive summation), plus the final rounding to float32 (|y| u)."""
    x = np.abs(np.asarray(x, dtype=np.float32).astype(np.float64))
    k = x.shape[-1]
    mag = x @ np.abs(fp16_weight_ref(w)).T
    if bias is not None:
        mag = mag + np.abs(np.asarray(bias, dtype=np.float32).astype(np.float64))
    u = 2.0**-24
    n = k + 1
    return (n * u / (1 - n * u)) * mag + u * mag
