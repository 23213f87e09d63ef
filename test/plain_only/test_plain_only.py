"""The plain tier alone: torch_qplugin with only libtorch_qplugin_plain.so in its lib/ (a
QPLUGIN_PLAIN_ONLY=ON build, docs/design/plain.md "Two libraries").

Each check runs in a fresh Python process that imports such a package:
  * QPLUGIN_PLAIN_ONLY_PKG set (scripts/test.sh): a directory holding a torch_qplugin package whose
    lib/ a plain-only CMake build filled;
  * otherwise: a copy of the package under test with libtorch_qplugin.so left out.
There, the plain tier works (the plain ops, Quantizer / QTensor, torch_qplugin.nn.plain, the
workflow's convert(plain=True)) and gives the bytes the full package gives; the quantized tier's
Python fails with an ImportError naming the missing library.
"""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import torch_qplugin

PKG = Path(torch_qplugin.__file__).resolve().parent
PLAIN_LIB = "libtorch_qplugin_plain.so"
QUANTIZED_LIB = "libtorch_qplugin.so"


@pytest.fixture(scope="module")
def plain_pkg(tmp_path_factory):
    """A directory to put on PYTHONPATH whose torch_qplugin has the plain library only."""
    given = os.environ.get("QPLUGIN_PLAIN_ONLY_PKG")
    if given:
        root = Path(given)
    else:
        root = tmp_path_factory.mktemp("plain_only")
        shutil.copytree(PKG, root / "torch_qplugin", ignore=shutil.ignore_patterns("__pycache__", QUANTIZED_LIB))
    libs = sorted(p.name for p in (root / "torch_qplugin" / "lib").glob("*.so"))
    assert libs == [PLAIN_LIB], libs
    return root


def _run(root, code):
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONSAFEPATH="1")
    env.pop("QPLUGIN_USE_FOR_ATEN", None)
    # drop an editable install's finder so only the package under root is importable
    prelude = "import sys; sys.meta_path = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]\n"
    r = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True, env=env, cwd=root
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


# A plain model and a QTensor computation whose output bytes must not depend on which libraries
# are installed: the plain tier's kernels are the same code either way.
_WORKLOAD = """
import hashlib
import torch
import torch_qplugin
import torch_qplugin.quantization as tq

torch.manual_seed(0)
h = hashlib.sha256()
q = torch_qplugin.PerTensorAffine(0.05, 128, torch.uint8)
qx = q.quantize(torch.randn(2, 3, 8, 8))
y = torch.nn.functional.max_pool2d(qx, 2)
h.update(y.int_repr().numpy().tobytes())
model = torch.nn.Sequential(
    tq.QuantStub(), torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(288, 10),
    tq.DeQuantStub(),
).eval()
model.qconfig = tq.default_qconfig
prepared = tq.prepare(tq.fuse_modules(model, [["1", "2"]]))
prepared(torch.randn(8, 3, 8, 8))
int8 = tq.convert(prepared, plain=True)
mods = {type(m).__module__ for m in int8.modules()}
assert not any("nn.quantized" in m or "nn.intrinsic" in m for m in mods), mods
out = int8(torch.randn(4, 3, 8, 8))
h.update(out.numpy().tobytes())
a = torch.randint(0, 256, (5, 7), dtype=torch.uint8)
b = torch.randint(0, 256, (5, 7), dtype=torch.uint8)
h.update(torch.ops.qplugin.plain_add(a, 0.1, 128, b, 0.2, 120, 0.25, 127).numpy().tobytes())
print("digest", h.hexdigest())
"""


def _digest(stdout):
    return [line.split()[1] for line in stdout.splitlines() if line.startswith("digest ")][-1]


def test_plain_only_package_loads_the_plain_tier(plain_pkg):
    out = _run(
        plain_pkg,
        """
        import torch, torch_qplugin
        from torch_qplugin import _ops
        assert not _ops.has_quantized()
        assert _ops.library_paths() == [_ops.plain_library_path()], _ops.library_paths()
        ops = {n.split("::")[1].split(".")[0] for n in torch._C._dispatch_get_all_op_names() if n.startswith("qplugin::")}
        assert "plain_linear" in ops and "plain_conv2d" in ops and "_active_isa" in ops, sorted(ops)
        quantized = sorted(n for n in ("quantize_per_tensor", "linear", "conv2d", "add", "linear_prepack") if n in ops)
        assert quantized == [], quantized
        try:
            torch.classes.qplugin.LinearPackedParamsBase
        except RuntimeError:
            pass
        else:
            raise AssertionError("a packed-params class is registered without the quantized library")
        print("isa", torch_qplugin.active_isa())
        """,
    )
    assert "isa " in out


def _installed_full_package():
    """The package with both libraries to compare against: the one under test when it has them, else
    the one installed in this Python (scripts/test.sh runs this file with the plain-only package on
    PYTHONPATH, its venv holding the full wheel of the running torch); None when there is none."""
    if torch_qplugin._ops.has_quantized():
        return PKG.parent
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    code = "import torch_qplugin, os; from torch_qplugin import _ops; print(_ops.has_quantized(), os.path.dirname(os.path.dirname(torch_qplugin.__file__)))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/")
    if r.returncode != 0 or not r.stdout.startswith("True "):
        return None
    return Path(r.stdout.split(" ", 1)[1].strip())


def test_plain_only_workflow_matches_the_full_package(plain_pkg):
    """Quantizer / QTensor, convert(plain=True) and a plain op: the same bytes with the plain library
    alone (an ATen build, or the stable-ABI build of an older torch) as with both libraries."""
    alone = _digest(_run(plain_pkg, _WORKLOAD))
    full = _installed_full_package()
    if os.environ.get("QPLUGIN_PLAIN_ONLY_PKG"):
        assert full is not None, "scripts/test.sh's venv should hold the full package to compare with"
    if full is not None:
        assert _digest(_run(full, _WORKLOAD)) == alone


def _build_info(root):
    return _run(root, "from torch_qplugin import _build_info as b; print(b.STABLE_ABI, b.TORCH_VERSION)").split()


def test_stable_abi_build_imports_no_torch_cpp_symbol(plain_pkg):
    """A stable-ABI plain library names no ATen / c10 / torch C++ symbol (only the C shim: aoti_torch_*,
    torch_*), so it loads under later torch versions; an ATen build does name them."""
    stable, built = _build_info(plain_pkg)
    lib = plain_pkg / "torch_qplugin" / "lib" / PLAIN_LIB
    nm = shutil.which("nm")
    assert nm, "binutils' nm is needed to read the library's imports"
    undefined = subprocess.run([nm, "-D", "--undefined-only", str(lib)], capture_output=True, text=True, check=True)
    names = [line.split()[-1] for line in undefined.stdout.splitlines() if line.strip()]
    cpp_torch = [n for n in names if n.startswith(("_ZN3c10", "_ZN2at", "_ZN5torch", "_ZNK3c10", "_ZNK2at"))]
    shim = [n for n in names if n.startswith(("aoti_torch_", "torch_"))]
    if stable == "True":
        assert cpp_torch == [], cpp_torch[:10]
        assert "torch_call_dispatcher" in shim and "aoti_torch_empty_strided" in shim, shim
        assert _release(built) <= _release(torch.__version__), (built, torch.__version__)
    else:
        assert cpp_torch, "an ATen build of the plain library should import c10 / ATen symbols"


def _release(version):
    return tuple(int(p) for p in version.split("+")[0].split(".")[:3])


@pytest.mark.parametrize(
    "stmt, what",
    [
        ("import torch_qplugin.nn.quantized", "torch_qplugin.nn.quantized"),
        ("torch_qplugin.nn.quantized.Linear", "torch_qplugin.nn.quantized"),
        ("import torch_qplugin.nn.quantized.dynamic", "torch_qplugin.nn.quantized"),
        ("import torch_qplugin.nn.intrinsic.quantized", "torch_qplugin.nn."),
        ("torch_qplugin.use_for_aten(True)", "torch_qplugin.use_for_aten"),
        (
            "torch_qplugin.ops.quantize_per_tensor(torch.zeros(2), 0.1, 0, torch.uint8)",
            "torch_qplugin.ops.quantize_per_tensor",
        ),
    ],
)
def test_quantized_tier_is_a_clear_import_error(plain_pkg, stmt, what):
    out = _run(
        plain_pkg,
        f"""
        import torch
        import torch_qplugin
        import torch_qplugin.ops
        try:
            {stmt}
        except ImportError as e:
            print("error", e)
        else:
            raise AssertionError("no ImportError")
        """,
    )
    assert what in out and QUANTIZED_LIB in out and "QPLUGIN_PLAIN_ONLY" in out, out
