"""Bilinear upsampling rows: qplugin::upsample_bilinear2d vs torch's quantized kernel."""

import torch

from bench_rows import Case
from bench_rows._floor import floor_of

FAMILY = "bilinear"
ORDER = 55
NOTE = (
    "torch baseline: F.interpolate(mode='bilinear') on the same quantized tensor (torch's quantized "
    "upsample_bilinear2d kernel). fp32 baseline: the same call on a float32 tensor of the same shape and "
    "layout. Rate: GB/s of input + output bytes. Floor (scripts/bench_rows/_floor.cpp): the "
    "rule's 6 multiplies and 3 adds on four taps per output byte, read from L1 (`bilinear`)."
)


def cases():
    q, F = torch.ops.qplugin, torch.nn.functional
    out = []
    for shape, size in [((1, 64, 56, 56), (112, 112)), ((8, 32, 28, 28), (56, 56))]:
        x = torch.randn(shape)
        qx = torch.quantize_per_tensor(x, 0.05, 128, torch.quint8)
        work = qx.numel() + qx.numel() * size[0] * size[1] // (shape[2] * shape[3])
        for layout, t, xf in [
            ("NCHW", qx, x),
            ("NHWC", qx.contiguous(memory_format=torch.channels_last), x.contiguous(memory_format=torch.channels_last)),
        ]:
            for ac in (False, True):
                out.append(
                    Case(
                        f"upsample_bilinear2d quint8 ac={int(ac)}",
                        f"{list(shape)}->{list(size)} {layout}".replace(" ", ""),
                        lambda t=t, ac=ac, size=size: q.upsample_bilinear2d(t, list(size), ac),
                        lambda t=t, ac=ac, size=size: F.interpolate(t, size=size, mode="bilinear", align_corners=ac),
                        lambda xf=xf, ac=ac, size=size: F.interpolate(xf, size=size, mode="bilinear", align_corners=ac),
                        work=work,
                        floor=floor_of("bilinear", work - qx.numel(), shape[1]),
                    )
                )
    return out
