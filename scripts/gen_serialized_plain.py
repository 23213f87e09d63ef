"""Writes test/serialized/plain_buffers_v1.pt: packed buffers of the plain tier in buffer format
version 1 (plain_linear_prepack for every kernel path, plain_conv_prepack,
plain_conv_transpose_prepack), with the weights they were packed from, an input and each op's
output. test/bc/test_plain_buffer_serialized.py runs them with the current build: an older
buffer (a saved ExportedProgram holds its buffers as constants) must still give the same bytes.
Regenerate only with the build that writes the format named in the file name (keep old files).

    PYTHONPATH=. python scripts/gen_serialized_plain.py
"""
from pathlib import Path

import torch

import torch_qplugin
from torch_qplugin import _isa

OUT = Path(__file__).resolve().parent.parent / "test" / "serialized" / "plain_buffers_v1.pt"
q = torch.ops.qplugin
SX, ZX, SY, ZY = 0.05, 100, 0.3, 80


def main():
    g = torch.Generator().manual_seed(41)
    n, k = 33, 31
    w = torch.randint(-128, 128, (n, k), dtype=torch.int8, generator=g)
    s = torch.rand(n, dtype=torch.double, generator=g) * 0.01 + 0.001
    z = torch.randint(-5, 5, (n,), generator=g)
    b = torch.randn(n, generator=g)
    x = torch.randint(0, 256, (7, k), dtype=torch.uint8, generator=g)
    out = {"linear": {"w": w, "w_scales": s, "w_zero_points": z, "bias": b, "x": x, "buffers": {}}}
    for isa in _isa.supported_isas():
        with torch_qplugin.kernel_isa(isa):
            buf = q.plain_linear_prepack(w, s, z)
            out["linear"]["buffers"][isa] = buf
            out["linear"]["y"] = q.plain_linear(x, SX, ZX, w, s, z, b, buf, SY, ZY)
    cw = torch.randint(-128, 128, (6, 2, 3, 3), dtype=torch.int8, generator=g)
    cs = torch.rand(6, dtype=torch.double, generator=g) * 0.01 + 0.001
    cz = torch.randint(-3, 4, (6,), generator=g)
    cx = torch.randint(0, 256, (1, 4, 7, 7), dtype=torch.uint8, generator=g)
    geo = ([2, 1], [1, 0], [1, 1], 2)
    cbuf = q.plain_conv_prepack(cw, cs, cz, None, *geo)
    out["conv2d"] = {"w": cw, "w_scales": cs, "w_zero_points": cz, "x": cx, "buffer": cbuf,
                     "y": q.plain_conv2d(cx, SX, ZX, cw, cs, cz, None, cbuf, *geo, SY, ZY)}
    tw = torch.randint(-128, 128, (4, 3, 2, 2), dtype=torch.int8, generator=g)
    ts = torch.rand(6, dtype=torch.double, generator=g) * 0.01 + 0.001
    tz = torch.randint(-3, 4, (6,), generator=g)
    tgeo = ([2, 1], [0, 1], [1, 0], [1, 1], 2)
    tbuf = q.plain_conv_transpose_prepack(tw, ts, tz, None, *tgeo)
    out["conv_transpose2d"] = {"w": tw, "w_scales": ts, "w_zero_points": tz, "x": cx, "buffer": tbuf,
                               "y": q.plain_conv_transpose2d(cx, SX, ZX, tw, ts, tz, None, tbuf, *tgeo, SY, ZY)}
    torch.save(out, OUT)
    print("wrote", OUT)


if __name__ == "__main__":
    main()
