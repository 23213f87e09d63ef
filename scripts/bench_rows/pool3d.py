"""avg_pool3d / adaptive_avg_pool3d rows (3-d pooling)."""

import torch
import torch.nn.functional as F

from bench_rows import Case
from bench_rows._floor import floor_of

FAMILY = "pool3d"
ORDER = 41
NOTE = (
    "torch: torch's quantized kernel (F.avg_pool3d / F.adaptive_avg_pool3d on the quantized "
    "tensor). fp32 baseline: the same float op on a float tensor of the same shape and layout. "
    "Rate: GB/s of input + output bytes. Floors as in the pooling family: 16-bit tap sums read from "
    "L1 (`taps`; adaptive pooling of channels-last volumes too), a plain read of the input for adaptive "
    "pooling of NCDHW volumes."
)


def cases():
    q = torch.ops.qplugin
    out = []
    for shape in [(1, 64, 16, 56, 56), (4, 32, 8, 28, 28)]:
        label = "[" + ",".join(map(str, shape)) + "]"
        for layout in ("NCDHW", "NDHWC"):
            x = torch.randn(shape) * 2
            if layout == "NDHWC":
                x = x.contiguous(memory_format=torch.channels_last_3d)
            qx = torch.quantize_per_tensor(x, 0.05, 128, torch.quint8)
            if layout == "NDHWC":
                qx = qx.contiguous(memory_format=torch.channels_last_3d)
            n = qx.numel()
            sl = f"{label} {layout}"
            N, C, D, H, W = shape
            out.append(
                Case(
                    "avg_pool3d 2x2x2 s2 quint8",
                    sl,
                    lambda qx=qx: q.avg_pool3d(qx, [2, 2, 2], [2, 2, 2], [0, 0, 0], False, True, None),
                    lambda qx=qx: F.avg_pool3d(qx, 2, 2),
                    lambda x=x: F.avg_pool3d(x, 2, 2),
                    work=n + n // 8,
                    floor=floor_of("taps", n // 8, 8, C),
                )
            )
            out.append(
                Case(
                    "avg_pool3d 3x3x3 s2 p1 quint8",
                    sl,
                    lambda qx=qx: q.avg_pool3d(qx, [3, 3, 3], [2, 2, 2], [1, 1, 1], False, True, None),
                    lambda qx=qx: F.avg_pool3d(qx, 3, 2, 1),
                    lambda x=x: F.avg_pool3d(x, 3, 2, 1),
                    work=n + n // 8,
                    floor=floor_of("taps", n // 8, 27, C),
                )
            )
            for osz in [(1, 1, 1), (2, 7, 7)]:
                out.append(
                    Case(
                        f"adaptive_avg_pool3d {'x'.join(map(str, osz))} quint8",
                        sl,
                        lambda qx=qx, osz=osz: q.adaptive_avg_pool3d(qx, list(osz)),
                        lambda qx=qx, osz=osz: F.adaptive_avg_pool3d(qx, osz),
                        lambda x=x, osz=osz: F.adaptive_avg_pool3d(x, osz),
                        work=n,
                        floor=(
                            floor_of("rowmax", N * D, H * W * C)
                            if layout == "NCDHW"
                            else floor_of(
                                "taps", N * osz[0] * osz[1] * osz[2] * C, n // (N * C * osz[0] * osz[1] * osz[2]), C
                            )
                        ),
                    )
                )
    return out
