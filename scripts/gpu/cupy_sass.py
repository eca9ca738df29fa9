"""The SASS CuPy actually loaded on the GPU host, read back from its kernel cache: for every cached
module, ``cuobjdump -sass`` and, per kernel, the float4 loads its grid-stride loop keeps in flight
(helpers.engine.sass) and its registers. scripts/sass_loads.py predicts the same counts on the
CPU with the H200 host's ptxas release; this checks the prediction against what the driver ran.

    CUPY_CACHE_DIR=/tmp/cache python3 scripts/gpu/floor_probe.py ...   # fills the cache
    python3 scripts/gpu/cupy_sass.py /tmp/cache OUT.json [--match floor_v9,reduce_v9]

CuPy's cache files are a 32-character MD5 of the binary, then the binary (cupy/cuda/compiler.py).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from helpers.engine import sass  # noqa: E402

_TEMPLATE = re.compile(r"^_Z\d+(\w+?)I(.*)EEv")


def readable(mangled: str) -> str:
    """``_Z9floor_v9tILi1024ELi4ELi1ELi8ELb0EEvPKf...`` -> ``floor_v9t<1024, 4, 1, 8, false>`` (int and bool
    template arguments only; anything else comes back as it was)."""
    m = _TEMPLATE.match(mangled)
    if not m:
        return mangled
    args = re.findall(r"L([ib])(\d+)E", m.group(2) + "E")
    if not args:
        return mangled
    return f"{m.group(1)}<{', '.join(v if t == 'i' else ('true' if v == '1' else 'false') for t, v in args)}>"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cache")
    ap.add_argument("out")
    ap.add_argument("--match", default="floor_v9,reduce_v9", help="comma-separated name fragments to report")
    args = ap.parse_args()
    fragments = args.match.split(",")
    rows = []
    for path in sorted(Path(args.cache).glob("*")):
        data = path.read_bytes()
        binary = data[32:] if re.fullmatch(rb"[0-9a-f]{32}", data[:32]) else data
        if binary[:4] != b"\x7fELF":
            continue
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(binary)
            f.flush()
            try:
                text, usage = sass.cuobjdump("-sass", f.name), sass.cuobjdump("-res-usage", f.name)
            except RuntimeError as exc:
                print(f"{path.name}: {exc}")
                continue
        regs = dict(re.findall(r"Function (\S+):\s*REG:(\d+)", usage))
        for name, body in sass.functions(text).items():
            if not any(fr in name for fr in fragments):
                continue
            rows.append({"file": path.name, "mangled": name, "kernel": readable(name),
                         "loads_in_flight": sass.main_loop_loads_in_flight(body), "instructions": len(body),
                         "registers": int(regs.get(name, -1))})
    rows.sort(key=lambda r: r["kernel"])
    for r in rows:
        print(f"{r['kernel']:<44} {r['loads_in_flight']:>2} float4 loads in flight  {r['registers']} registers")
    Path(args.out).write_text(json.dumps({"tools": sass.tools(), "rows": rows}, indent=1))
    print(f"{len(rows)} kernels from {args.cache}")


if __name__ == "__main__":
    main()
