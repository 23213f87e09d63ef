"""The loader: a wrong torch version or a missing library is an ImportError that says why."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import torch_qplugin

PKG = Path(torch_qplugin.__file__).resolve().parent


def _copy_pkg(tmp_path):
    dst = tmp_path / "torch_qplugin"
    shutil.copytree(PKG, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def _import_in(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    # Drop an editable install's finder so only the copy under tmp_path is importable.
    code = (
        "import sys; sys.meta_path = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]; "
        "import torch_qplugin"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)


def test_wrong_torch_version_is_import_error(tmp_path):
    dst = _copy_pkg(tmp_path)
    info = dst / "_build_info.py"
    info.write_text(
        info.read_text().replace(
            f'TORCH_VERSION = "{torch_qplugin._BUILT_TORCH_VERSION}"', 'TORCH_VERSION = "1.13.1+cpu"'
        )
    )
    r = _import_in(tmp_path)
    assert r.returncode != 0
    assert "ImportError: torch_qplugin was built against torch 1.13.1+cpu but torch " + torch.__version__ in r.stderr
    assert "pip install --no-build-isolation" in r.stderr and "torch==1.13.1" in r.stderr
    assert "undefined symbol" not in r.stderr and "failed to load" not in r.stderr  # refused before loading


def test_same_release_other_build_loads(tmp_path):
    """2.14.1+cpu and 2.14.1+cu130 are one release: the library links only libc10 / libtorch_cpu."""
    dst = _copy_pkg(tmp_path)
    info = dst / "_build_info.py"
    release = torch.__version__.split("+")[0]
    other = f"{release}+cu130" if "+cpu" in torch.__version__ else f"{release}+cpu"
    info.write_text(
        info.read_text().replace(
            f'TORCH_VERSION = "{torch_qplugin._BUILT_TORCH_VERSION}"', f'TORCH_VERSION = "{other}"'
        )
    )
    r = _import_in(tmp_path)
    assert r.returncode == 0, r.stderr


def test_missing_library_is_import_error(tmp_path):
    dst = _copy_pkg(tmp_path)
    shutil.rmtree(dst / "lib")
    r = _import_in(tmp_path)
    assert r.returncode != 0 and "ImportError: torch_qplugin: op library not found at" in r.stderr
    assert "libtorch_qplugin_plain.so" in r.stderr


def test_missing_plain_library_is_import_error(tmp_path):
    """The quantized library alone is no package: the plain one is what the loader needs first."""
    dst = _copy_pkg(tmp_path)
    (dst / "lib" / "libtorch_qplugin_plain.so").unlink()
    r = _import_in(tmp_path)
    assert r.returncode != 0 and "ImportError: torch_qplugin: op library not found at" in r.stderr


@pytest.mark.parametrize("name", ["libtorch_qplugin_plain.so", "libtorch_qplugin.so"])
def test_broken_library_is_import_error(tmp_path, name):
    dst = _copy_pkg(tmp_path)
    (dst / "lib" / name).write_bytes(b"not an ELF file")
    r = _import_in(tmp_path)
    assert r.returncode != 0 and "ImportError: torch_qplugin: failed to load" in r.stderr
    assert name in r.stderr


def test_missing_build_info_is_import_error(tmp_path):
    dst = _copy_pkg(tmp_path)
    (dst / "_build_info.py").unlink()
    r = _import_in(tmp_path)
    assert r.returncode != 0 and "ImportError: torch_qplugin: build info is missing" in r.stderr


def test_python_m_prints_build_info():
    r = subprocess.run(
        [sys.executable, "-m", "torch_qplugin"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(PKG.parent)),
    )
    assert r.returncode == 0, r.stderr
    assert f"built against torch {torch.__version__}" in r.stdout
    assert "compiled ISA paths  scalar, avx2, avxvnni, avx512" in r.stdout
    assert f"best CPU path       {torch_qplugin.cpu_isa()}" in r.stdout
    assert "quantize / dequantize / int_repr" in r.stdout


@pytest.mark.parametrize("path", torch_qplugin._isa.ISAS)
def test_qplugin_isa_env_caps_the_path(path):
    """QPLUGIN_ISA caps the path: the named one where the CPU runs it (avxvnni on a CPU with avx512
    too), else the best path the CPU runs below it, said on stderr."""
    r = subprocess.run(
        [sys.executable, "-c", "import torch_qplugin; print(torch_qplugin.active_isa())"],
        capture_output=True,
        text=True,
        env=dict(os.environ, QPLUGIN_ISA=path, PYTHONPATH=str(PKG.parent)),
    )
    assert r.returncode == 0, r.stderr
    order = torch_qplugin._isa.ISAS
    supported = torch_qplugin._isa.supported_isas()
    if path in supported:
        assert r.stdout.strip() == path and "QPLUGIN_ISA" not in r.stderr
    else:
        below = [p for p in supported if order.index(p) < order.index(path)][-1]
        assert r.stdout.strip() == below
        assert f"QPLUGIN_ISA={path} is not supported by this CPU; using {below}" in r.stderr


def test_kernel_isa_context_restores():
    before = torch_qplugin.active_isa()
    with torch_qplugin.kernel_isa("scalar"):
        assert torch_qplugin.active_isa() == "scalar"
    assert torch_qplugin.active_isa() == before


def _elf_needed(path):
    """DT_NEEDED entries of a 64-bit little-endian ELF shared library (no readelf needed)."""
    import struct

    data = Path(path).read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "expected a 64-bit LE ELF file"
    (e_shoff,) = struct.unpack_from("<Q", data, 0x28)
    e_shentsize, e_shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, e_shoff + i * e_shentsize) for i in range(e_shnum)]
    dynamic = next(s for s in sections if s[1] == 6)  # SHT_DYNAMIC
    strtab = sections[dynamic[6]]  # sh_link: its string table
    needed = []
    for off in range(dynamic[4], dynamic[4] + dynamic[5], 16):
        tag, val = struct.unpack_from("<qQ", data, off)
        if tag == 0:
            break
        if tag == 1:  # DT_NEEDED
            start = strtab[4] + val
            needed.append(data[start : data.index(b"\0", start)].decode())
    return needed


@pytest.mark.parametrize("which", ["plain", "quantized"])
def test_library_links_no_cuda_library(which):
    """CPU op libraries, built against a CPU or a CUDA wheel of torch alike: torch's CPU libraries
    only, never libtorch_cuda / libc10_cuda / libcudart (nor libtorch_python)."""
    if which == "quantized" and not torch_qplugin._ops.has_quantized():
        pytest.skip("plain-only build")
    path = torch_qplugin._ops.plain_library_path() if which == "plain" else torch_qplugin._ops.library_path()
    needed = _elf_needed(path)
    assert "libtorch_cpu.so" in needed and "libc10.so" in needed, needed
    bad = [n for n in needed if "cuda" in n or "nvrtc" in n or "torch_python" in n or n.startswith("libcu")]
    assert not bad, f"{Path(path).name} links {bad} (all: {needed})"
    # the quantized tier is no part of the plain library; the quantized library loads the plain one
    if which == "plain":
        assert not any(n.startswith("libtorch_qplugin") for n in needed), needed
    else:
        assert "libtorch_qplugin_plain.so" in needed, needed


def test_quantized_library_alone_pulls_the_plain_one(tmp_path):
    """What a C++ deployment does: dlopen libtorch_qplugin.so alone (no Python package, no
    LD_LIBRARY_PATH). The plain library comes with it from beside it (DT_NEEDED, RUNPATH $ORIGIN),
    and the two tiers' ops and classes are registered."""
    if not torch_qplugin._ops.has_quantized():
        pytest.skip("plain-only build")
    code = (
        "import ctypes, sys, torch; ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL); "
        "q = torch.ops.qplugin; print(q.plain_add.default._schema.name, q.linear.default._schema.name, "
        "torch.classes.qplugin.LinearPackedParamsBase is not None)"
    )
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    r = subprocess.run(
        [sys.executable, "-c", code, torch_qplugin._ops.library_path()],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[:3] == ["qplugin::plain_add", "qplugin::linear", "True"], r.stdout
