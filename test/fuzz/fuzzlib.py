"""qplugin's own fuzzer. Used by test/fuzz/test_fuzz.py (a seeded, time-boxed CI slice)
and scripts/fuzz.py (long runs).

* Ops are enumerated from the op library (every `qplugin::` schema the dispatcher knows), so a new
  op is fuzzed without anybody listing it. Arguments are generated from each schema's argument
  types: quantized tensors (per-tensor and per-channel, quint8 / qint8 / qint32, odd shapes, 0-size
  and 0-dim, non-contiguous and channels_last, extreme and invalid qparams), float / integer
  tensors, packed params of every family (the right class with the wrong kind included), odd ints,
  floats, lists, scalar types.
* A case is (op, seed): the child regenerates the inputs from the seed, so a failure is named by
  the op and reproduced by the seed (`python scripts/fuzz.py --replay OP SEED`).
* Cases run in a child process (a fresh interpreter), many per child; on a crash or a hang the
  parent re-runs the suspect case alone to confirm and name it.
* Outcome rules: a call returns, or raises RuntimeError / ValueError / TypeError / IndexError whose
  message names a qplugin op ("qplugin::"). Anything else (a signal, a hang, another exception
  type, an error without our message, or a result that disagrees with test/reference.py on the
  ops it covers) is a failure.
* Memory-cap mode (`memcap`): each child caps its address space (RLIMIT_AS) at what it has mapped
  after importing torch plus `memcap` bytes, so an allocation sized by an argument that nothing
  checked (a huge `groups` repeating a tensor, a size computed from unchecked ints) fails in the
  allocator instead of taking the machine's memory. An allocator error is always a finding
  (ALLOCATOR_ERRORS): the op should have refused the argument first, naming it; the ops' own
  output-size bound (utils/checks.h check_output_size) honours the cap.
* Saved-model mutation: torch.jit.save / torch.save of qplugin models and packed params,
  truncated, bit-flipped raw, and bit-flipped inside a zip record (data records and pickles,
  re-zipped with a correct CRC so the flip reaches the unpickler), then loaded and run in a child:
  never a crash or hang.
"""

import io
import json
import os
import random
import subprocess
import sys
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
TEST_DIR = os.path.dirname(HERE)

OK_TYPES = (
    "RuntimeError",
    "ValueError",
    "TypeError",
    "IndexError",
    "NotImplementedError",
    "WrongKindError",
)  # torch_qplugin/_wrong_kind.py: a TypeError and a RuntimeError
# What an allocation that reached the allocator and failed looks like (c10's DefaultCPUAllocator,
# std::bad_alloc -> MemoryError, torch's size arithmetic): never an acceptable answer to an argument.
ALLOCATOR_ERRORS = ("can't allocate memory", "bad_alloc", "Storage size calculation overflowed", "out of memory")
MEMCAP = 1 << 30  # the memory-cap mode's headroom over what a child has mapped after importing torch


def is_allocator_error(e):
    return isinstance(e, MemoryError) or any(m in str(e) for m in ALLOCATOR_ERRORS)


# ---------------------------------------------------------------------------------------------
# op enumeration (child and parent)
# ---------------------------------------------------------------------------------------------
def all_ops():
    """[(qualified name, overload)] of every qplugin op in the op library."""
    import torch
    import torch_qplugin  # noqa: F401

    out = []
    for name in sorted(torch._C._dispatch_get_all_op_names()):
        if not name.startswith("qplugin::"):
            continue
        base, _, overload = name.partition(".")
        out.append((base, overload))
    return out


def op_id(base, overload):
    return base + ("." + overload if overload else "")


# ---------------------------------------------------------------------------------------------
# input generation (child)
# ---------------------------------------------------------------------------------------------
INTS = [0, 1, 2, 3, -1, -2, 7, 16, 255, 256, -129, 2**31 - 1, 2**31, -(2**31), 2**62, -(2**63), 2**63 - 1]
FLOATS = [
    0.0,
    1.0,
    -1.0,
    0.5,
    0.1,
    1e-3,
    1e-10,
    1e-38,
    1e-45,
    5e-324,
    3.5e38,
    1e300,
    float("nan"),
    float("inf"),
    float("-inf"),
    -0.0,
    255.0,
    1.5,
]
GOOD_SCALES = [0.1, 0.05, 1.0, 0.003, 7.5, 2.0**-20]
BAD_SCALES = [0.0, -0.1, float("nan"), float("inf"), 1e-45, 5e-324, 3.5e38]


class Gen:
    def __init__(self, seed):
        import torch

        self.torch = torch
        self.r = random.Random(seed)
        self.g = torch.Generator().manual_seed(seed)
        self.shape_hint = None
        self.sources = {}  # id(packed params) -> what they were built from (checks.py reads it)
        self.op = None  # set by checks.check_call
        self.before = None  # a copy of the first input before the call (in-place ops)
        self.last_dtype = None
        self.preset = {}  # argument name -> value chosen together with an earlier argument
        self.packed_obj = None
        self.shape_override = None  # the next tensor's shape (matmul's second operand)

    def chance(self, p):
        return self.r.random() < p

    # -- shapes --------------------------------------------------------------------------------
    def shape(self, ndim=None):
        r = self.r
        if self.shape_override is not None:
            out, self.shape_override = self.shape_override, None
            return list(out)
        if self.shape_hint is not None and ndim is None and self.chance(0.6):
            return list(self.shape_hint)
        if ndim is None:
            ndim = r.choice([0, 1, 2, 3, 4, 4, 4, 5])
        dims = []
        for _ in range(ndim):
            dims.append(r.choice([1, 1, 2, 3, 4, 5, 7, 8, 16, 17, 33] + ([0] if self.chance(0.05) else [])))
        # keep it small
        while dims and _prod(dims) > 4096:
            dims[r.randrange(len(dims))] = 1
        return dims

    def layout(self, t):
        """The same values, maybe channels_last / transposed / sliced (non-contiguous)."""
        try:
            return self._layout(t)
        except RuntimeError:  # e.g. per-channel tensors cannot be restrided
            return t

    def _layout(self, t):
        torch, r = self.torch, self.r
        k = r.random()
        if k < 0.15 and t.dim() == 4:
            return t.contiguous(memory_format=torch.channels_last)
        if k < 0.2 and t.dim() == 5:
            return t.contiguous(memory_format=torch.channels_last_3d)
        if k < 0.3 and t.dim() >= 2:
            return t.transpose(0, t.dim() - 1).contiguous().transpose(0, t.dim() - 1)  # same shape, permuted strides
        if k < 0.38 and t.dim() >= 1 and t.shape[-1] >= 1:
            try:  # a strided view holding t's values: every other element of a doubled tensor
                big = torch.stack([t, t], dim=-1).flatten(-2)
                return big[..., ::2]
            except Exception:
                return t
        return t

    # -- tensors -------------------------------------------------------------------------------
    def qparams(self, dtype):
        r = self.r
        lo, hi = {"quint8": (0, 255), "qint8": (-128, 127), "qint32": (-(2**31), 2**31 - 1)}[dtype]
        scale = r.choice(BAD_SCALES) if self.chance(0.08) else r.choice(GOOD_SCALES)
        if self.chance(0.06):
            zp = r.choice([hi + 1, lo - 1, 2**62])
        else:
            zp = r.choice([lo, hi, (lo + hi) // 2, 0 if lo <= 0 else lo, r.randint(max(lo, -1000), min(hi, 1000))])
        return scale, zp

    def int_data(self, shape, dtype):
        torch, r = self.torch, self.r
        tdt = {"quint8": torch.uint8, "qint8": torch.int8, "qint32": torch.int32}[dtype]
        lo, hi = {"quint8": (0, 255), "qint8": (-128, 127), "qint32": (-(2**31), 2**31 - 1)}[dtype]
        if dtype == "qint32" and not self.chance(0.3):
            lo, hi = r.choice([(-3000, 3000), (2**30, 2**30 + 64), (-(2**31), -(2**31) + 50)])
        return torch.randint(lo, hi + 1, shape, generator=self.g, dtype=torch.int64).to(tdt)

    def qtensor(self, dtype=None, shape=None, per_channel=None):
        torch, r = self.torch, self.r
        if dtype is None and self.last_dtype is not None and self.chance(0.7):
            dtype = self.last_dtype
        dtype = dtype or r.choice(["quint8", "quint8", "qint8", "qint32"])
        self.last_dtype = dtype
        shape = self.shape() if shape is None else shape
        data = self.int_data(shape, dtype)
        if per_channel is None:
            per_channel = self.chance(0.08)
        if per_channel and len(shape) > 0:
            axis = r.randrange(len(shape))
            n = shape[axis]
            scales = torch.tensor(
                [self.qparams(dtype)[0] if self.chance(0.2) else r.choice(GOOD_SCALES) for _ in range(n)],
                dtype=torch.double,
            )
            zps = torch.tensor([self.qparams(dtype)[1] if self.chance(0.1) else 0 for _ in range(n)], dtype=torch.long)
            try:
                t = torch._make_per_channel_quantized_tensor(data, scales, zps, axis)
            except Exception:
                t = torch._make_per_tensor_quantized_tensor(data, 0.1, 0)
        else:
            scale, zp = self.qparams(dtype)
            try:
                t = torch._make_per_tensor_quantized_tensor(data, scale, zp)
            except Exception:
                t = torch._make_per_tensor_quantized_tensor(data, 0.1, 0)
        return self.layout(t)

    def float_tensor(self, shape=None):
        torch = self.torch
        shape = self.shape() if shape is None else shape
        t = torch.randn(shape, generator=self.g) * self.r.choice([1.0, 0.01, 100.0, 1e6])
        if self.chance(0.1) and t.numel():
            t.view(-1)[0] = self.r.choice([float("nan"), float("inf"), -float("inf")])
        return self.layout(t)

    def tensor(self, name):
        torch, r = self.torch, self.r
        k = r.random()
        if k < 0.68:
            return self.qtensor()
        if k < 0.85:
            return self.float_tensor()
        if k < 0.95:
            dt = r.choice([torch.uint8, torch.int8, torch.int32, torch.int64, torch.float64, torch.bool])
            return torch.randint(0, 5, self.shape(), generator=self.g).to(dt)
        return self.qtensor(per_channel=True)

    # -- packed params ---------------------------------------------------------------------------
    def weight(self, shape, axis=0):
        """A qint8 weight, per tensor or (30 %) per channel along `axis` (1: a transposed conv's
        output channels)."""
        torch = self.torch
        data = torch.randint(-128, 128, shape, generator=self.g, dtype=torch.int64).to(torch.int8)
        if self.chance(0.3):
            return torch._make_per_channel_quantized_tensor(
                data,
                torch.rand(shape[axis], generator=self.g, dtype=torch.double) * 0.02 + 0.001,
                torch.zeros(shape[axis], dtype=torch.long),
                axis,
            )
        return torch._make_per_tensor_quantized_tensor(
            data, self.r.choice([0.01, 0.003, 0.5]), self.r.choice([0, 0, 3])
        )

    def packed(self, cls, kind=None):
        """A packed-params object of class `cls` (`kind` conv1d / conv2d, else chosen at random:
        the wrong kind too)."""
        q = self.torch.ops.qplugin
        r = self.r
        bias = lambda n: self.torch.randn(n, generator=self.g) if self.chance(0.7) else None  # noqa: E731
        if "Linear" in cls and kind == "fp16":  # float16 weights (linear_prepack_fp16)
            n, k = r.choice([1, 3, 16, 33]), r.choice([1, 4, 17, 64])
            w = self.torch.randn(n, k, generator=self.g) * r.choice([0.01, 1.0, 300.0])
            b = bias(n)
            return self._remember(q.linear_prepack_fp16(w, b), w=w, b=b, fp16=True, in_shape=[r.choice([1, 2, 5]), k])
        if "Linear" in cls:
            n, k = r.choice([1, 3, 16, 33]), r.choice([1, 4, 17, 64])
            w, b = self.weight([n, k]), bias(n)
            return self._remember(q.linear_prepack(w, b), w=w, b=b, in_shape=[r.choice([1, 2, 5]), k])
        if "Embedding" in cls:
            bits = {"byte": 8, "4bit": 4}.get(kind) or r.choice([8, 4])
            rows, dim = r.choice([1, 3, 17]), r.choice([2, 8, 34])
            w = self.torch.randn(rows, dim, generator=self.g) * r.choice([0.1, 3.0])
            qw = float_qparams_weight(w, bits)
            return self._remember(q.embedding_bag_prepack(qw), qw=qw, bits=bits, rows=rows, dim=dim, in_shape=[rows])
        if kind is None and self.chance(0.15):  # a transposed conv's params (the wrong kind for conv ops)
            kind = "conv_transpose3d" if "Conv3d" in cls else r.choice(["conv_transpose1d", "conv_transpose2d"])
        if kind is not None and kind.startswith("conv_transpose"):
            return self.conv_transpose_packed(kind, bias)
        if "Conv3d" in cls:
            oc, ic = r.choice([2, 4]), r.choice([1, 2, 3])
            w, b = self.weight([oc, ic, r.choice([1, 2]), r.choice([1, 3]), r.choice([1, 3])]), bias(oc)
            geo = dict(stride=[r.choice([1, 2])] * 3, padding=[r.choice([0, 1])] * 3, dilation=[1] * 3, groups=1)
            obj = q.conv3d_prepack(w, b, geo["stride"], geo["padding"], geo["dilation"], geo["groups"])
            return self._remember(obj, w=w, b=b, in_shape=[1, ic, 3, 4, 4], **geo)
        kind = kind or r.choice(["conv1d", "conv2d", "conv2d"])
        groups = r.choice([1, 1, 2])
        oc, icg = r.choice([2, 4, 8]), r.choice([1, 3, 4])
        ks = [r.choice([1, 3])] * (1 if kind == "conv1d" else 2)
        sp = len(ks)
        prep = q.conv1d_prepack if kind == "conv1d" else q.conv2d_prepack
        w, b = self.weight([oc, icg] + ks), bias(oc)
        geo = dict(
            stride=[r.choice([1, 2])] * sp,
            padding=[r.choice([0, 1])] * sp,
            dilation=[r.choice([1, 2])] * sp,
            groups=groups,
        )
        obj = prep(w, b, geo["stride"], geo["padding"], geo["dilation"], groups)
        return self._remember(
            obj, w=w, b=b, in_shape=[r.choice([1, 2]), icg * groups] + [r.choice([5, 7, 8])] * sp, **geo
        )

    def conv_transpose_geometry(self, sp):
        """stride / padding / output_padding / dilation / groups of a valid transposed conv."""
        r = self.r
        stride, dilation = [r.choice([1, 2])] * sp, [r.choice([1, 2])] * sp
        return dict(
            stride=stride,
            padding=[r.choice([0, 1])] * sp,
            dilation=dilation,
            groups=r.choice([1, 1, 2]),
            output_padding=[r.choice([0, max(stride[0], dilation[0]) - 1])] * sp,
        )

    def conv_transpose_packed(self, kind, bias):
        """Transposed-conv packed params of `kind`: weight (IC, OC / groups, kernel...), per
        tensor or per output channel (axis 1)."""
        r, q = self.r, self.torch.ops.qplugin
        sp = int(kind[len("conv_transpose")])
        geo = self.conv_transpose_geometry(sp)
        icg, ocg = r.choice([1, 3, 4]), r.choice([1, 2, 5])
        ks = [r.choice([1, 2, 3])] * sp
        w, b = self.weight([icg * geo["groups"], ocg] + ks, axis=1), bias(ocg * geo["groups"])
        prep = getattr(q, kind + "_prepack")
        obj = prep(w, b, geo["stride"], geo["padding"], geo["output_padding"], geo["dilation"], geo["groups"])
        return self._remember(
            obj,
            w=w,
            b=b,
            transposed=True,
            in_shape=[r.choice([1, 2]), icg * geo["groups"]] + [r.choice([2, 3, 5])] * sp,
            **geo,
        )

    def plain_weight(self, short):
        """Presets the plain tier's weight arguments (w, w_scales, w_zero_points, bias, packed,
        conv geometry) for `short` and shapes the input to fit."""
        torch, r = self.torch, self.r
        q = torch.ops.qplugin
        if short.startswith("plain_conv_transpose"):
            return self.plain_conv_transpose_weight(short)
        if "linear" in short:
            nd, n, k = 0, r.choice([1, 3, 16, 33]), r.choice([1, 4, 17, 64])
            wshape = [n, k]
        else:
            nd = int(short[len("plain_conv")]) if short[len("plain_conv")].isdigit() else r.choice([1, 2, 3])
            groups = r.choice([1, 1, 2])
            n = r.choice([2, 4]) * groups
            wshape = [n, r.choice([1, 3])] + [r.choice([1, 2, 3]) for _ in range(nd)]
        w = torch.randint(-128, 128, wshape, generator=self.g, dtype=torch.int64).to(torch.int8)
        k = n if self.chance(0.7) else 1
        sc = torch.rand(k, generator=self.g, dtype=torch.double) * 0.02 + 0.001
        zp = torch.tensor([r.choice([0, 0, 2, -5]) for _ in range(k)], dtype=torch.long)
        bias = torch.randn(n, generator=self.g) if self.chance(0.7) else None
        self.preset.update(w=w, w_scales=sc, w_zero_points=zp, bias=bias)
        if nd == 0:
            self.preset["packed"] = q.plain_linear_prepack(w, sc, zp)
            self.shape_hint = [r.choice([1, 2, 5]), wshape[1]]
        else:
            geo = dict(
                stride=[r.choice([1, 2])] * nd,
                padding=[r.choice([0, 1])] * nd,
                dilation=[r.choice([1, 2])] * nd,
                groups=groups,
            )
            self.preset.update(geo)
            self.preset["packed"] = q.plain_conv_prepack(
                w, sc, zp, bias, geo["stride"], geo["padding"], geo["dilation"], groups
            )
            self.shape_hint = [r.choice([1, 2]), wshape[1] * groups] + [r.choice([5, 7, 8])] * nd
            self.conv_src = dict(geo, w=w, in_shape=list(self.shape_hint))
        self.last_dtype = "quint8"

    def fp16_panels(self, w):
        """plain_linear_prepack_fp16(w), or (sometimes) empty: the op packs w itself."""
        return self.torch.ops.qplugin.plain_linear_prepack_fp16(w) if self.chance(0.8) else w.new_empty([0])

    def plain_fp16_weight(self, short):
        """Presets the fp16 plain ops' float16 weights and float32 biases (linear: w / bias and the
        input's shape; the recurrent layer: both projections, the sequence and the states)."""
        torch, r = self.torch, self.r

        def weight(n, k):
            w = (torch.randn(n, k, generator=self.g) * r.choice([0.1, 1.0, 100.0])).to(torch.float16)
            return w, (torch.randn(n, generator=self.g) if self.chance(0.7) else None)

        if "rnn" in short:
            gates, h, i, t, b = (
                r.choice([3, 4]),
                r.choice([1, 5, 16]),
                r.choice([1, 4, 17]),
                r.choice([0, 1, 3]),
                r.choice([1, 2]),
            )
            (wi, bi), (wh, bh) = weight(gates * h, i), weight(gates * h, h)
            self.preset.update(
                input=torch.randn(t, b, i, generator=self.g),
                h0=torch.randn(b, h, generator=self.g),
                c0=torch.randn(b, h, generator=self.g),
                w_ih=wi,
                b_ih=bi,
                packed_ih=self.fp16_panels(wi),
                w_hh=wh,
                b_hh=bh,
                packed_hh=self.fp16_panels(wh),
                num_gates=gates,
                reverse=self.chance(0.5),
            )
            return
        n, k = r.choice([1, 3, 16, 33]), r.choice([1, 4, 17, 64])
        w, bias = weight(n, k)
        self.preset.update(w=w, bias=bias, packed=self.fp16_panels(w))
        self.shape_hint = [r.choice([1, 2, 5]), k]

    def plain_conv_transpose_weight(self, short):
        """plain_conv_transpose*: w (IC, OC / groups, kernel...), 1 or OC scales / zero points (per
        output channel of every group), bias, geometry, the packed header; the input to fit."""
        torch, r = self.torch, self.r
        digit = short[len("plain_conv_transpose")]
        nd = int(digit) if digit.isdigit() else r.choice([1, 2, 3])
        geo = self.conv_transpose_geometry(nd)
        groups = geo["groups"]
        icg, ocg = r.choice([1, 3, 4]), r.choice([1, 2, 5])
        wshape = [icg * groups, ocg] + [r.choice([1, 2, 3]) for _ in range(nd)]
        w = torch.randint(-128, 128, wshape, generator=self.g, dtype=torch.int64).to(torch.int8)
        n = ocg * groups
        k = n if self.chance(0.7) else 1
        sc = torch.rand(k, generator=self.g, dtype=torch.double) * 0.02 + 0.001
        zp = torch.tensor([r.choice([0, 0, 2, -5]) for _ in range(k)], dtype=torch.long)
        bias = torch.randn(n, generator=self.g) if self.chance(0.7) else None
        self.preset.update(w=w, w_scales=sc, w_zero_points=zp, bias=bias, **geo)
        self.preset["packed"] = self.torch.ops.qplugin.plain_conv_transpose_prepack(
            w, sc, zp, bias, geo["stride"], geo["padding"], geo["output_padding"], geo["dilation"], groups
        )
        self.shape_hint = [r.choice([1, 2]), icg * groups] + [r.choice([2, 3, 5])] * nd
        self.last_dtype = "quint8"

    def embedding_args(self, short):
        """Presets the embedding ops' arguments: a weight of the op's kind (float rows for the fused
        prepacks, fused rows for unpack / rowwise_offsets, a float-qparams weight for
        embedding_bag_prepack, the checked buffer and its sizes for plain_embedding_*), in-range
        indices, offsets or 2-D bags, mode, per-sample weights."""
        torch, r = self.torch, self.r
        q = torch.ops.qplugin
        bits = 4 if "4bit" in short else 8
        rows, dim = r.choice([1, 3, 17]), r.choice([2, 8, 34])
        w = torch.randn(rows, dim, generator=self.g) * r.choice([0.1, 3.0])
        if short.startswith("plain_embedding"):  # the plain tier's checked table around 8-bit fused rows
            fused = q.embedding_bag_byte_prepack(w)
            if short == "plain_embedding_prepack":
                self.preset.update(fused_rows=fused, bits=8)
                return
            self.preset["packed"] = q.plain_embedding_prepack(fused)
            if short == "plain_embedding_unpack":
                return
            self.preset.update(num_embeddings=rows, embedding_dim=dim)
        if short.endswith("_prepack") and short not in ("embedding_bag_prepack", "plain_embedding_prepack"):
            self.preset["weight"] = w
            return
        if short == "embedding_bag_prepack":
            self.preset["weight"] = float_qparams_weight(w, r.choice([8, 4]))
            return
        if short.endswith("_unpack") and short != "embedding_bag_unpack":
            self.preset["weight"] = q.embedding_bag_byte_prepack(w) if bits == 8 else q.embedding_bag_4bit_prepack(w)
            return
        if self.packed_obj is not None:
            rows = self.sources[id(self.packed_obj)]["rows"]
        elif "rowwise" in short:
            self.preset["weight"] = q.embedding_bag_byte_prepack(w) if bits == 8 else q.embedding_bag_4bit_prepack(w)
        n = r.choice([0, 1, 5, 12])
        idx = torch.randint(0, rows, (n,), generator=self.g)
        self.preset.update(pruned_weights=False, compressed_indices_mapping=None, scale_grad_by_freq=False)
        if "bag" not in short:  # embedding_byte / 4bit: any index shape
            self.preset["indices"] = idx.reshape(r.choice([[n], [1, n], [n, 1]]))
            return
        mode = r.choice([0, 1, 2])
        self.preset["mode"] = mode
        if self.chance(0.75):  # 1-D indices and offsets
            cuts = sorted(r.randint(0, n) for _ in range(r.choice([0, 1, 3])))
            last = self.chance(0.5)
            self.preset.update(
                indices=idx,
                offsets=torch.tensor([0] + cuts + ([n] if last else []), dtype=torch.long),
                include_last_offset=last,
            )
        else:  # 2-D [bags, indices per bag]
            per = r.choice([1, 2, 3])
            self.preset.update(
                indices=torch.randint(0, rows, (r.choice([0, 1, 4]), per), generator=self.g), offsets=None
            )
            n = self.preset["indices"].numel()
        self.preset["per_sample_weights"] = (
            torch.rand(n, generator=self.g) * 2 if mode == 0 and self.chance(0.5) else None
        )

    def _remember(self, obj, **src):
        self.sources[id(obj)] = dict(src, obj=obj)
        return obj

    # -- schema-driven arguments -------------------------------------------------------------------
    def value(self, arg_type, name):
        torch, r = self.torch, self.r
        ts = str(arg_type)
        if ts.rstrip("?") == "int" and "ScalarType" in str(getattr(arg_type, "real", "")):
            ts = ts.replace("int", "ScalarType")
        optional = ts.endswith("?") or ts.startswith("Optional[")
        if optional and self.chance(0.3):
            return None
        ts = ts.rstrip("?")
        if ts.startswith("Optional["):
            ts = ts[len("Optional[") : -1]
        if ts == "number":
            ts = "Scalar"
        if ts == "Tensor":
            return self.tensor(name)
        if ts in ("Tensor[]", "List[Tensor]"):
            n = r.choice([0, 1, 2, 2, 3])
            dt = r.choice(["quint8", "qint8", "qint32"])
            base = self.shape(r.choice([1, 2, 3, 4]))
            return [
                self.qtensor(dt if self.chance(0.9) else None, list(base) if self.chance(0.8) else None)
                for _ in range(n)
            ]
        if ts == "int":
            return r.choice(INTS) if self.chance(0.2) else r.choice([0, 1, 2, 3, -1, 4])
        if ts in ("float",):
            return r.choice(FLOATS) if self.chance(0.25) else r.choice(GOOD_SCALES)
        if ts == "bool":
            return self.chance(0.5)
        if ts == "str":
            return r.choice(["scalar", "avx2", "avx512", "", "bogus"])
        if ts == "Scalar":
            return r.choice([0, 1, -3, 2.5, -0.5, 1e30, float("nan"), float("inf"), True, 2**40])
        if ts == "ScalarType":
            return r.choice([torch.quint8, torch.qint8, torch.qint32, torch.float32, torch.uint8])
        if ts in ("int[]", "List[int]", "SymInt[]") or ts.startswith("int[") or ts.startswith("List[int]"):
            n = r.choice([0, 1, 2, 2, 2, 3])
            return [r.choice(INTS) if self.chance(0.1) else r.choice([0, 1, 2, 3, 4]) for _ in range(n)]
        if "PackedParams" in ts:
            cls = ts.split(".")[-1]
            return self.packed(cls)
        raise NotImplementedError(f"fuzzer: no generator for argument type {ts}")

    def args_for(self, schema):
        """Arguments for one call of `schema`: mostly coherent (shapes that fit, qparams that
        follow their tensor in the plain ops, packed params with a matching input), often not."""
        self.shape_hint = self.shape(self.r.choice([1, 2, 3, 4, 4]))
        self.preset, self.last_dtype, self.packed_obj, self.shape_override = {}, None, None, None
        self.conv_src = None
        short = schema.name.split("::")[1]
        arguments = list(schema.arguments)
        packed = [a for a in arguments if "PackedParams" in str(a.type)]
        if packed and self.chance(0.85):  # build the packed params first and shape the input to fit them
            kind = "conv1d" if "conv1d" in short else "conv2d" if "conv2d" in short else None
            if "fp16" in short and self.chance(0.85):  # fp16 weights (mostly) for the fp16 ops
                kind = "fp16"
            if short.startswith("conv_transpose"):
                kind = short[: len("conv_transpose1d")]
            if "embedding" in short:  # rows of the op's kind (mostly)
                kind = ("4bit" if "4bit" in short else "byte") if self.chance(0.85) else None
            self.packed_obj = self.packed(str(packed[0].type).split(".")[-1], kind)
            self.shape_hint = list(self.sources[id(self.packed_obj)]["in_shape"])
            self.last_dtype = "quint8"
            if "embedding" in short:
                self.embedding_args(short)
        elif short.startswith("plain_") and "fp16" in short and self.chance(0.85):
            self.plain_fp16_weight(short)
        elif (
            (
                any(a.name == "packed" for a in arguments)
                or short in ("plain_linear_prepack", "plain_conv_prepack", "plain_conv_transpose_prepack")
            )
            and "embedding" not in short
            and self.chance(0.85)
        ):
            # the plain tier's weight, scales, zero points, bias, buffer and geometry
            self.plain_weight(short)
        elif "embedding" in short and self.chance(0.85):  # weights, indices and bags that fit
            self.embedding_args(short)
        elif self.chance(0.8):  # the rank the op wants
            for key, nd in (("3d", 5), ("2d", 4), ("1d", 3), ("norm", 4)):
                if key in short:
                    self.shape_hint = self.shape(nd) if len(self.shape_hint) != nd else self.shape_hint
                    break
        args = []
        for i, a in enumerate(arguments):
            if a.kwarg_only:
                continue
            if a.default_value is not None and self.chance(0.15):
                break  # trailing defaults
            args.append(self._arg(short, arguments, i))
        kwargs = {}
        for i, a in enumerate(arguments):
            if a.kwarg_only and self.chance(0.5):
                kwargs[a.name] = self._arg(short, arguments, i)
        return args, kwargs

    def _arg(self, short, arguments, i):
        a = arguments[i]
        if a.name in self.preset:
            return self.preset.pop(a.name)
        if self.chance(0.93):
            v = self.coherent(short, arguments, i)
            if v is not NotImplemented:
                return v
        return self.value(_RealType(a), a.name)

    def coherent(self, short, arguments, i):
        """A value chosen to fit the op (NotImplemented: no opinion, use the generic generator)."""
        torch, r, hint = self.torch, self.r, self.shape_hint
        a = arguments[i]
        name, ts = a.name, str(a.type)
        names = [x.name for x in arguments]
        nxt = names[i + 1 : i + 3] + ["", ""]
        plain = short.startswith("plain_")
        if "PackedParams" in ts and self.packed_obj is not None:
            return self.packed_obj
        if (
            short
            in (
                "quantize_per_tensor",
                "quantize_per_tensor_dynamic",
                "quantize_per_channel",
                "plain_quantize_per_tensor",
                "plain_quantize_per_channel",
            )
            and name == "self"
        ):
            return self.float_tensor(list(hint))
        if short.startswith("make_per") and name == "self":
            dt = r.choice(["quint8", "qint8", "qint32"])
            return self.layout(self.int_data(list(hint), dt))
        if name in ("scales", "scale", "zero_points", "zero_point") and ts == "Tensor":  # per-channel qparams
            if not hint:
                return NotImplemented
            ax = r.randrange(len(hint))
            n = hint[ax]
            self.preset["axis"] = ax if self.chance(0.7) else ax - len(hint)
            scales = torch.tensor([r.choice(GOOD_SCALES) for _ in range(n)], dtype=torch.double)
            zps = torch.tensor([r.choice([0, 0, 1, 3]) for _ in range(n)], dtype=torch.long)
            zname = "zero_points" if name == "scales" else "zero_point"
            self.preset[zname] = zps
            return scales
        if plain and name == "xs":
            n = r.choice([1, 2, 3])
            dt = r.choice(["quint8", "qint8", "qint32"])
            qs = [self.qtensor(dt, list(hint), per_channel=False) for _ in range(n)]
            self.preset["scales"] = [t.q_scale() for t in qs]
            self.preset["zero_points"] = [t.q_zero_point() for t in qs]
            return [self.layout(t.int_repr()) for t in qs]
        if plain and short == "plain_dequantize_per_channel" and name == "self":
            t = self.qtensor(r.choice(["quint8", "qint8", "qint32"]), list(hint), per_channel=True)
            if t.qscheme() != torch.per_channel_affine:
                return NotImplemented
            self.preset.update(
                scales=t.q_per_channel_scales(), zero_points=t.q_per_channel_zero_points(), axis=t.q_per_channel_axis()
            )
            return t.int_repr()
        if name == "dtype" and "ScalarType" in str(getattr(a, "real_type", "")):
            plain_dt = [torch.uint8, torch.int8, torch.int32]
            return r.choice(plain_dt if plain else [torch.quint8, torch.qint8, torch.qint32])
        if ts == "int" and name in ("zero_point", "output_zero_point", "Y_zero_point_i"):
            lo, hi = {"quint8": (0, 255), "qint8": (-128, 127), "qint32": (-1000, 1000)}[self.last_dtype or "quint8"]
            return r.choice([lo, hi, (lo + hi) // 2, max(lo, 0), max(lo, 3), r.randint(lo, hi)])
        if short.endswith("matmul") and name in ("qb", "b"):  # [..., n, k] @ [..., k, m]
            k_ = hint[-1] if hint else 1
            self.shape_override = (hint[:-2] if len(hint) >= 2 else []) + [k_, r.choice([1, 2, 5])]
        if name in ("qaccum", "accum") and (self.packed_obj is not None or self.conv_src is not None):
            src = self.sources[id(self.packed_obj)] if self.packed_obj is not None else self.conv_src
            n, sp = src["in_shape"][0], src["in_shape"][2:]
            ks = list(src["w"].shape[2:])
            osz = [
                (x + 2 * p - d * (k - 1) - 1) // st + 1
                for x, p, d, k, st in zip(sp, src["padding"], src["dilation"], ks, src["stride"])
            ]
            t = self.qtensor("quint8", [n, src["w"].shape[0]] + osz, per_channel=False)
            if not plain:
                return t
            self.preset.update(accum_scale=t.q_scale(), accum_zero_point=t.q_zero_point())
            return t.int_repr()
        if short == "linear_prepack_fp16" and name == "W" and self.chance(0.85):  # a float weight
            w = self.float_tensor([r.choice([1, 3, 17]), r.choice([1, 4, 33])])
            return w * r.choice([1.0, 1e5]) if w.is_floating_point() else w
        if short.startswith("conv_transpose") and short.endswith("_prepack") and name == "weight":
            nd = int(short[len("conv_transpose")])
            self.preset.update(self.conv_transpose_geometry(nd))
            g = self.preset["groups"]
            return self.weight(
                [r.choice([1, 3]) * g, r.choice([1, 2, 4])] + [r.choice([1, 2, 3]) for _ in range(nd)], axis=1
            )
        if (
            "prepack" in short
            and name in ("weight", "W")
            and short.split("_")[0] in ("linear", "conv1d", "conv2d", "conv3d")
        ):
            nd = {"linear": 0, "conv1d": 1, "conv2d": 2, "conv3d": 3}[short.split("_")[0]]
            self.preset.update(
                stride=[r.choice([1, 2])] * nd,
                padding=[r.choice([0, 1])] * nd,
                dilation=[r.choice([1, 2])] * nd,
                groups=r.choice([1, 1, 2]),
            )
            g = self.preset["groups"] if nd else 1
            return self.weight([r.choice([2, 4]) * g, r.choice([1, 3])] + [r.choice([1, 2, 3]) for _ in range(nd)])
        if (short.endswith("_dynamic") or short.endswith("_dynamic_fp16")) and name in ("X", "x", "self"):
            return self.float_tensor(list(hint))
        if (
            not plain
            and ts == "Tensor"
            and name in ("qx", "self", "input", "qa", "qb", "other", "X")
            and not short.startswith("make_per")
        ):
            shape = list(hint) if name in ("qx", "self", "input", "qa", "X") and self.chance(0.85) else None
            return self.qtensor(None, shape, per_channel=self.chance(0.03))
        prelu_slopes = name == "weight" and short.endswith("prelu")  # float slopes, then the OUTPUT qparams
        if (
            plain
            and ts == "Tensor"
            and not prelu_slopes
            and (nxt[0].endswith("scale") or nxt[0].endswith("zero_point") or i == 0)
        ):
            t = self.qtensor(None, None, per_channel=False)
            if nxt[0].endswith("scale") and nxt[1].endswith("zero_point"):
                self.preset[nxt[0]], self.preset[nxt[1]] = t.q_scale(), t.q_zero_point()
            elif nxt[0].endswith("zero_point"):
                self.preset[nxt[0]] = t.q_zero_point()
            return self.layout(t.int_repr())
        c = hint[1] if len(hint) >= 2 else (hint[0] if hint else 1)
        if name in ("weight", "bias", "mean", "var") and ("norm" in short or short.endswith("prelu")):
            if "layer_norm" in short:
                shape = list(self.normalized_shape) if hasattr(self, "normalized_shape") else [c]
            else:
                shape = [c] if (name != "weight" or "prelu" not in short or self.chance(0.7)) else [1]
            if "prelu" in short and not plain and self.chance(0.4):  # the quantized op's slopes may be quantized
                return self.qtensor(None, shape, per_channel=False)
            t = torch.randn(shape, generator=self.g)
            return t.abs() + 0.01 if name == "var" else t
        if name == "normalized_shape":
            k = r.choice([0, 1, 1, 2])
            self.normalized_shape = hint[len(hint) - k :] if k <= len(hint) else []
            return list(self.normalized_shape)
        if name == "num_groups":
            return r.choice([d for d in range(1, c + 1) if c % d == 0] or [1])
        nd = 3 if "3d" in short else 2
        if name == "output_size":
            return [r.choice([1, 2, 3, 5, 8]) for _ in range(r.choice([nd, nd, nd, 1]))]
        if name == "kernel_size":
            return [r.choice([1, 2, 3])] * r.choice([1, nd, nd])
        if name in ("stride", "padding", "dilation") and "pool" in short:
            v = {"stride": [1, 2], "padding": [0, 1], "dilation": [1, 2]}[name]
            return r.choice(([[]] if name == "stride" else []) + [[r.choice(v)], [r.choice(v) for _ in range(nd)]])
        if name == "k":
            return r.randint(0, hint[-1] if hint else 1)
        if name in ("dim",) and ts == "int" and hint:
            return r.randrange(-len(hint), len(hint))
        return NotImplemented


def float_qparams_weight(w, bits):
    """A per_channel_affine_float_qparams weight (quint8 or quint4x2) of float rows w: each row's
    [min, max] over the dtype's codes (the embeddings' weight-only scheme)."""
    import torch

    lo, hi = w.min(1).values, w.max(1).values
    qmax = 255 if bits == 8 else 15
    scale = torch.where((hi - lo) / qmax > 1e-7, (hi - lo) / qmax, torch.ones_like(lo))
    return torch.quantize_per_channel(w, scale, -lo / scale, 0, torch.quint8 if bits == 8 else torch.quint4x2)


class _RealType:
    """An argument's type as the schema writes it (ScalarType, not the int TorchScript holds)."""

    def __init__(self, arg):
        self.real = getattr(arg, "real_type", arg.type)
        self.text = str(arg.type)

    def __str__(self):
        return self.text


def _prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def describe(v):
    import torch

    if isinstance(v, torch.Tensor):
        d = f"Tensor({v.dtype}, shape={list(v.shape)}, strides={list(v.stride())}"
        if v.is_quantized:
            if v.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
                d += f", scale={v.q_scale()!r}, zp={v.q_zero_point()}"
            else:
                d += f", per_channel axis={v.q_per_channel_axis()}"
        return d + ")"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(describe(x) for x in v) + "]"
    if type(v).__name__ == "ScriptObject":
        return f"<{v._type().name()}>"
    return repr(v)


# ---------------------------------------------------------------------------------------------
# child: run a batch of cases
# ---------------------------------------------------------------------------------------------
def run_case(base, overload, seed, check=True):
    """Runs one case; returns (status, detail). status: checked (a result the reference confirmed)
    / unchecked (a result on input the reference does not model) / error (a qplugin error) / skip
    (the generator could not build the inputs) / bad (a finding)."""
    import torch
    import checks

    if base == "__crash__":  # the harness's own test (test_fuzz.py): die like a segfault would
        os.kill(os.getpid(), 11)
    if base == "__alloc__":  # the harness's own test: an allocation the cap refuses (16 GiB)
        try:
            torch.empty(1 << 34, dtype=torch.uint8)
        except Exception as e:
            return "bad", f"allocator error: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
        return "unchecked", "not capped"
    gen = Gen(seed)
    schema = torch._C._get_schema(base, overload)
    try:
        args, kwargs = gen.args_for(schema)
    except Exception as e:  # inputs the generator itself could not build: not a finding
        return "skip", f"generator: {type(e).__name__}: {e}"
    op = getattr(getattr(torch.ops.qplugin, base.split("::")[1]), overload or "default")
    if (
        args
        and isinstance(args[0], torch.Tensor)
        and not (args[0].is_quantized and args[0].qscheme() == torch.per_channel_affine_float_qparams)
    ):  # no clone
        gen.before = args[0].clone()  # in-place ops: the input as it was
    try:
        out = op(*args, **kwargs)
    except Exception as e:
        msg = str(e).split("\n")[0]
        tname = type(e).__name__
        if is_allocator_error(e):
            return "bad", (
                f"allocator error (an allocation sized by an unchecked argument?): {tname}: {msg[:300]} | "
                f"args={[describe(a) for a in args]} kwargs={kwargs}"
            )
        if tname in OK_TYPES and "qplugin::" in str(e):
            return "error", f"{tname}: {msg[:200]}"
        return "bad", f"unexpected {tname}: {msg[:300]} | args={[describe(a) for a in args]} kwargs={kwargs}"
    if not check:
        return "unchecked", ""
    try:
        return checks.check_call(schema, args, kwargs, out, gen), ""
    except checks.Unchecked as e:
        return "unchecked", str(e)[:200]
    except AssertionError as e:
        return "bad", f"wrong result: {str(e)[:400]} | args={[describe(a) for a in args]} kwargs={kwargs}"
    except Exception as e:  # the check itself failed on this input: a finding to look at
        return "bad", (
            f"check raised {type(e).__name__}: {str(e)[:300]} | args={[describe(a) for a in args]} kwargs={kwargs}"
        )


def mapped_bytes():
    """This process's virtual size (the first field of /proc/self/statm, in pages)."""
    import resource

    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


def child_main(cases_path, progress_path, memcap=None):
    """Runs the cases in `cases_path` (json list of [base, overload, seed]); appends one json line
    per case to `progress_path` ({"i", "status", "detail"}), flushing before each call so the
    parent knows which case a crash hit. memcap: bytes of address space the cases may map beyond
    what the child has mapped after importing torch (memory-cap mode)."""
    import warnings

    warnings.simplefilter("ignore")
    import torch
    import torch_qplugin  # noqa: F401
    import checks  # noqa: F401 - imported before the cap: its imports map memory too

    torch.set_num_threads(1)
    if memcap:
        cap_address_space(mapped_bytes() + memcap)
    with open(cases_path) as f:
        cases = json.load(f)
    with open(progress_path, "a", buffering=1) as out:
        for i, (base, overload, seed) in enumerate(cases):
            out.write(json.dumps({"i": i, "start": True}) + "\n")
            out.flush()
            os.fsync(out.fileno())
            status, detail = run_case(base, overload, seed)
            out.write(json.dumps({"i": i, "status": status, "detail": detail}) + "\n")
    # restore the kernel path a fuzzed _set_isa may have changed (nothing else is global)


# ---------------------------------------------------------------------------------------------
# parent
# ---------------------------------------------------------------------------------------------
def _child_env():
    env = dict(os.environ)
    # the fuzzer's own modules, never the checkout: children import the torch_qplugin this
    # interpreter has (the installed wheel under scripts/test.sh)
    env["PYTHONPATH"] = os.pathsep.join(
        [HERE, TEST_DIR] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    env["OMP_NUM_THREADS"] = "1"
    return env


def read_progress(lines):
    """A child's json progress lines -> ({index: finished record}, index of the last case started)."""
    done, last = {}, None
    for line in lines:
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if d.get("start"):
            last = d["i"]
        else:
            done[d["i"]] = d
    return done, last


def run_batch(cases, timeout, workdir, memcap=None):
    """Runs cases in one child (under an address-space cap with `memcap`: child_main). Returns
    (results, crash) where results maps index -> (status, detail) and crash is None or (index,
    description) for the case the child died / hung on."""
    import tempfile

    fd, cpath = tempfile.mkstemp(suffix=".json", dir=workdir)
    with os.fdopen(fd, "w") as f:
        json.dump(cases, f)
    ppath = cpath + ".progress"
    code = (
        f"import sys; sys.path.insert(0, {HERE!r}); import fuzzlib; "
        f"fuzzlib.child_main({cpath!r}, {ppath!r}, {memcap!r})"
    )
    crash = None
    try:
        r = subprocess.run(
            [sys.executable, "-c", code], env=_child_env(), capture_output=True, text=True, timeout=timeout
        )
        rc, tail = r.returncode, (r.stderr or "")[-1500:]
    except subprocess.TimeoutExpired:
        rc, tail = "timeout", ""
    results, last_start = {}, None
    if os.path.exists(ppath):
        with open(ppath) as f:
            done, last_start = read_progress(f)
        results = {i: (d["status"], d["detail"]) for i, d in done.items()}
        os.remove(ppath)
    os.remove(cpath)
    if rc != 0:
        if last_start is not None and last_start not in results:
            crash = (last_start, f"child exit {rc}: {tail}")  # died or hung inside this case
        elif rc == "timeout":
            crash = ("resume", "timed out between cases")  # a slow machine: run the rest again
        else:
            crash = (None, f"child exit {rc}: {tail}")
    return results, crash


def case_seed(seed, op, k):
    """The seed of op's k-th case: depends on (seed, op, k) only, so adding an op to the library
    changes no other op's cases."""
    import zlib

    return zlib.crc32(f"{seed}:{op}:{k}".encode()) & 0x7FFFFFFF


def fuzz_ops(seed, seconds=None, rounds=None, batch=200, per_batch_timeout=120, log=print, ops=None, memcap=None):
    """Every op, round-robin, with per-case seeds from `case_seed`: exactly `rounds` cases per op
    (deterministic on any machine: the CI slice), or rounds until `seconds` pass (long runs).
    memcap: bytes of headroom for the memory-cap mode (child_main), None for no cap.
    Returns a summary dict; summary['failures'] lists confirmed findings, summary['per_op'] maps
    each op to {calls, checked} (checked: results confirmed against test/reference.py)."""
    import tempfile

    assert (seconds is None) != (rounds is None), "give seconds or rounds"
    ops = ops or all_ops()
    t_end = time.monotonic() + (seconds or 0)
    summary = {
        "calls": 0,
        "checked": 0,
        "unchecked": 0,
        "error": 0,
        "skip": 0,
        "failures": [],
        "ops": len(ops),
        "batches": 0,
    }
    per_op = {op_id(*o): {"calls": 0, "checked": 0} for o in ops}
    workdir = tempfile.mkdtemp(prefix="qplugin_fuzz_")
    k = 0
    total = None if rounds is None else rounds * len(ops)
    while (k < total) if total is not None else (time.monotonic() < t_end):
        cases = []
        for _ in range(batch if total is None else min(batch, total - k)):
            base, ov = ops[k % len(ops)]
            cases.append([base, ov, case_seed(seed, op_id(base, ov), k // len(ops))])
            k += 1

        def count(batch, results):
            for i, (status, detail) in results.items():
                base, ov, s = batch[i]
                name = op_id(base, ov)
                per_op[name]["calls"] += 1
                summary["calls"] += 1
                if status == "bad":
                    summary["failures"].append({"op": name, "seed": s, "detail": detail})
                    log(f"FAIL {name} seed={s}: {detail}")
                else:
                    summary[status] += 1
                    per_op[name]["checked"] += status == "checked"

        pending = cases
        while pending:
            # the time limit grows with the batch (a loaded machine runs a case in seconds); a hang
            # is confirmed alone under per_batch_timeout
            results, crash = run_batch(pending, per_batch_timeout + 4 * len(pending), workdir, memcap)
            summary["batches"] += 1
            count(pending, results)
            if crash is None:
                break
            i, desc = crash
            if i == "resume" and results:  # killed by the time limit between cases: go on
                pending = [c for j, c in enumerate(pending) if j not in results]
                continue
            if i is None or i == "resume":  # died between cases: count as a failure of the batch
                summary["failures"].append({"op": "?", "seed": None, "detail": desc})
                break
            base, ov, s = pending[i]
            # confirm alone
            res2, crash2 = run_batch([pending[i]], per_batch_timeout, workdir, memcap)
            count([pending[i]], res2)
            if crash2 is not None:
                summary["calls"] += 1
                per_op[op_id(base, ov)]["calls"] += 1
                summary["failures"].append({"op": op_id(base, ov), "seed": s, "detail": "CRASH/HANG " + crash2[1]})
                log(f"CRASH {op_id(base, ov)} seed={s}: {crash2[1][:300]}")
            pending = pending[i + 1 :]
    summary["min_calls_per_op"] = min(v["calls"] for v in per_op.values()) if per_op else 0
    summary["never_checked"] = sorted(n for n, v in per_op.items() if v["checked"] == 0)
    summary["per_op"] = per_op
    return summary


# ---------------------------------------------------------------------------------------------
# saved-model mutation
# ---------------------------------------------------------------------------------------------


def saved_blobs():
    """{name: bytes} of saved qplugin models / packed params (made in a child, fresh)."""
    code = r'''
import io, base64, json, warnings
warnings.simplefilter("ignore")
import torch
from fuzz_model import Net
m = torch.jit.script(Net())
out = {}
b = io.BytesIO(); torch.jit.save(m, b); out["jit_model"] = b.getvalue()
b = io.BytesIO(); torch.save({"c": m.c, "l": m.l}, b); out["packed_params"] = b.getvalue()
print(json.dumps({k: base64.b64encode(v).decode() for k, v in out.items()}))
'''
    import base64

    r = subprocess.run([sys.executable, "-c", code], env=_child_env(), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return {k: base64.b64decode(v) for k, v in json.loads(r.stdout.strip().splitlines()[-1]).items()}


def mutate(blob, r):
    """One mutation of a saved file: truncation, raw bit flips, or bit flips / byte changes inside
    one zip record (re-zipped with a correct CRC so the change reaches the loader's parser)."""
    k = r.random()
    if k < 0.2:
        return blob[: r.randrange(len(blob))], "truncate"
    if k < 0.35:
        b = bytearray(blob)
        for _ in range(r.choice([1, 1, 2, 8])):
            b[r.randrange(len(b))] ^= 1 << r.randrange(8)
        return bytes(b), "raw flips"
    zin = zipfile.ZipFile(io.BytesIO(blob))
    names = zin.namelist()
    # favour pickles and data records
    pick = [n for n in names if n.endswith(".pkl")]
    data = [n for n in names if "/data/" in n or "/constants/" in n]
    target = r.choice(pick if (pick and r.random() < 0.5) else (data or names))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            content = zin.read(info.filename)
            if info.filename == target and content:
                c = bytearray(content)
                kind = r.random()
                if kind < 0.4:
                    for _ in range(r.choice([1, 2, 4])):
                        c[r.randrange(len(c))] ^= 1 << r.randrange(8)
                elif kind < 0.7:
                    c[r.randrange(len(c))] = r.choice([0, 0xFF, 0x7F, 0x80, ord("K"), ord("J")])
                else:
                    c = c[: r.randrange(len(c))]
                content = bytes(c)
            zi = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            zout.writestr(zi, content)
    return out.getvalue(), f"record {target}"


CHILD_ADDRESS_SPACE = 8 << 30  # bytes of address space a saved-file child may map


def cap_address_space(limit=CHILD_ADDRESS_SPACE):
    """A mutated length or memo index can make torch's unpickler ask for tens of GB (seed 505:
    LONG_BINPUT 1562909288 resized the memo to ~25 GB and the kernel's OOM killer took the child,
    no stack, on a shared 24 GiB machine). Under a cap the same request fails as std::bad_alloc ->
    MemoryError, an ordinary load error."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard == resource.RLIM_INFINITY or hard > limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit if hard == resource.RLIM_INFINITY else hard))


def mutation_child(paths_json):
    """Loads each mutated file and runs it; prints one json line per file when it starts, when
    loading is done ("phase": "run") and when it ends. A fatal signal prints the C++ stack of the
    faulting thread (torch's handler) for `crash_origin`."""
    import warnings

    warnings.simplefilter("ignore")
    cap_address_space()
    import torch
    import fuzz_model

    torch.set_num_threads(1)
    torch._C._set_print_stack_traces_on_fatal_signal(True)
    x = fuzz_model.example()
    for i, (kind, path) in enumerate(json.loads(paths_json)):
        print(json.dumps({"i": i, "start": True}), flush=True)
        status = "ok"
        try:
            if kind == "jit_model":
                m = torch.jit.load(path)
                print(json.dumps({"i": i, "phase": "run"}), flush=True)
                try:
                    m(x)
                except Exception as e:
                    status = "run-error " + type(e).__name__
            else:
                d = torch.load(path, weights_only=False)
                print(json.dumps({"i": i, "phase": "run"}), flush=True)
                for v in d.values() if isinstance(d, dict) else []:
                    try:
                        if "Linear" in v._type().name():
                            torch.ops.qplugin.linear_unpack(v)
                            torch.ops.qplugin.linear(
                                torch._make_per_tensor_quantized_tensor(torch.zeros(2, 36, dtype=torch.uint8), 0.1, 0),
                                v,
                                0.1,
                                0,
                            )
                        else:
                            torch.ops.qplugin.conv2d(x, v, 0.1, 0)
                    except Exception as e:
                        status = "run-error " + type(e).__name__
        except Exception as e:
            status = "load-error " + type(e).__name__
        print(json.dumps({"i": i, "status": status}), flush=True)


QPLUGIN_LIB = "libtorch_qplugin"


def crash_origin(stderr, phase):
    """'qplugin' or 'torch' for a child that died on a fatal signal, from the C++ stack torch's
    handler printed for the faulting thread (the block with fatalSignalHandler): any frame in
    qplugin's library makes it ours; a crash while torch.load unpickles (phase 'load') with no
    qplugin frame is torch's (docs/robustness.md: a weights_only=False load runs what the pickle
    says). Anything else (no stack, a crash while running the model) counts as ours."""
    blocks = stderr.split("SIGSEGV(")[1:] + stderr.split("SIGABRT(")[1:] + stderr.split("SIGBUS(")[1:]
    faulting = [b for b in blocks if "fatalSignalHandler" in b]
    if not faulting:
        return "qplugin"
    if any(QPLUGIN_LIB in b for b in faulting):
        return "qplugin"
    return "torch" if phase == "load" else "qplugin"


def fuzz_saved(seed, files=None, seconds=None, per_child=40, log=print):
    """Mutates saved qplugin models / packed params: exactly `files` mutations (deterministic: the
    CI slice) or as many as `seconds` allow; each file is loaded (and run) in a child. Returns a
    summary: confirmed crashes / hangs of ours in 'failures', crashes inside torch's own unpickler
    (crash_origin) in 'torch_crashes' (reported, not ours)."""
    import tempfile

    assert (files is None) != (seconds is None), "give files or seconds"
    r = random.Random(seed)
    blobs = saved_blobs()
    workdir = tempfile.mkdtemp(prefix="qplugin_fuzz_saved_")
    summary = {"files": 0, "loaded": 0, "load_errors": 0, "run_errors": 0, "failures": [], "torch_crashes": []}
    t_end = time.monotonic() + (seconds or 0)
    n = 0
    while (n < files) if files is not None else (time.monotonic() < t_end):
        items = []
        for _ in range(per_child if files is None else min(per_child, files - n)):
            kind = r.choice(sorted(blobs))
            data, how = mutate(blobs[kind], r)
            path = os.path.join(workdir, f"m{n}.pt")
            n += 1
            with open(path, "wb") as f:
                f.write(data)
            items.append((kind, path, how))
        pending = items
        while pending:
            code = (
                f"import sys; sys.path.insert(0, {HERE!r}); import fuzzlib; "
                f"fuzzlib.mutation_child({json.dumps(json.dumps([(k, p) for k, p, _ in pending]))})"
            )
            try:
                res = subprocess.run(
                    [sys.executable, "-c", code],
                    env=_child_env(),
                    capture_output=True,
                    text=True,
                    timeout=120 + 5 * len(pending),
                )
                rc, out, err = res.returncode, res.stdout, res.stderr
            except subprocess.TimeoutExpired as e:
                rc, out, err = (
                    "timeout",
                    (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""),
                    "",
                )
            lines = out.splitlines()
            done, last = read_progress(lines)
            ran = {json.loads(x)["i"] for x in lines if '"phase"' in x}
            done = {i: d["status"] for i, d in done.items()}
            for i, st in done.items():
                summary["files"] += 1
                if st == "ok":
                    summary["loaded"] += 1
                elif st.startswith("load-error"):
                    summary["load_errors"] += 1
                else:
                    summary["run_errors"] += 1
            if rc == 0:
                break
            if last is None or last in done:
                if rc == "timeout" and done:  # a slow machine, killed between files: go on
                    pending = [p for j, p in enumerate(pending) if j not in done]
                    continue
                summary["failures"].append({"file": None, "detail": f"child exit {rc}: {err[-500:]}"})
                break
            kind, path, how = pending[last]
            summary["files"] += 1
            phase = "run" if last in ran else "load"
            entry = {
                "file": path,
                "kind": kind,
                "mutation": how,
                "phase": phase,
                "detail": f"child exit {rc}: {err[-1500:]}",
            }
            if rc != "timeout" and crash_origin(err, phase) == "torch":
                summary["torch_crashes"].append(entry)
                log(f"torch-side crash (no qplugin frame) loading mutated {kind} ({how}): {path}")
            else:
                summary["failures"].append(entry)
                log(f"CRASH loading mutated {kind} ({how}): {path}: exit {rc}")
            pending = pending[last + 1 :]
    return summary
