"""add / add_relu / mul / mul_relu, add_scalar(_relu) / mul_scalar, matmul."""

import warnings

import numpy as np
import pytest
import torch

import reference as ref
from torch_oracle import quantize_exact

q = torch.ops.qplugin
DTYPES = [torch.quint8, torch.qint8, torch.qint32]


def rand_q(shape, dtype, scale=None, zp=None, gen=None):
    lo, hi = ref.QRANGE[dtype]
    if dtype == torch.qint32:
        data = torch.randint(-100000, 100000, shape, dtype=torch.int32, generator=gen)
        zp = 0 if zp is None else zp
    else:
        data = torch.randint(lo, hi + 1, shape, dtype=ref.INT_DTYPE[dtype], generator=gen)
        zp = int(torch.randint(lo, hi + 1, (), generator=gen)) if zp is None else zp
    scale = float(torch.rand((), generator=gen)) * 0.1 + 0.001 if scale is None else scale
    return torch._make_per_tensor_quantized_tensor(data, scale, zp)


def out_qparams(dtype, gen):
    lo, hi = ref.QRANGE[dtype]
    if dtype == torch.qint32:
        return float(torch.rand((), generator=gen)) * 1e-3 + 1e-4, 3
    return float(torch.rand((), generator=gen)) * 0.1 + 0.005, int(torch.randint(lo, hi + 1, (), generator=gen))


BIN = {
    "add": (q.add, torch.ops.quantized.add, "add", False),
    "add_relu": (q.add_relu, torch.ops.quantized.add_relu, "add", True),
    "mul": (q.mul, torch.ops.quantized.mul, "mul", False),
    "mul_relu": (q.mul_relu, torch.ops.quantized.mul_relu, "mul", True),
}

SHAPES = [
    ((7,), (7,)),
    ((3, 5, 33), (3, 5, 33)),
    ((2, 3, 4, 5), (1, 3, 1, 1)),
    ((4, 1, 6), (5, 1)),
    ((130,), ()),
    ((), (3, 4)),
    ((0, 3), (1, 3)),
    ((2, 0), (2, 1)),
    ((), ()),
]


@pytest.mark.parametrize("name", list(BIN))
@pytest.mark.parametrize("dtype", DTYPES)
def test_binary_vs_reference_and_torch(isa, name, dtype):
    ours, theirs, kind, relu = BIN[name]
    gen = torch.Generator().manual_seed(hash((name, str(dtype))) % 1000)
    for sa, sb in SHAPES:
        for _ in range(3):
            a, b = rand_q(sa, dtype, gen=gen), rand_q(sb, dtype, gen=gen)
            if kind == "mul" and dtype == torch.qint32:
                b = rand_q(sb, dtype, scale=1e-3, gen=gen)
            so, zo = out_qparams(dtype, gen)
            r = ours(a, b, so, zo)
            assert r.dtype == dtype and r.q_scale() == so and r.q_zero_point() == zo
            assert r.shape == torch.broadcast_shapes(a.shape, b.shape)
            ref.assert_within_steps(r, ref.binary_ref(kind, a, b, so, zo, relu), 1, f"{name} {sa} {sb}")
            if dtype != torch.qint32:
                with warnings.catch_warnings():  # torch 2.15's own broadcasting add resizes its out=
                    warnings.filterwarnings("ignore", message="An output with one or more elements was resized")
                    t = theirs(a, b, so, zo)
                ref.assert_within_steps(r, t.int_repr().numpy(), 1, f"{name} vs torch {sa} {sb}")


@pytest.mark.parametrize("name", list(BIN))
def test_binary_layouts_give_identical_results(isa, name):
    ours = BIN[name][0]
    a = rand_q((2, 16, 9, 7), torch.quint8, 0.03, 120)
    b = rand_q((2, 16, 9, 7), torch.quint8, 0.05, 3)
    base = ours(a, b, 0.06, 100).int_repr()
    acl, bcl = a.contiguous(memory_format=torch.channels_last), b.contiguous(memory_format=torch.channels_last)
    r = ours(acl, bcl, 0.06, 100)
    assert r.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(r.int_repr(), base)
    assert torch.equal(ours(acl, b, 0.06, 100).int_repr(), base)
    # strided views
    big_a = rand_q((2, 16, 9, 14), torch.quint8, 0.03, 120)
    va = big_a[..., ::2]
    vb = b.transpose(2, 3).contiguous().transpose(2, 3)
    ra = ours(va, vb, 0.06, 100)
    assert torch.equal(ra.int_repr(), ours(va.contiguous(), b, 0.06, 100).int_repr())


def _walk_cases(dtype):
    """(a, b) pairs whose output is too big for one task (threads split it inside rows) and whose
    operands are strided, permuted or broadcast: the elementwise ops' strided walk."""
    big = rand_q((3, 41, 37, 29), dtype, 0.03, 0 if dtype == torch.qint32 else 5)
    other = rand_q((3, 41, 37, 29), dtype, 0.05, 0 if dtype == torch.qint32 else 3)
    wide = rand_q((3, 41, 37, 87), dtype, 0.04, 0 if dtype == torch.qint32 else 7)
    return [
        (big, rand_q((41, 1, 29), dtype, 0.05, 0 if dtype == torch.qint32 else 3)),  # broadcast b
        (rand_q((37, 1), dtype, 0.02, 0 if dtype == torch.qint32 else 1), big),  # broadcast a
        (wide[..., ::3], other),  # strided a
        (big.permute(2, 0, 3, 1), other.permute(2, 0, 3, 1).contiguous()),  # permuted, dense
        (big.contiguous(memory_format=torch.channels_last), other.transpose(0, 2)[:, :, :3].transpose(0, 2)),
        (big[:, 1::2, 1:].transpose(1, 3), other[:, 2::2, 1:].transpose(1, 3)),  # both strided, out of order
    ]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", ["add", "mul_relu"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_binary_strided_walk_matches_dense(isa, threads, name, dtype):
    ours, _, kind, relu = BIN[name]
    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for a, b in _walk_cases(dtype):
            so, zo = (1e-3, 3) if dtype == torch.qint32 else (0.06, 100)
            r = ours(a, b, so, zo)
            shape = torch.broadcast_shapes(a.shape, b.shape)
            dense = ours(a.contiguous().expand(shape).contiguous(), b.contiguous().expand(shape).contiguous(), so, zo)
            assert torch.equal(r.int_repr(), dense.int_repr()), (name, a.shape, a.stride(), b.shape, b.stride())
            if dtype != torch.qint32:
                ref.assert_within_steps(r, ref.binary_ref(kind, a, b, so, zo, relu), 1, f"{name} {a.shape}")
    finally:
        torch.set_num_threads(old)


def test_binary_vector_paths_match_scalar():
    torch.manual_seed(1)
    from torch_qplugin import _isa

    a = rand_q((1000 + 37,), torch.qint8, 0.02, -5)
    b = rand_q((1000 + 37,), torch.qint8, 0.07, 11)
    outs = {}
    for isa in _isa.supported_isas():
        with __import__("torch_qplugin").kernel_isa(isa):
            outs[isa] = [f(a, b, 0.04, 2).int_repr() for f in (q.add, q.add_relu, q.mul, q.mul_relu)] + [
                f(a, b[:1], 0.04, 2).int_repr() for f in (q.add, q.mul)
            ]
    for isa, rs in outs.items():
        for r, s in zip(rs, outs["scalar"]):
            assert torch.equal(r, s), isa


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
def test_binary_vector_paths_match_scalar_at_extreme_scales(dtype):
    # Output scales from huge to the smallest the ops accept (2^15 output steps per input step):
    # |v| far past the 8-bit range, which the vector loops round first and saturate in the pack;
    # every path equals the scalar loop and the float64 reference.
    torch.manual_seed(2)
    from torch_qplugin import _isa

    lo, hi = ref.QRANGE[dtype]
    a = rand_q((4 * 64 + 19,), dtype, 0.02, lo + 7)
    b = rand_q((4 * 64 + 19,), dtype, 0.07, hi - 3)
    for so in (0.5, 1e-4, 2.2e-6, 1e30):
        outs = {}
        for isa in _isa.supported_isas():
            with __import__("torch_qplugin").kernel_isa(isa):
                outs[isa] = [
                    f(x, y, so, zo).int_repr()
                    for f in (q.add, q.add_relu, q.mul, q.mul_relu)
                    for x, y in ((a, b), (a, b[:1]))
                    for zo in (lo, (lo + hi) // 2)
                ]
        for isa, rs in outs.items():
            for r, s in zip(rs, outs["scalar"]):
                assert torch.equal(r, s), (isa, so)
        for name, (ours, _, kind, relu) in BIN.items():
            r = ours(a, b, so, hi)
            ref.assert_within_steps(r, ref.binary_ref(kind, a, b, so, hi, relu), 1, f"{name} {so}")


def test_add_relu_clamps_at_zero_point():
    a = torch.quantize_per_tensor(torch.linspace(-3, 3, 101), 0.05, 10, torch.quint8)
    r = q.add_relu(a, a, 0.1, 50)
    assert r.int_repr().min().item() == 50
    assert (r.dequantize() >= 0).all()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("c", [0.5, -3.0, 10.0, 0.0, 1e-4, -1000.0, 7])
def test_add_scalar_vs_torch(isa, dtype, c):
    for relu in (False, True):
        for zp in [0, 3] if dtype == torch.qint32 else [ref.QRANGE[dtype][0], 0, 100 if dtype == torch.quint8 else 50]:
            a = rand_q((3, 37), dtype, 0.05, zp)
            r = (q.add_scalar_relu if relu else q.add_scalar)(a, c)
            exp, s, z = ref.scalar_op_ref("add", a, c, relu)
            assert r.q_scale() == pytest.approx(s, rel=1e-15) and r.q_zero_point() == z
            ref.assert_within_steps(r, exp, 1, f"add_scalar {c}")
            t = (torch.ops.quantized.add_scalar_relu if relu else torch.ops.quantized.add_scalar)(a, c)
            assert r.q_scale() == t.q_scale() and r.q_zero_point() == t.q_zero_point()
            if dtype != torch.qint32:
                assert torch.equal(r.int_repr(), t.int_repr())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("c", [0.5, -3.0, 2, 0.0, -0.25])
def test_mul_scalar_vs_torch(isa, dtype, c):
    for zp in [0, 5] if dtype == torch.qint32 else [ref.QRANGE[dtype][0], 0, 17]:
        a = rand_q((5, 33), dtype, 0.05, zp)
        r = q.mul_scalar(a, c)
        exp, s, z = ref.scalar_op_ref("mul", a, c)
        assert r.q_scale() == pytest.approx(s, rel=1e-15) and r.q_zero_point() == z
        ref.assert_within_steps(r, exp, 1, f"mul_scalar {c}")
        t = torch.ops.quantized.mul_scalar(a, c)
        assert r.q_scale() == t.q_scale() and r.q_zero_point() == t.q_zero_point()
        assert torch.equal(r.int_repr(), t.int_repr())


def test_scalar_ops_keep_layout_and_empty():
    a = rand_q((2, 8, 5, 3), torch.quint8, 0.05, 128).contiguous(memory_format=torch.channels_last)
    for f in (lambda x: q.add_scalar(x, 1.0), lambda x: q.add_scalar_relu(x, -2.0), lambda x: q.mul_scalar(x, -2.0)):
        r = f(a)
        assert r.is_contiguous(memory_format=torch.channels_last)
        assert torch.equal(r.int_repr(), f(a.contiguous()).int_repr())
        assert torch.equal(f(a[:, :, ::2]).int_repr(), f(a[:, :, ::2].contiguous()).int_repr())
    e = rand_q((0, 4), torch.qint8, 0.1, 0)
    assert q.add_scalar(e, 1.0).shape == (0, 4) and q.mul_scalar(e, 2.0).shape == (0, 4)


@pytest.mark.parametrize("dtype", [torch.quint8, torch.qint8])
def test_matmul_vs_torch(dtype):
    gen = torch.Generator().manual_seed(3)
    for sa, sb in [((4, 8), (8, 5)), ((2, 3, 6), (6, 4)), ((2, 3, 6), (2, 6, 7)), ((6,), (6, 3)), ((0, 4), (4, 2))]:
        a, b = rand_q(sa, dtype, 0.02, 3, gen), rand_q(sb, dtype, 0.03, -1 if dtype == torch.qint8 else 7, gen)
        r = q.matmul(a, b, 0.5, 10)
        real = np.matmul(ref._deq64(a), ref._deq64(b))
        ref.assert_within_steps(r, ref.requantize_ref(real, 0.5, 10, dtype), 1, f"matmul {sa} {sb}")
        # dequantize, float32 matmul (ATen's, as torch's), then the quantize rule: exact
        prod = torch.matmul(torch.from_numpy(ref.dequantize_ref(a)), torch.from_numpy(ref.dequantize_ref(b)))
        np.testing.assert_array_equal(r.int_repr().numpy(), ref.quantize_per_tensor_ref(prod.numpy(), 0.5, 10, dtype))
        if quantize_exact(dtype):
            assert torch.equal(r.int_repr(), torch.ops.quantized.matmul(a, b, 0.5, 10).int_repr())


def test_opcheck():
    a = rand_q((2, 3, 4), torch.quint8, 0.05, 128)
    b = rand_q((3, 4), torch.quint8, 0.02, 100)
    utils = ("test_schema", "test_autograd_registration")
    for op in (q.add, q.add_relu, q.mul, q.mul_relu):
        torch.library.opcheck(op, (a, b, 0.1, 120), test_utils=utils)
    for op in (q.add_scalar, q.add_scalar_relu, q.mul_scalar):
        torch.library.opcheck(op, (a, 1.5), test_utils=utils)
    torch.library.opcheck(q.matmul, (a, rand_q((4, 2), torch.quint8, 0.1, 0), 0.3, 5), test_utils=utils)


def test_bad_inputs():
    a = rand_q((2, 3), torch.quint8, 0.05, 128)
    s8 = rand_q((2, 3), torch.qint8, 0.05, 0)
    with pytest.raises(RuntimeError, match=r"qplugin::add: qb should have the dtype of qa \(QUInt8\), got QInt8"):
        q.add(a, s8, 0.1, 0)
    with pytest.raises(
        RuntimeError,
        match=r"qplugin::mul: the shapes of the two inputs should be broadcastable, got \[2, 3\] and \[4\]",
    ):
        q.mul(a, rand_q((4,), torch.quint8, 0.05, 1), 0.1, 0)
    with pytest.raises(
        RuntimeError,
        match=r"qplugin::add_relu: qb should be a quantized tensor .*got a non-quantized tensor of dtype Float",
    ):
        q.add_relu(a, torch.randn(2, 3), 0.1, 0)
    with pytest.raises(
        RuntimeError, match=r"qplugin::add: qa should be a quantized tensor .*non-quantized tensor of dtype Float"
    ):
        q.add(torch.randn(2, 3), torch.randn(2, 3), 0.1, 0)
    with pytest.raises(ValueError, match=r"qplugin::add: scale should be a positive finite number, got -0.1"):
        q.add(a, a, -0.1, 0)
    with pytest.raises(ValueError, match=r"qplugin::mul_relu: zero_point should be in \[0, 255\] for QUInt8, got 300"):
        q.mul_relu(a, a, 0.1, 300)
    pc = torch.quantize_per_channel(torch.randn(2, 3), torch.tensor([0.1, 0.2]), torch.tensor([0, 1]), 0, torch.quint8)
    with pytest.raises(
        RuntimeError,
        match=r"qplugin::add: qb should be a per_tensor_affine quantized tensor, got qscheme per_channel_affine",
    ):
        q.add(a, pc, 0.1, 0)
    with pytest.raises(RuntimeError, match=r"qplugin::add_scalar: qa should be a per_tensor_affine"):
        q.add_scalar(pc, 1.0)
    with pytest.raises(ValueError, match=r"qplugin::add_scalar: b should be a finite number, got nan"):
        q.add_scalar(a, float("nan"))
    with pytest.raises(ValueError, match=r"qplugin::mul_scalar: b should be a finite number, got inf"):
        q.mul_scalar(a, float("inf"))
    with pytest.raises(RuntimeError, match=r"qplugin::mul_scalar: qa should be a quantized tensor"):
        q.mul_scalar(torch.randn(3), 2.0)
    with pytest.raises(
        RuntimeError, match=r"qplugin::matmul: qa should be torch.quint8 or torch.qint8, got torch.qint32"
    ):
        q.matmul(rand_q((2, 2), torch.qint32), rand_q((2, 2), torch.qint32), 0.1, 0)
    with pytest.raises(ValueError, match=r"qplugin::matmul: qa's last dim \(3\) should equal qb's second-to-last dim"):
        q.matmul(a, a, 0.1, 0)
