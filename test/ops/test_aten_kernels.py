"""qplugin's kernels for aten ops on quantized tensors (torch_qplugin/_aten.py): with
use_for_aten(True) each aten op gives the qplugin op's result, and torch's where torch's kernel is
exact (data movement, ordering, max pooling, clamps); within one quantization step of torch's where
both requantize (averages, sigmoid). use_for_aten(False) gives torch's kernels back."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import reference as ref
import torch_qplugin
from torch_oracle import with_qplugin_aten as _ours
from torch_qplugin import _aten

pytestmark = pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor, torch.quantize_per_channel:UserWarning")

_q = torch.ops.qplugin


def _qx(shape, dtype=torch.quint8, scale=0.05, zero_point=7, channels_last=False, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g) * 2
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last if len(shape) == 4 else torch.channels_last_3d)
    zp = zero_point if dtype == torch.quint8 else zero_point - 128 // 2
    return _q.quantize_per_tensor(x, scale, zp, dtype)


@pytest.fixture
def ours_for_aten():
    """Runs the test with use_for_aten(True): for the ops aten's own composite kernels run on
    quantized tensors too (copy_, stack), ours replace them only then."""
    was = torch_qplugin.use_for_aten(True)
    yield
    torch_qplugin.use_for_aten(was)


def _both(fn):
    """(ours, torch's) results of fn()."""
    was = torch_qplugin.use_for_aten(True)
    try:
        ours = fn()
    finally:
        torch_qplugin.use_for_aten(was)
    was = torch_qplugin.use_for_aten(False)
    try:
        theirs = fn()
    finally:
        torch_qplugin.use_for_aten(was)
    return ours, theirs


def _same_q(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.q_scale() == b.q_scale() and a.q_zero_point() == b.q_zero_point()
    assert torch.equal(a.int_repr(), b.int_repr())


def _within_one_step(a, b):
    assert a.shape == b.shape and a.q_scale() == b.q_scale() and a.q_zero_point() == b.q_zero_point()
    assert (a.int_repr().int() - b.int_repr().int()).abs().max() <= 1


DTYPES = [torch.quint8, torch.qint8]
LAYOUTS = [False, True]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cl", LAYOUTS)
def test_exact_ops_match_torch(dtype, cl):
    x = _qx((2, 6, 9, 7), dtype, channels_last=cl)
    y = _qx((2, 6, 9, 7), dtype, channels_last=cl, seed=1)
    exact = {
        "max_pool2d": lambda: F.max_pool2d(x, 3, 2, 1, ceil_mode=True),
        "max_pool1d": lambda: F.max_pool1d(x[0], 3, 2, 1),
        "relu": lambda: F.relu(x),
        "hardtanh": lambda: F.hardtanh(x, -0.5, 0.7),
        "clamp": lambda: torch.clamp(x, -0.3, 0.4),
        "clone": lambda: x.clone(),
        "contiguous": lambda: x.contiguous(),
        "channels_last": lambda: x.contiguous(memory_format=torch.channels_last),
        "transpose_contiguous": lambda: x.transpose(1, 2).contiguous(),
        "cat": lambda: torch.cat([x, x[:, :2]], 1),
        "stack": lambda: torch.stack([x, x], 2),
        "upsample_nearest": lambda: F.interpolate(x, scale_factor=2, mode="nearest"),
        "max_all": lambda: x.max(),
        "topk": lambda: x.flatten().topk(5)[0],
    }
    if dtype == torch.quint8:  # torch's kernel takes quint8 only
        exact["channel_shuffle"] = lambda: F.channel_shuffle(x, 3)
    for name, fn in exact.items():
        ours, theirs = _both(fn)
        _same_q(ours, theirs)
        assert ours.stride() == theirs.stride(), name
    for name, fn in {
        "eq": lambda: x == y,
        "gt": lambda: x > y,
        "le_scalar": lambda: x <= 0.1,
        "max_dim_idx": lambda: x.max(1)[1],
        "int_repr": lambda: x.int_repr(),
        "dequantize": lambda: x.dequantize(),
        "sort_values": lambda: torch.sort(x, 1)[0].int_repr(),
        "equal": lambda: torch.equal(x, x.clone()),
    }.items():
        ours, theirs = _both(fn)
        assert torch.equal(torch.as_tensor(ours), torch.as_tensor(theirs)), name


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cl", LAYOUTS)
def test_requantizing_ops_within_one_step_of_torch(dtype, cl):
    x = _qx((2, 6, 9, 7), dtype, channels_last=cl)
    for name, fn in {
        "adaptive": lambda: F.adaptive_avg_pool2d(x, (1, 1)),
        "adaptive_3x2": lambda: F.adaptive_avg_pool2d(x, (3, 2)),
        "avg_pool2d": lambda: F.avg_pool2d(x, 3, 1, 1),
        "avg_pool2d_excl": lambda: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
        "mean_hw": lambda: x.mean([2, 3]),
        "mean_keep": lambda: x.mean(1, keepdim=True),
        "sigmoid": lambda: torch.sigmoid(x),
        "hardsigmoid": lambda: F.hardsigmoid(x),
        "leaky_relu": lambda: F.leaky_relu(x, 0.1),
    }.items():
        ours, theirs = _both(fn)
        _within_one_step(ours, theirs)
        assert ours.stride() == theirs.stride(), name


def test_channel_shuffle_of_signed_and_strided_inputs():
    x = _qx((2, 6, 3, 4), torch.qint8)
    torch_qplugin.use_for_aten(True)
    try:
        out = F.channel_shuffle(x, 2)
        out_t = F.channel_shuffle(x.transpose(2, 3), 3)
    finally:
        torch_qplugin.use_for_aten(False)
    assert torch.equal(out.dequantize(), F.channel_shuffle(x.dequantize(), 2))
    assert torch.equal(out_t.dequantize(), F.channel_shuffle(x.dequantize().transpose(2, 3), 3))


def test_3d_pools_match_torch():
    x = _qx((2, 3, 7, 6, 5), channels_last=False)
    for fn in (
        lambda: F.max_pool3d(x, 3, 2, 1),
        lambda: F.max_pool3d(x, (2, 3, 1), (1, 2, 1), ceil_mode=True),
        lambda: F.max_pool3d(x, 2, dilation=2),
    ):
        ours, theirs = _both(fn)
        _same_q(ours, theirs)
    # unbatched (torch's kernel takes 5-D input only): the float pool of the same values
    torch_qplugin.use_for_aten(True)
    try:
        out = F.max_pool3d(x[0], 3, 2, 1)
    finally:
        torch_qplugin.use_for_aten(False)
    assert torch.equal(out.dequantize(), F.max_pool3d(x[0].dequantize(), 3, 2, 1))
    for fn in (lambda: F.avg_pool3d(x, 3, 2, 1), lambda: F.adaptive_avg_pool3d(x, (2, 3, 1))):
        ours, theirs = _both(fn)
        _within_one_step(ours, theirs)


def test_ops_torch_has_no_kernel_for_are_ours_without_use_for_aten():
    x = _qx((2, 6, 5), seed=3)
    assert "argmax" in _aten._MISSING
    assert torch.equal(x.argmax(1), x.dequantize().argmax(1))
    assert torch.equal(x.argmin(), x.dequantize().argmin())


def test_add_mul_with_a_number_are_the_scalar_ops():
    # torch has no kernel for these: ours without use_for_aten
    x = _qx((2, 3, 4), seed=5)
    _same_q(x + 0.7, _q.add_scalar(x, 0.7))
    _same_q(1.5 + x, _q.add_scalar(x, 1.5))
    _same_q(torch.add(x, 0.5, alpha=-3), _q.add_scalar(x, -1.5))
    _same_q(x * -2.0, _q.mul_scalar(x, -2.0))
    _same_q(3 * x, _q.mul_scalar(x, 3))
    with pytest.raises(
        RuntimeError,
        match=r"aten::add \(qplugin kernel\): other should be a number, got a "
        r"torch.quint8 tensor of shape \(2, 3, 4\); between quantized tensors",
    ):
        x + x
    with pytest.raises(
        RuntimeError,
        match=r"aten::mul \(qplugin kernel\): self should be the quantized operand, "
        r"got a torch.float32 tensor",
    ):
        torch.ones(2, 3, 4) * x


def test_ops_give_the_qplugin_ops_results():
    x = _qx((1, 4, 8, 8), channels_last=True)
    torch_qplugin.use_for_aten(True)
    try:
        _same_q(F.adaptive_avg_pool2d(x, 3), _q.adaptive_avg_pool2d(x, [3, 3]))
        _same_q(F.avg_pool2d(x, 2), _q.avg_pool2d(x, [2, 2], [2, 2], [0, 0], False, True, None))
        _same_q(x.mean([2, 3]), _q.mean(x, [2, 3]))
        _same_q(torch.sigmoid(x), _q.sigmoid(x, 1 / 256, 0))
        _same_q(
            torch.quantize_per_tensor(x.dequantize(), 0.1, 3, torch.quint8),
            _q.quantize_per_tensor(x.dequantize(), 0.1, 3, torch.quint8),
        )
    finally:
        torch_qplugin.use_for_aten(False)


def test_in_place_activations_write_into_the_input():
    for fn, out_of_place in (
        (F.relu_, F.relu),
        (lambda t: F.hardtanh(t, -0.2, 0.3, inplace=True), lambda t: F.hardtanh(t, -0.2, 0.3)),
    ):
        x = _qx((1, 3, 4, 5), channels_last=True)
        expected = _both(lambda: out_of_place(x))[1]
        torch_qplugin.use_for_aten(True)
        try:
            out = fn(x)
        finally:
            torch_qplugin.use_for_aten(False)
        assert out is x
        _same_q(x, expected)


def test_use_for_aten_switches_and_reports():
    assert torch_qplugin.use_for_aten(True) is False
    assert set(_aten.aten_kernels().values()) <= {"qplugin", "qplugin (use_for_aten)"}
    assert torch_qplugin.use_for_aten(False) is True
    assert _aten.aten_kernels()["_adaptive_avg_pool2d"] == "torch"
    with pytest.raises(TypeError, match=r"use_for_aten: enable should be a bool, got int"):
        torch_qplugin.use_for_aten(1)


def test_bad_input_names_the_op():
    x = _qx((1, 4, 8, 8))
    torch_qplugin.use_for_aten(True)
    try:
        with pytest.raises(TypeError, match=r"aten::mean.dim \(qplugin kernel\): dtype should be None"):
            x.mean([2, 3], dtype=torch.float32)
        with pytest.raises(ValueError, match=r"aten::upsample_nearest2d \(qplugin kernel\): a scale factor \(1.3"):
            F.interpolate(x, scale_factor=1.3, mode="nearest")
        with pytest.raises(
            TypeError,
            match=r"aten::sigmoid \(qplugin kernel\): self should be quint8 or qint8, "
            r"got torch.qint32",
        ):
            torch.sigmoid(_q.quantize_per_tensor(torch.rand(3), 0.1, 0, torch.qint32))
        with pytest.raises(ValueError, match=r"qplugin::avg_pool2d: kernel_size should be greater than zero"):
            F.avg_pool2d(x, 0)
    finally:
        torch_qplugin.use_for_aten(False)


_CHILD = r"""
import torch_qplugin
from torch_qplugin import _aten
print(sorted(set(_aten.aten_kernels().values())))
"""


@pytest.mark.parametrize(
    "value,expected",
    [
        ("1", "['qplugin', 'qplugin (use_for_aten)']"),
        ("0", "['qplugin', 'torch']"),
        ("2", "QPLUGIN_USE_FOR_ATEN should be 0 or 1"),
    ],
)
def test_environment_variable(value, expected):
    env = dict(os.environ, QPLUGIN_USE_FOR_ATEN=value)
    proc = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, env=env, timeout=120)
    assert expected in proc.stdout + proc.stderr


# ---- ops composed from other kernels, in-place ops, reductions -----------------------------------
def _qx5(dtype, layout, shape=(2, 3, 4, 5, 6), seed=0):
    """A 5-D quantized tensor: contiguous, channels_last_3d, or strided (a transposed view)."""
    if layout == "strided":
        return _qx(shape[:3] + shape[3:][::-1], dtype, seed=seed).transpose(3, 4)
    x = _qx(shape, dtype, seed=seed)
    return _ours(lambda: x.contiguous(memory_format=torch.channels_last_3d)) if layout == "channels_last_3d" else x


def _ints(q):
    return q.int_repr().numpy()


def _assert_ints(out, expected, like):
    """out's integers are expected, with like's qparams."""
    assert out.q_scale() == like.q_scale() and out.q_zero_point() == like.q_zero_point() and out.dtype == like.dtype
    np.testing.assert_array_equal(_ints(out), expected)


def _ran(fn):
    """The names of the ops fn() ran (the profiler's events)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        fn()
    return {e.name for e in prof.events()}


LAYOUTS_5D = ["contiguous", "channels_last_3d", "strided"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS_5D)
@pytest.mark.parametrize("use", [True, False])
def test_1d_3d_nearest_and_max_pool_follow_the_definitions(dtype, layout, use):
    x = _qx5(dtype, layout)
    x1 = x[:, :, 0, 1]  # [N, C, W], strided
    with_use = _ours if use else (lambda fn: fn())
    cases = [
        (
            lambda: F.interpolate(x, size=(7, 3, 13), mode="nearest"),
            lambda: ref.upsample_nearest_ref(_ints(x), (7, 3, 13)),
        ),
        (
            lambda: F.interpolate(x, scale_factor=2, mode="nearest"),
            lambda: ref.upsample_nearest_ref(_ints(x), (8, 10, 12)),
        ),
        (lambda: F.interpolate(x1, size=11, mode="nearest"), lambda: ref.upsample_nearest_ref(_ints(x1), (11,))),
        (
            lambda: F.max_pool3d(x, (2, 3, 2), (1, 2, 2), (1, 1, 0), ceil_mode=True),
            lambda: ref.max_pool_ref(_ints(x), (2, 3, 2), (1, 2, 2), (1, 1, 0), (1, 1, 1), True),
        ),
        (
            lambda: F.max_pool3d(x, 2, dilation=(1, 2, 2)),
            lambda: ref.max_pool_ref(_ints(x), (2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 2, 2), False),
        ),
        (lambda: F.max_pool1d(x1, 3, 2, 1), lambda: ref.max_pool_ref(_ints(x1), (3,), (2,), (1,), (1,), False)),
    ]
    for call, expected in cases:
        out = with_use(call)
        _assert_ints(out, expected(), x)
        if use and layout == "channels_last_3d" and out.dim() == 5:  # torch's: the input's format
            assert out.is_contiguous(memory_format=torch.channels_last_3d)


@pytest.mark.parametrize("layout", LAYOUTS_5D)
def test_3d_nearest_and_max_pool_match_torch_and_run_qplugin_ops(layout):
    x = _qx5(torch.quint8, layout, seed=2)
    for fn in (lambda: F.interpolate(x, size=(5, 9, 4), mode="nearest"), lambda: F.max_pool3d(x, 3, 2, 1)):
        ours, theirs = _both(fn)
        _same_q(ours, theirs)
        assert ours.stride() == theirs.stride()
        assert {"qplugin::upsample_nearest2d", "qplugin::max_pool2d"} & _ours(lambda: _ran(fn))


@pytest.mark.parametrize("layout", LAYOUTS_5D)
def test_nearest_exact_follows_the_definition_and_matches_torch(layout):
    x = _qx5(torch.qint8, layout, seed=3)
    x4 = _ours(lambda: x[:, :, 1].contiguous(memory_format=torch.channels_last)) if layout != "strided" else x[:, :, 1]
    x1 = x[:, :, 0, 1]
    for inp, size in ((x, (9, 4, 13)), (x4, (11, 3)), (x1, (10,))):
        out = F.interpolate(inp, size=size, mode="nearest-exact")  # ours where torch has none (1-D)
        _assert_ints(
            _ours(lambda: F.interpolate(inp, size=size, mode="nearest-exact")),
            ref.upsample_nearest_exact_ref(_ints(inp), size),
            inp,
        )
        ours, theirs = _both(lambda: F.interpolate(inp, size=size, mode="nearest-exact"))
        _same_q(ours, theirs)
        assert ours.stride() == theirs.stride() == out.stride()
    for factor in (1.7, (0.6, 2.3)):  # torch's index rule with the scale factor itself
        ours, theirs = _both(
            lambda: F.interpolate(x4, scale_factor=factor, mode="nearest-exact", recompute_scale_factor=False)
        )
        _same_q(ours, theirs)
    with pytest.raises(
        NotImplementedError,
        match=r"aten::_upsample_nearest_exact1d \(qplugin kernel\): self "
        r"should be per-tensor quantized",
    ):
        F.interpolate(_per_channel(), size=5, mode="nearest-exact")


def _all_ints(dtype, scale, zero_point, shape=(4, 64)):
    """Every integer of an 8-bit dtype once, as a quantized tensor of that shape."""
    lo = -128 if dtype == torch.qint8 else 0
    ints = torch.arange(lo, lo + 256, dtype=torch.int16).to(ref.INT_DTYPE[dtype]).reshape(shape)
    return _q.make_per_tensor_quantized_tensor(ints, scale, zero_point)


@pytest.mark.parametrize("dtype,zero_point", [(torch.quint8, 128), (torch.qint8, 0)])
def test_tanh_follows_the_definition_with_torchs_output_qparams(dtype, zero_point):
    x = _all_ints(dtype, 0.03, 5 if dtype == torch.quint8 else -7)
    for use in (True, False):  # ours, torch's
        out = _ours(lambda: torch.tanh(x)) if use else torch.tanh(x)
        assert out.q_scale() == 2 / 256 and out.q_zero_point() == zero_point
        ref.assert_within_steps(out, ref.activation_ref("tanh", x, 2 / 256, zero_point), 1, "tanh")
    assert "qplugin::plain_quantize_per_tensor" in _ours(lambda: _ran(lambda: torch.tanh(x)))


def test_tanh_keeps_the_memory_format():
    x = _qx((2, 3, 4, 5), channels_last=True)
    ours, theirs = _both(lambda: torch.tanh(x))
    _within_one_step(ours, theirs)
    assert ours.stride() == theirs.stride()
    _same_q(ours, _ours(lambda: torch.tanh(x.contiguous())))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim,keepdim", [([2, 3], False), ([1], True), ([-1, 0], False), (None, False)])
def test_sum_is_n_times_the_mean(dtype, dim, keepdim):
    x = _qx((2, 3, 4, 5), dtype, channels_last=True, seed=4)
    out = x.sum() if dim is None else x.sum(dim, keepdim=keepdim)  # torch has no quantized sum: ours
    ints, scale, zero_point = ref.sum_ref(x, dim, keepdim)
    np.testing.assert_array_equal(_ints(out), ints)
    assert out.q_scale() == scale and out.q_zero_point() == zero_point
    mean = _q.mean(x, dim, keepdim) if dim is not None else _q.mean(x)
    assert torch.equal(out.int_repr(), mean.int_repr())
    assert out.q_scale() == mean.q_scale() * (x.numel() // max(mean.numel(), 1))


@pytest.mark.usefixtures("ours_for_aten")
def test_stack_is_cat_of_unsqueezed_inputs():
    x = _qx((2, 3, 4), seed=1)
    y = _qx((2, 3, 4), scale=0.1, zero_point=3, seed=2)
    for dim in (0, 2, -1, -4):
        out = torch.stack([x, x.transpose(1, 2).contiguous().transpose(1, 2)], dim)
        _assert_ints(out, np.stack([_ints(x), _ints(x)], dim), x)
        # other qparams: requantized to the first input's, as qplugin::cat does
        _same_q(torch.stack([x, y], dim), _q.cat([x.unsqueeze(dim), y.unsqueeze(dim)], dim % 4, None, None))


@pytest.mark.parametrize("use", [True, False])
def test_index_select_and_fill_follow_the_definitions(use):
    x = _qx((3, 4, 5), torch.qint8, seed=6).transpose(0, 2)  # strided
    index = torch.tensor([2, 0, 0, 3])
    with_use = _ours if use else (lambda fn: fn())
    _assert_ints(with_use(lambda: x.index_select(1, index)), np.take(_ints(x), index.numpy(), axis=1), x)
    for value in (0.37, -3, torch.tensor(1.26)):
        y = x.clone()
        assert with_use(lambda: y.fill_(value)) is y
        expected = ref.quantize_per_tensor_ref(np.float32(float(value)), y.q_scale(), y.q_zero_point(), y.dtype)
        assert (_ints(y) == expected).all() and y.q_scale() == x.q_scale()
    ours, theirs = _both(lambda: x.index_select(2, index[:2]))
    _same_q(ours, theirs)


def test_fill_of_a_per_channel_tensor_matches_torch():
    x = _q.quantize_per_channel(
        torch.randn(3, 4), torch.tensor([0.1, 0.02, 0.3]), torch.tensor([1, -2, 0]), 0, torch.qint8
    )
    ours, theirs = _both(lambda: x.clone().fill_(0.41))
    assert torch.equal(ours.int_repr(), theirs.int_repr())
    assert len(set(ours.int_repr().flatten().tolist())) == 3  # one integer per channel


def test_clamp_variants_follow_the_definition():
    x = _qx((2, 3, 4, 5), channels_last=True, seed=7)
    lo = ref.quantize_bound_ref(-0.2, x.q_scale(), x.q_zero_point(), x.dtype)
    hi = ref.quantize_bound_ref(0.3, x.q_scale(), x.q_zero_point(), x.dtype)
    i64 = np.iinfo(np.int64)
    _assert_ints(x.clamp_min(-0.2), ref.clamp_int_ref(x, lo, i64.max), x)
    _assert_ints(torch.clamp_max(x, 0.3), ref.clamp_int_ref(x, i64.min, hi), x)
    y = x.clone()
    assert y.clamp_(-0.2, 0.3) is y
    _assert_ints(y, ref.clamp_int_ref(x, lo, hi), x)


# torch's own copy_ (CompositeExplicitAutograd): qplugin's QuantizedCPU kernel comes first
_TORCH_COPY = torch._C.DispatchKeySet(torch._C.DispatchKey.CompositeExplicitAutograd)


def _torch_copy_(self, src):
    return torch.ops.aten.copy_.default.redispatch(_TORCH_COPY, self, src)


def _per_channel(axis=1, seed=0):
    g = torch.Generator().manual_seed(seed)
    scales = torch.rand(4, generator=g) * 0.1 + 0.01
    zero_points = torch.randint(-5, 5, (4,), generator=g)
    shape = [3, 3]
    shape.insert(axis, 4)
    return _q.quantize_per_channel(torch.randn(shape, generator=g), scales, zero_points, axis, torch.qint8)


@pytest.mark.usefixtures("ours_for_aten")
def test_copy_between_quantized_tensors_takes_srcs_integers_and_qparams():
    src = _qx((2, 3, 4, 5), seed=8, scale=0.2, zero_point=11)
    for self_layout, src_view in ((False, src), (True, src), (False, src.transpose(2, 3).contiguous().transpose(2, 3))):
        dst = _qx((2, 3, 4, 5), seed=9, channels_last=self_layout)
        expected = _qx((2, 3, 4, 5), seed=9, channels_last=self_layout)
        strides, view = dst.stride(), dst[1]
        assert dst.copy_(src_view) is dst
        _torch_copy_(expected, src_view)
        _same_q(dst, expected)
        _assert_ints(dst, _ints(src), src)
        assert dst.stride() == strides  # self keeps its layout
        assert torch.equal(view.int_repr(), src[1].int_repr())  # same storage
    # broadcast, and into a view: the view takes src's qparams, its base keeps its own
    base = _qx((2, 3, 4), seed=3)
    row = _qx((4,), seed=4, scale=0.3, zero_point=1)
    base[1].copy_(row)
    assert torch.equal(base[1].int_repr(), row.int_repr().expand(3, 4)) and base.q_scale() == 0.05
    for axis in (0, 1):
        a, b = _per_channel(axis, seed=1), _per_channel(axis, seed=2)
        expected = _per_channel(axis, seed=1)
        a.copy_(b)
        _torch_copy_(expected, b)
        assert torch.equal(a.int_repr(), expected.int_repr())
        assert torch.equal(a.q_per_channel_scales(), b.q_per_channel_scales()) and a.q_per_channel_axis() == axis


@pytest.mark.usefixtures("ours_for_aten")
@pytest.mark.parametrize("made_in, copied_in", [(False, True), (True, True), (False, False)])
def test_copy_of_other_qparams_under_inference_mode(made_in, copied_in):
    with torch.inference_mode(made_in):
        dst = _qx((2, 3), seed=1)
    with torch.inference_mode(copied_in):
        src = _qx((2, 3), seed=2, scale=0.2, zero_point=9)
        assert dst.copy_(src) is dst
    assert dst.is_inference() == made_in
    _assert_ints(dst, _ints(src), src)


@pytest.mark.usefixtures("ours_for_aten")
def test_copy_from_float_quantizes_with_selfs_qparams():
    for dst_of in (lambda: _qx((2, 3, 4, 5), torch.qint8, seed=1), lambda: _per_channel(1)):
        dst, expected = dst_of(), dst_of()
        x = torch.randn(dst.shape) * 3
        dst.copy_(x)
        _torch_copy_(expected, x)
        assert torch.equal(dst.int_repr(), expected.int_repr())
        assert torch.equal(dst.dequantize(), _q.dequantize(expected))
    dst = _qx((2, 3), seed=1)
    dst.copy_(torch.tensor([-1.0, 0.0, 2.0]))  # broadcast (torch's copy_ refuses)
    _assert_ints(dst, ref.quantize_per_tensor_ref(np.float32([[-1, 0, 2]] * 2), 0.05, 7, torch.quint8), dst)


@pytest.mark.usefixtures("ours_for_aten")
def test_copy_errors_name_the_op():
    q8 = _qx((2, 3))
    with pytest.raises(
        RuntimeError,
        match=r"aten::copy_ \(qplugin kernel\): self should be quantized when src is, "
        r"got a torch.float32 tensor; dequantize\(\) src",
    ):
        torch.zeros(2, 3).copy_(q8)
    with pytest.raises(
        TypeError,
        match=r"aten::copy_ \(qplugin kernel\): src should have self's dtype and qscheme "
        r"\(torch.quint8, torch.per_tensor_affine\), got \(torch.qint8, "
        r"torch.per_tensor_affine\)",
    ):
        q8.copy_(_qx((2, 3), torch.qint8))
    with pytest.raises(TypeError, match=r"aten::copy_ \(qplugin kernel\): src should have self's dtype and qscheme"):
        _per_channel().copy_(_qx((3, 4, 3), torch.qint8))
    with pytest.raises(
        TypeError,
        match=r"aten::copy_ \(qplugin kernel\): src should be float32 or quantized, "
        r"got torch.float64",
    ):
        q8.copy_(torch.zeros(2, 3, dtype=torch.float64))
    for src in (torch.zeros(3, 3), _qx((2, 2))):
        with pytest.raises(
            RuntimeError,
            match=r"aten::copy_ \(qplugin kernel\): src should broadcast to self's "
            r"shape \(2, 3\), got shape \((3, 3|2, 2)\)",
        ):
            q8.copy_(src)


def test_new_ops_bad_input_names_the_op():
    x = _qx((1, 2, 3, 4, 5))
    with pytest.raises(
        TypeError,
        match=r"aten::tanh \(qplugin kernel\): self should be quint8 or qint8, "
        r"got torch.qint32",
    ):
        _ours(lambda: torch.tanh(_q.quantize_per_tensor(torch.rand(3), 0.1, 0, torch.qint32)))
    with pytest.raises(
        NotImplementedError,
        match=r"aten::tanh \(qplugin kernel\): self should be per-tensor "
        r"quantized, got torch.per_channel_affine",
    ):
        _ours(lambda: torch.tanh(_per_channel()))
    with pytest.raises(
        NotImplementedError,
        match=r"aten::index_select \(qplugin kernel\): self should be "
        r"per-tensor quantized",
    ):
        _ours(lambda: _per_channel().index_select(0, torch.tensor([0])))
    with pytest.raises(TypeError, match=r"aten::sum.dim_IntList \(qplugin kernel\): dtype should be None"):
        x.sum([1], dtype=torch.float32)
    with pytest.raises(
        ValueError,
        match=r"aten::sum.dim_IntList \(qplugin kernel\): the reduced dims should not "
        r"be empty, got shape \(1, 0, 3\) and dim \[1\]",
    ):
        _qx((1, 0, 3)).sum([1])
    with pytest.raises(ValueError, match=r"aten::upsample_nearest3d \(qplugin kernel\): a scale factor \(1.5"):
        _ours(lambda: F.interpolate(x, scale_factor=1.5, mode="nearest"))
    with pytest.raises(
        RuntimeError,
        match=r"aten::fill_ \(qplugin kernel\): value should be a number or a 0-dim "
        r"float tensor, got a torch.float32 tensor of shape \(2,\)",
    ):
        _ours(lambda: x.fill_(torch.ones(2)))


def test_ops_torch_lacks_are_ours_for_good():
    kernels = _aten.aten_kernels()
    for name in (
        "sum.dim_IntList",
        "upsample_nearest1d",
        "_upsample_nearest_exact1d",
        "clamp_",
        "clamp_min",
        "clamp_max",
    ):
        assert kernels[name] == "qplugin", name
    # aten's composite copy_ / stack run quantized tensors: torch's until use_for_aten
    assert kernels["copy_"] == kernels["stack"] == "torch"
    x = _qx((2, 3, 4), seed=5)
    ran = _ran(lambda: (x.sum(1), F.interpolate(x, size=7)))
    assert {"qplugin::mean", "qplugin::upsample_nearest2d"} <= ran
    assert "qplugin::cat" not in _ran(lambda: torch.stack([x, x]))
