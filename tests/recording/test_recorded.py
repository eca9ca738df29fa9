"""CI, with no GPU: the emulator reproduces every result recorded on the H200."""
from __future__ import annotations

import numpy as np
import pytest

from helpers import data
from helpers.engine import cases
from helpers.recording.record import trace_inputs
from helpers.engine.trace import Trace
from helpers.topics.warp_reduce import warp_reduce_sum_trace


def _needs(name: str) -> dict:
    if not data.exists(name):
        pytest.skip(f"data/{name}.json not recorded yet (python -m helpers.recording.record on a GPU writes it)")
    return data.load(name)


def test_recordings_are_stamped() -> None:
    for p in sorted(data.DATA_DIR.glob("*.json")):
        body = data.load(p.stem)
        for key in ("gpu", "driver", "cupy_version"):
            assert body["stamp"].get(key), f"{p.name}: stamp lacks {key}"
        assert data.recorded_date(body), f"{p.name}: no date (stamp's date or its recorded time)"


def test_emulator_reproduces_recorded_intrinsics() -> None:
    rec = _needs("warp_intrinsics")
    assert len(rec["cases"]) >= 100
    bad = [(c.get("name", c["op"]), n) for c in rec["cases"]
           if (n := cases.mismatches(c, cases.run(c, "emulator"), c["result"]))]
    assert not bad, f"emulator differs from the recorded hardware in {len(bad)} cases: {bad[:5]}"


def test_recorded_facts() -> None:
    """The numbers facts.md quotes, read from the recording itself."""
    rec = {c.get("name"): c["result"] for c in _needs("warp_intrinsics")["cases"]}
    down2 = np.asarray(rec["shfl_down 2 width 32"]["values"][0])
    assert down2[30:].tolist() == [30, 31]
    down2_16 = np.asarray(rec["shfl_down 2 width 16"]["values"][0])
    assert down2_16[[14, 15, 30, 31]].tolist() == [14, 15, 30, 31]
    assert rec["ballot lane < 20"]["warp"] == [0x000FFFFF]


def test_emulator_reproduces_recorded_traces() -> None:
    rec = _needs("warp_reduce_sum_trace")
    for name, v in trace_inputs().items():
        hw = Trace.from_dict(rec["traces"][name])
        assert warp_reduce_sum_trace(v, backend="emulator").same_as(hw), name


def test_exited_reads_are_flagged_undefined() -> None:
    from helpers.engine import warp
    from helpers.recording.record import classify_exited_reads, exited_read_inputs

    values, active, deltas = exited_read_inputs(n_warps=64)
    n = 0
    for w in range(64):
        r = warp.shfl_down(values[w], int(deltas[w]), exited=~active[w], backend="emulator")
        src = np.arange(32) + deltas[w]
        reads = active[w] & (src < 32) & ~active[w][np.minimum(src, 31)]
        assert not r.defined[reads].any()
        n += int(reads.sum())
    # a pretend hardware that returned the caller's own value everywhere
    counts = classify_exited_reads(values, active, deltas, values.copy())
    assert counts["reads"] == n == counts["caller_own_value"]


def test_recorded_exited_reads_add_up() -> None:
    rec = _needs("exited_reads")["counts"]
    assert rec["reads"] > 1000
    assert sum(v for k, v in rec.items() if k != "reads") == rec["reads"]
