"""max_pool2d / avg_pool2d / adaptive_avg_pool2d / upsample_nearest2d rows (pooling)."""

import torch
import torch.nn.functional as F

from bench_rows import Case
from bench_rows._floor import floor_of

FAMILY = "pooling"
ORDER = 40
NOTE = (
    "torch: torch's quantized kernel (quantized::max_pool2d, F.avg_pool2d / "
    "F.adaptive_avg_pool2d / F.interpolate on the quantized tensor). fp32 baseline: the same "
    "float op on a float tensor of the same shape and layout. Rate: GB/s of input + output bytes. "
    "Floors (scripts/bench_rows/_floor.cpp), each tap read from L1 (`taps` / `maxtaps` with the "
    "channel count as the tap stride): max pooling: one byte max per tap; average pooling (adaptive too, "
    "channels_last): 16-bit tap sums, 8 vectors of channels a pass, and the requantize rule; adaptive "
    "pooling of NCHW planes: a plain read of the input (`rowmax`); nearest upsampling: every output "
    "byte loaded from L1 and stored (`bcast_copy`)."
)


def cases():
    q = torch.ops.qplugin
    out = []
    for shape in [(1, 64, 112, 112), (8, 64, 56, 56)]:
        label = "[" + ",".join(map(str, shape)) + "]"
        for layout in ("NCHW", "NHWC"):
            x = torch.randn(shape) * 2
            if layout == "NHWC":
                x = x.contiguous(memory_format=torch.channels_last)
            qx = torch.quantize_per_tensor(x, 0.05, 128, torch.quint8)
            if layout == "NHWC":
                qx = qx.contiguous(memory_format=torch.channels_last)
            n = qx.numel()
            sl = f"{label} {layout}"
            N, C, H, W = shape
            nout = n // 4
            out.append(
                Case(
                    "max_pool2d 3x3 s2 p1 quint8",
                    sl,
                    lambda qx=qx: q.max_pool2d(qx, [3, 3], [2, 2], [1, 1], [1, 1], False),
                    lambda qx=qx: torch.ops.quantized.max_pool2d(qx, [3, 3], [2, 2], [1, 1], [1, 1], False),
                    lambda x=x: F.max_pool2d(x, 3, 2, 1),
                    work=n + n // 4,
                    floor=floor_of("maxtaps", nout, 9, C),
                )
            )
            out.append(
                Case(
                    "avg_pool2d 3x3 s2 p1 quint8",
                    sl,
                    lambda qx=qx: q.avg_pool2d(qx, [3, 3], [2, 2], [1, 1], False, True, None),
                    lambda qx=qx: F.avg_pool2d(qx, 3, 2, 1),
                    lambda x=x: F.avg_pool2d(x, 3, 2, 1),
                    work=n + n // 4,
                    floor=floor_of("taps", nout, 9, C),
                )
            )
            out.append(
                Case(
                    "avg_pool2d 2x2 s2 quint8",
                    sl,
                    lambda qx=qx: q.avg_pool2d(qx, [2, 2], [2, 2], [0, 0], False, True, None),
                    lambda qx=qx: F.avg_pool2d(qx, 2, 2),
                    lambda x=x: F.avg_pool2d(x, 2, 2),
                    work=n + n // 4,
                    floor=floor_of("taps", nout, 4, C),
                )
            )
            for osz in [(1, 1), (7, 7)]:
                out.append(
                    Case(
                        f"adaptive_avg_pool2d {osz[0]}x{osz[1]} quint8",
                        sl,
                        lambda qx=qx, osz=osz: q.adaptive_avg_pool2d(qx, list(osz)),
                        lambda qx=qx, osz=osz: F.adaptive_avg_pool2d(qx, osz),
                        lambda x=x, osz=osz: F.adaptive_avg_pool2d(x, osz),
                        work=n,
                        floor=(
                            floor_of("rowmax", N * H, W * C)
                            if layout == "NCHW"
                            else floor_of("taps", N * osz[0] * osz[1] * C, H * W // (osz[0] * osz[1]), C)
                        ),
                    )
                )
            out.append(
                Case(
                    "upsample_nearest2d x2 quint8",
                    sl,
                    lambda qx=qx, s=shape: q.upsample_nearest2d(qx, [s[2] * 2, s[3] * 2]),
                    lambda qx=qx, s=shape: F.interpolate(qx, size=(s[2] * 2, s[3] * 2), mode="nearest"),
                    lambda x=x, s=shape: F.interpolate(x, size=(s[2] * 2, s[3] * 2), mode="nearest"),
                    work=5 * n,
                    floor=floor_of("bcast_copy", 4 * n),
                )
            )
    return out
