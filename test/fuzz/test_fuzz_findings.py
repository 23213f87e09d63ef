"""Regression tests for what the fuzzer's result checks (checks.py) found (docs/robustness.md
"Runs"). Each test fails without the fix it covers."""

import os
import sys
from fractions import Fraction

import numpy as np
import pytest
import torch

import torch_qplugin  # noqa: F401

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import reference as ref  # noqa: E402

q = torch.ops.qplugin
PLAIN = {torch.quint8: torch.uint8, torch.qint8: torch.int8, torch.qint32: torch.int32}


def _levels(dt, n=300):
    lo, hi = ref.QRANGE[dt]
    if dt == torch.qint32:
        v = torch.randint(-5000, 5000, (n,), generator=torch.Generator().manual_seed(1))
    else:
        v = torch.arange(lo, hi + 1)
    return v.to(PLAIN[dt])


@pytest.mark.parametrize("dt", [torch.quint8, torch.qint8, torch.qint32])
def test_plain_relu6_and_clamp_bound_in_the_plain_dtype(isa, dt):
    # plain_relu6 / plain_clamp quantized their float bounds with the int32 range for uint8 / int8
    # tensors (the bound then wrapped in the 8-bit clamp): relu6 gave negative values, clamp(min=1e30)
    # gave 65 where the top of the range is right
    x = _levels(dt)
    for scale, zp in [(0.003, 0), (0.05, ref.QRANGE[dt][0] + 7), (9.5367431640625e-07, ref.QRANGE[dt][1])]:
        qx = torch._make_per_tensor_quantized_tensor(x, scale, zp)
        assert torch.equal(q.plain_relu6(x, scale, zp), q.relu6(qx).int_repr())
        six = ref.quantize_bound_ref(6.0, scale, zp, dt)
        np.testing.assert_array_equal(q.plain_relu6(x, scale, zp).numpy(), ref.clamp_int_ref(qx, zp, six))
        for lo, hi in [(1e30, 2.5), (-3.0, 1e30), (-0.4, 0.7), (None, 0.7), (0.7, -0.4)]:
            lo_q = ref.QRANGE[dt][0] if lo is None else ref.quantize_bound_ref(lo, scale, zp, dt)
            hi_q = ref.quantize_bound_ref(hi, scale, zp, dt)
            got = q.plain_clamp(x, scale, zp, lo, hi)
            np.testing.assert_array_equal(got.numpy(), ref.clamp_int_ref(qx, lo_q, hi_q), err_msg=f"{lo} {hi}")
            assert torch.equal(got, q.clamp(qx, lo, hi).int_repr())


def _round_half_even(r):
    n = r.numerator // r.denominator
    rem = r - n
    return n + (1 if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2) else 0)


@pytest.mark.parametrize("zp,scale,c", [(-(2**31), 2.0**-20, 1), (2**31 - 1, 0.05, -0.5), (0, 0.5, 3e8)])
def test_add_scalar_qint32_in_float64(isa, zp, scale, c):
    # qint32 add_scalar computed q - zp + c_q in float32: up to ~230 steps off once |.| > 2^24
    g = torch.Generator().manual_seed(2)
    base = torch.randint(-(2**31), 2**31 - 1, (200,), generator=g, dtype=torch.int64)
    qx = torch._make_per_tensor_quantized_tensor(base.to(torch.int32), scale, zp)
    for relu in (False, True):
        out = (q.add_scalar_relu if relu else q.add_scalar)(qx, c)
        exp, s, z = ref.scalar_op_ref("add", qx, c, relu)
        assert out.q_scale() == pytest.approx(s, rel=1e-12) and out.q_zero_point() == z
        ref.assert_within_steps(out, exp, 1, f"add_scalar relu={relu}")
        # exact rational check of a few elements
        c_q = round(Fraction(c) / Fraction(scale))
        for i in range(0, 200, 37):
            v = (int(base[i]) - zp + c_q) * Fraction(scale) / Fraction(out.q_scale())
            e = max(-(2**31), min(2**31 - 1, _round_half_even(v) + z))
            if relu:
                e = max(e, z)
            assert abs(int(out.int_repr()[i]) - e) <= 1
        got_plain = q.plain_add_scalar(qx.int_repr(), scale, zp, c)
        assert torch.equal(got_plain, q.add_scalar(qx, c).int_repr())


@pytest.mark.parametrize("dt", [torch.quint8, torch.qint8, torch.qint32])
@pytest.mark.parametrize("out_scale", [1e-3, 1e-30, 1e-38])
def test_group_and_instance_norm_tiny_output_scale(isa, dt, out_scale):
    # the per-channel affine fold q * a + (b - mean * a) cancelled catastrophically for a huge
    # multiplier: exact zeros (q == mean) left the zero point (0 or 255 instead of 4), and w / out_scale
    # overflowed float32 to inf (0 * inf = NaN -> 255)
    lo = ref.QRANGE[dt][0]
    x = torch._make_per_tensor_quantized_tensor(
        torch.tensor([[[1], [2], [3]], [[5], [5], [5]]], dtype=torch.int64).add(lo + 100).to(PLAIN[dt]), 1.0, lo + 110
    )
    w, b = torch.tensor([1.0, -2.0, 0.5]), torch.zeros(3)
    zo = 4
    out = q.group_norm(x, 1, w, b, 0.1, out_scale, zo)
    exp = ref.group_norm_ref(x, 1, w.double().numpy(), b.double().numpy(), 0.1, out_scale, zo)
    ref.assert_within_steps(out, exp, 1, "group_norm")
    assert out.int_repr()[0, 1, 0] == zo and (out.int_repr()[1] == zo).all()  # exact zeros stay at the zero point
    out = q.instance_norm(x, w, b, 0.1, out_scale, zo)
    assert (out.int_repr() == zo).all()  # one element per (n, c): every value is its mean
    ref.assert_within_steps(
        out, ref.instance_norm_ref(x, w.double().numpy(), b.double().numpy(), 0.1, out_scale, zo), 1, "instance_norm"
    )


def test_pools_reject_empty_spatial_dims():
    # avg_pool2d on an empty H or W returned 0 / 0 (255 everywhere); max_pool2d the dtype's lowest value
    x = torch._make_per_tensor_quantized_tensor(torch.zeros(5, 8, 0, 2, dtype=torch.int8), 0.1, 67)
    calls = {
        "avg_pool2d": lambda: q.avg_pool2d(x, [3, 3], [2, 2], [1], True, False, None),
        "max_pool2d": lambda: q.max_pool2d(x, [3, 3], [2, 2], [1], [1], True),
        "plain_avg_pool2d": lambda: q.plain_avg_pool2d(x.int_repr(), 67, [3, 3], [2, 2], [1], True, False, None),
        "plain_max_pool2d": lambda: q.plain_max_pool2d(x.int_repr(), [3, 3], [2, 2], [1], [1], True),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError, match=f"qplugin::{name}: input should have non-empty spatial dims"):
            call()


@pytest.mark.parametrize("dt", [torch.quint8, torch.qint8])
def test_layer_norm_huge_multiplier_runs_in_float64(isa, dt):
    # constant rows with eps 5e-324 make s * rstd ~ 2e160 (inf in float32), and w / out_scale with
    # out_scale 1e-38 overflowed float32 too: 0 * inf = NaN gave 255 where b / out_scale + zp is right
    lo = ref.QRANGE[dt][0]
    x = torch._make_per_tensor_quantized_tensor(
        torch.tensor([[7], [9], [200]], dtype=torch.int64).add(lo).to(PLAIN[dt]), 0.05, lo
    )
    for eps, out_scale, w, b in [(5e-324, 1e-38, 0.4, -0.3), (5e-324, 0.1, 1.0, 0.2), (1e-5, 1e-38, 5.0, 0.0)]:
        wt, bt = torch.tensor([w]), torch.tensor([b])
        out = q.layer_norm(x, [1], wt, bt, eps, out_scale, 4)
        exp = ref.with_exact_dequantize(
            ref.layer_norm_ref, x, [1], wt.double().numpy(), bt.double().numpy(), eps, out_scale, 4
        )
        ref.assert_within_steps(out, exp, 1, f"layer_norm eps={eps} out_scale={out_scale}")


def test_empty_output_with_overflowing_strides_is_refused():
    # an empty input let any output size through the size bound: upsample_nearest2d to
    # [0, 1, 2^63 - 1, 4] reached torch's allocator ("Stride calculation overflowed", no op named)
    x = torch.zeros(0, 1, 1, 7, dtype=torch.uint8)
    with pytest.raises(
        ValueError,
        match=r"qplugin::plain_upsample_nearest2d: output of shape .* is empty but its "
        r"strides overflow int64",
    ):
        q.plain_upsample_nearest2d(x, [2**63 - 1, 4])
    qx = torch._make_per_tensor_quantized_tensor(x, 0.1, 3)
    with pytest.raises(ValueError, match=r"qplugin::upsample_nearest2d: output of shape .* strides overflow"):
        q.upsample_nearest2d(qx, [2**63 - 1, 4])
    # an empty output whose strides fit is still fine
    assert q.plain_upsample_nearest2d(x, [5, 4]).shape == (0, 1, 5, 4)


def test_prelu_tiny_output_scale_is_refused():
    # x scale 7.5 over output scale 1e-38 overflowed the float32 multiplier (inf; 0 * inf = NaN at the
    # zero point): 255 steps off. One rule with the other requantizing ops: check_requant_multiplier
    x = torch.full((2, 3, 4), 127, dtype=torch.uint8)
    qx = torch._make_per_tensor_quantized_tensor(x, 7.5, 127)
    slopes = torch.tensor([0.25, -2.0, 40.0])
    with pytest.raises(ValueError, match=r"qplugin::prelu: output_scale should be at least .*got 1e-38"):
        q.prelu(qx, slopes, 1e-38, 127)
    with pytest.raises(ValueError, match=r"qplugin::plain_prelu: output_scale should be at least .*got 1e-38"):
        q.plain_prelu(x, 7.5, 127, slopes, 1e-38, 127)
    # the steepest slope sets the bound: 7.5 * 40 / 2^15 ~ 0.0092
    with pytest.raises(ValueError, match=r"output_scale should be at least"):
        q.prelu(qx, slopes, 0.005, 127)
    assert torch.equal(q.prelu(qx, slopes, 0.01, 127).int_repr(), torch.full_like(x, 127))


def test_avg_pool3d_empty_depth_is_refused():
    # an empty D left every window in the padding: 0 / 0 with count_include_pad=False (garbage qint32)
    qx = torch._make_per_tensor_quantized_tensor(torch.zeros(7, 0, 5, 3, dtype=torch.int32), 0.5, -51)
    with pytest.raises(ValueError, match=r"qplugin::avg_pool3d: input should have non-empty spatial dims"):
        q.avg_pool3d(qx, [2, 2, 2], [1], [1, 1, 1], True, False, None)


def test_plain_prelu_int32_input_is_refused():
    # seed 404 on a Zen 5: an int32 x reached prelu's 8-bit kernel guard (an INTERNAL ASSERT, "please
    # report a bug to PyTorch"); the quantized prelu takes quint8 / qint8 only, so the plain op says so
    x = torch.zeros(4, 8, 16, dtype=torch.int32)
    with pytest.raises(RuntimeError, match=r"qplugin::plain_prelu: x should be a uint8 or int8 tensor, got dtype Int"):
        q.plain_prelu(x, 0.05, -1, torch.ones(8), 1.5, -1000)
    # 8-bit still runs: slope 1 with equal qparams is the identity
    x8 = torch.arange(-128, 128, dtype=torch.int8).reshape(2, 8, 16)
    assert torch.equal(q.plain_prelu(x8, 0.05, 0, torch.ones(8), 0.05, 0), x8)


def test_plain_prelu_slopes_are_checked_through_the_twin():
    # the fuzzer's twin call read plain_prelu's float slopes as an integer tensor (they are followed by
    # the OUTPUT qparams), so its results were never checked; they are now
    import fuzzlib

    statuses = [
        fuzzlib.run_case("qplugin::plain_prelu", "", fuzzlib.case_seed(404, "qplugin::plain_prelu", k))[0]
        for k in range(40)
    ]
    assert "bad" not in statuses and statuses.count("checked") >= 5, statuses


def test_saved_file_with_a_huge_memo_index_is_a_load_error(tmp_path):
    # seed 505 (QPLUGIN_ISA=avx2, Zen 5): a data.pkl whose LONG_BINPUT index became 1562909288 made
    # torch's unpickler resize its memo to ~25 GB; the OOM killer took the child (exit -9, no stack).
    # The saved-file children now run under an address-space cap, so it is an ordinary load error.
    import io
    import json
    import pickletools
    import subprocess
    import zipfile
    import fuzzlib

    blob = fuzzlib.saved_blobs()["jit_model"]
    zin = zipfile.ZipFile(io.BytesIO(blob))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            c = bytearray(zin.read(info.filename))
            if info.filename.endswith("/data.pkl"):
                # the first memo store (BINPUT, 1-byte index) becomes LONG_BINPUT 1562909288
                pos = next(p for op, arg, p in pickletools.genops(bytes(c)) if op.name == "BINPUT")
                c[pos : pos + 2] = b"r" + (1562909288).to_bytes(4, "little")
            zout.writestr(zipfile.ZipInfo(info.filename, date_time=info.date_time), bytes(c))
    path = tmp_path / "huge_memo.pt"
    path.write_bytes(out.getvalue())
    code = (
        f"import sys; sys.path.insert(0, {fuzzlib.HERE!r}); import fuzzlib; "
        f"fuzzlib.mutation_child({json.dumps(json.dumps([('jit_model', str(path))]))})"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], env=fuzzlib._child_env(), capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr[-1000:]
    assert '"status": "load-error MemoryError"' in r.stdout, r.stdout


def test_embedding_prepack_of_zero_width_rows():
    # seed 707 (Zen 5): float rows of width D = 0 reached reshape({-1, 0}) ("cannot reshape tensor of 0
    # elements ... ambiguous", no op named); the row count is now counted, not inferred. Each row is
    # its scale and bias alone (range 0: scale 0, bias 0 for 8 bits; fp16 scale 1, bias 0 for 4 bits)
    w = torch.empty(7, 33, 8, 0)
    p8 = q.embedding_bag_byte_prepack(w)
    assert p8.shape == (7, 33, 8, 8) and p8.dtype == torch.uint8
    assert torch.equal(p8.view(-1, 8)[:, :4].contiguous().view(torch.float32), torch.zeros(7 * 33 * 8, 1))
    assert q.embedding_bag_byte_unpack(p8).shape == (7, 33, 8, 0)
    p4 = q.embedding_bag_4bit_prepack(w, False, 200, 0.16)
    assert p4.shape == (7, 33, 8, 4)
    assert q.embedding_bag_4bit_unpack(p4).shape == (7, 33, 8, 0)


def test_cat_check_skips_legacy_empty_inputs():
    # seed 808 (Zen 5): cat_relu of a [17, 17, 8] qint32 and a legacy 1-D empty [0] along dim -2; the op
    # skips the [0] like torch.cat (cpu/cat.cpp skipped()), the check's reference did not and raised
    import fuzzlib

    assert fuzzlib.run_case("qplugin::cat_relu", "", 182356034)[0] == "checked"
    x = torch._make_per_tensor_quantized_tensor(torch.randint(-5, 5, (3, 4, 2), dtype=torch.int32), 1.0, 0)
    e = torch._make_per_tensor_quantized_tensor(torch.zeros(0, dtype=torch.int32), 7.5, 2**31 - 1)
    y = q.cat_relu([x, e], -2, None, None)
    assert torch.equal(y.int_repr(), x.int_repr().clamp(min=0))


# ---- found by an outside fuzzer over every op (AVX-512 and forced AVX2 paths) ----


@pytest.mark.parametrize("spatial", [1, 2, 3])
@pytest.mark.parametrize("groups", [2**31, 2**62, 4])
def test_conv_transpose_prepack_checks_groups_before_allocating(spatial, groups):
    # a per-channel (axis 1) weight's qparams were repeated `groups` times before groups was checked:
    # 2^31 asked the allocator for 16 GiB, 2^62 overflowed torch's storage size
    shape = (6, 1) + (2,) * spatial
    w = torch._make_per_channel_quantized_tensor(
        torch.randint(-5, 5, shape, dtype=torch.int8), torch.tensor([0.01], dtype=torch.double), torch.tensor([0]), 1
    )
    prepack = getattr(q, f"conv_transpose{spatial}d_prepack")
    with pytest.raises(
        ValueError,
        match=rf"qplugin::conv_transpose{spatial}d_prepack: groups should divide "
        rf"in_channels \(6, weight dim 0\), got groups {groups}",
    ):
        prepack(w, None, [1] * spatial, [0] * spatial, [0] * spatial, [1] * spatial, groups)
    # the plain form: w_scales sized out_channels / groups * groups was computed from groups first
    with pytest.raises(
        ValueError,
        match=rf"qplugin::plain_conv_transpose_prepack: groups should divide "
        rf"in_channels \(6, weight dim 0\), got groups {groups}",
    ):
        q.plain_conv_transpose_prepack(
            w.int_repr(),
            torch.tensor([0.01], dtype=torch.double),
            torch.tensor([0]),
            None,
            [1] * spatial,
            [0] * spatial,
            [0] * spatial,
            [1] * spatial,
            groups,
        )


@pytest.mark.parametrize("bad", [0.0, -0.5, 1e-45, float("nan"), float("inf")])
def test_embedding_bag_prepack_refuses_scales_that_are_not_positive_and_finite(bad):
    # 0, negative and 1e-45 (below float32's smallest normal: its reciprocal overflows) were accepted
    scales = torch.tensor([0.1, bad, 0.2], dtype=torch.float)
    zps = torch.tensor([1.0, 2.0, 3.0])
    w = torch._make_per_channel_quantized_tensor(torch.randint(0, 255, (3, 4), dtype=torch.uint8), scales, zps, 0)
    assert w.qscheme() == torch.per_channel_affine_float_qparams
    with pytest.raises(
        ValueError,
        match=r"qplugin::embedding_bag_prepack: scales \(of a row\) should be a positive "
        r"finite number|representable as a float32",
    ):
        q.embedding_bag_prepack(w)
