"""Graph-mode quantization of a scripted model onto qplugin kernels:
``quantize_jit`` / ``quantize_dynamic_jit`` with torch.ao.quantization's signatures.

Route: torch's own graph-mode passes (prepare_jit / convert_jit, reached through ``_compat``) insert
observers, calibrate and fold the model into a graph of ``quantized::`` ops with torch's packed
weights. qplugin mirrors those schemas on purpose, so the graph is then rewritten in place:

* every ``quantized::X`` node becomes ``qplugin::X`` (same inputs); one with no qplugin kernel is
  an error naming it;
* ``aten::quantize_per_tensor`` / ``aten::dequantize`` become qplugin's, and the aten ops that ran
  torch's quantized kernels on a quantized value (pools, relu, ...) the qplugin op of the same schema;
* torch's packed weights (``prim::GetAttr`` of ``torch.classes.quantized.*PackedParamsBase``) are
  unpacked and packed again with qplugin's prepack into new attributes; the model is then frozen
  (torch.jit.freeze's pass), which folds our packed weights into the graph and drops torch's objects;
* dynamic linear gets ``reduce_range=False`` (qplugin's kernels need no 7-bit activations; the
  result equals the eager ``nn.quantized.dynamic.Linear``).

The result is a frozen ScriptModule whose graph calls qplugin:: ops only (no quantized:: op, no torch
packed-params object) and saves / loads with ``torch.jit.save`` / ``load`` after ``import
torch_qplugin``. When torch removes its graph-mode passes, these two functions raise (docs/migration.md):
the rewrite needs torch's pass to produce the graph.
"""

from typing import Any, Callable, Dict, List, Optional, Sequence

import torch

from . import _compat as C
from ..quantizer import quantized_dtype

__all__ = ["quantize_jit", "quantize_dynamic_jit"]

_Q = torch.ops.qplugin

# aten ops that run torch's quantized kernels when their first input is quantized -> the qplugin op
# with the same argument list
_ATEN_ON_QUANTIZED = {
    "aten::max_pool2d": "qplugin::max_pool2d",
    "aten::avg_pool2d": "qplugin::avg_pool2d",
    "aten::adaptive_avg_pool2d": "qplugin::adaptive_avg_pool2d",
    "aten::relu": "qplugin::relu",
    "aten::relu_": "qplugin::relu",
    "aten::upsample_nearest2d": "qplugin::upsample_nearest2d",
}
# ops whose (first) output is quantized when their first input is (shape / view ops)
_PASS_THROUGH = {
    "aten::flatten",
    "aten::reshape",
    "aten::view",
    "aten::slice",
    "aten::select",
    "aten::permute",
    "aten::transpose",
    "aten::contiguous",
    "aten::squeeze",
    "aten::unsqueeze",
    "aten::chunk",
    "aten::max_pool2d",
    "aten::avg_pool2d",
    "aten::adaptive_avg_pool2d",
    "aten::relu",
    "aten::relu_",
    "aten::upsample_nearest2d",
    "prim::ListConstruct",
}
# qplugin ops with float results
_FLOAT_OUT = {
    "dequantize",
    "linear_dynamic",
    "linear_relu_dynamic",
    "linear_dynamic_fp16",
    "linear_relu_dynamic_fp16",
    "embedding_bag_byte",
    "embedding_bag_4bit",
    "embedding_byte",
    "embedding_4bit",
}


def _ours_exists(name: str):
    return bool(torch._C._jit_get_schemas_for_operator("qplugin::" + name))


def _repack(obj: torch.ScriptObject, consumer: str, who: str):
    """qplugin's packed weight for torch's packed object ``obj``, read by op ``consumer``
    (``quantized::X`` name)."""
    op = consumer.split("::")[1]
    if op.startswith("linear") and op.endswith("fp16"):
        w, b = torch.ops.quantized.linear_unpack_fp16(obj)
        return _Q.linear_prepack_fp16(w, b)
    if op.startswith("linear"):
        w, b = torch.ops.quantized.linear_unpack(obj)
        return _Q.linear_prepack(w, b)
    if op.startswith(("conv1d", "conv2d", "conv3d")):
        if obj.transpose():
            raise RuntimeError(f"{who}: transposed convolution in torch's graph is not supported")
        dims = int(op[4])
        if dims == 1:
            w, b = torch.ops.quantized.conv1d_unpack(obj)
            stride, padding, dilation = ([int(v[-1])] for v in (obj.stride(), obj.padding(), obj.dilation()))
        else:
            w, b = obj.unpack()
            stride, padding, dilation = ([int(x) for x in v] for v in (obj.stride(), obj.padding(), obj.dilation()))
        prepack = getattr(_Q, f"conv{dims}d_prepack")
        return prepack(w, b, stride, padding, dilation, int(obj.groups()))
    raise RuntimeError(f"{who}: torch's packed weight read by {consumer} has no qplugin form")


def _walk(block: torch._C.Block):
    for node in block.nodes():
        yield node
        for b in node.blocks():
            yield from _walk(b)


def _replace_node(graph: torch._C.Graph, node: torch._C.Node, kind: str, inputs: Optional[List[torch._C.Value]] = None):
    new = graph.create(kind, list(node.inputs()) if inputs is None else inputs, node.outputsSize())
    new.insertBefore(node)
    for old_out, new_out in zip(node.outputs(), new.outputs()):
        new_out.setType(old_out.type())
        old_out.replaceAllUsesWith(new_out)
    node.destroy()
    return new


def _rewrite(model: torch.jit.ScriptModule, who: str):
    """Rewrites the forward graph of torch's converted ``model`` onto qplugin (in place)."""
    graph = model.graph
    # 1. torch's packed weights -> qplugin's, as new attributes
    packed_types = ("__torch__.torch.classes.quantized.",)
    # (attributes of the module, or constants where torch's pass folded them)
    packed = [
        n
        for n in _walk(graph)
        if n.kind() in ("prim::GetAttr", "prim::Constant") and n.output().type().str().startswith(packed_types)
    ]
    self_value = next(iter(graph.inputs()))
    count = 0
    for node in packed:
        uses = [u.user.kind() for u in node.output().uses()]
        consumers = [k for k in uses if k.startswith("quantized::")]
        label = node.s("name") if node.kind() == "prim::GetAttr" else "(constant)"
        if not consumers:
            raise RuntimeError(f"{who}: torch's packed weight {label!r} is used by {uses}, not a quantized op")
        obj = model._c.getattr(node.s("name")) if node.kind() == "prim::GetAttr" else node.ival("value")
        ours = _repack(obj, consumers[0], who)
        name = f"_qplugin_packed_{count}"
        count += 1
        typ = torch._C._jit_try_infer_type(ours).type()
        model._c._register_attribute(name, typ, ours)
        new = graph.create("prim::GetAttr", [self_value], 1)
        new.s_("name", name)
        new.output().setType(typ)
        new.insertBefore(node)
        node.output().replaceAllUsesWith(new.output())
        node.destroy()
    # 2. ops: quantized:: -> qplugin::, quantize / dequantize, aten ops on quantized values
    quantized = set()
    for node in list(_walk(graph)):
        kind = node.kind()
        first = node.inputsAt(0) if node.inputsSize() else None
        if kind.startswith("quantized::"):
            op = kind.split("::")[1]
            if not _ours_exists(op):
                raise RuntimeError(f"{who}: torch's graph calls {kind}, which qplugin has no kernel for")
            inputs = list(node.inputs())
            if op in ("linear_dynamic", "linear_relu_dynamic") and len(inputs) == 3:
                inputs[2] = graph.insertConstant(False)  # full 8-bit activations, as the eager module
                inputs[2].node().moveBefore(node)
            new = _replace_node(graph, node, "qplugin::" + op, inputs)
            if op not in _FLOAT_OUT:
                quantized.add(new.output().unique())
        elif (
            kind == "aten::quantize_per_tensor"
            and node.inputsSize() == 4
            and node.inputsAt(0).type().kind() == "TensorType"
        ):
            quantized.add(_replace_node(graph, node, "qplugin::quantize_per_tensor").output().unique())
        elif kind == "aten::dequantize" and node.inputsSize() == 1 and node.inputsAt(0).type().kind() == "TensorType":
            _replace_node(graph, node, "qplugin::dequantize")
        elif first is not None and first.unique() in quantized and kind in _ATEN_ON_QUANTIZED:
            quantized.add(_replace_node(graph, node, _ATEN_ON_QUANTIZED[kind]).output().unique())
        elif (
            first is not None
            and (
                first.unique() in quantized
                or (kind == "prim::ListConstruct" and any(v.unique() in quantized for v in node.inputs()))
            )
            and kind in _PASS_THROUGH
        ):
            for out in node.outputs():
                quantized.add(out.unique())
    torch._C._jit_pass_dce(graph)
    left = sorted({n.kind() for n in _walk(graph) if n.kind().startswith("quantized::")})
    if left:  # pragma: no cover - every quantized:: node is rewritten above or raised on
        raise RuntimeError(f"{who}: quantized:: ops left in the graph: {left}")


def _finish(model: torch.jit.ScriptModule, who: str):
    torch_attrs = [
        n.s("name")
        for n in _walk(model.graph)
        if n.kind() == "prim::GetAttr" and n.output().type().str().startswith("__torch__.torch.classes.quantized.")
    ]
    _rewrite(model, who)
    # freeze (torch.jit.freeze's core: torch's converted model is frozen already and has no
    # `training` flag left): folds our packed weights into the graph, drops torch's objects
    frozen = torch.jit._recursive.wrap_cpp_module(torch._C._freeze_module(model._c))
    left = [name for name in torch_attrs if frozen._c.hasattr(name)]
    if left:  # pragma: no cover - freeze keeps no attribute the graph does not use
        raise RuntimeError(f"{who}: torch's packed weights remain as attributes: {left}")
    return frozen


def _check_scripted(model: torch.nn.Module, who: str):
    if not isinstance(model, torch.jit.ScriptModule):
        raise TypeError(
            f"{who}: expected a scripted or traced model (torch.jit.script / trace), got {type(model).__name__}"
        )


def quantize_jit(
    model: torch.jit.ScriptModule,
    qconfig_dict: Dict[str, Any],
    run_fn: Callable[..., Any],
    run_args: Sequence[Any],
    inplace: bool = False,
    debug: bool = False,
) -> torch.jit.ScriptModule:
    """Post-training static quantization of a scripted (or traced) float model in graph mode, as
    torch.ao.quantization.quantize_jit: observers from ``qconfig_dict`` ({"": qconfig} or
    {submodule name: qconfig}; qplugin's qconfigs or torch's), ``run_fn(model, *run_args)``
    calibrates, and the result is a frozen ScriptModule calling qplugin:: kernels only.
    ``debug=True`` is not supported (torch's debug graph keeps float reference patterns)."""
    who = "torch_qplugin.quantization.quantize_jit"
    _check_scripted(model, who)
    if debug:
        raise ValueError(f"{who}: debug=True is not supported (torch's debug graph runs no quantized op)")
    q = C.torch_quantize_jit(model, _torch_qconfig_dict(qconfig_dict, who), run_fn, run_args, inplace, who)
    return _finish(q, who)


def quantize_dynamic_jit(
    model: torch.jit.ScriptModule, qconfig_dict: Dict[str, Any], inplace: bool = False, debug: bool = False
) -> torch.jit.ScriptModule:
    """Dynamic quantization of a scripted model's Linear layers in graph mode, as
    torch.ao.quantization.quantize_dynamic_jit (qint8 weights with ``default_dynamic_qconfig``,
    float16 weights with ``float16_dynamic_qconfig``); torch's passes leave LSTM / GRU float, and
    so does this."""
    who = "torch_qplugin.quantization.quantize_dynamic_jit"
    _check_scripted(model, who)
    if debug:
        raise ValueError(f"{who}: debug=True is not supported (torch's debug graph runs no quantized op)")
    q = C.torch_quantize_dynamic_jit(model, _torch_qconfig_dict(qconfig_dict, who), inplace, who)
    return _finish(q, who)


# ---- qconfigs: torch's passes script the observers; qplugin's are translated to torch's classes -----
_OBSERVER_ARGS = ("dtype", "qscheme", "reduce_range", "ch_axis", "averaging_constant", "is_dynamic")


def _torch_factory(factory: Callable[[], torch.nn.Module], who: str):
    with C.quiet_torch_graph_mode():  # (torch's own observers warn about reduce_range)
        obs = factory()
    if C.is_torch_observer(obs):
        return factory
    name = type(obs).__name__
    kwargs = {k: getattr(obs, k) for k in _OBSERVER_ARGS if hasattr(obs, k)}
    if "dtype" in kwargs:  # torch's graph-mode passes insert quantize ops of the quantized dtype
        kwargs["dtype"] = quantized_dtype(kwargs["dtype"], who)
    if getattr(obs, "has_customized_qrange", False):
        kwargs.update(quant_min=obs.quant_min, quant_max=obs.quant_max)
    if isinstance(getattr(obs, "eps", None), torch.Tensor):
        kwargs["eps"] = float(obs.eps)
    if name == "PlaceholderObserver":
        kwargs = {k: kwargs[k] for k in ("dtype", "is_dynamic") if k in kwargs}
    return C.torch_observer_factory(name, kwargs, who)


def _torch_qconfig_dict(qconfig_dict: Dict[str, Any], who: str):
    if not isinstance(qconfig_dict, dict):
        raise TypeError(f"{who}: qconfig_dict should be a dict {{'': qconfig, ...}}, got {type(qconfig_dict).__name__}")
    out = {}
    for key, qc in qconfig_dict.items():
        if qc is None:
            out[key] = None
            continue
        out[key] = C.TorchQConfig(activation=_torch_factory(qc.activation, who), weight=_torch_factory(qc.weight, who))
    return out
