"""linear rows (issue 4): static (quint8 in/out) and dynamic (float in/out) linear.

torch baseline: torch.ops.quantized.linear / linear_dynamic with the x86 engine
(torch's default), weights prepacked by torch.ops.quantized.linear_prepack.
Activations use the full 0..255 range (torch's x86 path saturates there but its
time is what we compare with).
"""
import torch

from bench_rows import Case

FAMILY = "linear"
ORDER = 40
NOTE = ("fp32 baseline: `torch.nn.functional.linear` on float tensors of the same shape. "
        "Rate: GOPS = 2*M*K*N / time. torch: `quantized::linear` / `quantized::linear_dynamic`, x86 engine. "
        "Weights per-channel qint8, activations full-range quint8.")

SHAPES = [(1, 768, 768), (1, 4096, 4096), (8, 768, 3072), (128, 1024, 1024), (512, 4096, 4096)]


def cases(shapes=SHAPES):
    q = torch.ops.qplugin
    tq = torch.ops.quantized
    torch.backends.quantized.engine = "x86"
    g = torch.Generator().manual_seed(0)
    out = []
    for M, K, N in shapes:
        label = f"{M}x{K}x{N}"
        w = torch.randn(N, K, generator=g) * 0.05
        b = torch.randn(N, generator=g)
        scales = w.abs().amax(1).double() / 127
        wq = torch.quantize_per_channel(w, scales, torch.zeros(N, dtype=torch.long), 0, torch.qint8)
        ours_p = q.linear_prepack(wq, b)
        torch_p = tq.linear_prepack(wq, b)
        x = torch.rand(M, K, generator=g) * 4 - 2
        xq = torch.quantize_per_tensor(x, 4 / 255, 128, torch.quint8)
        ops = 2.0 * M * K * N
        out.append(Case("linear", label, lambda xq=xq, p=ours_p: q.linear(xq, p, 0.05, 128),
                        lambda xq=xq, p=torch_p: tq.linear(xq, p, 0.05, 128),
                        lambda x=x, w=w, b=b: torch.nn.functional.linear(x, w, b), work=ops, unit="GOPS"))
        out.append(Case("linear_dynamic", label, lambda x=x, p=ours_p: q.linear_dynamic(x, p),
                        lambda x=x, p=torch_p: tq.linear_dynamic(x, p, False),
                        lambda x=x, w=w, b=b: torch.nn.functional.linear(x, w, b), work=ops, unit="GOPS"))
    return out
