"""Bad input gets a clear qplugin error, never a crash or a silent wrong answer:
invalid qparams carried by quantized inputs (one shared check), the requantize-multiplier rule
for tiny output scales, conv geometry bounds, output-size bounds, packed-params checks."""

import math
import re

import pytest
import torch

import torch_qplugin  # noqa: F401

q = torch.ops.qplugin

BAD_SCALES = [float("nan"), float("inf"), 0.0, -0.5, 1e-45, 5e-324]


def _bad_qt(scale, zp, dtype=torch.uint8, shape=(2, 3, 4, 4)):
    data = torch.randint(0, 100, shape, dtype=torch.int64).to(dtype)
    return torch._make_per_tensor_quantized_tensor(data, scale, zp)


def _good(shape=(2, 3, 4, 4), dtype=torch.uint8):
    return torch._make_per_tensor_quantized_tensor(torch.randint(0, 100, shape, dtype=torch.int64).to(dtype), 0.1, 3)


def _calls(x):
    """(op name, callable(x)) for every op that takes a per-tensor quantized tensor; x is the
    (bad) tensor, the others good."""
    g = _good(x.shape, {torch.quint8: torch.uint8, torch.qint8: torch.int8, torch.qint32: torch.int32}[x.dtype])
    c = [
        ("add", lambda: q.add(x, g, 0.1, 3)),
        ("add(qb)", lambda: q.add(g, x, 0.1, 3)),
        ("add_relu", lambda: q.add_relu(x, g, 0.1, 3)),
        ("mul", lambda: q.mul(x, g, 0.1, 3)),
        ("mul_relu", lambda: q.mul_relu(g, x, 0.1, 3)),
        ("add_scalar", lambda: q.add_scalar(x, 1.5)),
        ("add_scalar_relu", lambda: q.add_scalar_relu(x, 1.5)),
        ("mul_scalar", lambda: q.mul_scalar(x, 1.5)),
        ("cat", lambda: q.cat([g, x], 0, None, None)),
        ("cat_relu", lambda: q.cat_relu([x, g], 1, 0.2, 5)),
        ("matmul", lambda: q.matmul(x, g.transpose(-1, -2), 0.5, 3)),
        ("mean", lambda: q.mean(x, [1], False)),
        ("sort", lambda: q.sort(x)),
        ("argsort", lambda: q.argsort(x)),
        ("topk", lambda: q.topk(x, 2)),
        ("max", lambda: q.max(x)),
        ("min", lambda: q.min(x)),
        ("max.dim", lambda: q.max(x, 1)),
        ("min.dim", lambda: q.min(x, 1)),
        ("argmax", lambda: q.argmax(x)),
        ("argmin", lambda: q.argmin(x, 0)),
        ("dequantize", lambda: q.dequantize(x)),
        ("int_repr", lambda: q.int_repr(x)),
        ("eq", lambda: q.eq(x, g)),
        ("lt(other)", lambda: q.lt(g, x)),
        ("gt.Scalar", lambda: q.gt(x, 0.5)),
        ("equal", lambda: q.equal(x, g)),
        ("relu", lambda: q.relu(x)),
        ("relu6", lambda: q.relu6(x)),
        ("clamp", lambda: q.clamp(x, 0.0, 1.0)),
        ("sigmoid", lambda: q.sigmoid(x, 1 / 256, 0)),
        ("softmax", lambda: q.softmax(x, 1, 1 / 256, 0)),
        ("upsample_nearest2d", lambda: q.upsample_nearest2d(x, [8, 8])),
    ]
    if x.dim() == 4:
        c += [
            ("max_pool2d", lambda: q.max_pool2d(x, [2, 2], [2, 2], [0, 0], [1, 1], False)),
            ("avg_pool2d", lambda: q.avg_pool2d(x, [2, 2], [2, 2], [0, 0], False, True, None)),
            ("adaptive_avg_pool2d", lambda: q.adaptive_avg_pool2d(x, [2, 2])),
            ("batch_norm2d", lambda: q.batch_norm2d(x, None, None, torch.zeros(3), torch.ones(3), 1e-5, 0.1, 3)),
            ("layer_norm", lambda: q.layer_norm(x, [4], None, None, 1e-5, 0.1, 3)),
        ]
    return c


@pytest.mark.parametrize("scale", BAD_SCALES)
def test_every_op_rejects_bad_input_scale(scale):
    x = _bad_qt(scale, 3)
    for name, call in _calls(x):
        with pytest.raises((RuntimeError, ValueError), match=r"qplugin::\w+: .*scale should be"):
            call()
            pytest.fail(f"{name} accepted scale {scale}")


def test_every_op_rejects_out_of_range_zero_point():
    for dtype, zp in [(torch.uint8, 256), (torch.uint8, -1), (torch.int8, 128), (torch.int32, 2**62)]:
        x = _bad_qt(0.1, zp, dtype)
        for name, call in _calls(x):
            with pytest.raises((RuntimeError, ValueError), match=r"qplugin::\w+: .*zero_point should be in"):
                call()
                pytest.fail(f"{name} accepted zero_point {zp}")
    # the example: add_scalar on zero_point 2^62 with scale 5e-324 made scale 9e15
    x = _bad_qt(5e-324, 2**62, torch.int32)
    with pytest.raises(ValueError, match=r"qplugin::add_scalar: self scale should be|qa scale should be"):
        q.add_scalar(x, 1.0)


def test_conv_and_linear_reject_bad_input_qparams():
    w = torch._make_per_tensor_quantized_tensor(torch.ones(4, 3, 1, 1, dtype=torch.int8), 0.1, 0)
    pk = q.conv2d_prepack(w, None, [1, 1], [0, 0], [1, 1], 1)
    bad = _bad_qt(float("nan"), 3)
    with pytest.raises(ValueError, match=r"qplugin::conv2d: qx scale should be"):
        q.conv2d(bad, pk, 0.1, 3)
    with pytest.raises(ValueError, match=r"qplugin::conv2d_add: qaccum scale should be"):
        q.conv2d_add(_good(), _bad_qt(-1.0, 3, shape=(2, 4, 4, 4)), pk, 0.1, 3)
    lw = torch._make_per_tensor_quantized_tensor(torch.ones(5, 4, dtype=torch.int8), 0.1, 0)
    with pytest.raises(ValueError, match=r"qplugin::linear: X zero_point should be in"):
        q.linear(_bad_qt(0.1, 300, shape=(3, 4)), q.linear_prepack(lw), 0.1, 3)


def test_per_channel_inputs_with_bad_qparams():
    data = torch.zeros(3, 4, dtype=torch.int8)
    for scales, zps in [
        ([0.1, float("nan"), 0.1], [0, 0, 0]),
        ([0.1, 0.1, 0.0], [0, 0, 0]),
        ([0.1, 0.1, 0.1], [0, 500, 0]),
        ([3.5e38, 0.1, 0.1], [0, 0, 0]),
    ]:
        x = torch._make_per_channel_quantized_tensor(
            data, torch.tensor(scales, dtype=torch.double), torch.tensor(zps), 0
        )
        for call in (q.dequantize, q.int_repr):
            with pytest.raises(ValueError, match=r"qplugin::\w+: self per-channel (scale|zero_point) should be"):
                call(x)
    # creation: a scale that is inf in float32
    with pytest.raises(ValueError, match=r"qplugin::make_per_channel_quantized_tensor: scales\[0\] should be"):
        q.make_per_channel_quantized_tensor(
            data, torch.tensor([3.5e38, 1.0, 1.0], dtype=torch.double), torch.zeros(3, dtype=torch.long), 0
        )


def test_linear_prepack_rejects_denormal_weight_scale():
    for s in (1e-45, 1e-40):
        w = torch._make_per_tensor_quantized_tensor(torch.ones(5, 4, dtype=torch.int8), s, 0)
        with pytest.raises(ValueError, match=r"qplugin::linear_prepack: W scale should be representable"):
            q.linear_prepack(w)
    w = torch._make_per_channel_quantized_tensor(
        torch.ones(2, 4, dtype=torch.int8),
        torch.tensor([0.1, 1e-45], dtype=torch.double),
        torch.zeros(2, dtype=torch.long),
        0,
    )
    with pytest.raises(ValueError, match=r"qplugin::linear_prepack: W scales\[1\] should be representable"):
        q.linear_prepack(w)


# ---------------------------------------------------------------------------
# tiny output scales: one rule (utils/checks.h check_requant_multiplier)
# ---------------------------------------------------------------------------
def test_tiny_output_scale_rule():
    a = torch._make_per_tensor_quantized_tensor(torch.tensor([10, 10, 11, 9], dtype=torch.uint8), 100.0, 10)
    b = torch._make_per_tensor_quantized_tensor(torch.tensor([20, 21, 19, 20], dtype=torch.uint8), 100.0, 20)
    msg = r"qplugin::{}: {} should be at least .* output steps per input step\), got {}"
    for op in ("add", "add_relu"):
        with pytest.raises(ValueError, match=msg.format(op, "scale", "1e-37")):
            getattr(q, op)(a, b, 1e-37, 7)
    with pytest.raises(ValueError, match=msg.format("mul", "scale", "1e-30")):
        q.mul(a, b, 1e-30, 7)
    # right at the bound it still computes exactly: zeros stay at the zero point, +-1 saturate
    ok = q.add(a, b, 100.0 / 30000, 7)
    assert ok.int_repr().tolist() == [7, 255, 7, 0]
    x = torch._make_per_tensor_quantized_tensor(torch.tensor([5, 5, 6, 4], dtype=torch.uint8).view(1, 1, 2, 2), 0.1, 5)
    for s in (1e-10, 1e-38):
        with pytest.raises(ValueError, match=msg.format("batch_norm2d", "output_scale", re.escape(str(s)))):
            q.batch_norm2d(x, None, None, torch.zeros(1), torch.ones(1), 0.0, s, 9)
    x3 = x.unsqueeze(2)  # the 3-d, fused-relu and plain forms name themselves
    with pytest.raises(ValueError, match=msg.format("batch_norm3d_relu", "output_scale", "1e-38")):
        q.batch_norm3d_relu(x3, None, None, torch.zeros(1), torch.ones(1), 0.0, 1e-38, 9)
    with pytest.raises(ValueError, match=msg.format("plain_batch_norm2d", "output_scale", "1e-38")):
        q.plain_batch_norm2d(x.int_repr(), 0.1, 5, None, None, torch.zeros(1), torch.ones(1), 0.0, 1e-38, 9)
    y = q.batch_norm2d(x, None, None, torch.zeros(1), torch.ones(1), 0.0, 0.1 / 30000, 9)
    assert y.int_repr().flatten().tolist() == [9, 9, 255, 0]
    w = torch._make_per_tensor_quantized_tensor(torch.ones(1, 1, 1, 1, dtype=torch.int8), 0.5, 0)
    pk = q.conv2d_prepack(w, None, [1, 1], [0, 0], [1, 1], 1)
    acc = torch._make_per_tensor_quantized_tensor(torch.full((1, 1, 2, 2), 3, dtype=torch.uint8), 0.2, 3)
    with pytest.raises(ValueError, match=msg.format("conv2d_add_relu", "output_scale", "1e-37")):
        q.conv2d_add_relu(x, acc, pk, 1e-37, 0)
    with pytest.raises(ValueError, match=msg.format("conv2d", "output_scale", "1e-20")):
        q.conv2d(x, pk, 1e-20, 0)
    lw = torch._make_per_tensor_quantized_tensor(torch.ones(2, 4, dtype=torch.int8), 0.5, 0)
    xl = torch._make_per_tensor_quantized_tensor(torch.ones(3, 4, dtype=torch.uint8), 0.5, 0)
    with pytest.raises(ValueError, match=msg.format("linear", "Y_scale_i", "1e-20")):
        q.linear(xl, q.linear_prepack(lw), 1e-20, 0)


# ---------------------------------------------------------------------------
# conv geometry, output sizes, packed-params classes
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "arg,vals",
    [
        ("stride", [2**62, 1]),
        ("dilation", [1, 2**62]),
        ("padding", [2**31, 0]),
        ("padding", [2**62, 2**62]),
        ("stride", [2**17, 1]),
    ],
)
def test_conv_prepack_bounds(arg, vals):
    w = torch._make_per_tensor_quantized_tensor(torch.ones(4, 3, 3, 3, dtype=torch.int8), 0.1, 0)
    kw = {"stride": [1, 1], "padding": [0, 0], "dilation": [1, 1]}
    kw[arg] = vals
    with pytest.raises(ValueError, match=rf"qplugin::conv2d_prepack: {arg} should be in \[\d+, 65536\], got"):
        q.conv2d_prepack(w, None, kw["stride"], kw["padding"], kw["dilation"], 1)


def test_huge_outputs_name_the_op():
    w = torch._make_per_tensor_quantized_tensor(torch.ones(4, 3, 1, 1, dtype=torch.int8), 0.1, 0)
    pk = q.conv2d_prepack(w, None, [1, 1], [65536, 65536], [1, 1], 1)
    x = _good((64, 3, 2, 2))
    with pytest.raises(ValueError, match=r"qplugin::conv2d: output of shape \[64, 4, 131074, 131074\] would take"):
        q.conv2d(x, pk, 0.1, 3)
    with pytest.raises(ValueError, match=r"qplugin::upsample_nearest2d: output of shape .* would take more than 2\^63"):
        q.upsample_nearest2d(_good(), [2**40, 2**40])
    with pytest.raises(ValueError, match=r"qplugin::adaptive_avg_pool2d: output of shape .* bytes"):
        q.adaptive_avg_pool2d(_good(), [2**20, 2**20])


# ---------------------------------------------------------------------------
# averaging ops on qint32 beyond float32 precision (float32 would drift ~150 steps)
# ---------------------------------------------------------------------------
def _big_q32(shape, zp, scale, g):
    data = torch.randint(2**30 - 2**20, 2**30, shape, generator=g, dtype=torch.int64)
    data[..., ::3] *= -1
    return torch._make_per_tensor_quantized_tensor(data.to(torch.int32), scale, zp)


def _round_half_even(f):
    from fractions import Fraction

    n = math.floor(f)
    r = f - n
    return n + (1 if r > Fraction(1, 2) or (r == Fraction(1, 2) and n % 2) else 0)


def test_qint32_cat_requantize_exact(isa):
    from fractions import Fraction

    g = torch.Generator().manual_seed(3)
    a, b = _big_q32((3, 50), 7, 0.5, g), _big_q32((2, 50), -11, 0.25, g)
    so, zo = 0.3, 5
    y = q.cat([a, b], 0, so, zo).int_repr().flatten().tolist()
    exp = []
    for t in (a, b):
        for v in t.int_repr().flatten().tolist():
            r = _round_half_even((v - t.q_zero_point()) * Fraction(t.q_scale()) / Fraction(so)) + zo
            exp.append(max(-(2**31), min(2**31 - 1, r)))
    assert max(abs(u - w) for u, w in zip(y, exp)) <= 1


@pytest.mark.parametrize("fmt", [torch.contiguous_format, torch.channels_last])
def test_qint32_avg_pools_exact(isa, fmt):
    from fractions import Fraction

    g = torch.Generator().manual_seed(4)
    x = _big_q32((2, 3, 7, 9), 13, 0.5, g).contiguous(memory_format=fmt)
    d = x.int_repr().to(torch.int64)
    zp = x.q_zero_point()
    # avg_pool2d 3x3 stride 2, no padding: q = round_half_even(sum(q - zp) / 9) + zp
    y = q.avg_pool2d(x, [3, 3], [2, 2], [0, 0], False, True, None).int_repr()
    for n, c, i, j in [(0, 0, 0, 0), (1, 2, 2, 3), (0, 1, 1, 2), (1, 0, 2, 0)]:
        s = int((d[n, c, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3] - zp).sum())
        assert abs(int(y[n, c, i, j]) - (_round_half_even(Fraction(s, 9)) + zp)) <= 1
    # adaptive: the mean of the raw q over each window
    y = q.adaptive_avg_pool2d(x, [2, 3]).int_repr()
    for n, c, i, j in [(0, 0, 0, 0), (1, 2, 1, 2), (0, 1, 1, 1)]:
        h0, h1 = (i * 7) // 2, -(-((i + 1) * 7) // 2)
        w0, w1 = (j * 9) // 3, -(-((j + 1) * 9) // 3)
        win = d[n, c, h0:h1, w0:w1]
        assert abs(int(y[n, c, i, j]) - _round_half_even(Fraction(int(win.sum()), win.numel()))) <= 1


def test_matmul_batch_dims_that_do_not_broadcast():
    # found by the fuzzer (scripts/fuzz.py --seed 2026): torch's own broadcast error, no op named
    a = torch._make_per_tensor_quantized_tensor(torch.zeros(7, 3, 5, 17, dtype=torch.uint8), 0.05, 127)
    b = torch._make_per_tensor_quantized_tensor(torch.zeros(4, 17, 17, 1, dtype=torch.uint8), 1.0, 0)
    with pytest.raises(ValueError, match=r"qplugin::matmul: the batch dims of qa and qb should broadcast, got shapes"):
        q.matmul(a, b, 0.1, 0)


def test_prelu_rejects_bad_weight_qparams():
    """Found by the fuzz slice after prelu landed: a quantized weight's qparams were not checked."""
    x = torch._make_per_tensor_quantized_tensor(torch.zeros((), dtype=torch.int8), 7.5, 127)
    w = torch._make_per_tensor_quantized_tensor(torch.zeros((), dtype=torch.uint8), 0.003, 1 << 62)
    with pytest.raises(ValueError, match=r"qplugin::prelu: weight zero_point should be in \[0, 255\]"):
        torch.ops.qplugin.prelu(x, w, 0.05, 1)


def test_output_larger_than_memory_named_before_allocation():
    """A qint32 upsample to 3 x 2^31 x 1 (24 GiB): the op and shape are named, no allocator error."""
    x = torch._make_per_tensor_quantized_tensor(torch.zeros((3, 33, 7), dtype=torch.int32), 0.003, 0)
    with pytest.raises(
        ValueError,
        match=r"qplugin::upsample_nearest2d: output of shape \[3, 2147483647, 1\] "
        r"would take up to 25769803764 bytes",
    ):
        torch.ops.qplugin.upsample_nearest2d(x, [2147483647, 1])


def test_bilinear_tiny_scales_read_the_last_row_and_column():
    """Found by the long fuzz run on the merged tree: scales_h = 1e-45 made 1 / scale inf in float and
    the source index undefined (SIGSEGV). Positions past the end read the last row / column."""
    x = torch.quantize_per_tensor(torch.rand(1, 7, 66)[:, :, ::2] * 4, 0.1, 0, torch.quint8)
    y = q.upsample_bilinear2d(x, [1, 3], False, 1e-45, 0.003)
    assert y.shape == (1, 1, 3)
    assert torch.equal(y.int_repr(), x.int_repr()[:, -1:, -1:].expand(1, 1, 3))


def test_packed_params_of_the_wrong_family_name_op_and_class():
    """conv3d's packed params passed to conv2d: an error naming the op, the argument and the class,
    checked before unboxing (utils/class_check.h); torch's own 'Tried to convert an IValue of
    type ...' names neither the op nor the argument."""
    w3 = torch._make_per_tensor_quantized_tensor(torch.ones(4, 3, 1, 1, 1, dtype=torch.int8), 0.1, 0)
    pk3 = q.conv3d_prepack(w3, None, [1, 1, 1], [0, 0, 0], [1, 1, 1], 1)
    lin = q.linear_prepack(torch._make_per_tensor_quantized_tensor(torch.ones(4, 3, dtype=torch.int8), 0.1, 0))
    x = _good((1, 3, 4, 4))
    cases = [
        (
            lambda: q.conv2d(x, pk3, 0.1, 0),
            "conv2d",
            "packed_weight",
            "Conv2dPackedParamsBase",
            "Conv3dPackedParamsBase",
        ),
        (
            lambda: q.conv2d_add_relu(x, x, pk3, 0.1, 0),
            "conv2d_add_relu",
            "packed_weight",
            "Conv2dPackedParamsBase",
            "Conv3dPackedParamsBase",
        ),
        (
            lambda: q.conv3d(x, lin, 0.1, 0),
            "conv3d",
            "packed_weight",
            "Conv3dPackedParamsBase",
            "LinearPackedParamsBase",
        ),
        (lambda: q.linear(x, pk3, 0.1, 0), "linear", "W_prepack", "LinearPackedParamsBase", "Conv3dPackedParamsBase"),
        (
            lambda: q.linear_dynamic(torch.randn(2, 3), pk3),
            "linear_dynamic",
            "W_prepack",
            "LinearPackedParamsBase",
            "Conv3dPackedParamsBase",
        ),
        (
            lambda: q._rnn_layer_dynamic(
                torch.randn(2, 1, 3), torch.zeros(1, 4), torch.zeros(1, 4), lin, pk3, 4, False
            ),
            "_rnn_layer_dynamic",
            "w_hh",
            "LinearPackedParamsBase",
            "Conv3dPackedParamsBase",
        ),
        (
            lambda: q.conv2d_unpack(pk3),
            "conv2d_unpack",
            "packed_weights",
            "Conv2dPackedParamsBase",
            "Conv3dPackedParamsBase",
        ),
        (
            lambda: q.linear_unpack(pk3),
            "linear_unpack",
            "W_prepack",
            "LinearPackedParamsBase",
            "Conv3dPackedParamsBase",
        ),
    ]
    for call, op, arg, want, got in cases:
        with pytest.raises(TypeError, match=rf"qplugin::{op}: {arg} should be a {want} .*got {got}$"):
            call()
    assert q.conv3d_unpack(pk3)[0].shape == (4, 3, 1, 1, 1)  # the right class still runs


def _wrong_state_fn(cls_name):
    """A scripted caller of cls.__setstate__ with a state of the wrong type (what a tampered or
    foreign saved model hands the loader)."""
    return torch.jit.CompilationUnit(f"""
def f(p: __torch__.torch.classes.qplugin.{cls_name}, s: Tuple[int, str]):
    p.__setstate__(s)
""").f


def test_wrongly_typed_setstate_names_the_class():
    """A __setstate__ state of the wrong type: an error naming the class (torch's names the method only)."""
    lin = q.linear_prepack(torch._make_per_tensor_quantized_tensor(torch.ones(4, 3, dtype=torch.int8), 0.1, 0))
    w2 = torch._make_per_tensor_quantized_tensor(torch.ones(4, 3, 1, 1, dtype=torch.int8), 0.1, 0)
    w3 = torch._make_per_tensor_quantized_tensor(torch.ones(4, 3, 1, 1, 1, dtype=torch.int8), 0.1, 0)
    objs = {
        "LinearPackedParamsBase": lin,
        "Conv2dPackedParamsBase": q.conv2d_prepack(w2, None, [1, 1], [0, 0], [1, 1], 1),
        "Conv3dPackedParamsBase": q.conv3d_prepack(w3, None, [1, 1, 1], [0, 0, 0], [1, 1, 1], 1),
    }
    for cls_name, obj in objs.items():
        with pytest.raises(
            RuntimeError,
            match=rf"qplugin::{cls_name}\.__setstate__: state should be of type "
            r"Tuple\[.*\], got Tuple\[int, str\]",
        ):
            _wrong_state_fn(cls_name)(obj, (1, "x"))
