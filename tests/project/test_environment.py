"""Install metadata: pyproject.toml, the lock (uv.lock and its pip exports in requirements/) and
environment.yml agree; the lock installs on every platform the project supports, with CUDA wheels
only where NVIDIA publishes them; import stays fast.

Everything here reads files: no network, no uv.
"""
from __future__ import annotations

import itertools
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging import tags
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
SETS = ("lab", "test", "nvrtc", "gpu")
RELOCK = "the lock is out of date: run ./warplab lock --keep (or ./warplab lock to upgrade) and commit"
CUDA_PACKAGES = {"cupy-cuda12x", "nvidia-cuda-nvrtc-cu12", "nvidia-cuda-runtime-cu12", "nvidia-cuda-cccl-cu12"}

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = None  # type: ignore[assignment]

# (name, sys_platform, platform_machine, os_name, platform tags newest first)
_MANYLINUX = [f"manylinux_2_{m}" for m in range(39, 4, -1)]
PLATFORMS = {
    "linux-x86_64": ("linux", "x86_64", "posix",
                     [f"{m}_x86_64" for m in _MANYLINUX] + ["manylinux2014_x86_64", "manylinux2010_x86_64",
                                                             "manylinux1_x86_64", "linux_x86_64"]),
    "linux-aarch64": ("linux", "aarch64", "posix",
                      [f"{m}_aarch64" for m in _MANYLINUX] + ["manylinux2014_aarch64", "linux_aarch64"]),
    "macos-arm64": ("darwin", "arm64", "posix", list(tags.mac_platforms((14, 0), "arm64"))),
    "macos-x86_64": ("darwin", "x86_64", "posix", list(tags.mac_platforms((13, 0), "x86_64"))),
    "windows-amd64": ("win32", "AMD64", "nt", ["win_amd64"]),
}
PYTHONS = ((3, 10), (3, 11), (3, 12), (3, 13), (3, 14))
CUDA_WHEELS = {"linux-x86_64", "linux-aarch64", "windows-amd64"}


def _toml(name: str) -> dict:
    if tomllib is None:
        pytest.skip("tomllib needs Python 3.11+")
    return tomllib.loads((ROOT / name).read_text())


def _env(platform: str, py: tuple[int, int], extra: str = "") -> dict[str, str]:
    sys_platform, machine, os_name, _ = PLATFORMS[platform]
    return {"sys_platform": sys_platform, "platform_machine": machine, "os_name": os_name,
            "python_version": f"{py[0]}.{py[1]}", "python_full_version": f"{py[0]}.{py[1]}.9",
            "implementation_name": "cpython", "platform_python_implementation": "CPython",
            "platform_system": {"linux": "Linux", "darwin": "Darwin", "win32": "Windows"}[sys_platform],
            "platform_release": "", "platform_version": "", "extra": extra}


def _name(req: str) -> str:
    return re.split(r"[<>=!~\[ ;]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pyproject_requirements() -> list[tuple[str, Requirement]]:
    """(extra or "", requirement) for every requirement of pyproject.toml."""
    meta = _toml("pyproject.toml")["project"]
    out = [("", Requirement(r)) for r in meta["dependencies"]]
    out += [(extra, Requirement(r)) for extra, reqs in meta["optional-dependencies"].items() for r in reqs]
    return out


def _pyproject() -> set[str]:
    return {canonicalize_name(r.name) for _, r in _pyproject_requirements()} - {"warplab"}


def _requirements(name: str) -> dict[tuple[str, str], tuple[Requirement, set[str]]]:
    """{(package, version): (requirement with its marker, hashes)} of requirements/NAME.txt."""
    text = (ROOT / "requirements" / f"{name}.txt").read_text().replace("\\\n", " ")
    out = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        spec, *hashes = line.split("--hash=")
        req = Requirement(spec.strip())
        (version,) = [s.version for s in req.specifier if s.operator == "=="]
        out[(canonicalize_name(req.name), version)] = (req, {h.strip() for h in hashes})
    return out


def _locked() -> dict[tuple[str, str], dict]:
    return {(canonicalize_name(p["name"]), p["version"]): p for p in _toml("uv.lock")["package"]}


# ---------------------------------------------------------------- pyproject.toml, uv.lock, requirements/

def test_design_card_packages_present() -> None:
    assert {"jupyterlab", "cupy-cuda12x", "numpy", "matplotlib", "ipywidgets"} <= _pyproject()


def test_lock_matches_pyproject() -> None:
    """uv.lock was made from this pyproject.toml: same packages, specifiers and (evaluated) markers."""
    project = next(p for p in _toml("uv.lock")["package"] if p["name"] == "warplab")
    locked = {}
    for d in project["metadata"]["requires-dist"]:
        locked.setdefault(canonicalize_name(d["name"]), []).append(d)
    for extra, req in _pyproject_requirements():
        name = canonicalize_name(req.name)
        assert name in locked, f"{name}: {RELOCK}"
        (entry,) = [d for d in locked[name] if sorted(d.get("extras", [])) == sorted(req.extras)]
        assert entry.get("specifier", "") == str(req.specifier), f"{name}: {RELOCK}"
        for platform, py, ex in itertools.product(PLATFORMS, PYTHONS, ("", "test", "nvrtc", "gpu")):
            env = _env(platform, py, ex)
            want = (ex == extra) and (req.marker is None or req.marker.evaluate(env))
            got = Marker(entry["marker"]).evaluate(env) if "marker" in entry else ex == ""
            assert want == got, f"{name} on {platform} Python {py} extra {ex!r}: {RELOCK}"


def test_requirements_are_the_lock_exported() -> None:
    """requirements/*.txt hold exactly uv.lock's packages, each once, with every hash uv.lock has."""
    locked = _locked()
    seen: dict[tuple[str, str], str] = {}
    for s in SETS:
        for key, (_, hashes) in _requirements(s).items():
            assert key not in seen, f"{key} is in both requirements/{seen[key]}.txt and {s}.txt: {RELOCK}"
            seen[key] = s
            assert key in locked, f"{key} of requirements/{s}.txt is not in uv.lock: {RELOCK}"
            files = locked[key].get("wheels", []) + ([locked[key]["sdist"]] if "sdist" in locked[key] else [])
            assert hashes == {f["hash"] for f in files}, f"{key}: {RELOCK}"
    assert set(seen) == {k for k in locked if k[0] != "warplab"}, RELOCK


def test_sets_hold_what_their_names_say() -> None:
    names = {s: {k[0] for k in _requirements(s)} for s in SETS}
    assert {"jupyterlab", "numpy", "matplotlib", "ipywidgets"} <= names["lab"] and not names["lab"] & CUDA_PACKAGES
    assert {"pytest", "nbval", "playwright", "hypothesis"} <= names["test"] and not names["test"] & CUDA_PACKAGES
    assert names["nvrtc"] == {"nvidia-cuda-nvrtc-cu12", "nvidia-cuda-runtime-cu12", "nvidia-cuda-cccl-cu12"}
    assert "cupy-cuda12x" in names["gpu"]


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_lock_installs_on(platform: str) -> None:
    """Every package a set selects here has a wheel for this platform and Python (a learner needs no
    compiler), and CUDA wheels are selected exactly where NVIDIA publishes them: never on macOS."""
    locked = _locked()
    for py in PYTHONS:
        env = _env(platform, py)
        interp = f"cp{py[0]}{py[1]}"
        supported = set(tags.cpython_tags(py, abis=[interp, "abi3", "none"], platforms=PLATFORMS[platform][3]))
        supported |= set(tags.compatible_tags(py, interpreter=interp, platforms=PLATFORMS[platform][3]))
        for s in SETS:
            chosen = {k: r for k, (r, _) in _requirements(s).items() if r.marker is None or r.marker.evaluate(env)}
            names = [k[0] for k in chosen]
            assert len(names) == len(set(names)), f"{s} pins a package twice for {platform} {py}"
            if s in ("nvrtc", "gpu"):
                want_cuda = platform in CUDA_WHEELS and (s == "nvrtc" or py < (3, 15))
                assert bool(set(names) & CUDA_PACKAGES) == want_cuda, (s, platform, py)
            for key in chosen:
                wheels = locked[key].get("wheels", [])
                ok = any(set(parse_wheel_filename(w["url"].rsplit("/", 1)[1])[3]) & supported for w in wheels)
                assert ok, (f"{key} has no wheel for {platform} Python {py[0]}.{py[1]}: add it to [tool.uv] "
                            "no-build-package in pyproject.toml and run ./warplab lock --keep")


def test_lock_requires_every_platform_at_lock_time() -> None:
    required = _toml("pyproject.toml")["tool"]["uv"]["required-environments"]
    got = {(m.split("sys_platform == '")[1].split("'")[0], m.split("platform_machine == '")[1].split("'")[0])
           for m in required}
    assert got == {(PLATFORMS[p][0], PLATFORMS[p][1]) for p in PLATFORMS}


# ---------------------------------------------------------------- environment.yml

def _environment_yml() -> dict[str, str]:
    """{package: pinned version or ""} of environment.yml (conda and pip sections)."""
    out = {}
    for line in (ROOT / "environment.yml").read_text().splitlines():
        m = re.match(r"^\s*-\s+\"?([A-Za-z][\w.\-]*)(?:==([\w.]+))?", line)
        if m and m.group(1) not in ("pip", "python", "conda-forge"):
            out[_name(m.group(1))] = m.group(2) or ""
    return out


def test_environment_yml_matches_pyproject() -> None:
    assert _pyproject() == set(_environment_yml())


def test_environment_yml_pins_the_locked_versions() -> None:
    """Each pin is the newest version the lock has for that package (the one the stored outputs use)."""
    newest: dict[str, Version] = {}
    for name, version in _locked():
        if name not in newest or Version(version) > newest[name]:
            newest[name] = Version(version)
    for name, version in _environment_yml().items():
        assert version and Version(version) == newest[name], f"environment.yml {name}=={version}: {RELOCK}"


# ---------------------------------------------------------------- importing

def test_import_helpers_is_fast_and_does_not_import_cupy() -> None:
    code = ("import sys, time; t = time.perf_counter(); import helpers, helpers.engine.warp, helpers.engine.trace; "
            "print(time.perf_counter() - t, 'cupy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    seconds, cupy_loaded = out.stdout.split()
    assert float(seconds) < 1.0 and cupy_loaded == "False"


def test_backend_detection_is_quick_and_quiet() -> None:
    code = ("import time, warnings; warnings.simplefilter('error'); from helpers.engine import backend; "
            "t = time.perf_counter(); backend.detect(); print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stderr == "" and float(out.stdout) < 5.0
