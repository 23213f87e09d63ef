"""qplugin embedding ops on 8-bit and 4-bit row-wise quantized weights vs the float64 reference
(test/reference.py) and torch's quantized:: embedding ops, on every kernel path (isa fixture)."""

import warnings
from typing import List, Tuple

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import reference as ref
import torch_qplugin
from torch_qplugin import _isa

q = torch.ops.qplugin
tq_ops = torch.ops.quantized

BITS = [8, 4]


def _prepack(w, bits):
    return q.embedding_bag_byte_prepack(w) if bits == 8 else q.embedding_bag_4bit_prepack(w)


def _rowwise(bits):
    return q.embedding_bag_byte_rowwise_offsets if bits == 8 else q.embedding_bag_4bit_rowwise_offsets


def _starts(offsets, n, include_last_offset):
    off = list(offsets)
    return off if include_last_offset else off + [n]


def _case(seed, rows=57, dim=36, n=80, bags=9):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(rows, dim, generator=g) * 3
    idx = torch.randint(0, rows, (n,), generator=g)
    cuts = torch.sort(torch.randint(0, n + 1, (bags - 1,), generator=g)).values
    off = torch.cat([torch.zeros(1, dtype=torch.long), cuts])  # bag lengths vary, some empty
    return w, idx, off


def _close(actual, expected, what):
    expected = np.asarray(expected)
    tol = 1e-5 * max(1.0, float(np.abs(expected).max(initial=0)))
    np.testing.assert_allclose(actual.numpy().astype(np.float64), expected, rtol=1e-5, atol=tol, err_msg=what)


@pytest.mark.parametrize("bits", BITS)
def test_fused_prepack_matches_torch_and_round_trips(bits):
    # torch's 4-bit prepack takes 2-D weights only
    shapes = [(57, 36), (3, 1, 16), (4, 7), (0, 8)] if bits == 8 else [(57, 36), (4, 8), (6, 14)]
    for seed, shape in enumerate(shapes):
        w = torch.randn(shape, generator=torch.Generator().manual_seed(seed)) * 4
        ours = _prepack(w, bits)
        theirs = tq_ops.embedding_bag_byte_prepack(w) if bits == 8 else tq_ops.embedding_bag_4bit_prepack(w)
        assert torch.equal(ours, theirs), f"{bits}-bit prepack {shape}"
        if w.numel() == 0:
            continue
        codes, scale, bias = ref.fused_rows_ref(ours.reshape(-1, ours.shape[-1]).numpy(), bits)
        # every code in range and the row reproduced within half a step (+ fp16 bias rounding at 4 bits)
        assert codes.min() >= 0 and codes.max() <= (255 if bits == 8 else 15)
        real = (scale[:, None].astype(np.float64) * codes + bias[:, None])[:, : shape[-1]]
        err = np.abs(real - w.reshape(-1, shape[-1]).numpy())
        step = scale[:, None].astype(np.float64)
        assert (err <= 0.5 * step + 2e-3 * np.abs(w.reshape(-1, shape[-1]).numpy()) + 1e-6).all()
        unpacked = q.embedding_bag_byte_unpack(ours) if bits == 8 else q.embedding_bag_4bit_unpack(ours)
        full = (scale[:, None].astype(np.float64) * codes + bias[:, None]).astype(np.float32)
        np.testing.assert_array_equal(unpacked.reshape(-1, unpacked.shape[-1]).numpy(), full)


@pytest.mark.parametrize("bits", BITS)
@pytest.mark.parametrize("mode", [0, 1, 2])
def test_rowwise_offsets_vs_reference(isa, bits, mode):
    for seed in range(3):
        w, idx, off = _case(seed)
        fused = _prepack(w, bits)
        codes, scale, bias = ref.fused_rows_ref(fused.numpy(), bits)
        for include_last in (False, True):
            o = torch.cat([off, torch.tensor([len(idx)])]) if include_last else off
            out = _rowwise(bits)(fused, idx, o, False, mode, False, None, None, include_last)
            expected = ref.embedding_bag_ref(
                codes, scale, bias, idx.tolist(), _starts(o.tolist(), len(idx), include_last), mode
            )
            _close(out, expected, f"{bits}-bit mode {mode} seed {seed} last {include_last}")
            # float embedding_bag on the same (float) rows agrees
            table = torch.from_numpy((scale[:, None].astype(np.float64) * codes + bias[:, None]).astype(np.float32))
            fl = F.embedding_bag(idx, table, off, mode=["sum", "mean", "max"][mode])
            _close(out if not include_last else out, fl.double().numpy(), "vs F.embedding_bag")


@pytest.mark.parametrize("bits", BITS)
def test_sum_matches_torch(bits):
    w, idx, off = _case(7)
    fused = _prepack(w, bits)
    psw = torch.rand(len(idx)) * 2
    for weights in (None, psw):
        ours = _rowwise(bits)(fused, idx, off, False, 0, False, weights, None, False)
        theirs = (
            tq_ops.embedding_bag_byte_rowwise_offsets if bits == 8 else tq_ops.embedding_bag_4bit_rowwise_offsets
        )(fused, idx, off, False, 0, False, weights, None, False)
        _close(ours, theirs.double().numpy(), f"{bits}-bit vs torch")


@pytest.mark.parametrize("bits", BITS)
def test_per_sample_weights_pruned_and_2d_indices(isa, bits):
    w, idx, off = _case(3)
    fused = _prepack(w, bits)
    codes, scale, bias = ref.fused_rows_ref(fused.numpy(), bits)
    psw = torch.rand(len(idx)) * 2 - 0.5
    out = _rowwise(bits)(fused, idx.int(), off.int(), False, 0, False, psw, None, False)
    expected = ref.embedding_bag_ref(
        codes, scale, bias, idx.tolist(), _starts(off.tolist(), len(idx), False), 0, psw.numpy()
    )
    _close(out, expected, "per_sample_weights")
    # pruned weights: indices go through compressed_indices_mapping; -1 skips the row
    mapping = torch.randint(-1, w.shape[0], (100,))
    orig = torch.randint(0, 100, (len(idx),))
    out = _rowwise(bits)(fused, orig, off, False, 0, True, None, mapping, False)
    mapped = mapping[orig].tolist()
    expected = ref.embedding_bag_ref(codes, scale, bias, mapped, _starts(off.tolist(), len(idx), False), 0)
    _close(out, expected, "pruned")
    # 2-D indices without offsets: one bag a row
    idx2 = idx[:72].reshape(8, 9)
    out = _rowwise(bits)(fused, idx2, None, False, 1, False, None, None, False)
    expected = ref.embedding_bag_ref(codes, scale, bias, idx2.flatten().tolist(), list(range(0, 73, 9)), 1)
    _close(out, expected, "2-d indices")


def _float_qparams_weight(w, dtype):
    lo, hi = w.min(1).values, w.max(1).values
    qmax = 255 if dtype == torch.quint8 else 15
    scale = torch.where((hi - lo) / qmax > 1e-7, (hi - lo) / qmax, torch.ones_like(lo))
    return torch.quantize_per_channel(w, scale, -lo / scale, 0, dtype)


@pytest.mark.parametrize("dtype", [torch.quint8, torch.quint4x2])
def test_packed_params_ops(isa, dtype):
    w, idx, off = _case(11, dim=34)
    qw = _float_qparams_weight(w, dtype)
    packed = q.embedding_bag_prepack(qw)
    un = q.embedding_bag_unpack(packed)
    assert un.dtype == dtype and un.qscheme() == torch.per_channel_affine_float_qparams
    assert torch.equal(un.int_repr(), qw.int_repr())
    assert torch.equal(un.q_per_channel_scales(), qw.q_per_channel_scales())
    assert torch.equal(un.q_per_channel_zero_points(), qw.q_per_channel_zero_points())
    s = qw.q_per_channel_scales().float().numpy()
    b = (qw.q_per_channel_zero_points().float() * qw.q_per_channel_scales().float() * -1).numpy()
    codes = (
        (
            qw.int_repr().numpy()
            if dtype == torch.quint8
            else np.stack([qw.int_repr().numpy() & 15, qw.int_repr().numpy() >> 4], -1)
        )
        .reshape(w.shape)
        .astype(np.int64)
    )
    lookup = (q.embedding_byte if dtype == torch.quint8 else q.embedding_4bit)(packed, idx.reshape(8, 10))
    exact = (s[:, None].astype(np.float64) * codes + b[:, None].astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(lookup.numpy(), exact[idx.numpy()].reshape(8, 10, -1))  # one rounding: exact
    bag = (q.embedding_bag_byte if dtype == torch.quint8 else q.embedding_bag_4bit)(packed, idx, off, False, 1)
    _close(bag, ref.embedding_bag_ref(codes, s, b, idx.tolist(), _starts(off.tolist(), len(idx), False), 1), "bag mean")
    theirs = (tq_ops.embedding_bag_byte if dtype == torch.quint8 else tq_ops.embedding_bag_4bit)(
        tq_ops.embedding_bag_prepack(qw), idx, off, False, 0
    )
    ours = (q.embedding_bag_byte if dtype == torch.quint8 else q.embedding_bag_4bit)(packed, idx, off, False, 0)
    # torch keeps 4-bit scale / bias in fp16: a step of fp16 rounding apart there
    tol = 1e-5 if dtype == torch.quint8 else 5e-3
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=tol, atol=tol * 10)


def test_paths_bit_identical():
    w, idx, off = _case(5, rows=300, dim=77, n=2000, bags=40)
    psw = torch.rand(len(idx))
    for bits in BITS:
        fused = _prepack(w, bits)
        results = []
        for isa in _isa.supported_isas():
            with torch_qplugin.kernel_isa(isa):
                results.append(
                    [
                        _rowwise(bits)(fused, idx, off, False, m, False, psw if m == 0 else None, None, False)
                        for m in (0, 1, 2)
                    ]
                )
        for r in results[1:]:
            for a, b in zip(r, results[0]):
                assert torch.equal(a, b)


def test_empty_inputs():
    fused = _prepack(torch.randn(5, 8), 8)
    assert _rowwise(8)(fused, torch.zeros(0, dtype=torch.long), torch.zeros(3, dtype=torch.long)).equal(
        torch.zeros(3, 8)
    )
    assert _rowwise(8)(fused, torch.zeros(0, dtype=torch.long), torch.zeros(0, dtype=torch.long)).shape == (0, 8)
    packed = q.embedding_bag_prepack(_float_qparams_weight(torch.randn(5, 8), torch.quint8))
    assert q.embedding_byte(packed, torch.zeros(0, 3, dtype=torch.long)).shape == (0, 3, 8)


def test_bad_input():
    fused = _prepack(torch.randn(5, 8), 8)
    idx, off = torch.tensor([0, 4, 2]), torch.tensor([0, 2])
    with pytest.raises(
        IndexError,
        match=r"qplugin::embedding_bag_byte_rowwise_offsets: indices should be in \[0, 5\) \(num_embeddings\), got values in \[0, 5\]",
    ):
        _rowwise(8)(fused, torch.tensor([0, 5]), off)
    with pytest.raises(IndexError, match=r"indices should be in \[0, 5\).*got values in \[-1, 4\]"):
        _rowwise(8)(fused, torch.tensor([-1, 4]), off)
    with pytest.raises(
        ValueError, match=r"qplugin::embedding_bag_byte_rowwise_offsets: offsets should start at 0, got 1"
    ):
        _rowwise(8)(fused, idx, torch.tensor([1, 2]))
    with pytest.raises(
        ValueError,
        match=r"offsets should be non-decreasing and at most the number of indices \(3\), got offsets\[0\] = 0 then 4",
    ):
        _rowwise(8)(fused, idx, torch.tensor([0, 4]))
    with pytest.raises(ValueError, match=r"mode should be 0 \(sum\), 1 \(mean\) or 2 \(max\), got 3"):
        _rowwise(8)(fused, idx, off, False, 3)
    with pytest.raises(ValueError, match=r"per_sample_weights should only be given with mode 0 \(sum\), got mode 1"):
        _rowwise(8)(fused, idx, off, False, 1, False, torch.ones(3))
    with pytest.raises(ValueError, match=r"per_sample_weights should be a float tensor with one weight an index \(3\)"):
        _rowwise(8)(fused, idx, off, False, 0, False, torch.ones(2))
    with pytest.raises(ValueError, match=r"indices should be an int64 or int32 tensor, got dtype Float"):
        _rowwise(8)(fused, idx.float(), off)
    with pytest.raises(ValueError, match=r"indices should be 2-D \[bags, indices per bag\] when offsets is None"):
        _rowwise(8)(fused, idx, None)
    with pytest.raises(ValueError, match=r"compressed_indices_mapping should be given with pruned_weights=True"):
        _rowwise(8)(fused, idx, off, False, 0, True)
    with pytest.raises(ValueError, match=r"weight should be a 2-D uint8 tensor of fused rows .* got dtype Float"):
        _rowwise(8)(torch.randn(5, 16), idx, off)
    with pytest.raises(ValueError, match=r"weight should be a 2-D uint8 tensor of fused rows .* at least 4 columns"):
        _rowwise(4)(torch.zeros(5, 3, dtype=torch.uint8), idx, off)
    with pytest.raises(NotImplementedError, match=r"qplugin::embedding_bag_4bit_prepack: optimized_qparams=True"):
        q.embedding_bag_4bit_prepack(torch.randn(4, 8), True)
    with pytest.raises(
        ValueError,
        match=r"qplugin::embedding_bag_byte_prepack: weight should be a float32 or float16 tensor, got dtype Long",
    ):
        q.embedding_bag_byte_prepack(torch.zeros(3, 4, dtype=torch.long))
    # packed params
    with pytest.raises(RuntimeError, match=r"qplugin::embedding_bag_prepack: weight should be a quantized tensor"):
        q.embedding_bag_prepack(torch.randn(4, 8))
    with pytest.raises(
        ValueError,
        match=r"qplugin::embedding_bag_prepack: weight should be per_channel_affine_float_qparams along axis 0, got qscheme per_tensor_affine",
    ):
        q.embedding_bag_prepack(torch.quantize_per_tensor(torch.randn(4, 8), 0.1, 3, torch.quint8))
    with pytest.raises(
        ValueError, match=r"qplugin::embedding_bag_prepack: weight should be quint8 or quint4x2, got QInt8"
    ):
        q.embedding_bag_prepack(
            torch.quantize_per_channel(torch.randn(4, 8), torch.ones(4), torch.zeros(4), 0, torch.qint8)
        )
    p4 = q.embedding_bag_prepack(_float_qparams_weight(torch.randn(5, 8), torch.quint4x2))
    with pytest.raises(
        ValueError, match=r"qplugin::embedding_byte: weight should hold 8-bit rows \(quint8\), got 4-bit rows"
    ):
        q.embedding_byte(p4, idx)
    with pytest.raises(ValueError, match=r"qplugin::embedding_bag_byte: weight should hold 8-bit rows"):
        q.embedding_bag_byte(p4, idx, off)
    with pytest.raises(
        TypeError,
        match=r"qplugin::embedding_byte: weight should be a EmbeddingPackedParamsBase .* got LinearPackedParamsBase",
    ):
        q.embedding_byte(q.linear_prepack(torch.quantize_per_tensor(torch.randn(3, 4), 0.1, 0, torch.qint8), None), idx)
    with pytest.raises(IndexError, match=r"qplugin::embedding_4bit: indices should be in \[0, 5\)"):
        q.embedding_4bit(p4, torch.tensor([7]))


@pytest.mark.parametrize("bits", BITS)
@pytest.mark.parametrize("dim", [8, 36, 200])
def test_bad_index_raises_wherever_it_sits(isa, bits, dim):
    # The kernel checks each index as it reads it (no separate pass): a bad one in any bag, in any
    # mode, at any row width (one block, a tail, several blocks), raises the same error, and -1 is an
    # error unless it came through compressed_indices_mapping. Indices no bag reads (past
    # include_last_offset's last offset, or with no output) are checked before the kernel.
    rows = 23
    fused = _prepack(torch.randn(rows, dim), bits)
    g = torch.Generator().manual_seed(dim + bits)
    n = 300
    off = torch.arange(0, n, 7)
    for bad in (rows, rows + 1000, -1, -7, 2**40, -(2**62)):
        for at in (0, 150, n - 1):
            idx = torch.randint(0, rows, (n,), generator=g)
            idx[at] = bad
            lo, hi = int(idx.min()), int(idx.max())
            msg = rf"indices should be in \[0, {rows}\) \(num_embeddings\), got values in \[{lo}, {hi}\]"
            for mode in (0, 1, 2):
                with pytest.raises(IndexError, match=msg):
                    _rowwise(bits)(fused, idx, off, False, mode)
            with pytest.raises(IndexError, match=msg):
                _rowwise(bits)(fused, idx, off, False, 0, False, torch.rand(n))
            with pytest.raises(IndexError, match=msg):  # the bad index after the last offset
                _rowwise(bits)(
                    fused,
                    idx,
                    torch.tensor([0, min(at, n - 2)]) if at > 0 else off,
                    False,
                    0,
                    False,
                    None,
                    None,
                    at > 0,
                )
    idx = torch.tensor([3, rows])
    with pytest.raises(IndexError, match=rf"got values in \[3, {rows}\]"):  # no bag at all
        _rowwise(bits)(fused, idx, torch.tensor([0]), False, 0, False, None, None, True)
    # through compressed_indices_mapping, -1 is a pruned row: skipped, no error
    mapping = torch.tensor([-1, 2, 0], dtype=torch.int32)
    out = _rowwise(bits)(fused, torch.tensor([0, 1, 0, 2]), torch.tensor([0, 1]), False, 0, True, None, mapping)
    plain = _rowwise(bits)(fused, torch.tensor([2, 0]), torch.tensor([0, 0]))
    assert torch.equal(out[1], plain[1]) and torch.equal(out[0], torch.zeros(dim))


def test_bad_offsets_anywhere(isa):
    # offsets are checked in one vector pass (bag_bounds_ok) on each kernel path: a decreasing pair or
    # one past the number of indices, in the vector body or the scalar tail, is named.
    fused = _prepack(torch.randn(11, 16), 8)
    n = 300
    idx = torch.randint(0, 11, (n,))
    off = torch.arange(0, n, 7)  # 43 bags
    assert _rowwise(8)(fused, idx, off).shape == (43, 16)
    for p in (1, 2, 5, 8, 20, 40, 41, 42):
        for v in (int(off[p - 1]) - 1, n + 1):
            o = off.clone()
            o[p] = v
            if v < 0:
                continue
            msg = (
                rf"offsets should be non-decreasing and at most the number of indices \({n}\), "
                rf"got offsets\[{p - 1}\] = {int(o[p - 1])} then {v}"
            )
            with pytest.raises(ValueError, match=msg):
                _rowwise(8)(fused, idx, o)
            with pytest.raises(ValueError, match=msg):
                _rowwise(8)(fused, idx, o, False, 0, False, None, None, True)
    o = off.clone()
    o[42] = n  # the last bag empty, ending exactly at n: fine
    assert _rowwise(8)(fused, idx, o)[42].equal(torch.zeros(16))


def _getstate_fn(p: torch.classes.qplugin.EmbeddingPackedParamsBase) -> Tuple[int, int, int, List[torch.Tensor]]:
    return p.__getstate__()


def _setstate_fn(p: torch.classes.qplugin.EmbeddingPackedParamsBase, s: Tuple[int, int, int, List[torch.Tensor]]):
    p.__setstate__(s)


def _script(fn):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"`torch\.jit\.\w+` is deprecated")
        return torch.jit.script(fn)


def test_packed_params_state_validates():
    p = q.embedding_bag_prepack(_float_qparams_weight(torch.randn(6, 10), torch.quint4x2))
    assert repr(p) == (
        "EmbeddingPackedParamsBase(num_embeddings=6, embedding_dim=10, dtype=quint4x2, "
        "qscheme=per_channel_affine_float_qparams)"
    )
    get, put = _script(_getstate_fn), _script(_setstate_fn)
    version, bits, dim, (codes, scales, zps) = get(p)
    assert (version, bits, dim) == (1, 4, 10) and codes.shape == (6, 5)
    fresh = q.embedding_bag_prepack(_float_qparams_weight(torch.randn(6, 10), torch.quint4x2))
    put(fresh, (version, bits, dim, [codes, scales, zps]))
    assert torch.equal(q.embedding_bag_unpack(fresh).int_repr(), q.embedding_bag_unpack(p).int_repr())
    with pytest.raises(RuntimeError, match=r"EmbeddingPackedParamsBase.__setstate__: version should be 1"):
        put(fresh, (2, bits, dim, [codes, scales, zps]))
    with pytest.raises(RuntimeError, match=r"EmbeddingPackedParamsBase.__setstate__: codes should have 5 bytes a row"):
        put(fresh, (1, bits, dim, [codes[:, :4].contiguous(), scales, zps]))
    with pytest.raises(RuntimeError, match=r"bits should be 8 or 4, got 3"):
        put(fresh, (1, 3, dim, [codes, scales, zps]))
    with pytest.raises(RuntimeError, match=r"scales should be a 1-D float tensor of 6 entries"):
        put(fresh, (1, bits, dim, [codes, scales[:5], zps]))
    with pytest.raises(RuntimeError, match=r"scales \(of a row\) should be a positive finite number, got nan"):
        put(fresh, (1, bits, dim, [codes, torch.full((6,), float("nan")), zps]))
    with pytest.raises(RuntimeError, match=r"scales \(of a row\) should be a positive finite number, got 0"):
        put(fresh, (1, bits, dim, [codes, torch.zeros(6), zps]))
    with pytest.raises(RuntimeError, match=r"zero_points should be finite, got inf for row 0"):
        put(fresh, (1, bits, dim, [codes, scales, torch.full((6,), float("inf"))]))


def test_opcheck():
    fused = _prepack(torch.randn(5, 8), 8)
    idx, off = torch.tensor([0, 4, 2]), torch.tensor([0, 2])
    utils = ("test_schema", "test_autograd_registration", "test_faketensor")
    for args in [(fused, idx, off), (fused, idx, off, False, 1), (fused, idx.reshape(1, 3), None, False, 2)]:
        torch.library.opcheck(q.embedding_bag_byte_rowwise_offsets.default, args, test_utils=utils[:2])
    torch.library.opcheck(q.embedding_bag_byte_prepack.default, (torch.randn(4, 6),), test_utils=utils[:2])


# ---- kernel shapes: every register-block layout of the SIMD paths (docs/design/embedding.md) ----

# Row widths around the vector widths (8 / 16 floats), the 8-vector block (64 / 128 floats) and
# two blocks, odd widths (masked / scalar tails), widths where two bags go interleaved (<= 4
# accumulators) and where they do not.
DIMS = [
    1,
    2,
    3,
    5,
    7,
    8,
    9,
    15,
    16,
    17,
    24,
    31,
    32,
    33,
    40,
    48,
    63,
    64,
    65,
    72,
    80,
    96,
    100,
    127,
    128,
    129,
    136,
    144,
    160,
    192,
    200,
]


def _bags_case(seed, rows, n, bags):
    """Indices with bag lengths 0 .. long, an odd bag count (a bag left over after the pairs),
    unequal neighbours (one of a pair runs on alone)."""
    g = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, rows, (n,), generator=g)
    cuts = torch.sort(torch.randint(0, n + 1, (bags - 1,), generator=g)).values
    return idx, torch.cat([torch.zeros(1, dtype=torch.long), cuts])


def _on_every_path(fn):
    """fn() on every kernel path: [(isa, result)], scalar reference first."""
    out = []
    for isa in _isa.supported_isas():
        with torch_qplugin.kernel_isa(isa):
            out.append((isa, fn()))
    return out


def _same_bits(results, what):
    ref_isa, ref = results[0]
    for isa, r in results[1:]:
        assert torch.equal(r.view(torch.int32), ref.view(torch.int32)), f"{what}: {isa} differs from {ref_isa}"


@pytest.mark.parametrize("bits", BITS)
def test_every_row_width_bit_identical_and_vs_reference(bits):
    for dim in DIMS:
        w = torch.randn(23, dim, generator=torch.Generator().manual_seed(dim)) * 2
        fused = _prepack(w, bits)
        codes, scale, bias = ref.fused_rows_ref(fused.numpy(), bits)
        idx, off = _bags_case(dim, 23, 61, 11)
        psw = torch.rand(len(idx), generator=torch.Generator().manual_seed(1)) * 2 - 0.5
        starts = _starts(off.tolist(), len(idx), False)
        for mode, weights in [(0, None), (0, psw), (1, None), (2, None)]:
            results = _on_every_path(lambda: _rowwise(bits)(fused, idx, off, False, mode, False, weights, None, False))
            _same_bits(results, f"{bits}-bit dim {dim} mode {mode} psw {weights is not None}")
            expected = ref.embedding_bag_ref(
                codes, scale, bias, idx.tolist(), starts, mode, None if weights is None else weights.numpy()
            )
            _close(results[0][1], expected, f"{bits}-bit dim {dim} mode {mode}")


@pytest.mark.parametrize("dtype", [torch.quint8, torch.quint4x2])
def test_packed_params_every_row_width_bit_identical(dtype):
    # packed params keep (scale, bias) in their own float32 table: the kernels' other qparams layout
    for dim in [d for d in DIMS if dtype == torch.quint8 or d % 2 == 0]:
        w = torch.randn(19, dim, generator=torch.Generator().manual_seed(dim))
        qw = _float_qparams_weight(w, dtype)
        packed = q.embedding_bag_prepack(qw)
        bag = q.embedding_bag_byte if dtype == torch.quint8 else q.embedding_bag_4bit
        idx, off = _bags_case(dim + 100, 19, 45, 8)
        psw = torch.rand(len(idx), generator=torch.Generator().manual_seed(2))
        s = qw.q_per_channel_scales().float().numpy()
        b = (qw.q_per_channel_zero_points().float() * qw.q_per_channel_scales().float() * -1).numpy()
        codes = (
            qw.int_repr().numpy()
            if dtype == torch.quint8
            else np.stack([qw.int_repr().numpy() & 15, qw.int_repr().numpy() >> 4], -1)
        ).reshape(w.shape)
        for mode, weights in [(0, psw), (1, None), (2, None)]:
            results = _on_every_path(lambda: bag(packed, idx, off, False, mode, False, weights, None, False))
            _same_bits(results, f"{dtype} dim {dim} mode {mode}")
            expected = ref.embedding_bag_ref(
                codes.astype(np.int64),
                s,
                b,
                idx.tolist(),
                _starts(off.tolist(), len(idx), False),
                mode,
                None if weights is None else weights.numpy(),
            )
            _close(results[0][1], expected, f"{dtype} dim {dim} mode {mode}")


@pytest.mark.parametrize("bits", BITS)
def test_long_bags_pruned_rows_and_lookups(bits):
    # bags far longer than the prefetch distance, side by side with short and empty ones, and
    # pruned rows (-1 through compressed_indices_mapping) inside them
    for dim in (32, 64, 128):
        w = torch.randn(3000, dim, generator=torch.Generator().manual_seed(dim))
        fused = _prepack(w, bits)
        codes, scale, bias = ref.fused_rows_ref(fused.numpy(), bits)
        g = torch.Generator().manual_seed(7)
        lengths = [1500, 3, 0, 700, 1, 1, 64, 65, 0]
        n = sum(lengths)
        off = torch.tensor([0] + list(np.cumsum(lengths)[:-1]), dtype=torch.long)
        mapping = torch.randint(0, 3000, (4000,), generator=g)
        mapping[torch.randint(0, 4000, (400,), generator=g)] = -1
        orig = torch.randint(0, 4000, (n,), generator=g)
        for mode in (0, 1, 2):
            results = _on_every_path(lambda: _rowwise(bits)(fused, orig, off, False, mode, True, None, mapping, False))
            _same_bits(results, f"{bits}-bit dim {dim} mode {mode} long bags")
            expected = ref.embedding_bag_ref(
                codes, scale, bias, mapping[orig].tolist(), _starts(off.tolist(), n, False), mode
            )
            _close(results[0][1], expected, f"{bits}-bit dim {dim} mode {mode} long bags")
        # lookups: one row a bag, many bags
        idx = torch.randint(0, 3000, (999,), generator=g)
        off1 = torch.arange(999)
        results = _on_every_path(lambda: _rowwise(bits)(fused, idx, off1))
        _same_bits(results, f"{bits}-bit dim {dim} lookups")
        full = (scale[:, None].astype(np.float64) * codes + bias[:, None]).astype(np.float32)
        np.testing.assert_array_equal(results[0][1].numpy(), full[idx.numpy()])  # one rounding: exact


@pytest.mark.parametrize("bits", BITS)
def test_tables_past_the_prefetch_cutoff(bits):
    # tables over 1 MiB take the kernel's prefetching instantiation (a template argument, chosen per
    # call); rows of one block and of several blocks plus a tail, every path bit-identical and
    # within float32 rounding of the reference
    for dim in (40, 200):
        row_bytes = dim + 8 if bits == 8 else (dim + 1) // 2 + 4
        rows = (3 << 19) // row_bytes + 1  # > 1.5 MiB of fused rows
        w = torch.randn(rows, dim, generator=torch.Generator().manual_seed(dim + bits))
        fused = _prepack(w, bits)
        assert fused.numel() > 1 << 20
        codes, scale, bias = ref.fused_rows_ref(fused.numpy(), bits)
        g = torch.Generator().manual_seed(11)
        lengths = [1, 0, 90, 3, 41, 1, 200]
        n = sum(lengths)
        off = torch.tensor([0] + list(np.cumsum(lengths)[:-1]), dtype=torch.long)
        idx = torch.randint(0, rows, (n,), generator=g)
        for mode in (0, 1, 2):
            results = _on_every_path(lambda: _rowwise(bits)(fused, idx, off, False, mode))
            _same_bits(results, f"{bits}-bit dim {dim} mode {mode} large table")
            expected = ref.embedding_bag_ref(codes, scale, bias, idx.tolist(), _starts(off.tolist(), n, False), mode)
            _close(results[0][1], expected, f"{bits}-bit dim {dim} mode {mode} large table")


def test_index_dtypes_and_threads_do_not_change_results():
    w = torch.randn(500, 48, generator=torch.Generator().manual_seed(3))
    fused = _prepack(w, 8)
    idx, off = _bags_case(4, 500, 20000, 301)
    base = _rowwise(8)(fused, idx, off)
    assert torch.equal(_rowwise(8)(fused, idx.int(), off.int()), base)
    assert torch.equal(_rowwise(8)(fused, idx.int(), off), base)
    threads = torch.get_num_threads()
    try:
        for t in (1, 2, 3):
            torch.set_num_threads(t)
            assert torch.equal(_rowwise(8)(fused, idx, off), base), f"{t} threads"
    finally:
        torch.set_num_threads(threads)


def test_max_with_nan_and_inf_rows_bit_identical():
    # the max rule (keep the running value only where it is > the row's: NaN rows replace it, a
    # later row replaces a NaN) is the same on every path, bit for bit
    w = torch.randn(6, 40, generator=torch.Generator().manual_seed(9))
    fused = _prepack(w, 8)
    fused[1, 40:44] = torch.tensor([float("nan")]).view(torch.uint8)  # row 1: scale NaN
    fused[2, 44:48] = torch.tensor([float("inf")]).view(torch.uint8)  # row 2: bias +inf
    fused[3, 44:48] = torch.tensor([float("-inf")]).view(torch.uint8)  # row 3: bias -inf
    idx = torch.tensor([1, 0, 1, 0, 2, 0, 3, 3, 0, 1])
    off = torch.tensor([0, 1, 2, 4, 6, 8])
    for mode in (0, 1, 2):
        results = _on_every_path(lambda: _rowwise(8)(fused, idx, off, False, mode))
        _same_bits(results, f"mode {mode} with NaN / inf rows")
    out = results[0][1]
    assert out[0].isnan().all() and out[1].isfinite().all()
    assert torch.equal(out[2], out[1])  # NaN, then row 0: row 0
    assert (out[3] == float("inf")).all() and (out[4] == float("-inf")).all()
    assert out[5].isnan().all()  # row 0, then NaN: NaN


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_plain_embedding_bag_matches_the_definition(isa, mode):
    w, idx, off = _case(11)
    fused = _prepack(w, 8)
    codes, scale, bias = ref.fused_rows_ref(fused.numpy(), 8)
    buf = q.plain_embedding_prepack(fused)
    out = q.plain_embedding_bag(buf, w.shape[0], w.shape[1], idx, off, mode)
    _close(
        out,
        ref.embedding_bag_ref(codes, scale, bias, idx.tolist(), _starts(off.tolist(), len(idx), False), mode),
        f"plain mode {mode}",
    )
    assert torch.equal(out, q.embedding_bag_byte_rowwise_offsets(fused, idx, off, False, mode))
    psw = torch.rand(len(idx))
    if mode == 0:
        assert torch.equal(
            q.plain_embedding_bag(buf, w.shape[0], w.shape[1], idx, off, 0, False, psw),
            q.embedding_bag_byte_rowwise_offsets(fused, idx, off, False, 0, False, psw),
        )
    with pytest.raises(IndexError, match=r"qplugin::plain_embedding_bag: indices should be in \[0, 57\)"):
        q.plain_embedding_bag(buf, w.shape[0], w.shape[1], idx + 57, off, mode)


@pytest.mark.parametrize(
    "scale, what",
    [
        (0.0, "got 0"),
        (-1.0, "got -1"),
        (1e-45, "float32 with a finite reciprocal"),
        (float("nan"), "got nan"),
        (float("inf"), "got inf"),
    ],
)
def test_plain_embedding_prepack_refuses_bad_row_scales(scale, what):
    fused = _prepack(torch.randn(4, 6), 8)
    fused[2, 6:10] = torch.tensor([scale], dtype=torch.float32).view(torch.uint8)
    with pytest.raises(
        ValueError,
        match=rf"qplugin::plain_embedding_prepack: fused_rows \(a row's scale\) should be "
        rf".*{what}",
    ):
        q.plain_embedding_prepack(fused)


def test_plain_embedding_prepack_checks_bias_codes_and_shape():
    fused = _prepack(torch.randn(4, 6), 8)
    bad = fused.clone()
    bad[1, 10:14] = torch.tensor([float("inf")], dtype=torch.float32).view(torch.uint8)
    with pytest.raises(
        ValueError,
        match=r"qplugin::plain_embedding_prepack: fused_rows should hold finite row biases, "
        r"got inf in row 1",
    ):
        q.plain_embedding_prepack(bad)
    four = fused.clone()
    four[:, :6] = 15
    assert torch.equal(q.plain_embedding_unpack(q.plain_embedding_prepack(four, 4)), four)
    four[3, 2] = 16
    with pytest.raises(
        ValueError,
        match=r"qplugin::plain_embedding_prepack: a 4-bit table's codes should be below 16, "
        r"got 16 in row 3",
    ):
        q.plain_embedding_prepack(four, 4)
    with pytest.raises(ValueError, match=r"qplugin::plain_embedding_prepack: bits should be 8 or 4, got 2"):
        q.plain_embedding_prepack(fused, 2)
    with pytest.raises(ValueError, match=r"qplugin::plain_embedding_prepack: fused_rows should be a 2-D uint8 tensor"):
        q.plain_embedding_prepack(fused.float())
    empty = q.plain_embedding_prepack(torch.empty(0, 8, dtype=torch.uint8))
    assert q.plain_embedding_bag(empty, 0, 0, torch.empty(0, dtype=torch.long), torch.tensor([0, 0])).shape == (2, 0)
