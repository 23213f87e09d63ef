"""When torch's own quantized kernels are an exact second oracle on the running CPU.

torch's fbgemm / x86 engine multiplies uint8 activations by int8 weights with ``vpmaddubsw`` on
CPUs without AVX-512 VNNI (AMD Zen 1-3, Intel client before Alder Lake, Skylake-X): each pair of
products ``a[k] * w[k] + a[k+1] * w[k+1]`` is summed in int16 and SATURATES at +-32767. That is
the defect qplugin exists to fix, so on those CPUs torch's quantized linear / conv are not an
oracle for activations that use the full 0..255 range. With VNNI (``vpdpbusd``) products are
accumulated in int32 and torch is exact.

torch's quantize kernels are an oracle for qplugin's quantize (API.md section 2: 8-bit
``clamp(nearbyint(float32(x * inv_scale)) + zero_point)``, qint32 in float64) only in the torch
versions and on the inputs where they compute that same rule; ``quantize_exact`` says where.

Tests always judge qplugin against the float64 reference (reference.py). They compare with torch
only where the verdict below says torch is exact, and the verdict says why, so that a failure (or
a comparison not made) can be read off the message instead of hiding behind a looser tolerance.
"""

import contextlib
from typing import NamedTuple

import numpy as np
import torch
from torch.torch_version import TorchVersion

import torch_qplugin  # noqa: F401  (loads the op library for _cpu_features)

INT16_MAX = 32767
# torch >= 2.14's per-tensor 8-bit quantize converts nearbyint(x * inv_scale) to int32 before it
# adds the zero point: NaN, infinities and products beyond int32 come out wrapped (+inf -> 0 for
# quint8 with zero point 250). Below this bound on |x * inv_scale| it follows the rule.
QUANTIZE_WRAP_BOUND = 2.0**30


class Verdict(NamedTuple):
    exact: bool
    why: str

    def __bool__(self):
        return self.exact


def cpu_has_vnni() -> bool:
    """Whether torch's fbgemm runs its VNNI kernels here (int32 accumulation of u8*s8 products)."""
    return "avx512vnni" in torch.ops.qplugin._cpu_features()


def int8_gemm_exact(x_q: torch.Tensor, w_q: torch.Tensor) -> Verdict:
    """Whether torch's quantized linear / conv (fbgemm / x86 engine) computes ``x_q`` times the
    weight ``w_q`` (output channels on dim 0) exactly on this CPU.

    Without VNNI, a product pair can saturate when ``max(a) * (|w_i| + |w_j|) > 32767`` for two
    weights of one output channel (torch pairs neighbouring entries of the reduction dimension;
    taking the two largest magnitudes bounds every pairing)."""
    if cpu_has_vnni():
        return Verdict(True, "CPU has AVX-512 VNNI: fbgemm accumulates u8*s8 products in int32")
    a_max = int(x_q.int_repr().max()) if x_q.numel() else 0
    w = w_q.int_repr().reshape(w_q.shape[0], -1).abs().int()
    top2 = w.topk(min(2, w.shape[1]), dim=1).values.sum(1).max() if w.numel() else torch.tensor(0)
    bound = a_max * int(top2)
    if bound <= INT16_MAX:
        return Verdict(
            True,
            f"AVX2-only CPU, but no int16 pair can saturate: max activation {a_max} "
            f"x largest two |w| {int(top2)} = {bound} <= {INT16_MAX}",
        )
    return Verdict(
        False,
        f"AVX2-only CPU: fbgemm's vpmaddubsw int16 pairs can saturate "
        f"(max activation {a_max} x largest two |w| {int(top2)} = {bound} > {INT16_MAX})",
    )


def model_engine() -> Verdict:
    """The torch quantized engine that is an exact oracle for whole models on this CPU.

    With VNNI: torch's default x86 engine. Without: QNNPACK, which widens both operands to int16
    after subtracting zero points and accumulates in int32 (never saturates); its requantization
    rounds in float32, so it agrees with the float64 reference within 1 step per layer."""
    if cpu_has_vnni():
        return Verdict(True, "x86")
    return Verdict(False, "qnnpack")


def steps(a: torch.Tensor, b: torch.Tensor) -> int:
    """Largest difference of two quantized tensors in quantization steps (same qparams)."""
    return int((a.int_repr().int() - b.int_repr().int()).abs().max()) if a.numel() else 0


def assert_matches_torch_where_exact(
    ours: torch.Tensor, theirs: torch.Tensor, x_q: torch.Tensor, w_q: torch.Tensor, max_steps: int = 1, what: str = ""
) -> Verdict:
    """``ours`` within ``max_steps`` of torch's output when torch is exact for these inputs;
    returns the verdict (tests that must exercise the comparison assert it)."""
    v = int8_gemm_exact(x_q, w_q)
    if v:
        d = steps(ours, theirs)
        assert d <= max_steps, f"{what}: {d} steps from torch, which is exact here ({v.why})"
    return v


def seven_bit(x_q: torch.Tensor) -> torch.Tensor:
    """The same tensor with activations halved into 0..127 (same qparams): torch's fbgemm cannot
    saturate on it (127 * 256 = 32512 <= 32767), so it is an exact oracle on every CPU."""
    return torch._make_per_tensor_quantized_tensor(
        torch.div(x_q.int_repr(), 2, rounding_mode="floor"), x_q.q_scale(), x_q.q_zero_point()
    )


@contextlib.contextmanager
def torch_engine(name: str):
    """torch's quantized engine set to ``name`` for a block (packed weights made inside use it)."""
    previous = torch.backends.quantized.engine
    torch.backends.quantized.engine = name
    try:
        yield
    finally:
        torch.backends.quantized.engine = previous


def torch_version() -> TorchVersion:
    return TorchVersion(torch.__version__)


def quantize_exact(qdtype: torch.dtype, per_channel: bool = False) -> Verdict:
    """Whether torch's quantize_per_tensor (per_channel: quantize_per_channel) computes qplugin's
    quantize rule for ``qdtype`` in the running torch, bit for bit. Per tensor, 8-bit, only on
    the elements ``quantize_oracle_domain`` keeps; per channel on every element.

    8-bit: torch 2.14 made quantize_per_tensor / _channel round float32(x * inv_scale) and add the
    zero point to that integer (the rule; its FakeQuantize always did). torch 2.13 and older
    rounded x * inv_scale + zero_point in one step: one step off on ties with an odd zero point
    and on near-ties. qint32: never. torch rounds float32(x * inv_scale) (2.14) or
    float32(float32(x * inv_scale) + zero_point) (2.13) where the rule divides in float64: they
    differ on near-ties at any magnitude (the float32 product and reciprocal each round), and by
    whole steps once |x / scale| > 2^24."""
    v = torch_version()
    if qdtype == torch.qint32:
        return Verdict(
            False,
            f"torch {v} quantizes qint32 in float32 (x * float32 inv_scale); the rule "
            f"divides in float64, so near-ties and |x / scale| > 2^24 differ",
        )
    if v < "2.14":
        return Verdict(
            False,
            f"torch {v} rounds x * inv_scale + zero_point in one step (the rule rounds "
            f"float32(x * inv_scale), then adds the zero point): ties with an odd zero "
            f"point and near-ties differ",
        )
    if per_channel:
        return Verdict(
            True, f"torch {v}'s quantize_per_channel rounds float32(x * inv_scale), then adds the zero point, NaN -> 0"
        )
    return Verdict(
        True,
        f"torch {v}'s quantize_per_tensor rounds float32(x * inv_scale), then adds the "
        f"zero point (on elements with |x * inv_scale| < 2^30: beyond, and for NaN, it wraps)",
    )


def quantize_oracle_domain(x, scale) -> np.ndarray:
    """The elements of float ``x`` on which torch's per-tensor 8-bit quantize follows the rule when
    quantize_exact says it does: not NaN and |float32(x * inv_scale)| < QUANTIZE_WRAP_BOUND."""
    x = np.asarray(x.detach().numpy() if isinstance(x, torch.Tensor) else x, dtype=np.float32)
    inv = np.float32(1.0) / np.float32(scale)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.abs(x * inv) < QUANTIZE_WRAP_BOUND


def assert_quantize_matches_torch(
    ours: torch.Tensor,
    theirs: torch.Tensor,
    x,
    qdtype: torch.dtype,
    scale=None,
    per_channel: bool = False,
    what: str = "",
) -> Verdict:
    """``ours`` (a quantized or integer tensor) equal to torch's quantize result ``theirs`` of float
    ``x`` where quantize_exact says torch is exact: every element per channel, the elements of
    quantize_oracle_domain(x, scale) per tensor. Returns the verdict (tests that must exercise the
    comparison assert it)."""
    v = quantize_exact(qdtype, per_channel)
    if v:
        a = (ours.int_repr() if ours.is_quantized else ours).numpy().astype(np.int64)
        b = (theirs.int_repr() if theirs.is_quantized else theirs).numpy().astype(np.int64)
        keep = np.ones(a.shape, bool) if per_channel else quantize_oracle_domain(x, scale)
        bad = np.flatnonzero((a != b) & keep)
        assert bad.size == 0, (
            f"{what}: {bad.size} elements differ from torch, which is exact here ({v.why}); "
            f"first at flat index {bad[0]}: ours {a.flat[bad[0]]}, torch {b.flat[bad[0]]}"
        )
    return v


def with_qplugin_aten(fn):
    """fn() with qplugin's kernels for the aten ops on quantized tensors in place of torch's
    (torch_qplugin.use_for_aten(True)), the previous setting restored after."""
    was = torch_qplugin.use_for_aten(True)
    try:
        return fn()
    finally:
        torch_qplugin.use_for_aten(was)
