"""The GPU bundle's pycuda wheel, built on the connected machine so the site builds nothing.

pycuda has no binary wheels on PyPI; its sdist compiles against three things, found or made
here explicitly rather than left to pycuda's guesses (its default CUDA_ROOT is nvcc's parent
folder, which is /usr/local where nvcc is a wrapper script):

- `cuda.h`: from the CUDA toolkit (CUDA_HOME, CUDA_PATH, nvcc's real folder, /usr/local/cuda).
- `curand.h` and `libcurand.so.10`: from the `nvidia-curand` wheel that torch already brought
  into the bundle, so the headers match the library the site will have. A toolkit made of
  NVIDIA's PyPI wheels (like this machine's) has no curand.h at all.
- `libcuda.so` to link against: the toolkit's stub (lib64/stubs) when there is one, else a
  stub made here from cuda.h's declarations (the same idea as NVIDIA's: symbols and the soname
  libcuda.so.1, no code). It is used only at link time and never enters the bundle; the site's
  NVIDIA driver provides the real libcuda.so.1.

The extension gets the run path `$ORIGIN/../nvidia/cu13/lib`, where pip puts the nvidia-curand
wheel, so `import pycuda.driver` needs no LD_LIBRARY_PATH. check_wheel proves both.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sysconfig
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

PYCUDA = "pycuda==2026.1"
WHEEL_LIBS = "nvidia/cu13"  # where the CUDA 13 nvidia-* wheels put include/ and lib/
RUN_PATH = f"$ORIGIN/../{WHEEL_LIBS}/lib"
# cuda.h declares every driver function as `CUresult [CUDAAPI] name(...)`; CUDAAPI is empty on
# Linux once preprocessed.
DECLARATION = re.compile(r"^\s*(?:extern\s+)?CUresult\s+(cu\w+)\s*\(", re.MULTILINE)

Pip = Callable[..., None]


class Missing(SystemExit):
    """A build prerequisite is absent: the message (exit status 1) says which and how to get
    it."""

    def __init__(self, what: str, how: str) -> None:
        """'what' is missing; 'how' to get it."""
        super().__init__(f"bundle-gpu: {what}\n  {how}")


def _toolkit_candidates() -> list[Path]:
    """Folders that may be the CUDA toolkit, most explicit first."""
    found = [Path(os.environ[v]) for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    nvcc = shutil.which("nvcc")
    if nvcc:
        found.append(Path(nvcc).resolve().parent.parent)
    return [*found, Path("/usr/local/cuda")]


def toolkit() -> Path:
    """The CUDA toolkit's root folder: the first candidate holding include/cuda.h."""
    for root in _toolkit_candidates():
        if (root / "include" / "cuda.h").is_file():
            return root.resolve()
    tried = ", ".join(str(p) for p in _toolkit_candidates())
    raise Missing(f"no CUDA toolkit with include/cuda.h (looked in {tried})",
                  "install the CUDA toolkit (or the PyPI wheels nvidia-cuda-runtime and "
                  "nvidia-cuda-nvcc) and set CUDA_HOME to its folder")


def require_build_tools() -> Path:
    """Everything pycuda's build needs from this machine, checked before any download; the
    toolkit's root."""
    if shutil.which("g++") is None:
        raise Missing("no C++ compiler (g++)", "apt-get install g++")
    include = Path(sysconfig.get_paths()["include"])
    if not (include / "Python.h").is_file():
        version = sysconfig.get_python_version()
        raise Missing(f"no Python headers ({include}/Python.h)",
                      f"apt-get install python{version}-dev")
    if shutil.which("readelf") is None:
        raise Missing("no readelf (used to check the built extension)", "apt-get install binutils")
    return toolkit()


def curand_from_wheels(wheels: Path, into: Path) -> tuple[Path, Path, str]:
    """include/ and lib/ (with the unversioned libcurand.so the linker wants) unpacked from the
    bundle's nvidia-curand wheel; and that wheel's file name."""
    found = sorted(wheels.glob("nvidia_curand-*.whl"))
    if not found:
        raise Missing(f"no nvidia-curand wheel in {wheels} (torch's CUDA build brings it)",
                      "check that the bundle's torch is the CUDA build (torch==2.13.0 from PyPI)")
    with zipfile.ZipFile(found[-1]) as wheel:
        wheel.extractall(into, [n for n in wheel.namelist() if n.startswith(WHEEL_LIBS + "/")])
    lib = into / WHEEL_LIBS / "lib"
    (lib / "libcurand.so").symlink_to("libcurand.so.10")
    return into / WHEEL_LIBS / "include", lib, found[-1].name


def _stub_source(include: Path) -> str:
    """C source defining every function cuda.h declares, each returning CUDA_ERROR_UNKNOWN."""
    expanded = subprocess.run(["gcc", "-E", "-P", f"-I{include}", "-x", "c", "-"],
                              input="#include <cuda.h>\n", capture_output=True, text=True,
                              check=True).stdout
    names = sorted(set(DECLARATION.findall(expanded)))
    if len(names) < 100:
        raise Missing(f"only {len(names)} functions found in {include}/cuda.h",
                      "is the toolkit's cuda.h complete?")
    return "".join(f"int {name}(void) {{ return 999; }}\n" for name in names)


def libcuda_for_linking(root: Path, into: Path) -> tuple[Path, str]:
    """A folder holding a libcuda.so to link against, and where it came from."""
    for stubs in (root / "lib64" / "stubs", root / "lib" / "stubs"):
        if (stubs / "libcuda.so").is_file():
            return stubs, f"the toolkit's stub ({stubs})"
    into.mkdir(parents=True)
    (into / "libcuda.c").write_text(_stub_source(root / "include"))
    subprocess.run(["gcc", "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o",
                    str(into / "libcuda.so"), str(into / "libcuda.c")], check=True)
    return into, "a link-time stub made from cuda.h (not shipped)"


def siteconf(root: Path, curand_include: Path, curand_lib: Path, libcuda: Path) -> str:
    """pycuda's siteconf.py: every folder named, curand on, the run path to nvidia-curand."""
    settings = {
        "CUDA_ROOT": str(root),
        "CUDA_INC_DIR": [str(root / "include"), str(curand_include)],
        "CUDADRV_LIB_DIR": [str(libcuda)], "CUDADRV_LIBNAME": ["cuda"],
        "CUDART_LIB_DIR": [str(root / "lib64")], "CUDART_LIBNAME": ["cudart"],
        "CURAND_LIB_DIR": [str(curand_lib)], "CURAND_LIBNAME": ["curand"],
        "CUDA_ENABLE_CURAND": True, "CUDA_ENABLE_GL": False,
        "LDFLAGS": [f"-Wl,-rpath,{RUN_PATH}"],
    }
    return "".join(f"{key} = {value!r}\n" for key, value in settings.items())


def _unpacked_sdist(pip: Pip, index: str, into: Path) -> Path:
    """pycuda's source release, downloaded from `index` and unpacked into `into`."""
    pip("download", "-q", "--no-deps", "--no-binary", ":all:", "--no-build-isolation",
        "-d", str(into), "--index-url", index, PYCUDA)
    archive = next(into.glob("pycuda-*.tar.gz"))
    with tarfile.open(archive) as sdist:
        sdist.extractall(into, filter="data")
    return next(p for p in into.iterdir() if p.is_dir() and p.name.startswith("pycuda-"))


def _dynamic_section(library: bytes, scratch: Path) -> str:
    """readelf's view of a shared library's dynamic section."""
    path = scratch / "extension.so"
    path.write_bytes(library)
    return subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True,
                          check=True).stdout


def check_wheel(wheel: Path, scratch: Path) -> None:
    """Refuse a pycuda wheel whose extension would not find libcurand or the driver's libcuda."""
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if re.match(r"pycuda/_driver\..*\.so$", n))
        dynamic = _dynamic_section(archive.read(name), scratch)
    for needed in ("[libcuda.so.1]", "[libcurand.so.10]", f"[{RUN_PATH}]"):
        if needed not in dynamic:
            raise SystemExit(f"bundle-gpu: {wheel.name}'s {name} lacks {needed}:\n{dynamic}")


def build(pip: Pip, wheels: Path, index: str, scratch: Path) -> str:
    """Build pycuda's wheel into `wheels` (which already holds torch's nvidia-curand); what it
    was built against, for the manifest."""
    root = require_build_tools()
    include, lib, curand = curand_from_wheels(wheels, scratch / "curand")
    libcuda, libcuda_origin = libcuda_for_linking(root, scratch / "libcuda")
    source = _unpacked_sdist(pip, index, scratch / "sdist")
    (source / "siteconf.py").write_text(siteconf(root, include, lib, libcuda))
    print(f"building {PYCUDA}: cuda.h from {root}, curand from {curand}, libcuda from "
          f"{libcuda_origin}", flush=True)
    pip("wheel", "-q", "--no-deps", "--index-url", index, "-w", str(wheels), str(source))
    check_wheel(next(wheels.glob("pycuda-*.whl")), scratch)
    return f"{PYCUDA} (cuda.h {root.name}, {curand}, run path {RUN_PATH})"
