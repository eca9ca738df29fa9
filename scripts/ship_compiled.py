"""Recompile what ships precompiled in kernels/shipped/: the PTX of every registered kernel build and
the NVRTC log of every seed file that must not compile. Needs NVRTC (./warplab add nvrtc).

    ./warplab ship            (or: python scripts/ship_compiled.py [--check])

Run it after changing or adding a kernel, a registered name expression, or NVRTC (./warplab lock
does). Files whose content did not change are left alone (gzip output is not the same on every
zlib, so an unchanged PTX keeps its bytes). ``--check`` only reports what would change, exit 1 if any.
Writes kernels/shipped/manifest.json: for each file what made it (NVRTC release, header versions),
the digest of its inputs (helpers.engine.kernels.inputs_digest) and of its text.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from helpers.engine import nvrtc  # noqa: E402
from helpers.engine import kernels
from helpers.topics.registry import registry

ABOUT = ("Made by scripts/ship_compiled.py (./warplab ship) with NVRTC; checked by tests/engine/test_kernels.py. "
         "Do not edit. Read with helpers.engine.kernels.shipped_ptx / shipped_compile_log.")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _read_gz(path: Path) -> str | None:
    try:
        return gzip.decompress(path.read_bytes()).decode()
    except OSError:
        return None


def build(check: bool) -> int:
    compiler = {"nvrtc": nvrtc.release(), **kernels.header_versions()}
    changed: list[str] = []
    ptx_entries, log_entries = [], []
    t0 = time.perf_counter()
    builds = kernels.shipped_builds(registry())
    for i, b in enumerate(builds, 1):
        text, lowered = kernels.compile_shipped(b)
        target = kernels.SHIPPED_DIR / b.file
        if _read_gz(target) != text:
            changed.append(b.file)
            if not check:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(gzip.compress(text.encode(), compresslevel=9, mtime=0))
        ptx_entries.append({"name": b.name, "arch": b.arch, "defines": list(b.defines),
                            "options": list(kernels.SHIPPED_OPTIONS), "file": b.file,
                            "inputs": kernels.inputs_digest(b.name, b.arch, b.defines, b.name_expressions),
                            "text_sha256": _sha(text), "lowered": lowered})
        print(f"\r[{i}/{len(builds)}] {b.file}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    for name, arch in kernels.iter_not_compiling():
        log = kernels.compile_log(name, arch)
        rel = kernels.shipped_log_file(name, arch)
        target = kernels.SHIPPED_DIR / rel
        if not target.is_file() or target.read_text() != log:
            changed.append(rel)
            if not check:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(log)
        log_entries.append({"name": name, "arch": arch, "file": rel, "inputs": kernels.inputs_digest(name, arch, (), (), ()),
                            "text_sha256": _sha(log)})
    manifest = {"about": ABOUT, "compiler": compiler, "ptx": ptx_entries, "logs": log_entries}
    text = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    mf = kernels.SHIPPED_DIR / "manifest.json"
    old = mf.read_text() if mf.is_file() else ""
    if old != text:
        changed.append("manifest.json")
    keep = {e["file"] for e in ptx_entries} | {e["file"] for e in log_entries} | {"manifest.json"}
    stale = sorted(p.relative_to(kernels.SHIPPED_DIR).as_posix() for p in kernels.SHIPPED_DIR.rglob("*")
                   if p.is_file() and p.relative_to(kernels.SHIPPED_DIR).as_posix() not in keep)
    if not check:
        mf.write_text(text)
        for rel in stale:
            (kernels.SHIPPED_DIR / rel).unlink()
    size = sum(p.stat().st_size for p in kernels.SHIPPED_DIR.rglob("*") if p.is_file())
    verb = "would change" if check else "changed"
    print(f"ship: {len(ptx_entries)} PTX builds, {len(log_entries)} logs with NVRTC {compiler['nvrtc']} "
          f"in {time.perf_counter() - t0:.0f} s; {verb}: {', '.join(changed + stale) or 'nothing'}; "
          f"kernels/shipped/ holds {size / 1e6:.2f} MB", file=sys.stderr)
    return 1 if check and (changed or stale) else 0


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if anything would change")
    opts = ap.parse_args(argv)
    if not nvrtc.available():
        print(f"ship: {nvrtc.HOW_TO_GET_IT}", file=sys.stderr)
        return 2
    return build(opts.check)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
