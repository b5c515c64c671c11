"""The GPU bundle's pycuda build: the toolkit and curand are found where they are said to be,
the link-time libcuda stub is a real shared library with the driver's soname, and a built
extension that would not find libcurand or libcuda on the site is refused (real gcc, readelf)."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from tinybundle import load

build = load("pycuda_build")
needs_gcc = pytest.mark.skipif(not (shutil.which("gcc") and shutil.which("readelf")),
                               reason="needs gcc and readelf")


def _toolkit_or_skip() -> Path:
    """This machine's CUDA toolkit, or skip."""
    try:
        return Path(build.toolkit())
    except SystemExit:
        pytest.skip("no CUDA toolkit with cuda.h here")


def test_cuda_home_is_taken_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "cuda.h").write_text("/* a toolkit */\n")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    assert build.toolkit() == tmp_path.resolve()


def test_no_curand_wheel_says_where_it_should_come_from(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no nvidia-curand wheel.*torch's CUDA build"):
        build.curand_from_wheels(tmp_path, tmp_path / "out")


def test_curand_is_unpacked_with_the_name_the_linker_wants(tmp_path: Path) -> None:
    wheel = tmp_path / "wheels" / "nvidia_curand-10.4.0.35-py3-none-manylinux_2_27_x86_64.whl"
    wheel.parent.mkdir()
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("nvidia/cu13/include/curand.h", "/* curand */\n")
        archive.writestr("nvidia/cu13/lib/libcurand.so.10", b"\x7fELF")
        archive.writestr("nvidia_curand-10.4.0.35.dist-info/METADATA", "Name: nvidia-curand\n")
    include, lib, name = build.curand_from_wheels(wheel.parent, tmp_path / "out")
    assert (include / "curand.h").is_file() and name == wheel.name
    assert (lib / "libcurand.so").resolve() == (lib / "libcurand.so.10").resolve()
    assert not (tmp_path / "out" / "nvidia_curand-10.4.0.35.dist-info").exists()


@needs_gcc
def test_the_libcuda_stub_has_the_drivers_soname_and_functions(tmp_path: Path) -> None:
    root = _toolkit_or_skip()
    folder, origin = build.libcuda_for_linking(root, tmp_path / "stub")
    library = folder / "libcuda.so"
    dynamic = subprocess.run(["readelf", "-d", "--dyn-syms", str(library)], capture_output=True,
                             text=True, check=True).stdout
    assert "[libcuda.so.1]" in dynamic
    for name in ("cuInit", "cuModuleLoadData", "cuLaunchKernel", "cuMemAlloc_v2"):
        assert f" {name}\n" in dynamic, (name, origin)


def test_siteconf_names_every_folder(tmp_path: Path) -> None:
    text = build.siteconf(Path("/cuda"), Path("/c/include"), Path("/c/lib"), Path("/stub"))
    settings: dict[str, object] = {}
    exec(compile(text, "siteconf.py", "exec"), settings)
    assert settings["CUDA_INC_DIR"] == ["/cuda/include", "/c/include"]
    assert settings["CUDADRV_LIB_DIR"] == ["/stub"] and settings["CURAND_LIB_DIR"] == ["/c/lib"]
    assert settings["LDFLAGS"] == ["-Wl,-rpath,$ORIGIN/../nvidia/cu13/lib"]


def _shared(folder: Path, name: str, soname: str, *flags: str) -> Path:
    """A tiny shared library built with gcc."""
    source = folder / f"{name}.c"
    source.write_text(f"int {name.replace('.', '_')}_probe(void) {{ return 1; }}\n")
    target = folder / name
    subprocess.run(["gcc", "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(target),
                    str(source), *flags], check=True)
    return target


def _wheel_with(extension: Path, folder: Path) -> Path:
    """A pycuda-like wheel holding `extension` as its _driver module."""
    wheel = folder / "pycuda-2026.1-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.write(extension, "pycuda/_driver.cpython-311-x86_64-linux-gnu.so")
    return wheel


@needs_gcc
def test_an_extension_without_the_run_path_is_refused(tmp_path: Path) -> None:
    _shared(tmp_path, "libcuda.so", "libcuda.so.1")
    _shared(tmp_path, "libcurand.so", "libcurand.so.10")
    linked = ("-L", str(tmp_path), "-Wl,--no-as-needed", "-lcuda", "-lcurand")
    bare = _shared(tmp_path, "bare.so", "bare.so", *linked)
    with pytest.raises(SystemExit, match="lacks \\[\\$ORIGIN/../nvidia/cu13/lib\\]"):
        build.check_wheel(_wheel_with(bare, tmp_path), tmp_path)
    good = _shared(tmp_path, "good.so", "good.so", *linked, f"-Wl,-rpath,{build.RUN_PATH}")
    build.check_wheel(_wheel_with(good, tmp_path), tmp_path)


@needs_gcc
def test_an_extension_not_linked_to_curand_is_refused(tmp_path: Path) -> None:
    _shared(tmp_path, "libcuda.so", "libcuda.so.1")
    alone = _shared(tmp_path, "alone.so", "alone.so", "-L", str(tmp_path), "-Wl,--no-as-needed",
                    "-lcuda", f"-Wl,-rpath,{build.RUN_PATH}")
    with pytest.raises(SystemExit, match="lacks \\[libcurand.so.10\\]"):
        build.check_wheel(_wheel_with(alone, tmp_path), tmp_path)
