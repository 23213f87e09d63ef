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



# ---------------------------------------------------------------------------
# pooling and upsampling
# ---------------------------------------------------------------------------



# ---------------------------------------------------------------------------
# linear
# ---------------------------------------------------------------------------



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
        sl = tuple(slice(tap[i] * dilation[i], tap[i] * dilation[i] + (out[i] - 1) * stride[i] + 1, stride[i])
                   for i in range(nd))
        xs = xp[(slice(None), slice(None)) + sl]
        for g in range(groups):
            wg = w[(slice(g * ocg, (g + 1) * ocg), slice(None)) + tuple(tap)]  # (ocg, icg)
            y[:, g * ocg:(g + 1) * ocg] += np.einsum("nc...,oc->no...", xs[:, g * icg:(g + 1) * icg], wg)
    if b is not None:
        y += np.asarray(b, dtype=np.float64).reshape((1, -1) + (1,) * nd)
    return y


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
    real = conv_ref(exact_real(qx), exact_real(qw), None if b is None else b.double().numpy(),
                    stride, padding, dilation, groups)
    if qaccum is not None:
        real = real + exact_real(qaccum)
    if relu:
        real = np.maximum(real, 0.0)
    return requantize_ref(real, out_scale, out_zp, torch.quint8)
