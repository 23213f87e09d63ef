"""Result checks of qplugin's fuzzer: every registered op whose result is defined has
an entry here that compares a result on valid input with test/reference.py, at the tolerance the
docs promise (exact for data movement / ordering / clamps / comparators, within 1 step for
requantizing ops, docs/design/*.md).

* One entry per op: `@check("op", ...)` registers `fn(a, out, ctx)`; `a` maps the schema's argument
  names to the values of the call (defaults filled in), `out` is the result, `ctx` the generator
  (packed params remember the weights and geometry they were built from: `ctx.sources`).
* A `plain_<op>` (plain integer tensors with explicit qparams, docs/ops.md) needs no entry of its
  own: `twin_call` rebuilds the quantized twin's arguments (each integer tensor with the qparams
  that follow it) and the twin's entry checks the integers. Irregular names: `PLAIN_TWIN`.
* A check raises `Unchecked` when the result is defined but outside what the reference models
  (counted per op, not a failure) and AssertionError when the result is wrong.
* `unchecked_ops(ops)` lists the registered ops that have no entry (test_fuzz.py asserts it equals
  a short allow-list), so a new op without a check fails CI.
"""

import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import reference as ref  # noqa: E402

CHECKS = {}
from torch_qplugin._isa import ISAS  # noqa: E402


class Unchecked(Exception):
    """A result the reference does not model (exotic but valid input): counted, not a failure."""


def check(*names):
    def deco(fn):
        for n in names:
            assert n not in CHECKS, f"two checks for {n}"
            CHECKS[n] = fn
        return fn

    return deco


# --------------------------------------------------------------------------------------------
# plain ops -> their quantized twin
# --------------------------------------------------------------------------------------------
PLAIN_TWIN = {"plain_dequantize_per_tensor": "dequantize", "plain_dequantize_per_channel": "dequantize"}
PLAIN_OWN = {"plain_add_scalar_qparams", "plain_mul_scalar_qparams"}  # no twin: own entries below
QDTYPE = {torch.uint8: torch.quint8, torch.int8: torch.qint8, torch.int32: torch.qint32}


def qdtype(d):
    """A ScalarType argument (a quantized or the plain dtype holding it) as the quantized dtype."""
    return QDTYPE.get(d, d)


def twin_name(short):
    """'plain_max.dim' -> 'max.dim' (None if not a plain op or it has its own entry)."""
    base, _, ov = short.partition(".")
    if not base.startswith("plain_") or base in PLAIN_OWN:
        return None
    t = PLAIN_TWIN.get(base, base[len("plain_") :])
    return t + ("." + ov if ov else "")


def has_check(short):
    return short in CHECKS or (twin_name(short) is not None and twin_name(short) in CHECKS)


def unchecked_ops(ops):
    """The qualified names of registered ops with no result check."""
    out = []
    for base, ov in ops:
        short = base.split("::")[1] + ("." + ov if ov else "")
        if not has_check(short):
            out.append(base + ("." + ov if ov else ""))
    return out


def valid_qparams(scale, zp, qdtype):
    """The shared input rule (docs/robustness.md): scale positive, finite, finite as float32 and
    with a finite float32 reciprocal; zero point in the dtype's range."""
    lo, hi = ref.QRANGE[qdtype]
    if not (isinstance(scale, float) and math.isfinite(scale) and scale > 0):
        return False
    with np.errstate(over="ignore", divide="ignore"):
        s32 = np.float32(scale)
        if not (np.isfinite(s32) and s32 > 0 and np.isfinite(np.float32(1.0) / s32)):
            return False
    return lo <= zp <= hi


def _qt(x, scale, zp, what):
    """A per-tensor quantized tensor holding plain integers `x` with (scale, zp); asserts the plain
    op did not accept qparams the quantized op rejects."""
    if not isinstance(x, torch.Tensor) or x.dtype not in QDTYPE:
        raise Unchecked(f"{what}: {getattr(x, 'dtype', type(x))} is not a plain integer dtype")
    assert valid_qparams(float(scale), int(zp), QDTYPE[x.dtype]), (
        f"accepted invalid qparams for {what}: scale={scale!r}, zero_point={zp}"
    )
    return torch._make_per_tensor_quantized_tensor(x.contiguous(), float(scale), int(zp))


def twin_call(schema, a):
    """(twin short name, twin argument dict) for a plain op's call `a` (bound to its schema)."""
    names = [x.name for x in schema.arguments]
    types = [str(x.type) for x in schema.arguments]
    short = schema.name.split("::")[1] + ("." + schema.overload_name if schema.overload_name else "")
    twin = twin_name(short)
    base = short.partition(".")[0]
    pos = []
    i = 0
    first_tensor = True
    while i < len(names):
        n, t = names[i], types[i]
        if base == "plain_dequantize_per_channel" and n == "self":
            x = a["self"]
            if x.dtype not in QDTYPE:
                raise Unchecked("not a plain integer dtype")
            pos.append(
                torch._make_per_channel_quantized_tensor(
                    x.contiguous(), a["scales"].double(), a["zero_points"].long(), a["axis"]
                )
            )
            break
        if base.startswith("plain_cat") and n == "xs":
            pos.append(
                [_qt(x, s, z, f"xs[{k}]") for k, (x, s, z) in enumerate(zip(a["xs"], a["scales"], a["zero_points"]))]
            )
            assert len(a["xs"]) == len(a["scales"]) == len(a["zero_points"]), "accepted lists of unequal length"
            i += 3
            continue
        if t == "Tensor" and base not in ("plain_quantize_per_tensor", "plain_quantize_per_channel"):
            nxt = names[i + 1 : i + 3] + ["", ""]
            # a tensor followed by the OUTPUT qparams is not an integer tensor (plain_prelu's float slopes)
            if nxt[0].endswith("scale") and nxt[1].endswith("zero_point") and not nxt[0].startswith("output"):
                pos.append(_qt(a[n], a[nxt[0]], a[nxt[1]], n))
                first_tensor = False
                i += 3
                continue
            if nxt[0].endswith("zero_point"):  # avg_pool2d: the zero point only (the scale cancels)
                pos.append(_qt(a[n], 1.0, a[nxt[0]], n))
                first_tensor = False
                i += 2
                continue
            if first_tensor:  # the data input, integers only (max_pool2d, mean, upsample, ...)
                pos.append(_qt(a[n], 1.0, 0, n))
                first_tensor = False
                i += 1
                continue
        pos.append(a[n])
        i += 1
    tbase, _, tov = twin.partition(".")
    tschema = torch._C._get_schema("qplugin::" + tbase, tov)
    if tbase == "leaky_relu":  # (qx, negative_slope, inplace, output_scale, output_zero_point)
        pos.insert(2, False)
    ta = {}
    positional = [x for x in tschema.arguments if not x.kwarg_only]
    for arg, v in zip(positional, pos):
        ta[arg.name] = v
    for arg in tschema.arguments:
        if arg.name not in ta:
            ta[arg.name] = a.get(arg.name, arg.default_value)
    return twin, ta


def bind(schema, args, kwargs):
    a = {}
    for i, arg in enumerate(schema.arguments):
        if arg.kwarg_only:
            a[arg.name] = kwargs.get(arg.name, arg.default_value)
        elif i < len(args):
            a[arg.name] = args[i]
        else:
            a[arg.name] = arg.default_value
    return a


def check_call(schema, args, kwargs, out, ctx):
    """Checks one call's result. Returns 'checked', or raises Unchecked / AssertionError."""
    short = schema.name.split("::")[1] + ("." + schema.overload_name if schema.overload_name else "")
    a = bind(schema, args, kwargs)
    if short in CHECKS:
        ctx.op = short
        CHECKS[short](a, out, ctx)
        return "checked"
    twin = twin_name(short)
    if twin is None or twin not in CHECKS:
        raise Unchecked("no check")
    twin, ta = twin_call(schema, a)
    ctx.op = twin
    CHECKS[twin](ta, out, ctx)
    return "checked"


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------
def ints(t):
    if isinstance(t, torch.Tensor) and t.is_quantized:
        t = t.int_repr()
    return np.asarray(t.numpy() if isinstance(t, torch.Tensor) else t).astype(np.int64)


def per_tensor(t, what="input"):
    if not (isinstance(t, torch.Tensor) and t.is_quantized):
        raise Unchecked(f"{what} not quantized")
    if t.qscheme() not in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        raise Unchecked(f"{what} per-channel")
    return t


def out_qparams(out, scale, zp, dtype=None):
    """A quantized result carries the expected qparams (plain results carry none)."""
    if isinstance(out, torch.Tensor) and out.is_quantized:
        assert out.q_scale() == scale and out.q_zero_point() == zp, (
            f"output qparams ({out.q_scale()!r}, {out.q_zero_point()}) != ({scale!r}, {zp})"
        )
        if dtype is not None:
            assert out.dtype == dtype, f"output dtype {out.dtype} != {dtype}"


def exact(out, expected, what):
    got, exp = ints(out), np.asarray(expected).astype(np.int64)
    assert got.shape == exp.shape, f"{what}: shape {got.shape} != {exp.shape}"
    if got.size:
        bad = np.flatnonzero(got.reshape(-1) != exp.reshape(-1))
        assert bad.size == 0, (
            f"{what}: {bad.size} of {got.size} differ, e.g. at {bad[0]}: {got.reshape(-1)[bad[0]]} != {exp.reshape(-1)[bad[0]]}"
        )


def within(out, expected, steps, what):
    ref.assert_within_steps(ints(out) if not isinstance(out, np.ndarray) else out, expected, steps, what)


def finite_real(*arrays):
    for x in arrays:
        if not np.all(np.isfinite(np.asarray(x, dtype=np.float64))):
            raise Unchecked("non-finite real result")


def fscalar(v, what):
    """A finite float from a Scalar argument, else Unchecked."""
    if v is None:
        return None
    f = float(v)
    if not math.isfinite(f):
        raise Unchecked(f"{what} not finite")
    return f


def real64(qt):
    return ref.exact_real(qt)


def same_shape(out, shape, what):
    assert tuple(out.shape) == tuple(shape), f"{what}: shape {tuple(out.shape)} != {tuple(shape)}"


# --------------------------------------------------------------------------------------------
# debug / ISA ops
# --------------------------------------------------------------------------------------------
@check("_active_isa", "_cpu_isa")
def _isa_name(a, out, ctx):
    assert out in ISAS, f"unknown path {out!r}"


@check("_set_isa")
def _set_isa(a, out, ctx):
    assert out in ISAS, f"returned {out!r}"
    assert torch.ops.qplugin._active_isa() == a["isa"], "the active path is not the one set"


@check("_supported_isas")
def _supported_isas(a, out, ctx):
    assert isinstance(out, list) and out[0] == "scalar" and set(out) <= set(ISAS), f"{out!r}"
    assert torch.ops.qplugin._cpu_isa() in out and torch.ops.qplugin._active_isa() in out, f"{out!r}"


@check("_cpu_features")
def _cpu_features(a, out, ctx):
    assert isinstance(out, list) and all(isinstance(s, str) and s for s in out), f"{out!r}"


@check("_act_use_vbmi")
def _act_use_vbmi(a, out, ctx):
    assert isinstance(out, bool)
    if a["enable"] is not None and out:
        assert a["enable"], "VBMI tables on after enable=False"


# --------------------------------------------------------------------------------------------
# quantize / dequantize / tensor construction (exact, API.md section 2)
# --------------------------------------------------------------------------------------------
@check("int_repr")
def _int_repr(a, out, ctx):
    x = a["self"]
    if not x.is_quantized:
        raise Unchecked("plain input")
    assert out.dtype == ref.INT_DTYPE[x.dtype] and not out.is_quantized
    exact(out, x.int_repr().numpy(), "int_repr")


@check("dequantize")
def _dequantize(a, out, ctx):
    x = a["self"]
    if not x.is_quantized:
        raise Unchecked("plain input")
    assert out.dtype == torch.float32
    np.testing.assert_array_equal(out.numpy(), ref.dequantize_ref(x), err_msg="dequantize")


@check("quantize_per_tensor")
def _quantize_per_tensor(a, out, ctx):
    x = a["self"]
    if x.dtype != torch.float32:
        raise Unchecked(f"{x.dtype} input")
    out_qparams(out, a["scale"], a["zero_point"], a["dtype"])
    exact(
        out,
        ref.quantize_per_tensor_ref(x.numpy(), a["scale"], a["zero_point"], qdtype(a["dtype"])),
        "quantize_per_tensor",
    )


@check("quantize_per_channel")
def _quantize_per_channel(a, out, ctx):
    x = a["self"]
    if x.dtype != torch.float32:
        raise Unchecked(f"{x.dtype} input")
    exp = ref.quantize_per_channel_ref(
        x.numpy(),
        a["scales"].double().numpy(),
        a["zero_points"].numpy(),
        a["axis"] % max(x.dim(), 1),
        qdtype(a["dtype"]),
    )
    exact(out, exp, "quantize_per_channel")


@check("quantize_per_tensor_dynamic")
def _quantize_per_tensor_dynamic(a, out, ctx):
    x = a["self"]
    if x.dtype != torch.float32 or not torch.isfinite(x).all():
        raise Unchecked("non-finite or non-float32 input")
    exp_ints, s, z = ref.quantize_per_tensor_dynamic_ref(x, a["dtype"], a["reduce_range"])
    # the scale is torch's choice (tested equal to torch in test_quantize.py); the reference's
    # float64 range division can round it one float32 ulp apart, moving ties by a step
    assert math.isclose(out.q_scale(), s, rel_tol=1e-6) and out.q_zero_point() == z, (
        f"qparams ({out.q_scale()!r}, {out.q_zero_point()}) != ({s!r}, {z})"
    )
    within(out, exp_ints, 1, "quantize_per_tensor_dynamic")


@check("make_per_tensor_quantized_tensor")
def _make_per_tensor(a, out, ctx):
    out_qparams(out, a["scale"], a["zero_point"], QDTYPE.get(a["self"].dtype))
    exact(out, a["self"].numpy(), "make_per_tensor_quantized_tensor")


@check("make_per_channel_quantized_tensor")
def _make_per_channel(a, out, ctx):
    assert out.q_per_channel_axis() == a["axis"] % max(out.dim(), 1)
    np.testing.assert_array_equal(out.q_per_channel_scales().numpy(), a["scale"].double().numpy())
    np.testing.assert_array_equal(out.q_per_channel_zero_points().numpy(), a["zero_point"].numpy())
    exact(out, a["self"].numpy(), "make_per_channel_quantized_tensor")


# --------------------------------------------------------------------------------------------
# elementwise (docs/design/elementwise.md): within 1 step; comparators exact
# --------------------------------------------------------------------------------------------
@check("add", "add_relu", "mul", "mul_relu")
def _binary(a, out, ctx):
    qa, qb = per_tensor(a["qa"]), per_tensor(a["qb"])
    out_qparams(out, a["scale"], a["zero_point"], qa.dtype)
    kind = "add" if "add" in ctx.op else "mul"
    exp = ref.binary_ref(kind, qa, qb, a["scale"], a["zero_point"], relu=ctx.op.endswith("relu"))
    within(out, exp, 1, ctx.op)


@check("add_scalar", "add_scalar_relu", "mul_scalar")
def _scalar(a, out, ctx):
    qa = per_tensor(a["qa"])
    c = fscalar(a["b"], "b")
    kind = "add" if "add" in ctx.op else "mul"
    exp, s, z = ref.scalar_op_ref(kind, qa, c, relu=ctx.op.endswith("relu"))
    if isinstance(out, torch.Tensor) and out.is_quantized:
        assert math.isclose(out.q_scale(), s, rel_tol=1e-12) and out.q_zero_point() == z, (
            f"output qparams ({out.q_scale()!r}, {out.q_zero_point()}) != ({s!r}, {z})"
        )
    within(out, exp, 1, ctx.op)


@check("plain_add_scalar_qparams", "plain_mul_scalar_qparams")
def _scalar_qparams(a, out, ctx):
    c = fscalar(a["b"], "b")
    fn = ref.add_scalar_qparams_ref if "add" in ctx.op else ref.mul_scalar_qparams_ref
    s, z = fn(a["scale"], a["zero_point"], c, qdtype(a["dtype"]))
    assert math.isclose(out[0], s, rel_tol=1e-12) and out[1] == z, f"{out} != ({s!r}, {z})"


@check("matmul")
def _matmul(a, out, ctx):
    qa, qb = per_tensor(a["qa"]), per_tensor(a["qb"])
    out_qparams(out, a["scale"], a["zero_point"], qa.dtype)
    exp, slack = ref.matmul_ref(qa, qb, a["scale"], a["zero_point"])
    got = ints(out)
    assert got.shape == exp.shape, f"matmul: shape {got.shape} != {exp.shape}"
    over = np.abs(got - exp) > 1 + slack
    assert not over.any(), f"matmul: {np.abs(got - exp)[over].max()} steps where the bound is {(1 + slack)[over].min()}"


@check("cat", "cat_relu")
def _cat(a, out, ctx):
    xs = [per_tensor(x) for x in a["qx"]]
    if not xs:
        raise Unchecked("empty list")
    s = xs[0].q_scale() if a["scale"] is None else a["scale"]
    z = xs[0].q_zero_point() if a["zero_point"] is None else a["zero_point"]
    out_qparams(out, s, z, xs[0].dtype)
    # torch.cat's legacy rule (cpu/cat.cpp skipped()): 1-D empty tensors beside others are skipped
    kept = [x for x in xs if not (x.dim() == 1 and x.numel() == 0)] or xs[:1]
    exp = ref.cat_ref(kept, a["dim"] % max(kept[0].dim(), 1), s, z, relu=ctx.op.endswith("relu"))
    within(out, exp, 1, ctx.op)


@check(*[f"{c}{ov}" for c in ("eq", "ne", "ge", "le", "gt", "lt") for ov in ("", ".Scalar")])
def _compare(a, out, ctx):
    x = per_tensor(a["self"])
    other = a["other"]
    if isinstance(other, torch.Tensor):
        other = per_tensor(other, "other")
    assert out.dtype == torch.bool
    exact(out, ref.compare_ref(ctx.op.split(".")[0], x, other), ctx.op)


@check("equal")
def _equal(a, out, ctx):
    assert out == ref.equal_ref(a["self"], a["other"]), f"equal returned {out}"


# --------------------------------------------------------------------------------------------
# ordering and reductions (docs/design/sort.md): exact
# --------------------------------------------------------------------------------------------
def _dim(d, x):
    n = max(x.dim(), 1)
    return d % n


@check("sort")
def _sort(a, out, ctx):
    x = per_tensor(a["self"])
    v, i = out
    out_qparams(v, x.q_scale(), x.q_zero_point(), x.dtype)
    ev, ei = ref.sort_ref(x, _dim(a["dim"], x), a["descending"])
    exact(v, ev, "sort values")
    exact(i, ei, "sort indices")


@check("argsort")
def _argsort(a, out, ctx):
    x = per_tensor(a["self"])
    exact(out, ref.sort_ref(x, _dim(a["dim"], x), a["descending"])[1], "argsort")


@check("topk")
def _topk(a, out, ctx):
    x = per_tensor(a["self"])
    v, i = out
    out_qparams(v, x.q_scale(), x.q_zero_point(), x.dtype)
    d = _dim(a["dim"], x)
    ev = ref.topk_values_ref(x, a["k"], d, a["largest"])
    got = ints(v)
    if x.dim() == 0:
        exact(v, ev, "topk values")
        return
    if a["sorted"]:
        exact(v, ev, "topk values")
    else:
        exact(np.sort(got, axis=d), np.sort(ev, axis=d), "topk values (unsorted)")
    exact(np.take_along_axis(ints(x), ints(i), axis=d), got, "topk indices point at the values")


@check("max", "min")
def _max_all(a, out, ctx):
    x = per_tensor(a["self"])
    out_qparams(out, x.q_scale(), x.q_zero_point(), x.dtype)
    q = ints(x)
    if q.size == 0:
        raise Unchecked("empty")
    exact(out, q.max() if ctx.op == "max" else q.min(), ctx.op)


@check("max.dim", "min.dim")
def _max_dim(a, out, ctx):
    x = per_tensor(a["self"])
    v, i = out
    out_qparams(v, x.q_scale(), x.q_zero_point(), x.dtype)
    largest = ctx.op.startswith("max")
    d = _dim(a["dim"], x)
    ei = ref.argmax_ref(x, d, a["keepdim"], largest)
    exact(i, ei, ctx.op + " indices")
    q = ints(x)
    if q.ndim == 0:
        exact(v, q, ctx.op + " values")
        return
    ev = (q.max if largest else q.min)(axis=d, keepdims=a["keepdim"])
    exact(v, ev, ctx.op + " values")


@check("argmax", "argmin")
def _argmax(a, out, ctx):
    x = per_tensor(a["self"])
    dim = a["dim"]
    if dim is not None:
        dim = _dim(dim, x)
    exact(out, ref.argmax_ref(x, dim, a["keepdim"], ctx.op == "argmax"), ctx.op)


@check("mean")
def _mean(a, out, ctx):
    x = per_tensor(a["self"])
    out_qparams(out, x.q_scale(), x.q_zero_point(), x.dtype)
    dim = a["dim"]
    if dim:
        dim = sorted({d % max(x.dim(), 1) for d in dim})
    exact(out, ref.mean_int_ref(x, dim, a["keepdim"]), "mean")


# --------------------------------------------------------------------------------------------
# activations (docs/design/activation.md): clamps exact, tables within 1 step
# --------------------------------------------------------------------------------------------
@check("relu")
def _relu(a, out, ctx):
    x = per_tensor(a["qx"])
    out_qparams(out, x.q_scale(), x.q_zero_point(), x.dtype)
    exact(out, np.maximum(ints(x), x.q_zero_point()), "relu")


@check("relu6")
def _relu6(a, out, ctx):
    x = a["qx"]
    if a.get("inplace"):
        x = ctx.before  # the input as it was before the call
    x = per_tensor(x)
    out_qparams(out, x.q_scale(), x.q_zero_point(), x.dtype)
    six = ref.quantize_bound_ref(6.0, x.q_scale(), x.q_zero_point(), x.dtype)
    exact(out, ref.clamp_int_ref(x, x.q_zero_point(), six), "relu6")


@check("clamp")
def _clamp(a, out, ctx):
    x = per_tensor(a["qx"])
    out_qparams(out, x.q_scale(), x.q_zero_point(), x.dtype)
    lo, hi = ref.QRANGE[x.dtype]
    mn, mx = fscalar(a["min"], "min"), fscalar(a["max"], "max")
    lo = lo if mn is None else ref.quantize_bound_ref(mn, x.q_scale(), x.q_zero_point(), x.dtype)
    hi = hi if mx is None else ref.quantize_bound_ref(mx, x.q_scale(), x.q_zero_point(), x.dtype)
    exact(out, ref.clamp_int_ref(x, lo, hi), "clamp")


def _activation(name, x, out, s, z, **params):
    out_qparams(out, s, z, x.dtype)
    for k, v in params.items():
        params[k] = fscalar(v, k)
    with np.errstate(all="ignore"):
        real = ref.ACTIVATIONS[name](ref.dequantize_ref(x).astype(np.float64), **params)
    finite_real(real)
    within(out, ref.activation_ref(name, x, s, z, **params), 1, name)


@check("leaky_relu")
def _leaky_relu(a, out, ctx):
    x = ctx.before if a["inplace"] else a["qx"]
    _activation(
        "leaky_relu", per_tensor(x), out, a["output_scale"], a["output_zero_point"], negative_slope=a["negative_slope"]
    )


@check("hardswish", "hardsigmoid", "sigmoid")
def _act_plain(a, out, ctx):
    _activation(
        ctx.op, per_tensor(a["input"] if "input" in a else a["qx"]), out, a["output_scale"], a["output_zero_point"]
    )


@check("elu")
def _elu(a, out, ctx):
    _activation(
        "elu",
        per_tensor(a["self"]),
        out,
        a["output_scale"],
        a["output_zero_point"],
        alpha=a["alpha"],
        scale=a["scale"],
        input_scale=a["input_scale"],
    )


@check("celu")
def _celu(a, out, ctx):
    if fscalar(a["alpha"], "alpha") == 0:
        raise Unchecked("alpha 0")
    _activation("celu", per_tensor(a["self"]), out, a["output_scale"], a["output_zero_point"], alpha=a["alpha"])


@check("threshold")
def _threshold(a, out, ctx):
    x = per_tensor(a["qx"])  # keeps the input's qparams
    _activation("threshold", x, out, x.q_scale(), x.q_zero_point(), threshold=a["threshold"], value=a["value"])


@check("prelu")
def _prelu(a, out, ctx):
    x = per_tensor(a["qx"])
    w = a["weight"]
    slopes = ref.exact_real(w) if w.is_quantized else w.double().numpy()
    out_qparams(out, a["output_scale"], a["output_zero_point"], x.dtype)
    exp = ref.prelu_ref(x, slopes, a["output_scale"], a["output_zero_point"])
    if np.size(slopes) == 1:  # one shared slope: the input's shape (0-dim too)
        exp = exp.reshape(x.shape)
    within(out, exp, 1, "prelu")


@check("softmax")
def _softmax(a, out, ctx):
    x = per_tensor(a["qx"])
    out_qparams(out, a["output_scale"], a["output_zero_point"], x.dtype)
    if x.numel() == 0:
        same_shape(out, x.shape, "softmax")
        return
    exp = ref.softmax_exact_ref(x, _dim(a["dim"], x), a["output_scale"], a["output_zero_point"])
    within(out, exp, 1, "softmax")


# --------------------------------------------------------------------------------------------
# normalization (docs/design/activation.md): within 1 step of the float64 reference
# --------------------------------------------------------------------------------------------
def _vec(t):
    if t is None:
        return None
    if t.is_quantized:
        raise Unchecked("quantized affine parameter")
    return t.double().numpy()


def _norm(x, out, exp_fn, s, z, what):
    out_qparams(out, s, z, x.dtype)
    if x.numel() == 0:  # nothing to normalize (the references reshape by the group size)
        same_shape(out, x.shape, what)
        return
    with np.errstate(all="ignore"):
        exp = ref.with_exact_dequantize(exp_fn)
    within(out, exp, 1, what)


def _finite_norm_params(eps, *vecs):
    finite_real(*[v for v in vecs if v is not None])
    if not (math.isfinite(eps) and eps > 0):
        raise Unchecked("eps <= 0: 0 / 0 where the variance is 0")


@check("layer_norm")
def _layer_norm(a, out, ctx):
    x = per_tensor(a["input"])
    w, b = _vec(a["weight"]), _vec(a["bias"])
    _finite_norm_params(a["eps"], w, b)
    ns = list(a["normalized_shape"])
    _norm(
        x,
        out,
        lambda: ref.layer_norm_ref(x, ns, w, b, a["eps"], a["output_scale"], a["output_zero_point"]),
        a["output_scale"],
        a["output_zero_point"],
        "layer_norm",
    )


@check("group_norm")
def _group_norm(a, out, ctx):
    x = per_tensor(a["input"])
    w, b = _vec(a["weight"]), _vec(a["bias"])
    _finite_norm_params(a["eps"], w, b)
    _norm(
        x,
        out,
        lambda: ref.group_norm_ref(x, a["num_groups"], w, b, a["eps"], a["output_scale"], a["output_zero_point"]),
        a["output_scale"],
        a["output_zero_point"],
        "group_norm",
    )


@check("instance_norm")
def _instance_norm(a, out, ctx):
    x = per_tensor(a["input"])
    w, b = _vec(a["weight"]), _vec(a["bias"])
    _finite_norm_params(a["eps"], w, b)
    _norm(
        x,
        out,
        lambda: ref.instance_norm_ref(x, w, b, a["eps"], a["output_scale"], a["output_zero_point"]),
        a["output_scale"],
        a["output_zero_point"],
        "instance_norm",
    )


@check("batch_norm2d", "batch_norm2d_relu", "batch_norm3d", "batch_norm3d_relu")
def _batch_norm(a, out, ctx):
    x = per_tensor(a["qx"])
    w, b, m, v = _vec(a["weight"]), _vec(a["bias"]), _vec(a["mean"]), _vec(a["var"])
    _finite_norm_params(a["eps"], w, b, m, v)
    if np.any(v + a["eps"] <= 0):
        raise Unchecked("var + eps <= 0")
    _norm(
        x,
        out,
        lambda: ref.batch_norm_ref(
            x, w, b, m, v, a["eps"], a["output_scale"], a["output_zero_point"], relu=ctx.op.endswith("relu")
        ),
        a["output_scale"],
        a["output_zero_point"],
        ctx.op,
    )


# --------------------------------------------------------------------------------------------
# pooling and upsampling (docs/design/pooling.md): max / nearest exact, averages within 1 step
# --------------------------------------------------------------------------------------------
@check("max_pool2d")
def _max_pool2d(a, out, ctx):
    x = per_tensor(a["qx"])
    out_qparams(out, x.q_scale(), x.q_zero_point(), x.dtype)
    # empty padding / dilation: the defaults 0 / 1 (as an empty stride is the kernel size)
    # the integers in their own dtype: a window with no valid tap gives the dtype's lowest value
    exp = ref.max_pool2d_ref(
        x.int_repr().numpy(), a["kernel_size"], a["stride"], a["padding"] or [0], a["dilation"] or [1], a["ceil_mode"]
    )
    exact(out, exp, "max_pool2d")


AVG_POOLS = {"avg_pool2d": ref.avg_pool2d_ref, "avg_pool3d": ref.avg_pool3d_ref}
ADAPTIVE_POOLS = {
    "adaptive_avg_pool2d": (ref.adaptive_avg_pool2d_ref, 2),
    "adaptive_avg_pool3d": (ref.adaptive_avg_pool3d_ref, 3),
}


def _average(a, out, ctx, fn, *args):
    """An average pool keeps the input's qparams: averaging q - zp (the real values / scale), then
    requantizing with scale 1 around zp, is the float64 reference."""
    x = per_tensor(a["qx"])
    out_qparams(out, x.q_scale(), x.q_zero_point(), x.dtype)
    avg = fn(ints(x) - x.q_zero_point(), *args)
    within(out, ref.requantize_ref(avg, 1.0, x.q_zero_point(), x.dtype), 1, ctx.op)


@check(*AVG_POOLS)
def _avg_pool(a, out, ctx):
    _average(
        a,
        out,
        ctx,
        AVG_POOLS[ctx.op],
        a["kernel_size"],
        a["stride"],
        a["padding"],
        a["ceil_mode"],
        a["count_include_pad"],
        a["divisor_override"],
    )


@check(*ADAPTIVE_POOLS)
def _adaptive_avg_pool(a, out, ctx):
    fn, nd = ADAPTIVE_POOLS[ctx.op]
    osz = list(a["output_size"])
    _average(a, out, ctx, fn, osz * nd if len(osz) == 1 else osz)


@check("upsample_nearest2d")
def _upsample_nearest2d(a, out, ctx):
    x = per_tensor(a["qx"])
    out_qparams(out, x.q_scale(), x.q_zero_point(), x.dtype)
    exact(out, ref.upsample_nearest2d_index_ref(ints(x), list(a["output_size"])), "upsample_nearest2d")


@check("upsample_bilinear2d")
def _upsample_bilinear2d(a, out, ctx):
    x = per_tensor(a["qx"])
    out_qparams(out, x.q_scale(), x.q_zero_point(), x.dtype)
    scales = (a["scales_h"], a["scales_w"])
    for s in scales:
        if s is not None and not (math.isfinite(s) and s > 1e-6):
            raise Unchecked("odd scale factor (source positions past float range: test_bad_input.py)")
    exp = ref.upsample_bilinear2d_ref(ints(x), list(a["output_size"]), a["align_corners"], scales)
    within(out, exp, 1, "upsample_bilinear2d")


# --------------------------------------------------------------------------------------------
# packed params: prepack / unpack round trip exact; linear / conv within 1 step
# --------------------------------------------------------------------------------------------
def _same_q(got, exp, what):
    assert got.dtype == exp.dtype and got.qscheme() == exp.qscheme(), f"{what}: dtype / qscheme"
    if exp.qscheme() == torch.per_tensor_affine:
        assert got.q_scale() == exp.q_scale() and got.q_zero_point() == exp.q_zero_point(), f"{what}: qparams"
    else:
        assert torch.equal(got.q_per_channel_scales(), exp.q_per_channel_scales()), f"{what}: scales"
        assert torch.equal(got.q_per_channel_zero_points(), exp.q_per_channel_zero_points()), f"{what}: zero points"
    exact(got, ints(exp), what)


def _same_bias(got, exp, what):
    if exp is None:
        assert got is None, f"{what}: bias appeared"
    else:
        assert got is not None and torch.equal(got, exp.float()), f"{what}: bias differs"


def _source(obj, ctx):
    src = ctx.sources.get(id(obj))
    if src is None:
        raise Unchecked("packed params of unknown origin")
    return src


@check(
    "linear_prepack",
    "conv1d_prepack",
    "conv2d_prepack",
    "conv3d_prepack",
    "conv_transpose1d_prepack",
    "conv_transpose2d_prepack",
    "conv_transpose3d_prepack",
)
def _prepack(a, out, ctx):
    unpack = getattr(torch.ops.qplugin, ctx.op.replace("prepack", "unpack"))
    w, b = unpack(out)
    src = a["W"] if "W" in a else a["weight"]
    _same_q(w, src, "unpacked weight")
    _same_bias(b, a["B"] if "B" in a else a["bias"], "unpacked bias")


@check(
    "linear_unpack",
    "conv1d_unpack",
    "conv2d_unpack",
    "conv3d_unpack",
    "conv_transpose1d_unpack",
    "conv_transpose2d_unpack",
    "conv_transpose3d_unpack",
)
def _unpack(a, out, ctx):
    src = _source(a["W_prepack"] if "W_prepack" in a else a["packed_weights"], ctx)
    _same_q(out[0], src["w"], "unpacked weight")
    _same_bias(out[1], src["b"], "unpacked bias")


@check("linear", "linear_relu")
def _linear(a, out, ctx):
    x = per_tensor(a["X"])
    src = _source(a["W_prepack"], ctx)
    s, z = a["Y_scale_i"], a["Y_zero_point_i"]
    out_qparams(out, s, z, torch.quint8)
    exp = ref.linear_ref(x, src["w"], src["b"], s, z, relu=ctx.op.endswith("relu"))
    within(out, exp, 1, ctx.op)


@check("linear_dynamic", "linear_relu_dynamic")
def _linear_dynamic(a, out, ctx):
    src = _source(a["W_prepack"], ctx)
    _dynamic(a["X"], lambda: (src["w"], src["b"]), a["reduce_range"], out, ctx.op)


def _dynamic(x, weight, reduce_range, out, what):
    """linear_dynamic's float result within 1e-5 relative of the reference (test_linear.py)."""
    if x.dtype != torch.float32 or not torch.isfinite(x).all():
        raise Unchecked("non-finite or non-float32 input")
    w, b = weight()
    exp = ref.linear_dynamic_ref(x, w, b, reduce_range, relu="relu" in what)
    finite_real(exp)
    tol = 1e-5 * float(np.abs(exp).max(initial=0.0)) + 1e-5
    np.testing.assert_allclose(out.numpy(), exp, rtol=1e-5, atol=tol, err_msg=what)


@check("linear_prepack_fp16")
def _prepack_fp16(a, out, ctx):
    """The packed weight is W saturated to +-65504 and rounded to float16 (exact), bias as given."""
    w = a["W"]
    if w.dtype not in (torch.float32, torch.float16):
        raise Unchecked("weight dtype")
    wu, b = torch.ops.qplugin.linear_unpack_fp16(out)
    exp = ref.fp16_weight_ref(w.float().numpy()).astype(np.float32)
    np.testing.assert_array_equal(wu.numpy(), exp, err_msg="unpacked fp16 weight")
    _same_bias(b, a["B"], "unpacked bias")


@check("linear_unpack_fp16")
def _unpack_fp16(a, out, ctx):
    src = _source(a["W_prepack"], ctx)
    np.testing.assert_array_equal(out[0].numpy(), ref.fp16_weight_ref(src["w"].numpy()).astype(np.float32))
    _same_bias(out[1], src["b"], "unpacked bias")


@check("linear_dynamic_fp16", "linear_relu_dynamic_fp16")
def _linear_dynamic_fp16(a, out, ctx):
    """Within the float32-accumulation bound of the float64 result with fp16 weights (test_linear_fp16.py)."""
    src = _source(a["W_prepack"], ctx)
    x = a["X"]
    if x.dtype != torch.float32 or not torch.isfinite(x).all():
        raise Unchecked("non-finite or non-float32 input")
    b = None if src["b"] is None else src["b"].numpy()
    exp = ref.linear_fp16_ref(x.numpy(), src["w"].numpy(), b, relu="relu" in ctx.op)
    tol = ref.linear_fp16_tolerance(x.numpy(), src["w"].numpy(), b)
    finite_real(exp)
    assert (np.abs(out.numpy().astype(np.float64) - exp) <= tol).all(), ctx.op


@check("conv1d", "conv1d_relu", "conv2d", "conv2d_relu", "conv3d", "conv3d_relu", "conv2d_add", "conv2d_add_relu")
def _conv(a, out, ctx):
    x = per_tensor(a["qx"])
    src = _source(a["packed_weight"], ctx)
    s, z = a["output_scale"], a["output_zero_point"]
    out_qparams(out, s, z, torch.quint8)
    acc = per_tensor(a["qaccum"], "qaccum") if "qaccum" in a else None
    exp = ref.qconv_ref(
        x,
        src["w"],
        src["b"],
        src["stride"],
        src["padding"],
        src["dilation"],
        src["groups"],
        s,
        z,
        relu=ctx.op.endswith("relu"),
        qaccum=acc,
    )
    within(out, exp, 1, ctx.op)


@check("conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
def _conv_transpose(a, out, ctx):
    x = per_tensor(a["qx"])
    src = _source(a["packed_weight"], ctx)
    s, z = a["output_scale"], a["output_zero_point"]
    out_qparams(out, s, z, torch.quint8)
    exp = ref.qconv_transpose_ref(
        x,
        src["w"],
        src["b"],
        src["stride"],
        src["padding"],
        src["output_padding"],
        src["dilation"],
        src["groups"],
        s,
        z,
    )
    within(out, exp, 1, ctx.op)


# --------------------------------------------------------------------------------------------
# the plain tier's weighted ops (plain int8 weight + scales / zero points + a packed buffer):
# the same references as linear / conv, the weight rebuilt as a quantized tensor
# --------------------------------------------------------------------------------------------
def plain_qweight(w, scales, zero_points):
    """The quantized weight a plain (w, w_scales, w_zero_points) stands for: one scale for all
    rows is per-tensor, else per row (axis 0), as test/ops/test_plain_weights.py."""
    if not (isinstance(w, torch.Tensor) and w.dtype == torch.int8):
        raise Unchecked("weight not int8")
    s, z = scales.double().reshape(-1), zero_points.long().reshape(-1)
    if s.numel() == 1 and w.shape[0] != 1:
        return torch._make_per_tensor_quantized_tensor(w.contiguous(), float(s), int(z))
    return torch._make_per_channel_quantized_tensor(w.contiguous(), s, z, 0)


def _geometry(a, nd):
    g = {}
    for k in ("stride", "padding", "dilation"):
        v = list(a[k])
        g[k] = v * nd if len(v) == 1 else v
    return g


@check("plain_linear", "plain_linear_relu")
def _plain_linear(a, out, ctx):
    x = _qt(a["x"], a["x_scale"], a["x_zero_point"], "x")
    qw = plain_qweight(a["w"], a["w_scales"], a["w_zero_points"])
    exp = ref.linear_ref(x, qw, a["bias"], a["output_scale"], a["output_zero_point"], relu=ctx.op.endswith("relu"))
    within(out, exp, 1, ctx.op)


@check("plain_linear_dynamic", "plain_linear_relu_dynamic")
def _plain_linear_dynamic(a, out, ctx):
    _dynamic(
        a["x"],
        lambda: (plain_qweight(a["w"], a["w_scales"], a["w_zero_points"]), a["bias"]),
        a["reduce_range"],
        out,
        ctx.op,
    )


@check("plain_linear_dynamic_fp16", "plain_linear_relu_dynamic_fp16")
def _plain_linear_dynamic_fp16(a, out, ctx):
    """Within the float32-accumulation bound of the float64 result with the float16 weights."""
    x, w, b = a["x"], a["w"], a["bias"]  # (packed: from w or empty; a stale one is the caller's)
    if x.dtype != torch.float32 or not torch.isfinite(x).all() or not torch.isfinite(w).all():
        raise Unchecked("non-finite or non-float32 input")
    b = None if b is None else b.numpy()
    w = w.float().numpy()
    exp = ref.linear_fp16_ref(x.numpy(), w, b, relu="relu" in ctx.op)
    tol = ref.linear_fp16_tolerance(x.numpy(), w, b)
    finite_real(exp)
    assert (np.abs(out.numpy().astype(np.float64) - exp) <= tol).all(), ctx.op


@check("plain_linear_prepack_fp16")
def _plain_linear_prepack_fp16(a, out, ctx):
    # the panels are right when plain_linear_dynamic_fp16 reading them gives what packing w in the op gives
    w = a["w"]
    x = torch.linspace(-2, 2, 3 * w.shape[1]).reshape(3, w.shape[1])
    q = torch.ops.qplugin
    assert torch.equal(
        q.plain_linear_dynamic_fp16(x, w, None, out), q.plain_linear_dynamic_fp16(x, w, None, w.new_empty([0]))
    ), ctx.op


@check("plain_rnn_layer_dynamic_fp16")
def _plain_rnn_layer_dynamic_fp16(a, out, ctx):
    """Equal to _rnn_layer_dynamic on fp16 packed params of the same weights (no step-error bound is
    promised for a whole layer; test/nn/test_fp16_dynamic.py checks it against the float cells)."""
    q = torch.ops.qplugin
    pi, ph = q.linear_prepack_fp16(a["w_ih"].float(), a["b_ih"]), q.linear_prepack_fp16(a["w_hh"].float(), a["b_hh"])
    want = q._rnn_layer_dynamic(a["input"], a["h0"], a["c0"], pi, ph, a["num_gates"], a["reverse"])
    for got, exp in zip(out, want):
        torch.testing.assert_close(got, exp, rtol=0, atol=0, equal_nan=True, msg=ctx.op)


PLAIN_CONVS = [f"plain_conv{d}d{s}" for d in (1, 2, 3) for s in ("", "_relu")] + [
    "plain_conv2d_add",
    "plain_conv2d_add_relu",
]


@check(*PLAIN_CONVS)
def _plain_conv(a, out, ctx):
    x = _qt(a["x"], a["x_scale"], a["x_zero_point"], "x")
    qw = plain_qweight(a["w"], a["w_scales"], a["w_zero_points"])
    g = _geometry(a, qw.dim() - 2)
    acc = _qt(a["accum"], a["accum_scale"], a["accum_zero_point"], "accum") if "accum" in a else None
    exp = ref.qconv_ref(
        x,
        qw,
        a["bias"],
        g["stride"],
        g["padding"],
        g["dilation"],
        a["groups"],
        a["output_scale"],
        a["output_zero_point"],
        relu=ctx.op.endswith("relu"),
        qaccum=acc,
    )
    within(out, exp, 1, ctx.op)


def plain_qweight_t(w, scales, zero_points, groups):
    """The float64 real weight of a plain transposed conv (w (IC, OC / groups, kernel...), 1 or OC
    qparams: output channel g * OCg + j is column j of group g's rows) as a quantized tensor: per
    tensor, or per channel along axis 1 when the qparams repeat per group (what a quantized weight
    can hold), else None (the caller compares reals)."""
    if not (isinstance(w, torch.Tensor) and w.dtype == torch.int8):
        raise Unchecked("weight not int8")
    s, z = scales.double().reshape(-1), zero_points.long().reshape(-1)
    if s.numel() == 1:
        return torch._make_per_tensor_quantized_tensor(w.contiguous(), float(s), int(z))
    ocg = w.shape[1]
    if torch.equal(s, s[:ocg].repeat(groups)) and torch.equal(z, z[:ocg].repeat(groups)):
        return torch._make_per_channel_quantized_tensor(w.contiguous(), s[:ocg].clone(), z[:ocg].clone(), 1)
    return None


def _plain_conv_transpose_ref(x, w, scales, zero_points, bias, g, groups, out_scale, out_zp):
    qw = plain_qweight_t(w, scales, zero_points, groups)
    if qw is not None:
        return ref.qconv_transpose_ref(
            x, qw, bias, g["stride"], g["padding"], g["output_padding"], g["dilation"], groups, out_scale, out_zp
        )
    ic, ocg = w.shape[:2]
    oc = (torch.arange(ic) // (ic // groups) * ocg).reshape(ic, 1) + torch.arange(ocg)
    shp = (ic, ocg) + (1,) * (w.dim() - 2)
    wr = ((w.double() - zero_points.double()[oc].reshape(shp)) * scales.double()[oc].reshape(shp)).numpy()
    real = ref.conv_transpose_ref(
        ref.exact_real(x),
        wr,
        None if bias is None else bias.double().numpy(),
        g["stride"],
        g["padding"],
        g["output_padding"],
        g["dilation"],
        groups,
    )
    return ref.requantize_ref(real, out_scale, out_zp, torch.quint8)


def _geometry_t(a, nd):
    g = _geometry(a, nd)
    v = list(a["output_padding"])
    g["output_padding"] = v * nd if len(v) == 1 else v
    return g


@check("plain_conv_transpose1d", "plain_conv_transpose2d", "plain_conv_transpose3d")
def _plain_conv_transpose(a, out, ctx):
    x = _qt(a["x"], a["x_scale"], a["x_zero_point"], "x")
    w = a["w"]
    exp = _plain_conv_transpose_ref(
        x,
        w,
        a["w_scales"],
        a["w_zero_points"],
        a["bias"],
        _geometry_t(a, w.dim() - 2),
        a["groups"],
        a["output_scale"],
        a["output_zero_point"],
    )
    within(out, exp, 1, ctx.op)


@check("plain_conv_transpose_prepack")
def _plain_conv_transpose_prepack(a, out, ctx):
    # the header is opaque: right when plain_conv_transpose reading it gives the reference's result
    w = a["w"]
    nd = w.dim() - 2
    shape = [1, w.shape[0]] + [3] * nd
    x = torch.arange(int(np.prod(shape)), dtype=torch.int64).remainder(251).to(torch.uint8).reshape(shape)
    op = getattr(torch.ops.qplugin, f"plain_conv_transpose{nd}d")
    y = op(
        x,
        0.05,
        120,
        w,
        a["w_scales"],
        a["w_zero_points"],
        a["bias"],
        out,
        a["stride"],
        a["padding"],
        a["output_padding"],
        a["dilation"],
        a["groups"],
        0.5,
        100,
    )
    exp = _plain_conv_transpose_ref(
        _qt(x, 0.05, 120, "x"),
        w,
        a["w_scales"],
        a["w_zero_points"],
        a["bias"],
        _geometry_t(a, nd),
        a["groups"],
        0.5,
        100,
    )
    within(y, exp, 1, f"plain_conv_transpose{nd}d with the prepacked header")


@check("plain_linear_prepack")
def _plain_linear_prepack(a, out, ctx):
    # the buffer is opaque: it is right when plain_linear reading it gives the reference's result
    w = a["w"]
    x = torch.arange(3 * w.shape[1], dtype=torch.int64).remainder(256).to(torch.uint8).reshape(3, w.shape[1])
    y = torch.ops.qplugin.plain_linear(x, 0.05, 120, w, a["w_scales"], a["w_zero_points"], None, out, 0.5, 100)
    exp = ref.linear_ref(_qt(x, 0.05, 120, "x"), plain_qweight(w, a["w_scales"], a["w_zero_points"]), None, 0.5, 100)
    within(y, exp, 1, "plain_linear with the prepacked buffer")


@check("plain_conv_prepack")
def _plain_conv_prepack(a, out, ctx):
    w = a["w"]
    nd = w.dim() - 2
    g = _geometry(a, nd)
    spatial = [d * (k - 1) + 1 + 2 for d, k in zip(g["dilation"], w.shape[2:])]
    shape = [1, w.shape[1] * a["groups"]] + spatial
    x = torch.arange(int(np.prod(shape)), dtype=torch.int64).remainder(251).to(torch.uint8).reshape(shape)
    op = getattr(torch.ops.qplugin, f"plain_conv{nd}d")
    y = op(
        x,
        0.05,
        120,
        w,
        a["w_scales"],
        a["w_zero_points"],
        a["bias"],
        out,
        a["stride"],
        a["padding"],
        a["dilation"],
        a["groups"],
        0.5,
        100,
    )
    exp = ref.qconv_ref(
        _qt(x, 0.05, 120, "x"),
        plain_qweight(w, a["w_scales"], a["w_zero_points"]),
        a["bias"],
        g["stride"],
        g["padding"],
        g["dilation"],
        a["groups"],
        0.5,
        100,
    )
    within(y, exp, 1, f"plain_conv{nd}d with the prepacked buffer")


# --------------------------------------------------------------------------------------------
# embeddings (8-bit / 4-bit row-wise weights): docs/design/embedding.md
# --------------------------------------------------------------------------------------------
def _emb_close(out, expected, what):
    """Bags within 1e-5 relative of the float64 reference (float32 accumulation)."""
    expected = np.asarray(expected, dtype=np.float64)
    same_shape(out, expected.shape, what)
    tol = 1e-5 * max(1.0, float(np.abs(expected).max(initial=0)))
    np.testing.assert_allclose(out.numpy().astype(np.float64), expected, rtol=1e-5, atol=tol, err_msg=what)


def _fused(t, what):
    if not (isinstance(t, torch.Tensor) and t.dtype == torch.uint8 and t.dim() >= 1):
        raise Unchecked(f"{what}: not fused uint8 rows")
    return t.reshape(-1, t.shape[-1]).numpy()


def _packed_rows(qw):
    """(codes [rows, D], scale, bias) of a float-qparams weight as the packed params store them:
    float32 scale, bias = -zero_point * scale in float32."""
    s = qw.q_per_channel_scales().float()
    b = (qw.q_per_channel_zero_points().float() * s * -1).numpy()
    r = qw.int_repr().numpy()
    if qw.dtype == torch.quint4x2:
        r = np.stack([r & 15, r >> 4], -1).reshape(qw.shape[0], -1)[:, : qw.shape[1]]
    r = r.reshape(qw.shape[0], qw.shape[1])
    return r.astype(np.int64), s.numpy(), b


def _bag_starts(a, n):
    """Each bag's first index (and the end), as the op reads indices / offsets."""
    if a["offsets"] is None:
        per = a["indices"].shape[1]
        return [b * per for b in range(a["indices"].shape[0] + 1)]
    off = a["offsets"].tolist()
    return off if a["include_last_offset"] else off + [n]


def _bags(a, out, codes, scale, bias, what):
    if a["pruned_weights"] or a["compressed_indices_mapping"] is not None:
        raise Unchecked("pruned rows")
    idx = a["indices"].reshape(-1).tolist()
    psw = a["per_sample_weights"]
    exp = ref.embedding_bag_ref(
        codes, scale, bias, idx, _bag_starts(a, len(idx)), a["mode"], None if psw is None else psw.double().numpy()
    )
    _emb_close(out, exp, what)


@check("embedding_bag_byte_prepack", "embedding_bag_4bit_prepack")
def _emb_fused_prepack(a, out, ctx):
    w = a["weight"]
    if not (isinstance(w, torch.Tensor) and w.dtype == torch.float32 and torch.isfinite(w).all()):
        raise Unchecked("non-finite or non-float32 weight")
    bits = 8 if "byte" in ctx.op else 4
    codes, scale, bias = ref.fused_rows_ref(_fused(out, ctx.op), bits)
    d = w.shape[-1]
    rows = w.reshape(-1, d).numpy().astype(np.float64)
    assert codes.min(initial=0) >= 0 and codes.max(initial=0) <= (255 if bits == 8 else 15), f"{ctx.op}: code range"
    real = (scale[:, None].astype(np.float64) * codes + bias[:, None])[:, :d]
    err = np.abs(real - rows)
    assert (err <= 0.5 * scale[:, None].astype(np.float64) + 2e-3 * np.abs(rows) + 1e-6).all(), (
        f"{ctx.op}: a row is not reproduced within half a step"
    )


@check("embedding_bag_byte_unpack", "embedding_bag_4bit_unpack")
def _emb_fused_unpack(a, out, ctx):
    codes, scale, bias = ref.fused_rows_ref(_fused(a["weight"], ctx.op), 8 if "byte" in ctx.op else 4)
    full = (scale[:, None].astype(np.float64) * codes + bias[:, None]).astype(np.float32)
    got = out.reshape(-1, out.shape[-1]).numpy()
    np.testing.assert_array_equal(got, full[:, : got.shape[1]], err_msg=ctx.op)


@check("embedding_bag_prepack")
def _emb_prepack(a, out, ctx):
    _emb_same_weight(torch.ops.qplugin.embedding_bag_unpack(out), a["weight"], ctx.op)


@check("embedding_bag_unpack")
def _emb_unpack(a, out, ctx):
    _emb_same_weight(out, _source(a["W_prepack"], ctx)["qw"], ctx.op)


def _emb_same_weight(got, qw, what):
    assert got.dtype == qw.dtype and got.shape == qw.shape, f"{what}: {got.dtype} {tuple(got.shape)}"
    assert torch.equal(got.int_repr(), qw.int_repr()), f"{what}: codes differ"
    assert torch.equal(got.q_per_channel_scales(), qw.q_per_channel_scales()), f"{what}: scales differ"
    assert torch.equal(got.q_per_channel_zero_points(), qw.q_per_channel_zero_points()), f"{what}: zero points differ"


@check("embedding_byte", "embedding_4bit")
def _emb_lookup(a, out, ctx):
    codes, s, b = _packed_rows(_source(a["weight"], ctx)["qw"])
    exact_rows = (s[:, None].astype(np.float64) * codes + b[:, None].astype(np.float64)).astype(np.float32)
    idx = a["indices"].numpy()
    np.testing.assert_array_equal(
        out.numpy(), exact_rows[idx.reshape(-1)].reshape(*idx.shape, codes.shape[1]), err_msg=ctx.op
    )  # one rounding of the float64 value: exact


@check("embedding_bag_byte", "embedding_bag_4bit")
def _emb_bag(a, out, ctx):
    codes, s, b = _packed_rows(_source(a["weight"], ctx)["qw"])
    _bags(a, out, codes, s, b, ctx.op)


@check("embedding_bag_byte_rowwise_offsets", "embedding_bag_4bit_rowwise_offsets")
def _emb_rowwise(a, out, ctx):
    codes, s, b = ref.fused_rows_ref(_fused(a["weight"], ctx.op), 8 if "byte" in ctx.op else 4)
    _bags(a, out, codes, s, b, ctx.op)


def _plain_table(packed, what):
    """The fused rows a plain embedding buffer holds: the payload after its 192-byte header, rows as
    many as its size gives (word 6 of the header is D)."""
    if not (
        isinstance(packed, torch.Tensor) and packed.dtype == torch.uint8 and packed.dim() == 1 and packed.numel() >= 192
    ):
        raise Unchecked(f"{what}: not a plain buffer")
    d = int(packed[:192].view(torch.int64)[6])
    return packed[192:].reshape(-1, d + 8)


@check("plain_embedding_prepack")
def _plain_emb_prepack(a, out, ctx):
    assert torch.equal(_plain_table(out, ctx.op), a["fused_rows"]), f"{ctx.op}: the rows differ from fused_rows"


@check("plain_embedding_unpack")
def _plain_emb_unpack(a, out, ctx):
    assert torch.equal(out, _plain_table(a["packed"], ctx.op)), f"{ctx.op}: not the buffer's rows"


@check("plain_embedding_bag")
def _plain_emb_bag(a, out, ctx):
    codes, s, b = ref.fused_rows_ref(_plain_table(a["packed"], ctx.op).numpy(), 8)
    _bags(a, out, codes, s, b, ctx.op)
