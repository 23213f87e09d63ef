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
    out = np.where(np.isnan(v), nan_value, np.clip(np.nan_to_num(v, nan=0.0, posinf=hi, neginf=lo), lo, hi))
    return out.astype(np.int64)


def quantize_per_tensor_ref(x, scale, zero_point, qdtype):
    """8-bit: q = clamp(round_half_even(fma(x, 1/scale, zp))) -- one rounding of x*inv + zp.
    qint32: q = clamp(round_half_even(float32(float32(x*inv) + zp))). inv = float32(1/float32(scale)).
    NaN -> qmax (8-bit) / INT32_MIN (qint32)."""
    x = _f32(x)
    inv = np.float32(1.0) / np.float32(scale)
    lo, hi = QRANGE[qdtype]
    if qdtype == torch.qint32:
        v = np.rint((x * inv).astype(np.float32) + np.float32(zero_point)).astype(np.float32)
        return _clamp_to_int(v, qdtype, lo)
    # fma: the exact product x*inv is representable in float64 (24+24 bits), then one rounding to float32
    v = (x.astype(np.float64) * np.float64(inv) + zero_point).astype(np.float32)
    return _clamp_to_int(np.rint(v), qdtype, hi)


def quantize_per_channel_ref(x, scales, zero_points, axis, qdtype):
    """q = clamp(round_half_even(float32(float32(x*inv_c) + zp_c))); NaN -> 0 (8-bit) / INT32_MIN."""
    x = _f32(x)
    shape = [1] * x.ndim
    shape[axis] = -1
    inv = (np.float32(1.0) / np.asarray(scales, dtype=np.float64).astype(np.float32)).reshape(shape)
    zp = np.asarray(zero_points, dtype=np.float32).reshape(shape)
    v = np.rint((x * inv).astype(np.float32) + zp).astype(np.float32)
    lo, _ = QRANGE[qdtype]
    return _clamp_to_int(v, qdtype, 0 if qdtype != torch.qint32 else lo)


def dequantize_per_tensor_ref(q, scale, zero_point):
    """x = float32(q - zp) * float32(scale)."""
    d = (np.asarray(q, dtype=np.int64) - zero_point).astype(np.float32)
    return d * np.float32(scale)


def dequantize_per_channel_ref(q, scales, zero_points, axis):
    """x = float32(float64(q - zp_c) * float64(scale_c))."""
    q = np.asarray(q, dtype=np.int64)
    shape = [1] * q.ndim
    shape[axis] = -1
    s = np.asarray(scales, dtype=np.float64).reshape(shape)
    z = np.asarray(zero_points, dtype=np.int64).reshape(shape)
    return ((q - z).astype(np.float64) * s).astype(np.float32)


def dequantize_ref(qt: torch.Tensor) -> np.ndarray:
    """Reference dequantize of a torch quantized tensor (reads int_repr and qparams only)."""
    q = qt.int_repr().numpy()
    if qt.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        return dequantize_per_tensor_ref(q, qt.q_scale(), qt.q_zero_point())
    return dequantize_per_channel_ref(q, qt.q_per_channel_scales().numpy(),
                                      qt.q_per_channel_zero_points().numpy(), qt.q_per_channel_axis())


def requantize_ref(real, scale, zero_point, qdtype):
    """Float64 reference for requantizing ops: round_half_even(real / scale) + zp, clamped.
    Requantizing kernels must be within 1 step of this."""
    lo, hi = QRANGE[qdtype]
    return np.clip(np.rint(np.asarray(real, dtype=np.float64) / scale) + zero_point, lo, hi).astype(np.int64)


def assert_within_steps(actual_q: torch.Tensor, expected_int, steps=1, what=""):
    """int_repr of actual within `steps` quantization steps of the expected integers."""
    a = actual_q.int_repr().numpy().astype(np.int64) if actual_q.is_quantized else np.asarray(actual_q, np.int64)
    e = np.asarray(expected_int, dtype=np.int64)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
    if a.size:
        d = np.abs(a - e).max()
        assert d <= steps, f"{what}: max difference {d} steps > {steps}"


# ---------------------------------------------------------------------------
# elementwise: add / mul / cat / comparators
# ---------------------------------------------------------------------------



# ---------------------------------------------------------------------------
# sorting and reductions
# ---------------------------------------------------------------------------



# ---------------------------------------------------------------------------
# activations and normalization
# ---------------------------------------------------------------------------

def quantize_bound_ref(value, scale, zero_point, qdtype):
    """aten's quantize_val of one scalar bound (relu6 / clamp):
    clamp(round_half_even(float32(float32(value) * inv) + float32(zp))), inv = float32(1/float32(scale))."""
    inv = np.float32(1.0) / np.float32(scale)
    v = np.float32(np.float32(value) * inv) + np.float32(zero_point)
    lo, hi = QRANGE[qdtype]
    return int(np.clip(np.rint(np.float64(np.float32(v))), lo, hi))


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
}


def activation_ref(name, qt, output_scale, output_zero_point, **params):
    """Float64 activation of the dequantized input, requantized to the output qparams."""
    x = dequantize_ref(qt).astype(np.float64)
    with np.errstate(over="ignore"):
        y = ACTIVATIONS[name](x, **params)
    return requantize_ref(y, output_scale, output_zero_point, qt.dtype)


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


def batch_norm2d_ref(qt, weight, bias, mean, var, eps, output_scale, output_zero_point):
    x = dequantize_ref(qt).astype(np.float64)
    c = x.shape[1]
    sh = (1, c, 1, 1)
    w = np.ones(c) if weight is None else np.asarray(weight, dtype=np.float64)
    b = np.zeros(c) if bias is None else np.asarray(bias, dtype=np.float64)
    m = np.asarray(mean, dtype=np.float64)
    v = np.asarray(var, dtype=np.float64)
    y = (x - m.reshape(sh)) / np.sqrt(v.reshape(sh) + eps) * w.reshape(sh) + b.reshape(sh)
    return requantize_ref(y, output_scale, output_zero_point, qt.dtype)




# ---------------------------------------------------------------------------
# pooling and upsampling
# ---------------------------------------------------------------------------



# ---------------------------------------------------------------------------
# linear
# ---------------------------------------------------------------------------



# ---------------------------------------------------------------------------
# convolution
# ---------------------------------------------------------------------------
