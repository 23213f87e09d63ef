"""qplugin::_rnn_layer_dynamic: one LSTM / GRU layer over a sequence (dynamic int8 GEMMs +
fused gate pointwise). The gates come from qplugin::linear_dynamic (tested in test_linear.py);
here the fused pointwise step is checked against float64 references of torch's definitions,
across kernel paths, and the whole layer against the unfused composite."""

import numpy as np
import pytest
import torch

import reference as ref
import torch_qplugin

q = torch.ops.qplugin


def make_packed(n, k, g, scale=0.02):
    w = torch.randn(n, k, generator=g) * 0.3
    wq = torch.quantize_per_channel(
        w, torch.full((n,), scale, dtype=torch.double), torch.zeros(n, dtype=torch.long), 0, torch.qint8
    )
    return q.linear_prepack(wq, torch.randn(n, generator=g))


def layer(G, I, H, g):
    return make_packed(G * H, I, g), make_packed(G * H, H, g)


@pytest.mark.parametrize("G", [4, 3])
@pytest.mark.parametrize("B,H", [(1, 1), (1, 5), (3, 16), (2, 33), (8, 64)])
def test_one_step_matches_float64_reference(isa, G, B, H):
    g = torch.Generator().manual_seed(100 * G + H)
    I = 7
    w_ih, w_hh = layer(G, I, H, g)
    x = torch.randn(1, B, I, generator=g) * 2
    h0 = torch.randn(B, H, generator=g)
    c0 = torch.randn(B, H, generator=g) * 3
    out, h, c = q._rnn_layer_dynamic(x, h0, c0, w_ih, w_hh, G, False)
    gi = q.linear_dynamic(x[0], w_ih, False).numpy()
    gh = q.linear_dynamic(h0, w_hh, False).numpy()
    if G == 4:
        h_ref, c_ref = ref.lstm_cell_ref(gi, gh, c0.numpy())
        np.testing.assert_allclose(c.numpy(), c_ref, rtol=2e-6, atol=2e-6)
    else:
        h_ref = ref.gru_cell_ref(gi, gh, h0.numpy())
        assert torch.equal(c, c0)  # GRU: passed through
    np.testing.assert_allclose(h.numpy(), h_ref, rtol=2e-6, atol=2e-6)
    assert torch.equal(out[0], h)


@pytest.mark.parametrize("G", [4, 3])
def test_extreme_and_nan_gates(isa, G):
    """Gates far outside the exp range saturate to exact 0 / 1 / -1 without inf or NaN; a NaN
    input propagates (as torch.sigmoid / torch.tanh do)."""
    g = torch.Generator().manual_seed(5)
    H = 20
    w_ih, w_hh = layer(G, 3, H, g)
    for mag in (50.0, 200.0, 1e6):
        x = torch.randn(1, 4, 3, generator=g) * mag
        out, h, c = q._rnn_layer_dynamic(x, torch.zeros(4, H), torch.zeros(4, H), w_ih, w_hh, G, False)
        gi = q.linear_dynamic(x[0], w_ih, False).numpy()
        gh = q.linear_dynamic(torch.zeros(4, H), w_hh, False).numpy()
        h_ref = ref.lstm_cell_ref(gi, gh, np.zeros((4, H)))[0] if G == 4 else ref.gru_cell_ref(gi, gh, np.zeros((4, H)))
        assert torch.isfinite(out).all()
        np.testing.assert_allclose(h.numpy(), h_ref, rtol=2e-6, atol=2e-6)
    # NaN in the state element that enters the pointwise formula directly (c for LSTM, h for
    # GRU) comes out as NaN in that element.
    x = torch.randn(1, 2, 3, generator=g)
    h0, c0 = torch.zeros(2, H), torch.zeros(2, H)
    (c0 if G == 4 else h0)[1, 7] = float("nan")
    out, h, c = q._rnn_layer_dynamic(x, h0, c0, w_ih, w_hh, G, False)
    assert torch.isnan(out[0, 1, 7]) and torch.isnan(h[1, 7])
    assert not torch.isnan(out[0, 0]).any()


@pytest.mark.parametrize("G", [4, 3])
@pytest.mark.parametrize("reverse", [False, True])
def test_isa_paths_bit_identical(isa, G, reverse):
    g = torch.Generator().manual_seed(9)
    T, B, I, H = 6, 3, 10, 37  # H not a multiple of 8 or 16: vector body + scalar tail
    w_ih, w_hh = layer(G, I, H, g)
    x = torch.randn(T, B, I, generator=g)
    h0, c0 = torch.randn(B, H, generator=g), torch.randn(B, H, generator=g)
    got = q._rnn_layer_dynamic(x, h0, c0, w_ih, w_hh, G, reverse)
    with torch_qplugin.kernel_isa("scalar"):
        want = q._rnn_layer_dynamic(x, h0, c0, w_ih, w_hh, G, reverse)
    for a, b in zip(got, want):
        assert torch.equal(a, b), isa


@pytest.mark.parametrize("G", [4, 3])
@pytest.mark.parametrize("reverse", [False, True])
def test_sequence_matches_unfused_composite(G, reverse):
    """The whole layer against the same computation written with separate torch ops (as the
    Python layer did before the fused op). Each composite step starts from the layer's own
    previous h (out[t -/+ 1]), so both quantize the same activations and only the float
    rounding of the gate math differs; c is carried by the composite itself."""
    g = torch.Generator().manual_seed(11)
    T, B, I, H = 7, 2, 9, 24
    w_ih, w_hh = layer(G, I, H, g)
    x = torch.randn(T, B, I, generator=g)
    h0, c = torch.randn(B, H, generator=g), torch.randn(B, H, generator=g)
    out, h_n, c_n = q._rnn_layer_dynamic(x, h0, c, w_ih, w_hh, G, reverse)
    order = list(range(T))[::-1] if reverse else list(range(T))
    # Input projections of all steps in one dynamic GEMM (one activation scale for the whole
    # sequence), as torch's CPU LSTM / GRU layers do.
    gi_all = q.linear_dynamic(x.reshape(T * B, I), w_ih, False).reshape(T, B, -1)
    h_prev = h0
    for t in order:
        gi, gh = gi_all[t], q.linear_dynamic(h_prev, w_hh, False)
        if G == 4:
            i, f, gg, o = (gi + gh).chunk(4, 1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(gg)
            h = torch.sigmoid(o) * torch.tanh(c)
        else:
            ir, iz, inn = gi.chunk(3, 1)
            hr, hz, hn = gh.chunk(3, 1)
            r, z = torch.sigmoid(ir + hr), torch.sigmoid(iz + hz)
            h = (1 - z) * torch.tanh(inn + r * hn) + z * h_prev
        torch.testing.assert_close(out[t], h, atol=1e-5, rtol=1e-5)
        h_prev = out[t]
    assert torch.equal(h_n, out[order[-1]])
    if G == 4:
        torch.testing.assert_close(c_n, c, atol=1e-5, rtol=1e-5)


def test_empty_sequence_and_batch():
    g = torch.Generator().manual_seed(2)
    w_ih, w_hh = layer(4, 5, 6, g)
    out, h, c = q._rnn_layer_dynamic(torch.randn(0, 2, 5), torch.ones(2, 6), torch.ones(2, 6), w_ih, w_hh, 4, False)
    assert out.shape == (0, 2, 6) and torch.equal(h, torch.ones(2, 6)) and torch.equal(c, torch.ones(2, 6))
    out, h, c = q._rnn_layer_dynamic(torch.randn(3, 0, 5), torch.ones(0, 6), torch.ones(0, 6), w_ih, w_hh, 4, False)
    assert out.shape == (3, 0, 6)


def test_bad_input_errors():
    g = torch.Generator().manual_seed(3)
    w_ih, w_hh = layer(4, 5, 6, g)
    x, h, c = torch.randn(2, 3, 5), torch.zeros(3, 6), torch.zeros(3, 6)
    with pytest.raises(ValueError, match=r"_rnn_layer_dynamic: num_gates should be 4 \(LSTM\) or 3 \(GRU\), got 5"):
        q._rnn_layer_dynamic(x, h, c, w_ih, w_hh, 5, False)
    with pytest.raises(ValueError, match=r"_rnn_layer_dynamic: input should be 3-D .* got shape \[3, 5\]"):
        q._rnn_layer_dynamic(x[0], h, c, w_ih, w_hh, 4, False)
    with pytest.raises(ValueError, match=r"_rnn_layer_dynamic: w_ih should be \[24, 4\] .* got \[24, 5\]"):
        q._rnn_layer_dynamic(torch.randn(2, 3, 4), h, c, w_ih, w_hh, 4, False)
    with pytest.raises(ValueError, match=r"_rnn_layer_dynamic: w_hh should be \[3 \* hidden_size"):
        q._rnn_layer_dynamic(x, h, c, w_ih, w_hh, 3, False)
    with pytest.raises(ValueError, match=r"_rnn_layer_dynamic: h0 should have shape \[3, 6\] .* got \[2, 6\]"):
        q._rnn_layer_dynamic(x, torch.zeros(2, 6), c, w_ih, w_hh, 4, False)
    with pytest.raises(ValueError, match=r"_rnn_layer_dynamic: c0 should have shape \[3, 6\]"):
        q._rnn_layer_dynamic(x, h, torch.zeros(3, 7), w_ih, w_hh, 4, False)
    with pytest.raises(RuntimeError, match=r"_rnn_layer_dynamic: input should be a float32 tensor, got dtype Double"):
        q._rnn_layer_dynamic(x.double(), h, c, w_ih, w_hh, 4, False)
    qx = torch.quantize_per_tensor(x, 0.1, 0, torch.quint8)
    with pytest.raises(RuntimeError, match=r"_rnn_layer_dynamic: input should be a float32 tensor, got dtype QUInt8"):
        q._rnn_layer_dynamic(qx, h, c, w_ih, w_hh, 4, False)
    with pytest.raises(
        RuntimeError, match=r"_rnn_layer_dynamic: h0 and c0 should be float32 tensors, got a quantized h0"
    ):
        q._rnn_layer_dynamic(x, torch.quantize_per_tensor(h, 0.1, 0, torch.quint8), c, w_ih, w_hh, 4, False)


def test_opcheck():
    """As for linear: torch's schema checker cannot walk the packed-params ScriptObject."""
    g = torch.Generator().manual_seed(4)
    w_ih, w_hh = layer(4, 5, 6, g)
    args = (torch.randn(3, 2, 5), torch.randn(2, 6), torch.randn(2, 6), w_ih, w_hh, 4, False)
    torch.library.opcheck(q._rnn_layer_dynamic.default, args, test_utils=("test_autograd_registration",))
