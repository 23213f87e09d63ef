"""The plain tier's packed buffers are checked, never trusted (docs/design/plain.md "Packed buffers"):
a buffer that disagrees with the op's other arguments (shape, zero points, weight bytes, groups,
kernel geometry) or whose bytes were damaged raises an error naming the op; it never gives wrong
bytes. Every header byte and a sample of payload bytes of each buffer kind are flipped: each flip is
an error or gives exactly the original output. Buffers of format version 1 (older builds):
test/bc/test_plain_buffer_serialized.py.
"""

import pytest
import torch

import torch_qplugin
from torch_qplugin import _isa
from plain_errors import VALUE_ERROR

q = torch.ops.qplugin
SX, ZX, SY, ZY = 0.05, 100, 0.3, 80
HEADER = 192  # packed_params/plain_buffer.h kHeaderBytes
PAYLOAD_SAMPLES = 48


def _flips(buf, header=HEADER, samples=PAYLOAD_SAMPLES):
    """(position, flipped copy) for every header byte and a sample of payload bytes."""
    g = torch.Generator().manual_seed(41)
    n = buf.numel() * buf.element_size()
    where = list(range(min(header, n)))
    if n > header:
        where += sorted(set(torch.randint(header, n, (samples,), generator=g).tolist()))
    for i in where:
        b = buf.clone()
        b.view(-1).view(torch.uint8)[i] ^= 1 << (i % 8)  # one bit, a different one per byte
        yield i, b


def _error_or_same(run, buf, want, header=HEADER):
    errors = same = 0
    for i, b in _flips(buf, header):
        try:
            got = run(b)
        except (RuntimeError, VALUE_ERROR) as e:
            assert "qplugin::" in str(e), (i, e)
            errors += 1
            continue
        got = got if isinstance(got, (tuple, list)) else (got,)
        want_t = want if isinstance(want, (tuple, list)) else (want,)
        assert all(torch.equal(a, b) for a, b in zip(got, want_t)), f"byte {i} flipped: wrong output, no error"
        same += 1
    return errors, same


def _linear_args():
    torch.manual_seed(0)
    n, k = 33, 31
    w = torch.randint(-128, 128, (n, k), dtype=torch.int8)
    s = torch.rand(n, dtype=torch.double) * 0.01 + 0.001
    z = torch.randint(-5, 5, (n,))
    b = torch.randn(n)
    x = torch.randint(0, 256, (7, k), dtype=torch.uint8)
    return x, w, s, z, b


def test_linear_with_a_buffer_of_other_zero_points_is_an_error(isa):
    # the case that gave 164 of 231 wrong outputs silently
    x, w, s, z1, _ = _linear_args()
    z0 = torch.zeros_like(z1)
    with pytest.raises(VALUE_ERROR, match=r"qplugin::plain_linear: packed was not made from these w_zero_points"):
        q.plain_linear(x, SX, ZX, w, s, z1, None, q.plain_linear_prepack(w, s, z0), SY, ZY)
    z2 = z1.clone()
    z2[3] += 1  # not all zero either way: the zero-point section differs
    with pytest.raises(
        VALUE_ERROR,
        match=r"qplugin::plain_linear_relu: packed was not made from these w / "
        r"w_zero_points \(its (zero points|column sums|packed weight)",
    ):
        q.plain_linear_relu(x, SX, ZX, w, s, z1, None, q.plain_linear_prepack(w, s, z2), SY, ZY)
    with pytest.raises(VALUE_ERROR, match=r"qplugin::plain_linear_dynamic: packed was not made from these"):
        q.plain_linear_dynamic(torch.randn(3, w.shape[1]), w, s, z1, None, q.plain_linear_prepack(w, s, z0), False)


def test_linear_with_a_buffer_of_another_weight_is_an_error(isa):
    x, w, s, z, _ = _linear_args()
    buf = q.plain_linear_prepack(w, s, z)
    other = w.clone()
    other[5, 7] += 1
    with pytest.raises(VALUE_ERROR, match=r"qplugin::plain_linear: packed was not made from these w"):
        q.plain_linear(x, SX, ZX, other, s, z, None, buf, SY, ZY)
    # an in-place change of the weight the buffer was packed from is seen too (version counter)
    y = q.plain_linear(x, SX, ZX, w, s, z, None, buf, SY, ZY)
    w[0, 0] = -w[0, 0] - 1
    with pytest.raises(VALUE_ERROR, match=r"packed was not made from these w"):
        q.plain_linear(x, SX, ZX, w, s, z, None, buf, SY, ZY)
    w[0, 0] = -w[0, 0] - 1  # back: accepted again, the same output
    assert torch.equal(q.plain_linear(x, SX, ZX, w, s, z, None, buf, SY, ZY), y)


@pytest.mark.parametrize("n,k", [(33, 31), (96, 80)], ids=["small", "over-4KiB"])
def test_in_place_changes_after_a_checked_call_are_seen(n, k):
    # Small tensors are recognised by their bytes on the stable-ABI build, larger ones by their
    # version counter: both kinds, changed in place after a call that checked them in full.
    torch.manual_seed(2)
    w = torch.randint(-128, 128, (n, k), dtype=torch.int8)
    s = torch.rand(n, dtype=torch.double) * 0.01 + 0.001
    z = torch.randint(-5, 5, (n,))
    x = torch.randint(0, 256, (5, k), dtype=torch.uint8)
    buf = q.plain_linear_prepack(w, s, z)

    def run():
        return q.plain_linear(x, SX, ZX, w, s, z, None, buf, SY, ZY)

    y = run()
    z[1] += 1  # the buffer holds the zero points: no longer made from these
    with pytest.raises(VALUE_ERROR, match=r"qplugin::plain_linear: packed was not made from these w"):
        run()
    z[1] -= 1
    assert torch.equal(run(), y)
    s.mul_(2)  # scales are read on every call: the output follows them
    assert torch.equal(run(), q.plain_linear(x, SX, ZX, w, s, z, None, q.plain_linear_prepack(w, s, z), SY, ZY))
    s.div_(2)
    assert torch.equal(run(), y)
    byte = buf.numel() - 3  # a payload byte: the checksum no longer matches
    buf[byte] ^= 1
    with pytest.raises(VALUE_ERROR, match=r"qplugin::plain_linear: packed is damaged"):
        run()
    buf[byte] ^= 1
    assert torch.equal(run(), y)


def test_rnn_layer_with_a_mismatched_buffer_is_an_error():
    torch.manual_seed(1)
    hid, inp = 4, 5
    w_ih = torch.randint(-128, 128, (4 * hid, inp), dtype=torch.int8)
    w_hh = torch.randint(-128, 128, (4 * hid, hid), dtype=torch.int8)
    s_ih, s_hh = torch.full((1,), 0.01, dtype=torch.double), torch.full((1,), 0.02, dtype=torch.double)
    z = torch.zeros(1, dtype=torch.long)
    p_ih, p_hh = q.plain_linear_prepack(w_ih, s_ih, z), q.plain_linear_prepack(w_hh, s_hh, z)
    x, h0, c0 = torch.randn(3, 2, inp), torch.zeros(2, hid), torch.zeros(2, hid)
    args = (x, h0, c0, w_ih, s_ih, z, None, p_ih, w_hh, s_hh, z, None)
    q.plain_rnn_layer_dynamic(*args, p_hh, 4, False)
    w_other = w_hh.clone()
    w_other[0, 0] ^= 1
    with pytest.raises(VALUE_ERROR, match=r"qplugin::plain_rnn_layer_dynamic: packed was not made from these w"):
        q.plain_rnn_layer_dynamic(*args, q.plain_linear_prepack(w_other, s_hh, z), 4, False)


def test_linear_buffer_flips_are_errors_or_harmless(isa):
    x, w, s, z, b = _linear_args()
    buf = q.plain_linear_prepack(w, s, z)
    want = q.plain_linear(x, SX, ZX, w, s, z, b, buf, SY, ZY)
    errors, _ = _error_or_same(lambda p: q.plain_linear(x, SX, ZX, w, s, z, b, p, SY, ZY), buf, want)
    assert errors == HEADER + len(set(range(HEADER, buf.numel())) & {i for i, _ in _flips(buf)})  # the checksum
    xf = torch.randn(3, w.shape[1])
    want = q.plain_linear_dynamic(xf, w, s, z, b, buf, False)
    _error_or_same(lambda p: q.plain_linear_dynamic(xf, w, s, z, b, p, False), buf, want)


def test_truncated_or_extended_linear_buffer_is_an_error():
    x, w, s, z, _ = _linear_args()
    buf = q.plain_linear_prepack(w, s, z)
    with pytest.raises(
        VALUE_ERROR,
        match=r"qplugin::plain_linear: packed should be \d+ bytes long \(its header's "
        r"size\), got \d+ bytes",
    ):
        q.plain_linear(x, SX, ZX, w, s, z, None, buf[:-64].clone(), SY, ZY)
    with pytest.raises(VALUE_ERROR, match=r"packed should be \d+ bytes long"):
        q.plain_linear(x, SX, ZX, w, s, z, None, torch.cat([buf, torch.zeros(64, dtype=torch.uint8)]), SY, ZY)


def test_fp16_panels_are_checked_against_w():
    torch.manual_seed(2)
    w = torch.randn(20, 9).half()
    x = torch.randn(3, 9)
    panels = q.plain_linear_prepack_fp16(w)
    want = q.plain_linear_dynamic_fp16(x, w, None, panels)
    assert torch.equal(want, q.plain_linear_dynamic_fp16(x, w, None, torch.empty(0, dtype=torch.half)))
    with pytest.raises(
        VALUE_ERROR,
        match=r"qplugin::plain_linear_dynamic_fp16: packed should be "
        r"plain_linear_prepack_fp16\(w\), got panels that differ",
    ):
        q.plain_linear_dynamic_fp16(x, w, None, q.plain_linear_prepack_fp16(w + 1))
    errors, _ = _error_or_same(lambda p: q.plain_linear_dynamic_fp16(x, w, None, p), panels, want, header=0)
    assert errors > 0  # no header: the panels are all payload
    with pytest.raises(
        VALUE_ERROR,
        match=r"qplugin::plain_rnn_layer_dynamic_fp16: packed_hh should be "
        r"plain_linear_prepack_fp16\(w_hh\)",
    ):
        w_ih, w_hh = torch.randn(8, 3).half(), torch.randn(8, 2).half()
        q.plain_rnn_layer_dynamic_fp16(
            torch.randn(4, 1, 3),
            torch.zeros(1, 2),
            torch.zeros(1, 2),
            w_ih,
            None,
            q.plain_linear_prepack_fp16(w_ih),
            w_hh,
            None,
            q.plain_linear_prepack_fp16(w_hh * 2),
            4,
            False,
        )


CONVS = [
    # (op, w shape, stride, padding, dilation, groups, x shape)
    ("plain_conv1d", (6, 2, 3), [2], [1], [1], 2, (2, 4, 9)),
    ("plain_conv2d", (6, 2, 3, 3), [2, 1], [1, 0], [1, 1], 2, (1, 4, 7, 7)),
    ("plain_conv3d", (4, 3, 2, 2, 2), [1, 1, 1], [0, 1, 0], [1, 1, 1], 1, (1, 3, 4, 4, 4)),
    ("plain_conv2d", (40, 1, 3, 3), [1, 1], [1, 1], [1, 1], 40, (1, 40, 6, 6)),  # depthwise
    ("plain_conv2d", (6, 3, 3, 3), [2, 2], [1, 1], [1, 1], 1, (1, 3, 9, 9)),  # stem: the row layout
]


def _conv_case(ws, groups, xs, zero_points=True):
    torch.manual_seed(3)
    w = torch.randint(-128, 128, ws, dtype=torch.int8)
    s = torch.rand(ws[0], dtype=torch.double) * 0.01 + 0.001
    z = torch.randint(-3, 4, (ws[0],)) if zero_points else torch.zeros(ws[0], dtype=torch.long)
    x = torch.randint(0, 256, xs, dtype=torch.uint8)
    return x, w, s, z


@pytest.mark.parametrize("op, ws, stride, padding, dilation, groups, xs", CONVS)
@pytest.mark.parametrize("zero_points", [True, False])
def test_conv_buffer_flips_and_mismatches(op, ws, stride, padding, dilation, groups, xs, zero_points, isa):
    x, w, s, z = _conv_case(ws, groups, xs, zero_points)
    geo = (stride, padding, dilation, groups)
    buf = q.plain_conv_prepack(w, s, z, None, *geo)
    f = getattr(q, op)
    want = f(x, SX, ZX, w, s, z, None, buf, *geo, SY, ZY)
    errors, same = _error_or_same(lambda p: f(x, SX, ZX, w, s, z, None, p, *geo, SY, ZY), buf, want)
    assert same == 0  # header and packed weights are under the checksum, checked on a buffer's first call
    other = ([2 * v for v in stride], padding, dilation, groups)
    with pytest.raises(VALUE_ERROR, match=rf"qplugin::{op}: packed was made for another kernel geometry"):
        f(x, SX, ZX, w, s, z, None, buf, *other, SY, ZY)
    # a well-formed buffer of another weight of the same shape
    w2 = w.clone()
    w2.view(-1)[0] = -w2.view(-1)[0] - 1
    with pytest.raises(VALUE_ERROR, match=rf"qplugin::{op}: packed was not made from these w / w_zero_points"):
        f(x, SX, ZX, w, s, z, None, q.plain_conv_prepack(w2, s, z, None, *geo), *geo, SY, ZY)
    # other zero points: an error where the buffer depends on them (depthwise), else the op's own
    # zero points are used
    try:
        got = f(x, SX, ZX, w, s, z, None, q.plain_conv_prepack(w, s, z + 1, None, *geo), *geo, SY, ZY)
        assert groups != ws[0] and torch.equal(got, want)
    except VALUE_ERROR as e:
        assert groups == ws[0] and f"qplugin::{op}: packed was not made from these w / w_zero_points" in str(e)


@pytest.mark.parametrize("op, ws, stride, padding, dilation, groups, xs", CONVS)
def test_conv_buffer_of_any_path_runs_on_every_path(op, ws, stride, padding, dilation, groups, xs):
    """A buffer holds the layouts of the path it was packed on; another path reads the layouts
    common to all (int8 weight, column sums, depthwise weight) and gives the same bytes."""
    x, w, s, z = _conv_case(ws, groups, xs, zero_points=False)
    geo = (stride, padding, dilation, groups)
    f = getattr(q, op)
    _same_on_every_path(
        lambda: q.plain_conv_prepack(w, s, z, None, *geo), lambda buf: f(x, SX, ZX, w, s, z, None, buf, *geo, SY, ZY)
    )


def _same_on_every_path(prepack, run):
    """run(buffer) gives the same bytes for a buffer packed on each path, run on each path."""
    outs = {}
    for made in _isa.supported_isas():
        with torch_qplugin.kernel_isa(made):
            buf = prepack()
        for path in _isa.supported_isas():
            with torch_qplugin.kernel_isa(path):
                outs[made, path] = run(buf)
    want = next(iter(outs.values()))
    assert all(torch.equal(y, want) for y in outs.values()), [k for k, y in outs.items() if not torch.equal(y, want)]


def _conv_transpose_case(seed, ws, xs):
    torch.manual_seed(seed)
    w = torch.randint(-128, 128, ws, dtype=torch.int8)
    s = torch.rand(6, dtype=torch.double) * 0.01 + 0.001
    z = torch.randint(-3, 4, (6,))
    x = torch.randint(0, 256, xs, dtype=torch.uint8)
    return x, w, s, z, ([2, 1], [0, 1], [1, 0], [1, 1], 2)


def test_conv_transpose_buffer_of_any_path_runs_on_every_path():
    x, w, s, z, geo = _conv_transpose_case(6, (4, 3, 2, 3), (2, 4, 5, 5))
    _same_on_every_path(
        lambda: q.plain_conv_transpose_prepack(w, s, z, None, *geo),
        lambda buf: q.plain_conv_transpose2d(x, SX, ZX, w, s, z, None, buf, *geo, SY, ZY),
    )


def test_conv_transpose_buffer_flips_and_mismatches():
    x, w, s, z, geo = _conv_transpose_case(4, (4, 3, 2, 2), (1, 4, 5, 5))
    buf = q.plain_conv_transpose_prepack(w, s, z, None, *geo)
    want = q.plain_conv_transpose2d(x, SX, ZX, w, s, z, None, buf, *geo, SY, ZY)
    errors, same = _error_or_same(
        lambda p: q.plain_conv_transpose2d(x, SX, ZX, w, s, z, None, p, *geo, SY, ZY), buf, want
    )
    assert same == 0
    other = ([2, 1], [0, 1], [0, 0], [1, 1], 2)  # another output_padding
    with pytest.raises(
        VALUE_ERROR,
        match=r"qplugin::plain_conv_transpose2d: packed was made for another kernel "
        r"geometry",
    ):
        q.plain_conv_transpose2d(x, SX, ZX, w, s, z, None, buf, *other, SY, ZY)


def _embedding_args():
    g = torch.Generator().manual_seed(5)
    rows = q.embedding_bag_byte_prepack(torch.randn(23, 13, generator=g) * 2)
    idx = torch.randint(0, 23, (30,), generator=g)
    off = torch.tensor([0, 4, 4, 17])
    return rows, idx, off


def test_embedding_buffer_flips_are_errors_or_harmless(isa):
    rows, idx, off = _embedding_args()
    buf = q.plain_embedding_prepack(rows)
    want = q.plain_embedding_bag(buf, 23, 13, idx, off, 0, False, None, None, False)
    assert torch.equal(want, q.embedding_bag_byte_rowwise_offsets(rows, idx, off))  # the same rows read
    errors, _ = _error_or_same(
        lambda p: q.plain_embedding_bag(p, 23, 13, idx, off, 0, False, None, None, False), buf, want
    )
    assert errors == len({i for i, _ in _flips(buf)})  # header and payload under the checksum
    for i, b in list(_flips(buf))[::37]:
        with pytest.raises(VALUE_ERROR, match=r"qplugin::plain_embedding_unpack: packed"):
            q.plain_embedding_unpack(b)


def test_embedding_buffer_mismatches_are_errors():
    rows, idx, off = _embedding_args()
    buf = q.plain_embedding_prepack(rows)
    with pytest.raises(
        VALUE_ERROR,
        match=r"qplugin::plain_embedding_bag: packed should hold a \[23, 12\] table "
        r"\(num_embeddings, embedding_dim\), got \[23, 13\]",
    ):
        q.plain_embedding_bag(buf, 23, 12, idx, off)
    with pytest.raises(
        VALUE_ERROR,
        match=r"qplugin::plain_embedding_bag: packed should be an embedding buffer, got "
        r"kind 1 \(linear\)",
    ):
        w = torch.ones(2, 2, dtype=torch.int8)
        q.plain_embedding_bag(
            q.plain_linear_prepack(w, torch.ones(1, dtype=torch.double), torch.zeros(1, dtype=torch.long)),
            2,
            2,
            idx,
            off,
        )
    with pytest.raises(VALUE_ERROR, match=r"qplugin::plain_embedding_bag: packed should be \d+ bytes long"):
        q.plain_embedding_bag(buf[:-1].clone(), 23, 13, idx, off)
    with pytest.raises(VALUE_ERROR, match=r"qplugin::plain_embedding_bag: packed is not a qplugin packed buffer"):
        q.plain_embedding_bag(rows.reshape(-1).clone(), 23, 13, idx, off)  # bare fused rows
    assert torch.equal(q.plain_embedding_unpack(buf), rows)
