"""qplugin's kernels for aten ops on quantized tensors (torch_qplugin/_aten.py): with
use_for_aten(True) each aten op gives the qplugin op's result, and torch's where torch's kernel is
exact (data movement, ordering, max pooling, clamps); within one quantization step of torch's where
both requantize (averages, sigmoid). use_for_aten(False) gives torch's kernels back."""
import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import torch_qplugin
from torch_qplugin import _aten

pytestmark = pytest.mark.filterwarnings(
    "ignore:torch.quantize_per_tensor, torch.quantize_per_channel:UserWarning")

_q = torch.ops.qplugin


def _qx(shape, dtype=torch.quint8, scale=0.05, zero_point=7, channels_last=False, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g) * 2
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last if len(shape) == 4 else torch.channels_last_3d)
    zp = zero_point if dtype == torch.quint8 else zero_point - 128 // 2
    return _q.quantize_per_tensor(x, scale, zp, dtype)


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
    for name, fn in {"eq": lambda: x == y, "gt": lambda: x > y, "le_scalar": lambda: x <= 0.1,
                     "max_dim_idx": lambda: x.max(1)[1],
                     "int_repr": lambda: x.int_repr(), "dequantize": lambda: x.dequantize(),
                     "sort_values": lambda: torch.sort(x, 1)[0].int_repr(), "equal": lambda: torch.equal(x, x.clone())}.items():
        ours, theirs = _both(fn)
        assert torch.equal(torch.as_tensor(ours), torch.as_tensor(theirs)), name


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cl", LAYOUTS)
def test_requantizing_ops_within_one_step_of_torch(dtype, cl):
    x = _qx((2, 6, 9, 7), dtype, channels_last=cl)
    for name, fn in {"adaptive": lambda: F.adaptive_avg_pool2d(x, (1, 1)),
                     "adaptive_3x2": lambda: F.adaptive_avg_pool2d(x, (3, 2)),
                     "avg_pool2d": lambda: F.avg_pool2d(x, 3, 1, 1),
                     "avg_pool2d_excl": lambda: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
                     "mean_hw": lambda: x.mean([2, 3]),
                     "mean_keep": lambda: x.mean(1, keepdim=True),
                     "sigmoid": lambda: torch.sigmoid(x),
                     "hardsigmoid": lambda: F.hardsigmoid(x),
                     "leaky_relu": lambda: F.leaky_relu(x, 0.1)}.items():
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
    for fn in (lambda: F.max_pool3d(x, 3, 2, 1), lambda: F.max_pool3d(x, (2, 3, 1), (1, 2, 1), ceil_mode=True),
               lambda: F.max_pool3d(x, 2, dilation=2)):
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
    with pytest.raises(RuntimeError, match=r"aten::add \(qplugin kernel\): other should be a number, got a "
                                           r"torch.quint8 tensor of shape \(2, 3, 4\); between quantized tensors"):
        x + x
    with pytest.raises(RuntimeError, match=r"aten::mul \(qplugin kernel\): self should be the quantized operand, "
                                           r"got a torch.float32 tensor"):
        torch.ones(2, 3, 4) * x


def test_ops_give_the_qplugin_ops_results():
    x = _qx((1, 4, 8, 8), channels_last=True)
    torch_qplugin.use_for_aten(True)
    try:
        _same_q(F.adaptive_avg_pool2d(x, 3), _q.adaptive_avg_pool2d(x, [3, 3]))
        _same_q(F.avg_pool2d(x, 2), _q.avg_pool2d(x, [2, 2], [2, 2], [0, 0], False, True, None))
        _same_q(x.mean([2, 3]), _q.mean(x, [2, 3]))
        _same_q(torch.sigmoid(x), _q.sigmoid(x, 1 / 256, 0))
        _same_q(torch.quantize_per_tensor(x.dequantize(), 0.1, 3, torch.quint8),
                _q.quantize_per_tensor(x.dequantize(), 0.1, 3, torch.quint8))
    finally:
        torch_qplugin.use_for_aten(False)


def test_in_place_activations_write_into_the_input():
    for fn, ref in ((F.relu_, F.relu), (lambda t: F.hardtanh(t, -0.2, 0.3, inplace=True), lambda t: F.hardtanh(t, -0.2, 0.3))):
        x = _qx((1, 3, 4, 5), channels_last=True)
        expected = _both(lambda: ref(x))[1]
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
        with pytest.raises(TypeError, match=r"aten::sigmoid \(qplugin kernel\): self should be quint8 or qint8, "
                                            r"got torch.qint32"):
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


@pytest.mark.parametrize("value,expected", [("1", "['qplugin', 'qplugin (use_for_aten)']"), ("0", "['qplugin', 'torch']"), ("2", "QPLUGIN_USE_FOR_ATEN should be 0 or 1")])
def test_environment_variable(value, expected):
    env = dict(os.environ, QPLUGIN_USE_FOR_ATEN=value)
    proc = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, env=env, timeout=120)
    assert expected in proc.stdout + proc.stderr
