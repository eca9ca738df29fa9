"""Item 3: the machine's verdicts beside compute-sanitizer's; and item 2's sanitizer sample.

* every run in data/sanitizer_*.json: the machine's verdict for that tool equals the recorded one;
* where compute-sanitizer cannot see a defect (an out-of-bounds read inside a pooled allocation,
  shuffle reads of exited lanes) the machine still reports it;
* on the sampled generated programs, every program the machine calls clean for a tool's kind of
  defect is clean under that tool on the H200 (racecheck: no race; synccheck: no divergent barrier
  or deadlock)."""
from __future__ import annotations

import pytest

from helpers import data
from helpers.recording.proof import agreement, replay, store


@pytest.mark.needs_nvrtc
def test_machine_agrees_with_every_recorded_sanitizer_run() -> None:
    if not (data.exists("sanitizer_ladder") or data.exists("sanitizer_block")):
        pytest.skip("data/sanitizer_*.json not recorded yet (scripts/gpu/reduce.sh, scripts/gpu/block.sh)")
    rows = agreement.verdicts()
    print("\n" + agreement.format_verdicts(rows))
    assert len(rows) >= 40
    bad = [(r.source, r.kernel, r.tool, r.sanitizer, r.machine) for r in rows if not r.agree]
    assert not bad, bad
    legacy = next(r for r in rows if r.kernel == "v4_legacy" and r.tool == "racecheck")
    assert legacy.machine == "reported", "the legacy warp-synchronous tail must be reported"
    v4 = next(r for r in rows if r.kernel == "v4" and r.tool == "racecheck")
    assert v4.machine == "clean", "v4 with __syncwarp() must not be reported"
    # v9 is clean under both: its cross-block accesses are all strong (no data race in the PTX
    # memory model), so the machine reports nothing, not even in global memory, which racecheck
    # does not check.
    runs = ("v9", "v9_many_blocks", "v9_one_block")
    v9 = [r for r in rows if r.kernel in runs]
    assert {(r.kernel, r.tool) for r in v9} == {(k, t) for k in runs for t in ("memcheck", "racecheck", "synccheck")}
    for r in v9:
        assert r.kinds == () and r.beyond == (), (r.kernel, r.tool, r.kinds, r.beyond)


@pytest.mark.needs_nvrtc
def test_machine_sees_what_compute_sanitizer_cannot() -> None:
    recorded = store.read_json(store.SANITIZER) if "sanitizer" in store.present() else None
    for b in agreement.beyond_the_tools(recorded):
        print(f"\n{b.name}: {b.what}; machine: {b.machine_kinds or 'no finding'}, {b.machine_undefined} "
              f"undefined; compute-sanitizer: {b.sanitizer or 'not recorded'}")
        assert b.machine_sees_it, b
        if recorded is not None and b.name == "pooled":
            assert b.sanitizer.get("memcheck") == "clean", "memcheck should not see a read inside a pool block"
            assert b.sanitizer.get("memcheck (pool off)") == "reported"
        if recorded is not None and b.name == "exited":
            assert set(b.sanitizer.values()) == {"clean"}, b.sanitizer


MACHINE_KINDS = {"racecheck": ("race",), "synccheck": ("divergent_barrier", "deadlock")}


@pytest.mark.slow
def test_programs_the_machine_calls_clean_are_clean_under_the_sanitizers() -> None:
    for what in ("sanitizer", "programs"):
        reason = store.missing_reason(what)
        if reason:
            pytest.skip(reason)
    verdicts = store.read_json(store.SANITIZER)["programs"]
    assert len(verdicts) >= 200
    rec = replay.recording("programs")
    rows = {p["name"]: (m, p) for m, p in rec.items()}
    bad, checked, errors = [], {t: 0 for t in MACHINE_KINDS}, []
    for name, v in verdicts.items():
        m, p = rows[name]
        try:
            _, _, report = replay.run_program(m, p)
        except Exception as exc:   # the machine must run every sampled program
            errors.append((name, f"{type(exc).__name__}: {exc}"))
            continue
        kinds = {f.kind for f in report.issues}
        for tool, machine_kinds in MACHINE_KINDS.items():
            if tool not in v or v[tool]["verdict"] == "not run" or kinds & set(machine_kinds):
                continue
            checked[tool] += 1
            if v[tool]["verdict"] != "clean":
                bad.append((name, tool, v[tool]["first"], sorted(kinds)))
    print(f"\nchecked clean-by-machine programs: {checked}; machine errors: {len(errors)}")
    assert not errors, errors[:5]
    assert not bad, bad[:10]
    assert min(checked.values()) >= 100
