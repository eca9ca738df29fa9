"""Update the lock, and redo everything made from it.

    ./warplab lock                  newest versions allowed by pyproject.toml, then everything below
    ./warplab lock --keep           keep the locked versions (after editing pyproject.toml)
    ./warplab lock --export-only    only rewrite requirements/ and environment.yml from uv.lock

1. ``uv lock`` resolves pyproject.toml once for every platform and Python (``uv.lock``; uv is
   installed into the venv when it is not on PATH).
2. ``uv export`` writes one pip requirements file per set (``requirements/{lab,test,nvrtc,gpu}.txt``,
   every package pinned with its hashes, disjoint: a package sits in the first set that needs it).
   ``./warplab`` installs from these with pip, so it needs no uv.
3. ``environment.yml`` gets the same pins.
4. The venv is brought up to date, the shipped PTX and compiler logs are recompiled (a new NVRTC
   makes different PTX) and every notebook is re-executed, so stored outputs match the new versions.
   Review ``git diff`` and run ``./warplab test`` before committing.
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = ROOT / "requirements"
# set -> the extras whose closure it is; each file holds that closure minus the sets before it
SETS: dict[str, tuple[str, ...]] = {"lab": (), "test": ("test",), "nvrtc": ("nvrtc",), "gpu": ("gpu",)}
HEADER = ("# Exported from uv.lock by scripts/lock.py (./warplab lock): do not edit. Set {name!r}: {what}.\n"
          "# pip install --require-hashes --no-deps -r requirements/lab.txt [-r requirements/{name}.txt]\n")
WHAT = {"lab": "what the notebooks need", "test": "the test tools, on top of lab",
        "nvrtc": "NVRTC and the CUDA headers, on top of lab", "gpu": "CuPy, on top of lab and nvrtc"}
CPYTHON = "implementation_name == 'cpython'"
ENV_BEGIN, ENV_END = "# BEGIN pins from uv.lock (scripts/lock.py)", "# END pins"


def uv() -> list[str]:
    found = shutil.which("uv")
    if found:
        return [found]
    try:
        import uv as uv_module  # noqa: F401
    except ImportError:
        print("lock: installing uv into this venv (pip install uv) ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "uv"], check=True)
    return [sys.executable, "-m", "uv"]


def entries(text: str) -> dict[str, str]:
    """{first line (``name==version ; marker``): whole entry} of an exported requirements file."""
    out: dict[str, str] = {}
    current: list[str] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            current = [line]
            out[line.rstrip(" \\")] = ""
        else:
            current.append(line)
        out[current[0].rstrip(" \\")] = "\n".join(current) + "\n"
    return out


def export(cmd: list[str]) -> dict[str, dict[str, str]]:
    """Each set's entries, disjoint."""
    seen: set[str] = set()
    sets: dict[str, dict[str, str]] = {}
    for name, extras in SETS.items():
        args = [*cmd, "export", "--frozen", "--no-emit-project", "--no-header", "--no-annotate",
                *(a for e in extras for a in ("--extra", e))]
        got = entries(subprocess.run(args, cwd=ROOT, check=True, capture_output=True, text=True).stdout)
        sets[name] = {k: v for k, v in got.items() if k not in seen}
        seen |= set(got)
    return sets


def write_requirements(sets: dict[str, dict[str, str]]) -> None:
    REQUIREMENTS.mkdir(exist_ok=True)
    for name, got in sets.items():
        body = "".join(got[k] for k in sorted(got, key=str.lower))
        (REQUIREMENTS / f"{name}.txt").write_text(HEADER.format(name=name, what=WHAT[name]) + body)


def direct_pins(sets: dict[str, dict[str, str]]) -> dict[str, str]:
    """{package: ``name==version`` [; marker]} for pyproject.toml's direct requirements, the newest
    version where the lock forks by Python version (the stored outputs come from a recent Python)."""
    import tomllib

    from packaging.version import Version

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = [*meta["dependencies"], *(r for extra in meta["optional-dependencies"].values() for r in extra)]
    names = {re.split(r"[<>=!~\[ ;]", r.strip(), maxsplit=1)[0].lower() for r in reqs} - {meta["name"]}
    pins: dict[str, tuple[Version, str]] = {}
    for got in sets.values():
        for first in got:
            name, rest = first.split("==", 1)
            version = Version(rest.split(";")[0].strip())
            if name.strip().lower() in names and (name not in pins or version > pins[name][0]):
                clauses = re.split(r"\s+and\s+", rest.split(";", 1)[1]) if ";" in rest else []
                marker = " and ".join(c.strip() for c in clauses if c.strip() != CPYTHON)  # [tool.uv] environments
                pins[name] = (version, f"{name}=={version}" + (f" ; {marker}" if marker else ""))
    return {n: pin for n, (_, pin) in pins.items()}


def write_environment_yml(pins: dict[str, str]) -> None:
    path = ROOT / "environment.yml"
    text = path.read_text()
    block = "\n".join(f'      - "{pins[n]}"' for n in sorted(pins))
    new = re.sub(rf"(?ms)^(\s*){re.escape(ENV_BEGIN)}\n.*?^\s*{re.escape(ENV_END)}",
                 lambda m: f"{m.group(1)}{ENV_BEGIN}\n{block}\n{m.group(1)}{ENV_END}", text)
    if new == text and ENV_BEGIN not in text:
        raise SystemExit(f"environment.yml has no '{ENV_BEGIN}' ... '{ENV_END}' block to fill")
    path.write_text(new)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", action="store_true", help="keep locked versions (no --upgrade)")
    ap.add_argument("--export-only", action="store_true", help="only export uv.lock to requirements/ and environment.yml")
    opts = ap.parse_args(argv)
    cmd = uv()
    if not opts.export_only:
        subprocess.run([*cmd, "lock", *([] if opts.keep else ["--upgrade"])], cwd=ROOT, check=True)
    sets = export(cmd)
    write_requirements(sets)
    write_environment_yml(direct_pins(sets))
    print("lock: wrote requirements/*.txt and environment.yml", file=sys.stderr)
    if opts.export_only:
        return 0
    steps = [
        [sys.executable, "warplab.py", "add", "nvrtc"],  # brings every installed set up to date as well
        [sys.executable, "scripts/ship_compiled.py"],
        [sys.executable, "scripts/execute_notebooks.py"],
    ]
    for step in steps:
        print(f"lock: {' '.join(step[1:])}", file=sys.stderr)
        subprocess.run(step, cwd=ROOT, check=True)
    print("lock: done; review `git diff`, run ./warplab test, then commit", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
