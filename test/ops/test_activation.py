"""qplugin activations: relu, relu6, clamp (exact integer clamps), leaky_relu,
hardswish, hardsigmoid, sigmoid, elu (256-entry tables from the float64
definition). Compared with test/reference.py and with torch's own kernels (relu6 / clamp, whose
bounds are quantized floats, where torch_oracle.quantize_exact says torch quantizes by our rule)."""

import numpy as np
import pytest
import torch

import reference as ref
from torch_oracle import quantize_exact

q = torch.ops.qplugin
tq = torch.ops.quantized

DTYPES = [torch.quint8, torch.qint8, torch.qint32]
ZP = {torch.quint8: 120, torch.qint8: -5, torch.qint32: 17}


def _q(x, scale, zp, dt):
    return torch.quantize_per_tensor(x, scale, zp, dt)


def _all_levels(dt, scale=0.05, zp=None, extra=0):
    """Every 8-bit level (several times, odd length to hit vector tails), or a spread for qint32."""
    zp = ZP[dt] if zp is None else zp
    if dt == torch.qint32:
        ints = torch.randint(-2000, 2000, (3 * 257 + extra,), dtype=torch.int32)
        ints[:4] = torch.tensor([-(2**31), 2**31 - 1, 0, zp], dtype=torch.int32)
    else:
        lo, hi = ref.QRANGE[dt]
        ints = torch.arange(lo, hi + 1, dtype=torch.int32).repeat(3)
        ints = torch.cat([ints, torch.randint(lo, hi + 1, (extra + 67,), dtype=torch.int32)])
    return torch._make_per_tensor_quantized_tensor(ints.to(ref.INT_DTYPE[dt]), scale, zp)


def _layouts(qx):
    """The same values as contiguous, channels_last and a strided (non-dense) view."""
    cl = qx.contiguous(memory_format=torch.channels_last)
    ints = qx.int_repr()
    big = torch.stack([ints, torch.zeros_like(ints)], dim=-1).flatten(-2)  # values at even positions
    strided = torch._make_per_tensor_quantized_tensor(big, qx.q_scale(), qx.q_zero_point())[..., ::2]
    assert not strided.is_contiguous() and torch.equal(strided.int_repr(), ints)
    return {"contiguous": qx, "channels_last": cl, "strided": strided}


def _ints(t):
    return t.int_repr().numpy().astype(np.int64)


def _assert_same_q(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.q_scale() == b.q_scale() and a.q_zero_point() == b.q_zero_point()
    assert torch.equal(a.int_repr(), b.int_repr())


def _assert_same_q_where_exact(a, b):
    """_assert_same_q for a torch result whose clamp bounds torch quantized from floats: only where
    torch quantizes by our rule (a finite bound well inside int32 steps: every element kept)."""
    if quantize_exact(a.dtype):
        _assert_same_q(a, b)


# ----------------------------------------------------------------------------- clamps
@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("scale", [0.05, 4.0, 2.4, 0.001])
def test_relu_relu6_clamp_exact(isa, dt, scale):
    for zp in sorted({ZP[dt], 1, 3} if dt != torch.quint8 else {ZP[dt], 1, 3, 0}):
        qx = _all_levels(dt, scale, zp)
        lo, hi = ref.QRANGE[dt]
        six = ref.quantize_bound_ref(6.0, scale, zp, dt)
        cmin, cmax = ref.quantize_bound_ref(-0.4, scale, zp, dt), ref.quantize_bound_ref(0.7, scale, zp, dt)
        cases = [
            (q.relu(qx), zp, hi, torch.relu(qx)),
            (q.relu6(qx), zp, six, tq.relu6(qx)),
            (q.clamp(qx, -0.4, 0.7), cmin, cmax, torch.clamp(qx, -0.4, 0.7)),
            (q.clamp(qx, -0.4), cmin, hi, torch.clamp(qx, min=-0.4)),
            (q.clamp(qx, None, 0.7), lo, cmax, torch.clamp(qx, max=0.7)),
            (q.clamp(qx, 0.7, -0.4), cmax, cmin, torch.clamp(qx, 0.7, -0.4)),  # min > max: all max, as torch
        ]
        for i, (out, l, h, theirs) in enumerate(cases):
            assert out.q_scale() == qx.q_scale() and out.q_zero_point() == zp and out.dtype == dt
            np.testing.assert_array_equal(_ints(out), ref.clamp_int_ref(qx, l, h))
            if i == 0:  # relu: no float bound
                _assert_same_q(out, theirs)
            else:
                _assert_same_q_where_exact(out, theirs)


def test_relu6_bound_ties_round_before_the_zero_point():
    # 6 / 4.0 = 1.5 exactly: round(1.5) + zp = 3 (the quantize rule); torch 2.13 rounded 1.5 + zp = 2.5
    # to 2.
    qx = _q(torch.linspace(-20, 40, 61), 4.0, 1, torch.quint8)
    out = q.relu6(qx)
    assert out.int_repr().max().item() == 3
    _assert_same_q_where_exact(out, tq.relu6(qx))


@pytest.mark.parametrize("dt", DTYPES)
def test_clamp_layouts_identical(isa, dt):
    qx = _q(torch.randn(2, 5, 6, 7) * 3, 0.05, ZP[dt], dt)
    expect = None
    for name, t in _layouts(qx).items():
        for out in (q.relu(t), q.relu6(t), q.clamp(t, -1.0, 1.0)):
            if name == "channels_last":
                assert out.is_contiguous(memory_format=torch.channels_last)
        got = [_ints(q.relu(t)), _ints(q.relu6(t)), _ints(q.clamp(t, -1.0, 1.0))]
        if expect is None:
            expect = got
        for g, e in zip(got, expect):
            np.testing.assert_array_equal(g, e, err_msg=name)


def test_relu6_inplace():
    x = torch.randn(3, 4, 5) * 5
    for make in (lambda t: t, lambda t: t.transpose(0, 2)):
        qx = make(_q(x, 0.05, 100, torch.quint8))
        expect = ref.clamp_int_ref(qx, 100, ref.quantize_bound_ref(6.0, 0.05, 100, torch.quint8))
        theirs = tq.relu6(qx.clone())
        out = q.relu6(qx, True)
        assert out.data_ptr() == qx.data_ptr()
        np.testing.assert_array_equal(_ints(qx), expect)
        _assert_same_q_where_exact(qx, theirs)
    qx = _q(x, 0.05, 100, torch.quint8)
    before = qx.int_repr().clone()
    q.relu6(qx, False)
    assert torch.equal(qx.int_repr(), before)


# ----------------------------------------------------------------------------- tables
LUT_OPS = {
    # name: (qplugin call, torch call or None, reference params)
    "leaky_relu": (
        lambda t, s, z: q.leaky_relu(t, 0.1, False, s, z),
        lambda t, s, z: tq.leaky_relu(t, 0.1, False, s, z),
        dict(negative_slope=0.1),
    ),
    "hardswish": (lambda t, s, z: q.hardswish(t, s, z), lambda t, s, z: tq.hardswish(t, s, z), {}),
    "hardsigmoid": (lambda t, s, z: q.hardsigmoid(t, s, z), None, {}),
    "sigmoid": (lambda t, s, z: q.sigmoid(t, s, z), lambda t, s, z: tq.sigmoid(t, s, z), {}),
    "elu": (
        lambda t, s, z: q.elu(t, s, z, 1.3, 1.1, 0.8),
        lambda t, s, z: tq.elu(t, s, z, 1.3, 1.1, 0.8),
        dict(alpha=1.3, scale=1.1, input_scale=0.8),
    ),
    "celu": (lambda t, s, z: q.celu(t, s, z, 1.3), lambda t, s, z: tq.celu(t, s, z, 1.3), dict(alpha=1.3)),
    # threshold keeps the input's qparams: s, z below are the input's. torch compares the integers with
    # the threshold rounded to the grid; 0.31 lies below every tested scale's half step, where both agree
    "threshold": (
        lambda t, s, z: q.threshold(t, 0.31, -0.7),
        lambda t, s, z: tq.threshold(t, 0.31, -0.7),
        dict(threshold=0.31, value=-0.7),
    ),
}


def _out_qparams(name, dt, qx=None):
    if name == "threshold":
        return (qx.q_scale(), qx.q_zero_point())
    if name in ("sigmoid", "hardsigmoid"):
        return (1.0 / 256, {torch.quint8: 0, torch.qint8: -128, torch.qint32: 0}[dt])
    return (0.04, {torch.quint8: 60, torch.qint8: 10, torch.qint32: -3}[dt])


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("name", sorted(LUT_OPS))
@pytest.mark.parametrize("in_scale", [0.05, 0.013, 0.4])
def test_table_activations_vs_reference_and_torch(isa, dt, name, in_scale):
    ours, theirs, params = LUT_OPS[name]
    qx = _all_levels(dt, in_scale, extra=11)
    s, z = _out_qparams(name, dt, qx)
    out = ours(qx, s, z)
    assert out.dtype == dt and out.q_scale() == s and out.q_zero_point() == z
    expect = ref.activation_ref(name, qx, s, z, **params)
    ref.assert_within_steps(out, expect, 1, f"{name} vs float64 reference")
    # The tables are the float64 definition itself: exact but for ulp-level ties.
    assert (np.abs(_ints(out) - expect) > 0).mean() < 0.01
    if theirs is not None:
        # torch overflows on qint32's extreme levels (INT32_MIN -> INT32_MAX): compare the rest.
        keep = slice(2, None) if dt == torch.qint32 else slice(None)
        diff = np.abs(_ints(out)[keep] - _ints(theirs(qx, s, z))[keep])
        assert diff.max() <= 1, f"{name} vs torch: {diff.max()} steps"
    elif name == "hardsigmoid" and dt != torch.qint32:
        # torch's F.hardsigmoid picks these output qparams itself.
        t = torch.nn.functional.hardsigmoid(qx)
        assert (t.q_scale(), t.q_zero_point()) == (s, z)
        ref.assert_within_steps(out, _ints(t), 1, "hardsigmoid vs torch")


@pytest.mark.parametrize("dt", [torch.quint8, torch.qint8])
@pytest.mark.parametrize("vbmi", [True, False])
def test_table_paths_bit_identical_to_scalar(isa, dt, vbmi):
    """Vector table lookups (VBMI, VPSHUFB, AVX2) give the scalar reference's bits, all lengths."""
    prev = q._act_use_vbmi(vbmi)
    try:
        for n in [0, 1, 31, 32, 63, 64, 65, 127, 128, 129, 1000, 4099]:
            ints = torch.randint(*ref.QRANGE[dt], (n,), dtype=torch.int32) if n else torch.zeros(0, dtype=torch.int32)
            if n >= 256:
                ints[:256] = torch.arange(256) + ref.QRANGE[dt][0]
            qx = torch._make_per_tensor_quantized_tensor(ints.to(ref.INT_DTYPE[dt]), 0.07, ZP[dt])
            for name, (ours, _, params) in LUT_OPS.items():
                s, z = _out_qparams(name, dt, qx)
                got = ours(qx, s, z)
                import torch_qplugin

                with torch_qplugin.kernel_isa("scalar"):
                    want = ours(qx, s, z)
                _assert_same_q(got, want)
                if n:
                    np.testing.assert_array_equal(_ints(got), _table_apply(qx, name, s, z, params))
    finally:
        q._act_use_vbmi(prev)


def _table_apply(qx, name, s, z, params):
    """Expected output built as the table the kernel uses: f on each of the 256 levels."""
    dt = qx.dtype
    lo, hi = ref.QRANGE[dt]
    levels = torch._make_per_tensor_quantized_tensor(
        torch.arange(lo, hi + 1, dtype=torch.int32).to(ref.INT_DTYPE[dt]), qx.q_scale(), qx.q_zero_point()
    )
    table = ref.activation_ref(name, levels, s, z, **params)
    return table[_ints(qx) - lo]


def test_table_cache_follows_every_parameter(isa):
    # Each thread keeps its last 8-bit table for the next call with the same activation, input
    # qparams, output qparams, parameters, dtype and kernel path. Calls that differ in exactly one
    # of them, in an order where each follows another, must each get their own table: every
    # output equals the direct per-element evaluation (tensors of < 128 elements skip the table).
    g = torch.Generator().manual_seed(3)
    x = torch.randn(1000, generator=g) * 3
    qa = torch.quantize_per_tensor(x, 0.05, 128, torch.quint8)
    inputs = {
        "a": qa,
        "scale": torch.quantize_per_tensor(x, 0.04, 128, torch.quint8),
        "zp": torch.quantize_per_tensor(x, 0.05, 120, torch.quint8),
        "dtype": torch.quantize_per_tensor(x, 0.05, 0, torch.qint8),
    }
    calls = [
        ("a", lambda t: q.hardswish(t, 0.05, 128)),
        ("a", lambda t: q.hardswish(t, 0.06, 128)),
        ("a", lambda t: q.hardswish(t, 0.05, 127)),
        ("scale", lambda t: q.hardswish(t, 0.05, 128)),
        ("zp", lambda t: q.hardswish(t, 0.05, 128)),
        ("dtype", lambda t: q.hardswish(t, 0.05, 0)),
        ("a", lambda t: q.hardsigmoid(t, 0.05, 128)),
        ("a", lambda t: q.leaky_relu(t, 0.1, False, 0.05, 128)),
        ("a", lambda t: q.leaky_relu(t, 0.2, False, 0.05, 128)),
        ("a", lambda t: q.elu(t, 0.05, 128, 1.3, 1.1, 0.8)),
        ("a", lambda t: q.elu(t, 0.05, 128, 1.3, 1.2, 0.8)),
        ("a", lambda t: q.elu(t, 0.05, 128, 1.3, 1.1, 0.9)),
    ]
    expected = [torch.cat([f(inputs[k][i : i + 100]).int_repr() for i in range(0, 1000, 100)]) for k, f in calls]
    for order in (list(range(len(calls))), list(reversed(range(len(calls)))), [0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0]):
        for j in order:
            k, f = calls[j]
            assert torch.equal(f(inputs[k]).int_repr(), expected[j]), j


def test_vbmi_hook_reports_state():
    prev = q._act_use_vbmi()
    try:
        assert q._act_use_vbmi(False) is False
        with open("/proc/cpuinfo") as f:
            has = "avx512vbmi" in f.read()
        assert q._act_use_vbmi(True) is has
    finally:
        q._act_use_vbmi(prev)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("name", sorted(LUT_OPS))
def test_table_activations_layouts_identical(isa, dt, name):
    ours, _, _ = LUT_OPS[name]
    qx = _q(torch.randn(2, 3, 5, 9) * 4, 0.05, ZP[dt], dt)
    s, z = _out_qparams(name, dt, qx)
    base = None
    for lname, t in _layouts(qx).items():
        out = ours(t, s, z)
        if lname == "channels_last":
            assert out.is_contiguous(memory_format=torch.channels_last)
        if base is None:
            base = _ints(out)
        np.testing.assert_array_equal(_ints(out), base, err_msg=lname)


@pytest.mark.parametrize("dt", DTYPES)
def test_empty_and_zero_dim(dt):
    for shape in [(0,), (2, 0, 3), (0, 3, 4, 4)]:
        qx = _q(torch.randn(shape), 0.1, ZP[dt], dt)
        for out in (
            q.relu(qx),
            q.relu6(qx),
            q.clamp(qx, 0.0, 1.0),
            q.hardswish(qx, 0.1, 0),
            q.sigmoid(qx, 0.1, 0),
            q.elu(qx, 0.1, 0),
            q.leaky_relu(qx, 0.2, False, 0.1, 0),
            q.hardsigmoid(qx, 0.1, 0),
        ):
            assert out.shape == qx.shape and out.dtype == dt
    qx = _q(torch.tensor(-1.5), 0.1, 2, dt)
    assert q.relu(qx).shape == () and q.relu(qx).int_repr().item() == 2
    out = q.hardswish(qx, 0.1, 0)
    assert out.shape == ()
    np.testing.assert_array_equal(_ints(out), ref.activation_ref("hardswish", qx, 0.1, 0))


def test_threshold_compares_real_values():
    # x > threshold on the represented values: with scale 0.05, 0.35 > 0.33 passes (torch rounds 0.33 to
    # the grid point 0.35 first and replaces it by value)
    qx = _q(torch.tensor([0.30, 0.35, 0.40]), 0.05, 0, torch.quint8)
    out = q.threshold(qx, 0.33, 0.0)
    assert out.int_repr().tolist() == [0, 7, 8]
    np.testing.assert_array_equal(_ints(out), ref.activation_ref("threshold", qx, 0.05, 0, threshold=0.33, value=0.0))


def test_leaky_relu_inplace():
    x = torch.randn(4, 33) * 3
    qx = _q(x, 0.05, 100, torch.quint8)
    expect = ref.activation_ref("leaky_relu", qx, 0.05, 100, negative_slope=0.2)
    out = q.leaky_relu(qx, 0.2, True, 0.05, 100)
    assert out.data_ptr() == qx.data_ptr()
    np.testing.assert_array_equal(_ints(qx), expect)
    with pytest.raises(ValueError, match=r"qplugin::leaky_relu: inplace=True writes into qx, so output_scale"):
        q.leaky_relu(qx, 0.2, True, 0.1, 100)


@pytest.mark.parametrize("seed", range(6))
def test_random_sweep(seed):
    g = torch.Generator().manual_seed(seed)
    dt = DTYPES[seed % 3]
    lo, hi = ref.QRANGE[dt]
    shape = tuple(int(v) for v in torch.randint(1, 9, (int(torch.randint(1, 5, (1,), generator=g)),), generator=g))
    scale = float(torch.rand(1, generator=g)) * 0.2 + 1e-3
    zp = int(torch.randint(max(lo, -200), min(hi, 200) + 1, (1,), generator=g))
    qx = _q(torch.randn(shape, generator=g) * 4, scale, zp, dt)
    oscale = float(torch.rand(1, generator=g)) * 0.1 + 1e-3
    ozp = int(torch.randint(max(lo, -100), min(hi, 100) + 1, (1,), generator=g))
    for name, (ours, _, params) in LUT_OPS.items():
        s, z = (qx.q_scale(), qx.q_zero_point()) if name == "threshold" else (oscale, ozp)
        ref.assert_within_steps(ours(qx, s, z), ref.activation_ref(name, qx, s, z, **params), 1, name)


# ----------------------------------------------------------------------------- errors
def test_errors():
    x = torch.randn(4, 4)
    qx = _q(x, 0.1, 10, torch.quint8)
    for call, op, arg in [
        (lambda: q.relu(x), "relu", "qx"),
        (lambda: q.relu6(x), "relu6", "qx"),
        (lambda: q.clamp(x, 0.0), "clamp", "qx"),
        (lambda: q.hardswish(x, 0.1, 0), "hardswish", "input"),
        (lambda: q.hardsigmoid(x, 0.1, 0), "hardsigmoid", "input"),
        (lambda: q.sigmoid(x, 0.1, 0), "sigmoid", "qx"),
        (lambda: q.elu(x, 0.1, 0), "elu", "self"),
        (lambda: q.leaky_relu(x, 0.1, False, 0.1, 0), "leaky_relu", "qx"),
        (lambda: q.celu(x, 0.1, 0), "celu", "self"),
        (lambda: q.threshold(x, 0.1, 0.0), "threshold", "qx"),
    ]:
        with pytest.raises(
            RuntimeError,
            match=rf"qplugin::{op}: {arg} should be a quantized tensor .*got a non-quantized tensor of dtype Float",
        ):
            call()
    with pytest.raises(ValueError, match=r"qplugin::celu: alpha should be non-zero, got 0"):
        q.celu(qx, 0.1, 0, 0.0)
    with pytest.raises(ValueError, match=r"qplugin::threshold: value should be a finite number, got nan"):
        q.threshold(qx, 0.1, float("nan"))
    with pytest.raises(ValueError, match=r"qplugin::celu: output_scale should be a positive finite number, got 0"):
        q.celu(qx, 0.0, 0)
    pc = torch.quantize_per_channel(
        x, torch.ones(4, dtype=torch.double) * 0.1, torch.zeros(4, dtype=torch.long), 0, torch.quint8
    )
    with pytest.raises(
        RuntimeError, match=r"qplugin::relu: qx should be a per-tensor quantized tensor, got qscheme per_channel_affine"
    ):
        q.relu(pc)
    with pytest.raises(RuntimeError, match=r"qplugin::sigmoid: qx should be a per-tensor quantized tensor"):
        q.sigmoid(pc, 0.1, 0)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(
            ValueError, match=r"qplugin::hardswish: output_scale should be a positive finite number, got"
        ):
            q.hardswish(qx, bad, 0)
    with pytest.raises(
        ValueError, match=r"qplugin::sigmoid: output_zero_point should be in \[0, 255\] for QUInt8, got 256"
    ):
        q.sigmoid(qx, 0.1, 256)
    with pytest.raises(
        ValueError, match=r"qplugin::elu: output_zero_point should be in \[-128, 127\] for QInt8, got -129"
    ):
        q.elu(_q(x, 0.1, 0, torch.qint8), 0.1, -129)
    with pytest.raises(ValueError, match=r"qplugin::clamp: min and max should not both be None"):
        q.clamp(qx)
    with pytest.raises(ValueError, match=r"qplugin::clamp: min should be a finite number, got nan"):
        q.clamp(qx, float("nan"), 1.0)
    with pytest.raises(ValueError, match=r"qplugin::leaky_relu: negative_slope should be a finite number, got inf"):
        q.leaky_relu(qx, float("inf"), False, 0.1, 0)
    with pytest.raises(ValueError, match=r"qplugin::elu: alpha should be a finite number, got nan"):
        q.elu(qx, 0.1, 0, float("nan"))
    bad_in = torch._make_per_tensor_quantized_tensor(torch.zeros(3, dtype=torch.uint8), 0.0, 0)
    with pytest.raises(ValueError, match=r"qplugin::relu: qx scale should be a positive finite number, got 0"):
        q.relu(bad_in)


def test_opcheck():
    qx = _q(torch.randn(2, 3, 4, 5), 0.05, 100, torch.quint8)
    samples = [
        (q.relu.default, (qx,)),
        (q.relu6.default, (qx, False)),
        (q.clamp.default, (qx, -0.5, 0.5)),
        (q.leaky_relu.default, (qx, 0.1, False, 0.05, 100)),
        (q.hardswish.default, (qx, 0.05, 100)),
        (q.hardsigmoid.default, (qx, 1 / 256, 0)),
        (q.sigmoid.default, (qx, 1 / 256, 0)),
        (q.elu.default, (qx, 0.05, 100, 1.0, 1.0, 1.0)),
    ]
    for op, args in samples:
        torch.library.opcheck(op, args, test_utils=("test_schema", "test_autograd_registration"))
