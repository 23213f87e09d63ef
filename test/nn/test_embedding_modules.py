"""nnq.Embedding / nnq.EmbeddingBag: torch.ao.nn.quantized's constructor, state_dict and results
(torch's as second oracle), from_float with float_qparams_weight_only_qconfig (8-bit and 4-bit),
convert / quantize_dynamic / torch's convert(mapping=ours) swap them in, deepcopy / torch.save."""

import copy
import io
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import torch_qplugin.nn.quantized as nnq
import torch_qplugin.quantization as tq

tnnq = pytest.importorskip("torch.ao.nn.quantized")
taq = pytest.importorskip("torch.ao.quantization")

QCONFIGS = {
    torch.quint8: tq.float_qparams_weight_only_qconfig,
    torch.quint4x2: tq.float_qparams_weight_only_qconfig_4bit,
}


def _dequant_rows(qw):
    return qw.dequantize().double()


@pytest.mark.parametrize("dtype", [torch.quint8, torch.quint4x2])
def test_embedding_from_float_matches_torch(dtype):
    f = nn.Embedding(40, 12)
    f.qconfig = QCONFIGS[dtype]
    ours = nnq.Embedding.from_float(f)
    tf = copy.deepcopy(f)
    tf.qconfig = (
        taq.float_qparams_weight_only_qconfig if dtype == torch.quint8 else taq.float_qparams_weight_only_qconfig_4bit
    )
    theirs = tnnq.Embedding.from_float(tf)
    # the same observer rule: the same quantized weight
    assert torch.equal(ours.weight().int_repr(), theirs.weight().int_repr())
    assert torch.allclose(ours.weight().q_per_channel_scales(), theirs.weight().q_per_channel_scales())
    idx = torch.randint(0, 40, (5, 7))
    out = ours(idx)
    assert out.shape == (5, 7, 12) and out.dtype == torch.float32
    torch.testing.assert_close(out.double(), _dequant_rows(ours.weight())[idx], rtol=1e-6, atol=1e-6)
    tol = 1e-6 if dtype == torch.quint8 else 5e-3  # torch keeps 4-bit scale / bias in fp16
    if dtype == torch.quint8:
        torch.testing.assert_close(out, theirs(idx), rtol=tol, atol=tol)
    else:  # torch's from_float builds a quint8 module around the 4-bit weight: call its 4-bit op
        theirs_out = torch.ops.quantized.embedding_4bit(theirs._packed_params._packed_weight, idx.flatten())
        torch.testing.assert_close(out.reshape(35, 12), theirs_out, rtol=tol, atol=tol)
    assert (out - f.weight[idx]).abs().max() < (0.02 if dtype == torch.quint8 else 0.3)
    if dtype == torch.quint8:
        assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("dtype", [torch.quint8, torch.quint4x2])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_from_float(dtype, mode):
    f = nn.EmbeddingBag(50, 16, mode=mode, include_last_offset=True)
    f.qconfig = QCONFIGS[dtype]
    m = nnq.EmbeddingBag.from_float(f)
    assert m.mode == mode and m.include_last_offset and m.dtype == dtype
    idx = torch.randint(0, 50, (30,))
    off = torch.tensor([0, 4, 4, 19, 30])
    out = m(idx, off)
    table = _dequant_rows(m.weight()).float()
    expected = F.embedding_bag(idx, table, off, mode=mode, include_last_offset=True)
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)
    if mode == "sum":
        psw = torch.rand(30)
        torch.testing.assert_close(
            m(idx, off, psw),
            F.embedding_bag(idx, table, off, mode="sum", per_sample_weights=psw, include_last_offset=True),
            rtol=1e-5,
            atol=1e-5,
        )
        tm = tnnq.EmbeddingBag(50, 16, include_last_offset=True, dtype=dtype)
        tm.set_weight(m.weight())
        tol = 1e-5 if dtype == torch.quint8 else 5e-3
        torch.testing.assert_close(out, tm(idx, off), rtol=tol, atol=tol)


def test_state_dict_interchange_with_torch():
    for dtype in (torch.quint8, torch.quint4x2):
        f = nn.EmbeddingBag(20, 8, mode="sum")
        f.qconfig = QCONFIGS[dtype]
        ours = nnq.EmbeddingBag.from_float(f)
        theirs = tnnq.EmbeddingBag(20, 8, dtype=dtype)
        theirs.load_state_dict(ours.state_dict())
        assert torch.equal(theirs.weight().int_repr(), ours.weight().int_repr())
        back = nnq.EmbeddingBag(20, 8, dtype=dtype)
        back.load_state_dict(theirs.state_dict())
        idx, off = torch.randint(0, 20, (9,)), torch.tensor([0, 3])
        assert torch.equal(back(idx, off), ours(idx, off))
        # deepcopy and torch.save of the whole module
        assert torch.equal(copy.deepcopy(ours)(idx, off), ours(idx, off))
        buf = io.BytesIO()
        torch.save(ours, buf)
        buf.seek(0)
        assert torch.equal(torch.load(buf, weights_only=False)(idx, off), ours(idx, off))


class _Rec(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.EmbeddingBag(30, 8, mode="mean")
        self.tok = nn.Embedding(30, 8)
        self.quant = tq.QuantStub()
        self.fc = nn.Linear(16, 4)
        self.dequant = tq.DeQuantStub()

    def forward(self, idx, off):
        x = torch.cat([self.emb(idx, off), self.tok(idx[:2])], 1)
        return self.dequant(self.fc(self.quant(x)))


def test_convert_and_quantize_dynamic_swap_embeddings():
    f = _Rec().eval()
    idx, off = torch.randint(0, 30, (10,)), torch.tensor([0, 6])
    m = copy.deepcopy(f)
    m.qconfig = tq.default_qconfig
    m.emb.qconfig = tq.float_qparams_weight_only_qconfig
    m.tok.qconfig = tq.float_qparams_weight_only_qconfig_4bit
    p = tq.prepare(m)
    p(idx, off)
    q = tq.convert(p)
    assert type(q.emb) is nnq.EmbeddingBag and type(q.tok) is nnq.Embedding and q.tok.dtype == torch.quint4x2
    assert type(q.fc) is nnq.Linear
    assert (q(idx, off) - f(idx, off)).abs().max() < 0.2
    d = tq.quantize_dynamic(
        f, {nn.EmbeddingBag: tq.float_qparams_weight_only_qconfig, nn.Embedding: tq.float_qparams_weight_only_qconfig}
    )
    assert type(d.emb) is nnq.EmbeddingBag and type(d.tok) is nnq.Embedding and type(d.fc) is nn.Linear
    # torch's own convert with our mapping
    g = copy.deepcopy(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g.emb.qconfig = taq.float_qparams_weight_only_qconfig
        taq.prepare(g, inplace=True)
        c = taq.convert(g, mapping=tq.get_default_static_quant_module_mappings())
    assert type(c.emb) is nnq.EmbeddingBag


def test_constructor_errors():
    with pytest.raises(NotImplementedError, match=r"dtype should be torch.quint8 or torch.quint4x2, got torch.qint8"):
        nnq.Embedding(4, 4, dtype=torch.qint8)
    with pytest.raises(ValueError, match=r"mode should be 'sum', 'mean' or 'max', got 'median'"):
        nnq.EmbeddingBag(4, 4, mode="median")
    f = nn.Embedding(4, 4)
    f.qconfig = tq.default_qconfig
    with pytest.raises(ValueError, match=r"needs a per_channel_affine_float_qparams weight observer"):
        nnq.Embedding.from_float(f)
    with pytest.raises(TypeError, match=r"module should be a torch.nn.EmbeddingBag, got Embedding"):
        nnq.EmbeddingBag.from_float(f)
