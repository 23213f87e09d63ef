"""qplugin softmax, layer_norm, group_norm, instance_norm, batch_norm2d / 3d (+ relu): within 1 step of the float64
references (test/reference.py) and of torch's quantized kernels; every memory
layout and kernel path gives identical results."""

import numpy as np
import pytest
import torch

import reference as ref

q = torch.ops.qplugin
tq = torch.ops.quantized

DTYPES = [torch.quint8, torch.qint8, torch.qint32]
ZP = {torch.quint8: 120, torch.qint8: -5, torch.qint32: 17}
SM_ZP = {torch.quint8: 0, torch.qint8: -128, torch.qint32: 0}


def _q(x, scale, zp, dt):
    return torch.quantize_per_tensor(x, scale, zp, dt)


def _ints(t):
    return t.int_repr().numpy().astype(np.int64)


def _within(a, b, steps=1, what=""):
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    assert a.shape == b.shape, what
    if a.size:
        d = np.abs(a - b).max()
        assert d <= steps, f"{what}: {d} steps"


def _layouts(qx):
    cl = qx.contiguous(memory_format=torch.channels_last)
    ints = qx.int_repr()
    big = torch.stack([ints, torch.zeros_like(ints)], dim=-1).flatten(-2)
    strided = torch._make_per_tensor_quantized_tensor(big, qx.q_scale(), qx.q_zero_point())[..., ::2]
    assert not strided.is_contiguous() and torch.equal(strided.int_repr(), ints)
    return {"contiguous": qx, "channels_last": cl, "strided": strided}


def _paths_equal(fn):
    """fn() gives the same quantized result on every kernel path (scalar reference first)."""
    import torch_qplugin
    from torch_qplugin import _isa

    outs = []
    for isa in _isa.supported_isas():
        with torch_qplugin.kernel_isa(isa):
            outs.append(fn())
    for o in outs[1:]:
        assert torch.equal(o.int_repr(), outs[0].int_repr())
    return outs[0]


# ----------------------------------------------------------------------------- softmax
@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, 2, 3, -1])
@pytest.mark.parametrize("scale", [0.05, 0.2])
def test_softmax_vs_reference_and_torch(isa, dt, dim, scale):
    qx = _q(torch.randn(3, 6, 5, 17) * 3, scale, ZP[dt], dt)
    s, z = 1.0 / 256, SM_ZP[dt]
    out = q.softmax(qx, dim, s, z)
    assert out.dtype == dt and out.q_scale() == s and out.q_zero_point() == z
    _within(_ints(out), ref.softmax_ref(qx, dim, s, z), 1, "softmax vs reference")
    _within(_ints(out), _ints(tq.softmax(qx, dim, s, z)), 1, "softmax vs torch")


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("dim", [1, -1])
def test_softmax_layouts_and_paths_identical(dt, dim):
    qx = _q(torch.randn(2, 7, 4, 9) * 4, 0.07, ZP[dt], dt)
    base = None
    for name, t in _layouts(qx).items():
        out = _paths_equal(lambda: q.softmax(t, dim, 0.004, SM_ZP[dt]))
        if name == "channels_last":
            assert out.is_contiguous(memory_format=torch.channels_last)
        base = _ints(out) if base is None else base
        np.testing.assert_array_equal(_ints(out), base, err_msg=name)


def test_softmax_large_and_parallel_shapes():
    # One outer block with a long inner extent (split across threads), and many rows.
    for shape, dim in [((1, 64, 40, 40), 1), ((300, 1000), -1), ((2, 3, 4097), 1)]:
        qx = _q(torch.randn(shape) * 3, 0.05, 128, torch.quint8)
        out = q.softmax(qx, dim, 1 / 256, 0)
        _within(_ints(out), ref.softmax_ref(qx, dim, 1 / 256, 0), 1, str(shape))


def test_softmax_empty_zero_dim_and_size_one():
    for shape in [(0,), (3, 0, 2), (0, 4)]:
        qx = _q(torch.randn(shape), 0.1, 10, torch.quint8)
        out = q.softmax(qx, -1, 1 / 256, 0)
        assert out.shape == qx.shape
    qx = _q(torch.tensor(0.7), 0.1, 10, torch.quint8)
    out = q.softmax(qx, 0, 1 / 256, 0)
    assert out.shape == () and out.int_repr().item() == 255  # p = 1 clamps to qmax
    qx = _q(torch.randn(4, 1), 0.1, 10, torch.qint8)
    out = q.softmax(qx, 1, 1 / 128, -128)
    assert (out.int_repr() == 0).all()  # 1.0 / (1/128) - 128 = 0


# ----------------------------------------------------------------------------- layer_norm
@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("nshape", [[17], [5, 17], [3, 5, 17]])
def test_layer_norm_vs_reference_and_torch(isa, dt, affine, nshape):
    x = torch.randn(2, 3, 5, 17) * 2 + 0.5
    qx = _q(x, 0.03, ZP[dt], dt)
    w = torch.rand(nshape) + 0.5 if affine else None
    b = torch.randn(nshape) if affine else None
    s, z = 0.02, {torch.quint8: 128, torch.qint8: 0, torch.qint32: 3}[dt]
    out = q.layer_norm(qx, nshape, w, b, 1e-5, s, z)
    assert out.dtype == dt and out.q_scale() == s and out.q_zero_point() == z
    _within(_ints(out), ref.layer_norm_ref(qx, nshape, w, b, 1e-5, s, z), 1, "layer_norm vs reference")
    _within(_ints(out), _ints(tq.layer_norm(qx, nshape, w, b, 1e-5, s, z)), 1, "layer_norm vs torch")


def test_layer_norm_layouts_paths_and_edge_cases():
    qx = _q(torch.randn(2, 4, 6, 5) * 3, 0.05, 100, torch.quint8)
    w, b = torch.rand(5) + 0.5, torch.randn(5)
    base = None
    for name, t in _layouts(qx).items():
        out = _paths_equal(lambda: q.layer_norm(t, [5], w, b, 1e-5, 0.03, 128))
        base = _ints(out) if base is None else base
        np.testing.assert_array_equal(_ints(out), base, err_msg=name)
    # float64 parameters, empty normalized_shape (each element alone), constant rows, empty input
    out = q.layer_norm(qx, [5], w.double(), b.double(), 1e-5, 0.03, 128)
    np.testing.assert_array_equal(_ints(out), base)
    out = q.layer_norm(qx, [], None, None, 1e-5, 0.03, 128)
    _within(_ints(out), ref.layer_norm_ref(qx, [], None, None, 1e-5, 0.03, 128), 1, "empty normalized_shape")
    const = _q(torch.full((3, 8), 0.5), 0.05, 100, torch.quint8)
    out = q.layer_norm(const, [8], None, torch.full((8,), 0.3), 1e-5, 0.03, 128)
    assert (out.int_repr() == 138).all()
    empty = _q(torch.randn(0, 8), 0.05, 100, torch.quint8)
    assert q.layer_norm(empty, [8], None, None, 1e-5, 0.03, 128).shape == (0, 8)


# ----------------------------------------------------------------------------- batch_norm2d
def _bn_params(c, g=None):
    return (torch.rand(c) + 0.5, torch.randn(c), torch.randn(c) * 0.5, torch.rand(c) + 0.3)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", [(2, 6, 5, 7), (1, 33, 1, 1), (3, 16, 9, 4)])
def test_batch_norm2d_vs_reference_and_torch(isa, dt, shape):
    qx = _q(torch.randn(shape) * 2, 0.04, ZP[dt], dt)
    w, b, m, v = _bn_params(shape[1])
    s, z = 0.05, {torch.quint8: 128, torch.qint8: 0, torch.qint32: -7}[dt]
    out = q.batch_norm2d(qx, w, b, m, v, 1e-5, s, z)
    assert out.dtype == dt and out.q_scale() == s and out.q_zero_point() == z
    _within(_ints(out), ref.batch_norm2d_ref(qx, w, b, m, v, 1e-5, s, z), 1, "batch_norm2d vs reference")
    _within(_ints(out), _ints(tq.batch_norm2d(qx, w, b, m, v, 1e-5, s, z)), 1, "batch_norm2d vs torch")
    out = q.batch_norm2d(qx, None, None, m, v, 1e-3, s, z)
    _within(_ints(out), ref.batch_norm2d_ref(qx, None, None, m, v, 1e-3, s, z), 1, "no weight / bias")


@pytest.mark.parametrize("dt", DTYPES)
def test_batch_norm2d_layouts_and_paths_identical(dt):
    # 70 channels: channels_last rows run the 4-vector loops of every ISA, then a 1-vector step, then scalars
    qx = _q(torch.randn(2, 70, 5, 6) * 2, 0.04, ZP[dt], dt)
    w, b, m, v = _bn_params(70)
    base = None
    for name, t in _layouts(qx).items():
        out = _paths_equal(lambda: q.batch_norm2d(t, w, b, m, v, 1e-5, 0.05, 3))
        if name == "channels_last":
            assert out.is_contiguous(memory_format=torch.channels_last)
        base = _ints(out) if base is None else base
        np.testing.assert_array_equal(_ints(out), base, err_msg=name)

    # The parameters are read in place: float64 ones and strided views (every other element of a
    # longer tensor) give the same bytes as contiguous float32 ones.
    def strided(t):
        wide = torch.zeros(2 * t.numel(), dtype=t.dtype)
        wide[::2] = t
        return wide[::2]

    for params in (
        [p.double() for p in (w, b, m, v)],
        [strided(p) for p in (w, b, m, v)],
        [strided(p.double()) for p in (w, b, m, v)],
    ):
        assert not params[0].is_contiguous() or params[0].dtype == torch.float64
        np.testing.assert_array_equal(_ints(q.batch_norm2d(qx, *params, 1e-5, 0.05, 3)), base)
    empty = _q(torch.randn(0, 70, 5, 6), 0.04, ZP[dt], dt)
    assert q.batch_norm2d(empty, w, b, m, v, 1e-5, 0.05, 3).shape == empty.shape


@pytest.mark.parametrize("dt", [torch.quint8, torch.qint8])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("bias_scale", [1.0, 1e4, 1e10], ids=["in-range", "saturating", "beyond-2^30"])
def test_batch_norm_saturation_paths_identical(dt, relu, bias_scale):
    # The 8-bit kernels clamp by the saturating pack when every |q * a + b| < 2^30 and in float
    # otherwise: outputs far outside the range (both signs) and a relu floor give the same bytes
    # on every path, and the reference's.
    qx = _q(torch.randn(2, 70, 5, 6) * 2, 0.04, ZP[dt], dt)
    w, b, m, v = _bn_params(70)
    b = b * bias_scale
    fn = q.batch_norm2d_relu if relu else q.batch_norm2d
    for t in (qx, qx.contiguous(memory_format=torch.channels_last)):
        out = _paths_equal(lambda: fn(t, w, b, m, v, 1e-5, 0.05, 3))
        _within(_ints(out), ref.batch_norm_ref(qx, w, b, m, v, 1e-5, 0.05, 3, relu), 1, "vs reference")
        if bias_scale > 1:
            lo, hi = (
                (3, 255)
                if relu and dt == torch.quint8
                else (0, 255)
                if dt == torch.quint8
                else ((3, 127) if relu else (-128, 127))
            )
            assert ((_ints(out) == lo) | (_ints(out) == hi)).mean() > 0.5, "the case should saturate"


# ----------------------------------------------------------------------------- batch_norm3d, *_relu
@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("name", ["batch_norm3d", "batch_norm2d_relu", "batch_norm3d_relu"])
def test_batch_norm_3d_and_relu_vs_reference_and_torch(isa, dt, name):
    shape = (2, 11, 3, 4, 5) if "3d" in name else (2, 11, 6, 7)
    qx = _q(torch.randn(shape) * 2, 0.04, ZP[dt], dt)
    w, b, m, v = _bn_params(shape[1])
    s, z = 0.05, {torch.quint8: 128, torch.qint8: 0, torch.qint32: -7}[dt]
    relu = name.endswith("_relu")
    out = getattr(q, name)(qx, w, b, m, v, 1e-5, s, z)
    assert out.dtype == dt and out.q_scale() == s and out.q_zero_point() == z
    if relu:
        assert (out.int_repr() >= z).all()
    _within(_ints(out), ref.batch_norm_ref(qx, w, b, m, v, 1e-5, s, z, relu), 1, name + " vs reference")
    _within(_ints(out), _ints(getattr(tq, name)(qx, w, b, m, v, 1e-5, s, z)), 1, name + " vs torch")
    out = getattr(q, name)(qx, None, None, m, v, 1e-3, s, z)
    _within(_ints(out), ref.batch_norm_ref(qx, None, None, m, v, 1e-3, s, z, relu), 1, "no weight / bias")


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("name", ["batch_norm3d", "batch_norm3d_relu"])
def test_batch_norm3d_layouts_and_paths_identical(dt, name):
    qx = _q(torch.randn(2, 37, 3, 4, 5) * 2, 0.04, ZP[dt], dt)
    w, b, m, v = _bn_params(37)
    cl = qx.contiguous(memory_format=torch.channels_last_3d)
    base = None
    for label, t in [("contiguous", qx), ("channels_last_3d", cl), ("strided", qx[:, :, :, :, ::2])]:
        out = _paths_equal(lambda: getattr(q, name)(t, w, b, m, v, 1e-5, 0.05, 3))
        if label == "channels_last_3d":
            assert out.is_contiguous(memory_format=torch.channels_last_3d)
        if label == "strided":
            np.testing.assert_array_equal(_ints(out), base[:, :, :, :, ::2], err_msg=label)
            continue
        base = _ints(out) if base is None else base
        np.testing.assert_array_equal(_ints(out), base, err_msg=label)
    empty = _q(torch.randn(0, 37, 2, 5, 6), 0.04, ZP[dt], dt)
    assert getattr(q, name)(empty, w, b, m, v, 1e-5, 0.05, 3).shape == empty.shape


# ----------------------------------------------------------------------------- group_norm, instance_norm
@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize(
    "shape,groups", [((2, 12, 5, 7), 4), ((3, 6, 11), 1), ((1, 8, 3, 4, 5), 8), ((2, 9, 40, 3), 3)]
)
def test_group_norm_vs_reference_and_torch(isa, dt, affine, shape, groups):
    qx = _q(torch.randn(shape) * 2 + 0.5, 0.03, ZP[dt], dt)
    c = shape[1]
    w = torch.rand(c) + 0.5 if affine else None
    b = torch.randn(c) if affine else None
    s, z = 0.02, {torch.quint8: 128, torch.qint8: 0, torch.qint32: 3}[dt]
    out = q.group_norm(qx, groups, w, b, 1e-5, s, z)
    assert out.dtype == dt and out.q_scale() == s and out.q_zero_point() == z and out.shape == qx.shape
    _within(_ints(out), ref.group_norm_ref(qx, groups, w, b, 1e-5, s, z), 1, "group_norm vs reference")
    _within(_ints(out), _ints(tq.group_norm(qx, groups, w, b, 1e-5, s, z)), 1, "group_norm vs torch")
    out = q.instance_norm(qx, w, b, 1e-5, s, z)
    _within(_ints(out), ref.instance_norm_ref(qx, w, b, 1e-5, s, z), 1, "instance_norm vs reference")
    _within(_ints(out), _ints(tq.instance_norm(qx, w, b, 1e-5, s, z)), 1, "instance_norm vs torch")


@pytest.mark.parametrize("dt", DTYPES)
def test_group_norm_layouts_paths_and_edge_cases(dt):
    qx = _q(torch.randn(2, 8, 9, 13) * 3, 0.05, ZP[dt], dt)
    w, b = torch.rand(8) + 0.5, torch.randn(8)
    for fn in (
        lambda t, w, b: q.group_norm(t, 2, w, b, 1e-5, 0.03, 5),
        lambda t, w, b: q.instance_norm(t, w, b, 1e-5, 0.03, 5),
    ):
        base = None
        for name, t in _layouts(qx).items():
            out = _paths_equal(lambda: fn(t, w, b))
            base = _ints(out) if base is None else base
            np.testing.assert_array_equal(_ints(out), base, err_msg=name)
        # float64 parameters give the same result
        np.testing.assert_array_equal(_ints(fn(qx, w.double(), b.double())), base)
    # constant blocks: the normalized value is 0, so y = bias exactly
    const = _q(torch.full((2, 4, 3, 3), 0.5), 0.05, 10, torch.quint8)
    out = q.group_norm(const, 2, None, torch.full((4,), 0.3), 1e-5, 0.03, 128)
    assert (out.int_repr() == 138).all()
    for shape in [(0, 4, 3, 3), (2, 4, 0, 3)]:
        empty = _q(torch.randn(shape), 0.05, 10, torch.quint8)
        assert q.group_norm(empty, 2, None, None, 1e-5, 0.03, 128).shape == shape
        assert q.instance_norm(empty, None, None, 1e-5, 0.03, 128).shape == shape


@pytest.mark.parametrize("dt", [torch.quint8, torch.qint8])
def test_norm_statistics_exact_on_long_extreme_rows(isa, dt):
    # rows longer than one int32 accumulation block of the vector sums (4096 vectors), every value at
    # the dtype's extremes: the sums stay exact (a wrapped int32 lane would move the mean / variance)
    lo, hi = (0, 255) if dt == torch.quint8 else (-128, 127)
    n = 4096 * 16 * 10 + 37  # AVX2 lanes: 40962 madds of up to 2 * 255^2 > 2^32 without the blocks
    ints = torch.full((2, 1, n), hi, dtype=torch.uint8 if dt == torch.quint8 else torch.int8)
    ints[0, 0, ::3] = lo
    ints[1, 0, ::2] = hi - 1  # variance 1/4 next to a huge sum of squares
    qx = torch._make_per_tensor_quantized_tensor(ints, 0.05, 0)
    assert qx.dtype == dt
    z = 128 if dt == torch.quint8 else 0
    out = q.layer_norm(qx, [n], None, None, 1e-5, 0.02, z)
    _within(_ints(out), ref.layer_norm_ref(qx, [n], None, None, 1e-5, 0.02, z), 1, "layer_norm")
    assert set(out.int_repr()[1].unique().tolist()) == {z - 50, z + 50}  # +-1 standard deviation
    out = q.group_norm(qx, 1, None, None, 1e-5, 0.02, z)
    _within(_ints(out), ref.group_norm_ref(qx, 1, None, None, 1e-5, 0.02, z), 1, "group_norm")


def test_group_norm_many_rows_parallel():
    # rows split across threads: row0 must pick each block's channels
    qx = _q(torch.randn(64, 32, 3, 3) * 2, 0.05, 100, torch.quint8)
    w, b = torch.rand(32) + 0.5, torch.randn(32)
    out = q.group_norm(qx, 8, w, b, 1e-5, 0.03, 128)
    _within(_ints(out), ref.group_norm_ref(qx, 8, w, b, 1e-5, 0.03, 128), 1, "group_norm")


@pytest.mark.parametrize("seed", range(4))
def test_norm_random_sweep(seed):
    g = torch.Generator().manual_seed(seed)
    dt = DTYPES[seed % 3]
    n, c, h, wd = (int(v) for v in torch.randint(1, 12, (4,), generator=g))
    scale = float(torch.rand(1, generator=g)) * 0.1 + 1e-3
    qx = _q(torch.randn(n, c, h, wd, generator=g) * 3, scale, ZP[dt], dt)
    w, b, m, v = (
        torch.rand(c, generator=g) + 0.5,
        torch.randn(c, generator=g),
        torch.randn(c, generator=g),
        torch.rand(c, generator=g) + 0.2,
    )
    _within(
        _ints(q.batch_norm2d(qx, w, b, m, v, 1e-5, 0.03, 1)),
        ref.batch_norm2d_ref(qx, w, b, m, v, 1e-5, 0.03, 1),
        1,
        "bn",
    )
    _within(
        _ints(q.layer_norm(qx, [h, wd], None, None, 1e-5, 0.03, 1)),
        ref.layer_norm_ref(qx, [h, wd], None, None, 1e-5, 0.03, 1),
        1,
        "ln",
    )
    _within(_ints(q.softmax(qx, 1, 0.004, SM_ZP[dt])), ref.softmax_ref(qx, 1, 0.004, SM_ZP[dt]), 1, "softmax")


# ----------------------------------------------------------------------------- errors
def test_errors():
    x = torch.randn(2, 3, 4, 5)
    qx = _q(x, 0.1, 10, torch.quint8)
    w, b, m, v = _bn_params(3)
    with pytest.raises(
        RuntimeError, match=r"qplugin::softmax: qx should be a quantized tensor .*non-quantized tensor of dtype Float"
    ):
        q.softmax(x, 1, 0.1, 0)
    with pytest.raises(RuntimeError, match=r"qplugin::layer_norm: input should be a quantized tensor"):
        q.layer_norm(x, [5], None, None, 1e-5, 0.1, 0)
    with pytest.raises(RuntimeError, match=r"qplugin::batch_norm2d: qx should be a quantized tensor"):
        q.batch_norm2d(x, w, b, m, v, 1e-5, 0.1, 0)
    with pytest.raises(IndexError, match=r"qplugin::softmax: dim should be in \[-4, 3\] for a tensor of 4 dims, got 4"):
        q.softmax(qx, 4, 0.1, 0)
    with pytest.raises(ValueError, match=r"qplugin::softmax: output_scale should be a positive finite number, got -1"):
        q.softmax(qx, 1, -1.0, 0)
    with pytest.raises(
        ValueError, match=r"qplugin::layer_norm: output_zero_point should be in \[0, 255\] for QUInt8, got -1"
    ):
        q.layer_norm(qx, [5], None, None, 1e-5, 0.1, -1)
    with pytest.raises(
        ValueError,
        match=r"qplugin::layer_norm: normalized_shape should match the last dims of input \(shape \[2, 3, 4, 5\]\), got \[4\]",
    ):
        q.layer_norm(qx, [4], None, None, 1e-5, 0.1, 0)
    with pytest.raises(ValueError, match=r"qplugin::layer_norm: normalized_shape should match .*got \[1, 2, 3, 4, 5\]"):
        q.layer_norm(qx, [1, 2, 3, 4, 5], None, None, 1e-5, 0.1, 0)
    with pytest.raises(ValueError, match=r"qplugin::layer_norm: weight should have shape \[4, 5\], got \[5\]"):
        q.layer_norm(qx, [4, 5], torch.ones(5), None, 1e-5, 0.1, 0)
    with pytest.raises(
        RuntimeError, match=r"qplugin::layer_norm: bias should be a float32 or float64 tensor, got dtype Long"
    ):
        q.layer_norm(qx, [5], None, torch.zeros(5, dtype=torch.long), 1e-5, 0.1, 0)
    with pytest.raises(ValueError, match=r"qplugin::layer_norm: eps should be a finite non-negative number, got -1"):
        q.layer_norm(qx, [5], None, None, -1.0, 0.1, 0)
    with pytest.raises(ValueError, match=r"qplugin::batch_norm2d: qx should be 4-D \[N, C, H, W\], got 3 dims"):
        q.batch_norm2d(qx[0], w, b, m, v, 1e-5, 0.1, 0)
    with pytest.raises(ValueError, match=r"qplugin::batch_norm2d: weight should have shape \[3\], got \[4\]"):
        q.batch_norm2d(qx, torch.ones(4), b, m, v, 1e-5, 0.1, 0)
    with pytest.raises(ValueError, match=r"qplugin::batch_norm2d: mean should have shape \[3\], got \[3, 1\]"):
        q.batch_norm2d(qx, w, b, m[:, None], v, 1e-5, 0.1, 0)
    with pytest.raises(
        RuntimeError, match=r"qplugin::batch_norm2d: var should be a float32 or float64 tensor, got dtype QUInt8"
    ):
        q.batch_norm2d(qx, w, b, m, _q(v, 0.1, 0, torch.quint8), 1e-5, 0.1, 0)
    with pytest.raises(
        ValueError,
        match=r"qplugin::batch_norm2d: var \+ eps should be positive and finite for every channel, got var\[1\] = -1",
    ):
        q.batch_norm2d(qx, w, b, m, torch.tensor([1.0, -1.0, 1.0]), 1e-5, 0.1, 0)
    with pytest.raises(ValueError, match=r"qplugin::batch_norm3d: qx should be 5-D \[N, C, D, H, W\], got 4 dims"):
        q.batch_norm3d(qx, w, b, m, v, 1e-5, 0.1, 0)
    with pytest.raises(RuntimeError, match=r"qplugin::batch_norm2d_relu: qx should be a quantized tensor"):
        q.batch_norm2d_relu(x, w, b, m, v, 1e-5, 0.1, 0)
    with pytest.raises(ValueError, match=r"qplugin::batch_norm3d_relu: var \+ eps should be positive"):
        q.batch_norm3d_relu(qx.unsqueeze(2), w, b, m, torch.tensor([1.0, float("nan"), 1.0]), 1e-5, 0.1, 0)
    with pytest.raises(RuntimeError, match=r"qplugin::group_norm: input should be a quantized tensor"):
        q.group_norm(x, 1, None, None, 1e-5, 0.1, 0)
    with pytest.raises(RuntimeError, match=r"qplugin::instance_norm: input should be a quantized tensor"):
        q.instance_norm(x, None, None, 1e-5, 0.1, 0)
    with pytest.raises(
        ValueError,
        match=r"qplugin::group_norm: num_groups should be positive and divide the number of channels 3, got 2",
    ):
        q.group_norm(qx, 2, None, None, 1e-5, 0.1, 0)
    with pytest.raises(ValueError, match=r"qplugin::group_norm: num_groups should be positive .*got 0"):
        q.group_norm(qx, 0, None, None, 1e-5, 0.1, 0)
    with pytest.raises(ValueError, match=r"qplugin::group_norm: weight should have shape \[3\], got \[4\]"):
        q.group_norm(qx, 3, torch.ones(4), None, 1e-5, 0.1, 0)
    with pytest.raises(
        ValueError, match=r"qplugin::instance_norm: input should have at least 2 dims \[N, C, ...\], got 1 dims"
    ):
        q.instance_norm(qx[0, 0, 0], None, None, 1e-5, 0.1, 0)
    with pytest.raises(
        ValueError, match=r"qplugin::instance_norm: eps should be a finite non-negative number, got nan"
    ):
        q.instance_norm(qx, None, None, float("nan"), 0.1, 0)
    with pytest.raises(
        ValueError, match=r"qplugin::group_norm: output_scale should be a positive finite number, got 0"
    ):
        q.group_norm(qx, 1, None, None, 1e-5, 0.0, 0)
    pc = torch.quantize_per_channel(
        x, torch.ones(2, dtype=torch.double) * 0.1, torch.zeros(2, dtype=torch.long), 0, torch.quint8
    )
    with pytest.raises(
        RuntimeError,
        match=r"qplugin::softmax: qx should be a per-tensor quantized tensor, got qscheme per_channel_affine",
    ):
        q.softmax(pc, 1, 0.1, 0)


def test_opcheck():
    qx = _q(torch.randn(2, 3, 4, 5), 0.05, 100, torch.quint8)
    w, b, m, v = _bn_params(3)
    samples = [
        (q.softmax.default, (qx, 1, 1 / 256, 0)),
        (q.layer_norm.default, (qx, [4, 5], torch.ones(4, 5), torch.zeros(4, 5), 1e-5, 0.05, 100)),
        (q.layer_norm.default, (qx, [5], None, None, 1e-5, 0.05, 100)),
        (q.batch_norm2d.default, (qx, w, b, m, v, 1e-5, 0.05, 100)),
        (q.batch_norm2d_relu.default, (qx, w, b, m, v, 1e-5, 0.05, 100)),
        (q.batch_norm3d.default, (qx.unsqueeze(2), w, b, m, v, 1e-5, 0.05, 100)),
        (q.batch_norm3d_relu.default, (qx.unsqueeze(2), w, b, m, v, 1e-5, 0.05, 100)),
        (q.group_norm.default, (qx, 3, w, b, 1e-5, 0.05, 100)),
        (q.instance_norm.default, (qx, None, None, 1e-5, 0.05, 100)),
    ]
    for op, args in samples:
        torch.library.opcheck(op, args, test_utils=("test_schema", "test_autograd_registration"))
