"""Smoke test of an installed torch_qplugin: kernel paths, a converted model, outputs as bytes.

    python scripts/smoke_model.py --out DIR [--save-model M.pt] [--load-model M.pt]

Runs on any architecture (x86-64 natively, aarch64 under qemu-user: scripts/test_aarch64_smoke.sh)
and writes what two builds can compare byte for byte:

* DIR/paths.txt: the kernel path in use (QPLUGIN_ISA caps it), the best one of this CPU, the paths
  this CPU runs, the CPU features the library detected; also printed;
* DIR/outputs.bin: the raw bytes of every recorded tensor, in order; DIR/outputs.txt one line per
  tensor (name, dtype, shape, scale, zero point, sha256 of its bytes) to find the first that
  differs.

The tensors: the int_repr of every quantized module output of SmokeNet (Conv-BN-ReLU, Conv-BN,
quantized add, max pool, avg pool, cat, depthwise conv, adaptive avg pool, Linear-ReLU, Linear),
converted in this process by torch_qplugin.quantization (fuse, prepare, calibrate, convert) with
per-channel weights; the float output of the same layers' Linear part quantized dynamically
(quantize_dynamic); with --load-model, the output of a TorchScript model saved by another run's
--save-model (same weights and qparams on both sides, so only the kernels are compared).

Every input, weight and BatchNorm parameter is a small multiple of a power of two drawn from
integer random numbers (torch.randint with a fixed seed, identical on every architecture), with
BatchNorm eps 0 and variances powers of 4: the float model that calibration runs and the BN fold
then compute exactly, in any summation order, so the observers see the same ranges on x86 and
aarch64 and any byte difference comes from the quantized kernels.
"""

import argparse
import copy
import hashlib
import os
import struct
import sys
import warnings

import torch
import torch.nn as nn

SEED = 20261129


def dyadic(g, shape, lo, hi, denom):
    """Integers in [lo, hi] divided by ``denom`` (a power of two): exact floats."""
    return torch.randint(lo, hi + 1, shape, generator=g).to(torch.float32) / denom


class SmokeNet(nn.Module):
    def __init__(self, tq):
        super().__init__()
        from torch_qplugin.quantization.stubs import FloatFunctional

        self.quant = tq.QuantStub()
        self.conv1, self.bn1, self.relu1 = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8, eps=0.0), nn.ReLU()
        self.conv2, self.bn2 = nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8, eps=0.0)
        self.add = FloatFunctional()
        self.maxpool, self.avgpool = nn.MaxPool2d(2), nn.AvgPool2d(2)
        self.cat = FloatFunctional()
        self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc1, self.relu2 = nn.Linear(16, 32), nn.ReLU()
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = self.quant(x)
        y = self.relu1(self.bn1(self.conv1(x)))
        y = self.add.add(y, self.bn2(self.conv2(y)))
        y = self.cat.cat([self.maxpool(y), self.avgpool(y)], 1)
        y = self.gap(self.dw(y)).flatten(1)
        return self.fc2(self.relu2(self.fc1(y)))

    def fuse_model(self, fuse_modules):
        fuse_modules(self, [["conv1", "bn1", "relu1"], ["conv2", "bn2"], ["fc1", "relu2"]], inplace=True)


def init_exact(model, g):
    """Weights and BN parameters whose float products and sums stay exact in float32: conv1 /
    conv2 weights and biases in halves, BN gamma 1/2 or 1, variances 1/4, 1 or 4 (BN eps 0), the
    later layers' weights integers in [-1, 1]."""
    with torch.no_grad():
        for name, m in model.named_modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                first = name in ("conv1", "conv2")
                m.weight.copy_(dyadic(g, m.weight.shape, -2, 2, 2) if first else dyadic(g, m.weight.shape, -1, 1, 1))
                m.bias.copy_(dyadic(g, m.bias.shape, -2, 2, 2))
            elif isinstance(m, nn.BatchNorm2d):
                n = m.num_features
                m.weight.copy_(dyadic(g, (n,), 1, 2, 2))
                m.bias.copy_(dyadic(g, (n,), -2, 2, 2))
                m.running_mean.copy_(dyadic(g, (n,), -2, 2, 2))
                m.running_var.copy_(torch.tensor([0.25, 1.0, 4.0])[torch.randint(0, 3, (n,), generator=g)])
    return model


def float_is_exact(model, batches):
    """Whether the float model computes every layer output exactly in float32 (equal to float64)
    on ``batches``: then the observers' ranges cannot depend on the BLAS or the summation order."""
    m64 = copy.deepcopy(model).double()
    outs = {}
    for mod, key in ((model, 32), (m64, 64)):
        seen = outs.setdefault(key, [])
        hooks = [
            m.register_forward_hook(lambda m, i, o: seen.append(o.double()))
            for n, m in mod.named_modules()
            if n and not list(m.children())
        ]
        with torch.no_grad():
            for b in batches:
                mod(b.to(torch.float64) if key == 64 else b)
        for h in hooks:
            h.remove()
    return len(outs[32]) == len(outs[64]) and all(torch.equal(a, b) for a, b in zip(outs[32], outs[64]))


class Recorder:
    """Collects tensors as bytes plus one descriptive line each."""

    def __init__(self):
        self.blobs, self.lines = [], []

    def add(self, name, t):
        if t.is_quantized:  # int_repr bytes, then scale (float64) and zero point (int64)
            extra = f"scale={t.q_scale()!r} zero_point={t.q_zero_point()}"
            raw = t.int_repr().contiguous().numpy().tobytes() + struct.pack("<dq", t.q_scale(), t.q_zero_point())
        else:
            extra = ""
            raw = t.detach().contiguous().numpy().tobytes()
        self.blobs.append(raw)
        self.lines.append(f"{name} {t.dtype} {tuple(t.shape)} {extra} sha256={hashlib.sha256(raw).hexdigest()[:16]}")

    def write(self, out):
        with open(os.path.join(out, "outputs.bin"), "wb") as f:
            f.write(b"".join(self.blobs))
        with open(os.path.join(out, "outputs.txt"), "w") as f:
            f.write("\n".join(self.lines) + "\n")


def kernel_paths():
    q = torch.ops.qplugin
    return [
        f"active {q._active_isa()}",
        f"cpu {q._cpu_isa()}",
        f"supported {' '.join(q._supported_isas())}",
        f"features {' '.join(q._cpu_features()) or '-'}",
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--save-model", help="torch.jit.save the converted model here")
    ap.add_argument("--load-model", help="also run a model saved by --save-model")
    args = ap.parse_args()
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    warnings.filterwarnings("ignore", message=r".*deprecated.*")
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)

    import torch_qplugin
    import torch_qplugin.quantization as tq

    paths = kernel_paths()
    print(f"torch {torch.__version__}, torch_qplugin {torch_qplugin.__version__} ({torch_qplugin.__file__})")
    print("kernel paths: " + "; ".join(paths))
    with open(os.path.join(args.out, "paths.txt"), "w") as f:
        f.write("\n".join(paths) + "\n")

    g = torch.Generator().manual_seed(SEED)
    fp32 = init_exact(SmokeNet(tq), g).eval()
    calib = [dyadic(g, (2, 3, 8, 8), -4, 4, 2) for _ in range(4)]
    x = dyadic(g, (2, 3, 8, 8), -4, 4, 2)
    rec = Recorder()
    rec.add("input", x)

    # static: fuse, prepare, calibrate, convert
    model = SmokeNet(tq)
    model.load_state_dict(fp32.state_dict())
    model.eval()
    model.fuse_model(tq.fuse_modules)
    exact = float_is_exact(model, calib + [x])
    print(f"float model exact in float32 (observers independent of the BLAS): {'yes' if exact else 'NO'}")
    model.qconfig = tq.default_qconfig
    tq.prepare(model, inplace=True)
    tq.calibrate(model, calib)
    tq.convert(model, inplace=True)
    seen = []
    hooks = [
        m.register_forward_hook(lambda m, i, o, n=name: seen.append((n, o)))
        for name, m in model.named_modules()
        if name
    ]
    with torch.no_grad():
        y = model(x)
    for h in hooks:
        h.remove()
    recorded = set()  # fused-away modules (Identity) return their input: record each tensor once
    for name, o in seen:
        if isinstance(o, torch.Tensor) and o.is_quantized and id(o) not in recorded:
            recorded.add(id(o))
            rec.add(f"static.{name}", o)
    rec.add("static.out", y)
    print(
        f"static model: {len(seen)} module outputs, out {y.dtype} scale {y.q_scale():.6g} "
        f"zp {y.q_zero_point()} argmax {y.dequantize().argmax(1).tolist()}"
    )

    # dynamic: the Linear layers with int8 weights, float activations
    head = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10))
    init_exact(head, g)
    dyn = tq.quantize_dynamic(head.eval(), {nn.Linear}, dtype=torch.qint8)
    with torch.no_grad():
        rec.add("dynamic.out", dyn(dyadic(g, (4, 16), -16, 16, 8)))

    if args.save_model:
        torch.jit.save(torch.jit.script(model), args.save_model)
        print(f"saved {args.save_model}")
    if args.load_model:
        loaded = torch.jit.load(args.load_model)
        with torch.no_grad():
            rec.add("loaded.out", loaded(x))
        print(f"ran {args.load_model}")

    rec.write(args.out)
    print(
        f"{len(rec.lines)} tensors -> {args.out}/outputs.bin "
        f"({sum(len(b) for b in rec.blobs)} bytes, sha256 "
        f"{hashlib.sha256(b''.join(rec.blobs)).hexdigest()[:16]})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
