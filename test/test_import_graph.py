"""The import graph of torch_qplugin: no cycle, and the plain tier never imports the quantized one.

Read from the sources (ast): every ``import`` / ``from ... import`` in every module of the package,
at module level or inside a function (a function-local import that closes a cycle is a cycle
too: it only moves the failure from import time to call time). An edge goes from a module to each
package module it names and to the packages it executes on the way (``import a.b.c`` runs a.b's
__init__), except the importer's own ancestors, which are always initialised first. Imports by a
string (importlib.import_module in the packages' lazy ``__getattr__``) are not edges: they run on
first attribute use, never while a module is being imported.

A second check imports the plain tier and the workflow in fresh processes and lists what got
imported.
"""

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "torch_qplugin"

# the quantized-dtype tier: what removing torch's quantized dtypes deletes
QUANTIZED_TIER = ("torch_qplugin.nn.quantized", "torch_qplugin.nn.intrinsic")
# the plain tier: what must keep working without them
PLAIN_TIER = ("torch_qplugin.nn.plain", "torch_qplugin.quantizer", "torch_qplugin.qtensor")


def _module_name(path):
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}
PACKAGES = {name for name, p in MODULES.items() if p.name == "__init__.py"}


def _ancestors(name):
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def _with_parents(name):
    """``name`` and the packages importing it executes."""
    return _ancestors(name) | {name}


def _imports(name, source):
    """The torch_qplugin modules named by the imports in ``source`` (the module ``name``)."""
    package = name if name in PACKAGES else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                out |= _with_parents(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            out |= _with_parents(target)
            for alias in node.names:
                out.add(f"{target}.{alias.name}")  # kept below only if it is a module
    return {m for m in out if m in MODULES}


def import_graph():
    """{module: set of modules it imports}, the importer's ancestors left out."""
    return {name: _imports(name, path.read_text()) - _ancestors(name) - {name} for name, path in MODULES.items()}


def _cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _reachable(graph, start):
    seen, todo = set(), [start]
    while todo:
        v = todo.pop()
        if v not in seen:
            seen.add(v)
            todo.extend(graph[v])
    return seen


def _in(name, prefixes):
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_the_package_has_no_import_cycle():
    cycles = _cycles(import_graph())
    assert not cycles, "import cycles in torch_qplugin:\n" + "\n".join(" <-> ".join(c) for c in cycles)


@pytest.mark.parametrize("start", sorted(m for m in MODULES if _in(m, PLAIN_TIER)))
def test_the_plain_tier_reaches_no_quantized_tier_module(start):
    graph = import_graph()
    bad = sorted(m for m in _reachable(graph, start) if _in(m, QUANTIZED_TIER))
    assert not bad, f"{start} imports (directly or through others) the quantized tier: {bad}"


def test_the_graph_is_read_from_the_real_sources():
    """The edges the checks rely on are found; a planted cycle and a planted upward import are caught."""
    graph = import_graph()
    assert "torch_qplugin.nn.plain._base" in graph["torch_qplugin.nn.plain.modules"]
    assert "torch_qplugin.nn.plain._base" in graph["torch_qplugin.nn.quantized.modules.activation"]
    assert "torch_qplugin.quantizer" in graph["torch_qplugin.qtensor"]
    # function-local imports count
    assert "torch_qplugin.quantization._qweights" in graph["torch_qplugin.nn.plain.modules"]
    planted = dict(graph)
    planted["torch_qplugin.quantizer"] = graph["torch_qplugin.quantizer"] | {"torch_qplugin.qtensor"}
    assert ["torch_qplugin.qtensor", "torch_qplugin.quantizer"] in _cycles(planted)
    planted = dict(graph)
    src = "def f():\n    from ..quantized import modules\n"
    planted["torch_qplugin.nn.plain.modules"] = graph["torch_qplugin.nn.plain.modules"] | _imports(
        "torch_qplugin.nn.plain.modules", src
    )
    assert "torch_qplugin.nn.quantized.modules" in _reachable(planted, "torch_qplugin.nn.plain")


_LOADED = textwrap.dedent("""
    import sys
    import importlib
    for name in sys.argv[1:]:
        importlib.import_module(name)
    print("\\n".join(sorted(m for m in sys.modules if m.startswith("torch_qplugin"))))
""")


@pytest.mark.parametrize(
    "names",
    [
        ["torch_qplugin.nn.plain"],
        ["torch_qplugin.quantization", "torch_qplugin.quantization.quantize", "torch_qplugin.quantization.plain"],
        ["torch_qplugin.nn"],
    ],
    ids=["nn.plain", "quantization", "nn"],
)
def test_importing_the_plain_side_loads_no_quantized_tier(names):
    r = subprocess.run([sys.executable, "-c", _LOADED, *names], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    loaded = r.stdout.split()
    assert set(names) <= set(loaded), loaded
    assert not [m for m in loaded if _in(m, QUANTIZED_TIER)], loaded


# modules that once closed an import cycle, and the entry points of each tier
FIRST_IMPORTS = (
    "torch_qplugin.qtensor",
    "torch_qplugin.quantizer",
    "torch_qplugin.nn.plain._base",
    "torch_qplugin.nn.plain.modules",
    "torch_qplugin.quantization.plain",
    "torch_qplugin.quantization._to_plain",
    "torch_qplugin.quantization.mappings",
    "torch_qplugin.quantization.quantize",
    "torch_qplugin.nn.quantized.modules.batchnorm",
    "torch_qplugin.nn.intrinsic.quantized.modules",
    "torch_qplugin.nn.quantized.dynamic.modules",
)


def test_modules_import_first_in_a_fresh_process():
    """Each of FIRST_IMPORTS imports as the first torch_qplugin module of a fresh process (an
    import cycle the static graph missed would fail here with a partially initialised module)."""
    assert set(FIRST_IMPORTS) <= set(MODULES)
    procs = {
        name: subprocess.Popen(
            [sys.executable, "-c", f"import {name}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for name in FIRST_IMPORTS
    }
    bad = []
    for name, proc in procs.items():
        _, err = proc.communicate(timeout=600)
        if proc.returncode:
            bad.append(f"{name}: {err.strip().splitlines()[-1]}")
    assert not bad, "\n".join(bad)
