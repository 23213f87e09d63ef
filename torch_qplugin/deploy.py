"""Deployment of plain models (docs/deploy.md): thin conveniences over torch's own calls, which
work on a plain model directly (QTensor activations included, qtensor.py):

    torch.export.export(model, (x,), dynamic_shapes=({0: torch.export.Dim("batch", min=1, max=1024)},))
    # ^ size-oblivious for an AOTI package that takes batch 1
    torch.compile(model, fullgraph=True)      # batch dim marked dynamic, first call size-oblivious
    torch._inductor.aoti_compile_and_package(ep, package_path=...)   # size-oblivious

What these helpers add, and nothing else:

* ``export``: the ``dynamic_shapes`` spec (dim ``batch_dim`` of every tensor argument one batch
  in [1, max_batch]), ``torch.no_grad()`` and ``batch_oblivious()``: the exported program runs at
  batch 1 either way, but an AOTInductor package compiled from a program exported without it
  takes batch >= 2 only ("dim value is too small ... expected it to be >= 2").
* ``compile``: ``torch._dynamo.mark_dynamic`` on the batch dims and, for the first call (the one
  that compiles), ``batch_oblivious()``: torch specializes a dynamic size that is 1 (its 0/1 rule),
  so without it batch 1 and batch 8 compile apart. Only the batch dims are dynamic
  (``dynamic=True`` duck-sizes a channel dim of 1 with a batch of 1 and recompiles at batch 8).
* ``aoti_package``: ``torch.no_grad()`` (without it AOTInductor compiles a training graph) and
  ``batch_oblivious()`` (inductor's lowering may otherwise assume the batch >= 2, same message).
* ``exact=True`` (both): ``exact_options()``, under which inductor runs every op of the graph with the
  kernel eager runs (qplugin's and ATen's), so a model with float layers between its int8 ones (the
  dynamic Transformer's layer norm, softmax, GELU) gives eager's bytes; inductor's own code for
  those differs from ATen's in the last bit (docs/deploy.md "Float layers"). ``exact=False``:
  inductor's default mode.
"""

import os
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import torch
from torch._inductor.custom_graph_pass import CustomGraphPass

from ._export import _tensor_args, batch_oblivious, export

__all__ = ["export", "compile", "aoti_package", "aoti_load", "export_onnx", "batch_oblivious", "exact_options"]


def _permute_of(node: torch.fx.Node) -> Optional[List[int]]:
    """The permutation an ``aten.transpose.int`` / ``aten.t`` node applies, or None."""
    val = node.args[0].meta.get("val") if isinstance(node.args[0], torch.fx.Node) else None
    if val is None:
        return None
    perm = list(range(val.dim()))
    if node.target == torch.ops.aten.t.default:
        if len(perm) == 2:
            perm.reverse()
        return perm
    d0, d1 = (d % max(val.dim(), 1) for d in node.args[1:3])
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return perm


class _LowerShapesAndViews(CustomGraphPass):
    """Leaves to inductor's own lowering, under ``fallback_by_default``, the graph's ops that compute
    no values, so that each is not an ATen call of its own (through AOTInductor's proxy executor
    where it has no C shim):

    * the shape arithmetic (``aten.sym_size`` / ``sym_stride`` / ``sym_numel`` /
      ``sym_storage_offset``: as ATen calls they would return a SymInt from an extern kernel, which
      AOTInductor's C++ wrapper cannot do, "Unsupported return type SymIntType");
    * the views inductor lowers itself (``select``, ``view``, ``permute``, ``slice`` ...: strides
      reinterpreted in the wrapper, no kernel), ``transpose`` / ``t`` rewritten as the ``permute``
      they are.

    Every op that reads or writes values stays eager's kernel."""

    def __call__(self, graph: torch.fx.Graph) -> None:
        from torch._inductor.decomposition import select_decomp_table
        from torch._inductor.lowering import lowerings

        aten = torch.ops.aten
        decomps = select_decomp_table()
        for node in graph.nodes:
            if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
                continue
            if node.target in (aten.transpose.int, aten.t.default):
                perm = _permute_of(node)
                if perm is None:
                    continue
                node.target, node.args, node.kwargs = aten.permute.default, (node.args[0], perm), {}
            op = node.target
            name = op._schema.name
            if name.startswith("aten::sym_") or (op.is_view and op in lowerings and op not in decomps):
                node.meta.setdefault("custom", {})["compile_with_inductor"] = {}

    def uuid(self) -> str:
        return "torch_qplugin.deploy.lower_shapes_and_views.v1"


def exact_options(cpp_wrapper: bool = False) -> Dict[str, Any]:
    """Inductor options under which every op runs eager's kernel: torch's "lite" mode (each op an
    ATen / qplugin call, no decompositions, no fusion, no reordering) plus ``_LowerShapesAndViews``, which
    needs the post-grad pass hook (so ``use_post_grad_passes``, with the pattern matcher off: no
    rewrite of the graph's ops) and makes the same options work in AOTInductor. ``cpp_wrapper``:
    the calls are made from C++, not from a Python wrapper, whose per-op cost is what makes lite
    mode slower than eager (AOTInductor's wrapper is C++ anyway)."""
    from torch._inductor import list_mode_options

    opts = dict(list_mode_options("lite"))
    opts.update(use_post_grad_passes=True, pattern_matcher=False, post_grad_custom_post_pass=_LowerShapesAndViews())
    if cpp_wrapper:
        opts["cpp_wrapper"] = True
    return opts


def compile(
    model: Callable[..., Any],
    *,
    batch_dim: int = 0,
    exact: bool = True,
    frozen: bool = False,  # noqa: A001 - torch.compile's name
    **compile_kwargs: Any,
) -> Callable[..., Any]:
    """torch.compile(model, fullgraph=True, **compile_kwargs) as a callable run under no_grad whose
    first call (the one that compiles) marks dim ``batch_dim`` of its tensor arguments dynamic and
    compiles size-oblivious: one graph for every batch size. ``exact``: with ``exact_options()``
    and the C++ wrapper (eager's bytes for every model); False: inductor's default mode.
    ``frozen``: the caller promises not to change the model's modules after this call (attributes,
    parameters or buffers replaced; weights loaded in place are fine): dynamo then skips its guards
    on them (``torch.compiler.skip_guard_on_all_nn_modules_unsafe``), whose evaluation costs each
    call ~0.2-0.5 ms for a model with a few hundred weight tensors (docs/deploy.md)."""
    if frozen:
        compile_kwargs["options"] = dict(
            compile_kwargs.get("options") or {}, guard_filter_fn=torch.compiler.skip_guard_on_all_nn_modules_unsafe
        )
    if exact:
        if "mode" in compile_kwargs:
            raise ValueError(
                "torch_qplugin.deploy.compile: mode= needs exact=False (exact sets the options itself), "
                f"got mode={compile_kwargs['mode']!r}"
            )
        options = exact_options(cpp_wrapper=True)
        options.update(compile_kwargs.get("options") or {})
        compile_kwargs["options"] = options
    compiled = torch.compile(model, fullgraph=True, **compile_kwargs)
    first = [True]

    def run(*args: Any) -> Any:
        if not first[0] and not torch.is_grad_enabled():
            return compiled(*args)
        with torch.no_grad():
            if not first[0]:
                return compiled(*args)
            for a in _tensor_args(args):
                torch._dynamo.mark_dynamic(a, batch_dim)
            with batch_oblivious():
                out = compiled(*args)
            first[0] = False
            return out

    run.__wrapped__ = compiled
    return run


def aoti_package(
    ep: "torch.export.ExportedProgram",
    package_path: Union[str, os.PathLike],
    *,
    exact: bool = True,
    **inductor_configs: Any,
) -> str:
    """torch._inductor.aoti_compile_and_package(ep, package_path=package_path) under no_grad and
    size-oblivious (batch 1 in the package's range; ``ep`` from ``export``, or exported
    size-oblivious too); ``exact``: with ``exact_options()`` (eager's bytes for every model), under
    ``inductor_configs``. Load it with
    torch._inductor.aoti_load_package after ``import torch_qplugin`` (or, without Python, with
    libtorch_qplugin.so loaded: the package calls the qplugin ops by name)."""
    if exact:
        inductor_configs = {**exact_options(), **inductor_configs}
    with torch.no_grad(), batch_oblivious():
        return torch._inductor.aoti_compile_and_package(
            ep, package_path=str(package_path), inductor_configs=inductor_configs or None
        )


class _AOTIRunner:
    """A loaded AOTInductor package as a callable that skips torch's per-call pytree work where the
    package takes positional tensors only: torch's wrapper (``aoti_load_package``'s model) parses
    the input / output specs from JSON and flattens the arguments with Python's pytree on every
    call, ~10 us, a share of a small model's batch-1 time. Same inputs, same outputs; any other
    call goes through torch's wrapper."""

    def __init__(self, model: Any) -> None:
        from torch.utils import _pytree as pytree

        self.model = model
        self._run = model.loader.boxed_run
        in_spec, out_spec = (pytree.treespec_loads(s) for s in model.loader.get_call_spec())
        n = in_spec.num_leaves
        positional = pytree.tree_flatten((tuple(range(n)), {}))[1]
        self._n_positional = n if in_spec == positional else -1
        self._out_spec, self._unflatten = out_spec, pytree.tree_unflatten

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs or len(args) != self._n_positional or not all(type(a) is torch.Tensor for a in args):
            return self.model(*args, **kwargs)
        return self._unflatten(self._run(list(args)), self._out_spec)

    def __getattr__(self, name: str) -> Any:  # get_metadata, load_constants, ... of torch's model
        return getattr(self.__dict__["model"], name)


def aoti_load(package_path: Union[str, os.PathLike]) -> Callable[..., Any]:
    """torch._inductor.aoti_load_package(package_path) as a callable that parses the package's call
    specs once instead of on every call (torch_qplugin must be imported first, as for
    aoti_load_package). Falls back to torch's model where its loader does not offer the calls this
    needs."""
    model = torch._inductor.aoti_load_package(str(package_path))
    loader = getattr(model, "loader", None)
    if not all(hasattr(loader, a) for a in ("get_call_spec", "boxed_run")):
        return model
    return _AOTIRunner(model)


def export_onnx(
    model: torch.nn.Module,
    args: Tuple[Any, ...],
    f: Union[str, os.PathLike],
    *,
    dynamic_batch: bool = True,
    opset: Optional[int] = None,
    exact: bool = False,
) -> "torch.onnx.ONNXProgram":
    """Writes ``f`` (a path): a plain model, or one converted by torch_qplugin or
    torch.ao.quantization (through to_plain), as standard int8 ONNX (torch_qplugin/_onnx.py,
    docs/deploy.md "ONNX"). The QDQ form (default) runs on ONNX Runtime's fused int8 kernels,
    each op within one output quantization step of eager (a deep model a few steps); ``exact=True``
    writes integer GEMMs / lookups with our float epilogue, bit-identical to eager for the ops
    that have such a form (conv, linear, add, mul, cat, pooling, element-wise activations), slower
    in ONNX Runtime. Needs the onnx and onnxscript packages. ``dynamic_batch``: dim 0 of every
    tensor input dynamic; ``opset``: the ai.onnx opset (default: torch.onnx's)."""
    from . import _onnx

    return _onnx.export_onnx(model, args, f, dynamic_batch=dynamic_batch, opset=opset, exact=exact)
