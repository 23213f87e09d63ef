"""fp16 dynamic linear rows: qplugin::linear_dynamic_fp16 (float activations, float16
weights, float32 accumulation in one fixed order) vs torch's quantized::linear_dynamic_fp16 (fbgemm's
fp16 GEMM) vs fp32 F.linear."""

import torch

from bench_rows import Case

FAMILY = "linear_fp16"
ORDER = 41
NOTE = (
    "torch baseline: `quantized::linear_dynamic_fp16` (fbgemm's fp16 GEMM), weights from "
    "`quantized::linear_prepack_fp16`. fp32 baseline: `torch.nn.functional.linear` on float32 weights. "
    "Rate: GOPS = 2*M*K*N / time. 2-thread rows with --clock cpu on a loaded 2-core machine count "
    "OpenMP spin time of both threads (load average ~8 in the run below): read the 1-thread rows."
)

SHAPES = [(1, 768, 768), (1, 4096, 4096), (8, 768, 3072), (128, 1024, 1024)]


def cases(shapes=SHAPES):
    q, tq = torch.ops.qplugin, torch.ops.quantized
    g = torch.Generator().manual_seed(0)
    out = []
    for M, K, N in shapes:
        w = torch.randn(N, K, generator=g) * 0.05
        b = torch.randn(N, generator=g)
        x = torch.randn(M, K, generator=g)
        ours_p, torch_p = q.linear_prepack_fp16(w, b), tq.linear_prepack_fp16(w, b)
        out.append(
            Case(
                "linear_dynamic_fp16",
                f"{M}x{K}x{N}",
                lambda x=x, p=ours_p: q.linear_dynamic_fp16(x, p),
                lambda x=x, p=torch_p: tq.linear_dynamic_fp16(x, p),
                lambda x=x, w=w, b=b: torch.nn.functional.linear(x, w, b),
                work=2.0 * M * K * N,
                unit="GOPS",
            )
        )
    return out
