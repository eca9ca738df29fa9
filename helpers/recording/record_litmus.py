"""``python -m helpers.recording.record_litmus``: which litmus outcomes one GPU shows, recorded.

Runs every configuration of :mod:`helpers.machine.litmus` (kernels/litmus/litmus.cu: MP, SB, LB,
IRIW, 2+2W, CoRR at .cta and .gpu scope, with and without fence.sc) ``--launches`` times with
``--blocks`` groups of 32 instances a launch, through CuPy (any cupy-cuda12x/13x), and writes the
count of each outcome to ``data/litmus.json``, stamped like every recording (GPU, driver, versions).
What a GPU shows is some of the outcomes the model allows, never a rule: a weak outcome that does not
appear may still be allowed. ``tests/machine/test_m_litmus.py`` checks that none is forbidden.

    python -m helpers.recording.record_litmus [--launches 200] [--blocks 264] [--out data/litmus.json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from helpers.engine import backend, kernels
from helpers.machine import litmus as L

OUT = Path(__file__).resolve().parents[2] / "data" / "litmus.json"


def record(launches: int, blocks: int, budget_s: float = 90.0) -> dict:
    """Run every configuration on the GPU; {"stamp", "launches", "blocks", "results": [...]}. Stops
    repeating a configuration once ``budget_s`` seconds are spent in all (then fewer launches ran)."""
    import cupy as cp

    stamp = {**backend.stamp(), "date": time.strftime("%Y-%m-%d", time.gmtime())}
    opts = ("-std=c++17", *kernels.include_options())
    mod = cp.RawModule(code=L.SOURCE.read_text(), options=opts, name_expressions=L.name_expressions())
    t0 = time.perf_counter()
    per = budget_s / len(L.configs())
    results = []
    for shape, scope, fence in L.configs():
        k = mod.get_function(L.name_expression(shape, scope, fence))
        grid, block, n = L.geometry(shape, scope, blocks)
        mem, out = (cp.asarray(a) for a in L.buffers(n))
        counts: Counter = Counter()
        ran = 0
        start = time.perf_counter()
        for _ in range(launches):
            mem.fill(0)
            out.fill(0)
            k(grid, block, (mem, out))
            o = L.outcomes(shape, cp.asnumpy(mem), cp.asnumpy(out))
            counts.update(",".join(map(str, row)) for row in o.tolist())
            ran += 1
            if time.perf_counter() - start > per:
                break
        results.append({"shape": shape, "scope": scope, "fence": fence, "launches": ran, "instances": n,
                        "registers": list(L.SHAPES[shape].registers),
                        "outcomes": dict(sorted(counts.items()))})
    return {"stamp": stamp, "recorded": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
            "kernel": "kernels/litmus/litmus.cu", "blocks": blocks, "seconds": round(time.perf_counter() - t0, 1),
            "label": "outcomes one GPU showed; a weak outcome that never appears may still be allowed",
            "results": results}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--launches", type=int, default=200, help="launches per configuration (at most)")
    ap.add_argument("--blocks", type=int, default=264, help="groups of 32 instances per launch")
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    if a.launches < 1 or a.blocks < 1:
        ap.error("--launches and --blocks must be >= 1")
    rec = record(a.launches, a.blocks)
    a.out.write_text(json.dumps(rec, indent=1) + "\n")
    weak = sum(1 for r in rec["results"] for k in r["outcomes"]
               if tuple(int(v) for v in k.split(",")) not in L.SHAPES[r["shape"]].allowed(True))
    print(f"wrote {a.out}: {len(rec['results'])} configurations in {rec['seconds']} s; "
          f"{weak} outcomes that only the unfenced forms allow")
    return 0


if __name__ == "__main__":
    sys.exit(main())
