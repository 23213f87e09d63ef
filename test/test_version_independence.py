"""Our numbers never depend on the torch version: fixed inputs give the same bits under every
supported torch (2.13, 2.14, 2.15, CPU and CUDA wheels), on every kernel path.

Each case below runs qplugin ops on inputs made without torch's random generator or torch's
quantize (numpy's generator, our own quantize op, or torch's make-from-integers), and the SHA-256
of its output bytes must equal the digest recorded in golden/version_independence.json. The suite
runs on two torch releases in CI (scripts/test.sh), so one golden file passing under both is the
proof. Regenerate it only for a deliberate numerics change, and say why in the commit:

    python test/test_version_independence.py --write
"""

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import torch_qplugin  # noqa: F401

GOLDEN = Path(__file__).resolve().parent / "golden" / "version_independence.json"
q = torch.ops.qplugin


def _rng(seed):
    return np.random.default_rng(seed)


def _float(seed, shape, lo=-4.0, hi=4.0):
    return torch.from_numpy(_rng(seed).uniform(lo, hi, size=shape).astype(np.float32))


def _u8(seed, shape, scale, zp):
    data = torch.from_numpy(_rng(seed).integers(0, 256, size=shape, dtype=np.uint8))
    return torch._make_per_tensor_quantized_tensor(data, scale, zp)


def _weight(seed, shape, per_channel=True):
    data = torch.from_numpy(_rng(seed).integers(-128, 128, size=shape, dtype=np.int8))
    if not per_channel:
        return torch._make_per_tensor_quantized_tensor(data, 0.02, 0)
    scales = torch.from_numpy(_rng(seed + 1).uniform(0.005, 0.03, size=shape[0]))
    return torch._make_per_channel_quantized_tensor(data, scales, torch.zeros(shape[0], dtype=torch.long), 0)


def _ties(n=4096):
    """Inputs full of ties and near-ties for scale 0.5 / 0.07: where the rounding rules part."""
    base = np.arange(-n // 2, n // 2, dtype=np.float32) * np.float32(0.25)
    near = np.nextafter(base, np.float32(np.inf))
    return torch.from_numpy(np.concatenate([base, near, _rng(7).normal(0, 3, n).astype(np.float32)]))


def _cases():
    x = _float(1, (3, 5, 7, 11))
    ties = _ties()
    qa, qb = _u8(2, (2, 16, 9, 9), 0.05, 120), _u8(3, (2, 16, 9, 9), 0.07, 100)
    img = _u8(4, (2, 8, 13, 13), 0.04, 110)
    yield (
        "quantize_per_tensor",
        lambda: [
            q.quantize_per_tensor(t, s, z, dt)
            for t in (x, ties)
            for s, z, dt in (
                (0.5, 5, torch.quint8),
                (0.07, 255, torch.quint8),
                (0.03, -3, torch.qint8),
                (0.5, 3, torch.qint8),
                (1.0, 2**31 - 1, torch.qint32),
                (1e-6, 7, torch.qint32),
            )
        ],
    )
    yield (
        "quantize_per_channel",
        lambda: [
            q.quantize_per_channel(
                x, torch.tensor([0.5, 0.07, 0.013, 0.25, 1.5], dtype=torch.double), torch.tensor(zps), 1, dt
            )
            for zps, dt in (
                ([5, 255, 0, 128, 3], torch.quint8),
                ([3, -3, 0, 127, -128], torch.qint8),
                ([0, 2**31 - 1, -7, 11, 5], torch.qint32),
            )
        ],
    )
    yield (
        "quantize_per_tensor_dynamic",
        lambda: [
            q.quantize_per_tensor_dynamic(x, torch.quint8, False),
            q.quantize_per_tensor_dynamic(x, torch.qint8, True),
        ],
    )
    yield "dequantize", lambda: [q.dequantize(qa), q.dequantize(_weight(5, (6, 40)))]
    yield (
        "add_mul",
        lambda: [
            q.add(qa, qb, 0.09, 110),
            q.add_relu(qa, qb, 0.09, 110),
            q.mul(qa, qb, 0.3, 20),
            q.add_scalar(qa, 0.37),
            q.mul_scalar(qa, -1.3),
        ],
    )
    yield "cat", lambda: [q.cat([qa, qb], 1, 0.06, 115), q.cat([qa, qa], 0, None, None)]
    yield (
        "activations",
        lambda: [
            q.relu6(_u8(6, (4, 61), 4.0, 1)),
            q.hardswish(qa, 0.03, 60),
            q.sigmoid(qa, 1 / 256, 0),
            q.leaky_relu(qa, 0.1, False, 0.05, 100),
            q.elu(qa, 0.05, 100),
            q.clamp(qa, -1.0, 2.0),
        ],
    )
    yield (
        "norm_softmax",
        lambda: [
            q.softmax(qa, 1, 1 / 256, 0),
            q.layer_norm(qa, [9], _float(8, (9,)), _float(9, (9,)), 1e-5, 0.05, 128),
            q.group_norm(qa, 4, _float(10, (16,)), _float(11, (16,)), 1e-5, 0.05, 128),
        ],
    )
    yield (
        "pool_upsample",
        lambda: [
            q.max_pool2d(img, [3, 3], [2, 2], [1, 1], [1, 1], False),
            q.avg_pool2d(img, [3, 3], [2, 2], [1, 1], False, True, None),
            q.adaptive_avg_pool2d(img, [5, 5]),
            q.mean(img, [2, 3], True),
            q.upsample_bilinear2d(img, [20, 27], False),
            q.upsample_nearest2d(img, [26, 26]),
        ],
    )
    yield "sort", lambda: list(q.sort(qa, 1)) + list(q.topk(qa.flatten(1), 7, 1))

    def linear():
        xq = _u8(12, (5, 40), 0.05, 120)
        out = []
        for per_channel in (True, False):
            packed = q.linear_prepack(_weight(13, (24, 40), per_channel), _float(14, (24,)))
            out += [
                q.linear(xq, packed, 0.2, 100),
                q.linear_relu(xq, packed, 0.2, 100),
                q.linear_dynamic(_float(15, (5, 40)), packed, False),
            ]
        out.append(q.linear_dynamic_fp16(_float(15, (5, 40)), q.linear_prepack_fp16(_float(16, (24, 40)), None)))
        return out

    yield "linear", linear

    def conv():
        out = []
        for groups, wshape in ((1, (12, 8, 3, 3)), (8, (8, 1, 3, 3))):
            packed = q.conv2d_prepack(_weight(17, wshape), _float(18, (wshape[0],)), [1, 1], [1, 1], [1, 1], groups)
            out += [
                q.conv2d(img, packed, 0.3, 90),
                q.conv2d_relu(img.contiguous(memory_format=torch.channels_last), packed, 0.3, 90),
            ]
        tpacked = q.conv_transpose2d_prepack(
            _weight(19, (8, 6, 3, 3), per_channel=False), None, [2, 2], [1, 1], [1, 1], [1, 1], 1
        )
        out.append(q.conv_transpose2d(img, tpacked, 0.4, 80))
        return out

    yield "conv", conv

    def embedding():
        table = _float(20, (50, 16))
        idx = torch.from_numpy(_rng(21).integers(0, 50, size=30)).long()
        offsets = torch.tensor([0, 4, 11, 30], dtype=torch.long)
        b8 = q.embedding_bag_byte_prepack(table)
        b4 = q.embedding_bag_4bit_prepack(table)
        return [
            b8,
            b4,
            q.embedding_bag_byte_rowwise_offsets(b8, idx, offsets),
            q.embedding_bag_4bit_rowwise_offsets(b4, idx, offsets),
        ]

    yield "embedding", embedding


def _digest(outputs) -> str:
    h = hashlib.sha256()
    for t in outputs:
        if t.is_quantized:
            h.update(str((t.dtype, tuple(t.shape))).encode())
            t = t.int_repr()
        h.update(t.contiguous().numpy().tobytes())
    return h.hexdigest()


def compute_digests():
    with torch_qplugin.kernel_isa("scalar"):  # the reference path; the test checks every path
        return {name: _digest(fn()) for name, fn in _cases()}


CASES = dict(_cases())


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_bits_under_every_torch(name, isa):
    golden = json.loads(GOLDEN.read_text())
    assert name in golden, f"{name}: no golden digest; run python {Path(__file__).name} --write"
    got = _digest(CASES[name]())
    assert got == golden[name], (
        f"{name} on the {isa} path under torch {torch.__version__}: digest {got[:16]}..., recorded "
        f"{golden[name][:16]}... -- our numbers moved (a torch version must never change them)"
    )


def test_golden_covers_every_case():
    assert sorted(json.loads(GOLDEN.read_text())) == sorted(CASES)


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(__doc__)
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(compute_digests(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN} under torch {torch.__version__}")
