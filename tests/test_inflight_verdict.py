"""scripts/gpu/inflight_verdict.py: it finds every pair in rows named as floor_probe.py names them
(for the very command the next device call runs), and its rule gives the verdicts it states."""
from __future__ import annotations

from typing import Callable

from probes import load as _probe

SIZES = (20, 23, 24, 25, 26, 27)      # PROBE_ARGS="--sizes 20,23,24,25,26,27 --only k,m,v9s,v9m"
ONLY = ("k", "m", "v9s", "v9m")
REPS = 5


def _rows(time_of: Callable[[str, int, int], float]) -> list[dict]:
    """The rows floor_probe.py writes for that command on 132 SMs, with ``time_of(label, n, rep)`` as
    each repetition's device time (three placements for the workspace kinds, as the probe times them)."""
    floor = _probe("floor_probe")
    rows = []
    for k in SIZES:
        n = 2**k
        names = ["cupy.sum", "empty 1x32", "v9 dispatched b1024 u4 g128" if k >= 23 else "v9 dispatched b256 u4 g256"]
        for c in floor.configs(n, 132):
            if c[0] not in ONLY:
                continue
            key = floor.label(c)
            names += [f"{key} @{p}" for p in range(floor.PLACEMENTS)] if c[0] in ("k", "m") else [key]
        for name in dict.fromkeys(names):
            reps = [time_of(name.split(" @")[0], n, r) for r in range(REPS)]
            rows.append({"n": n, "name": name, "ok": True, "device_us": sorted(reps)[REPS // 2], "device_us_reps": reps})
    return rows


def _faster(prefixes: tuple[str, ...], by: float) -> Callable[[str, int, int], float]:
    return lambda name, n, rep: (10.0 - by if name.startswith(prefixes) else 10.0) + 0.001 * rep


def test_every_change_has_pairs_at_its_goal_size_in_the_planned_run() -> None:
    verdict = _probe("inflight_verdict")
    found = verdict.pairs(verdict.per_rep(_rows(_faster((), 0))))
    for change, sizes in verdict.GOAL_SIZES.items():
        assert any(p.change == change and p.n in sizes for p in found), change
    assert {(p.candidate, p.baseline) for p in found if p.n == 2**24 and p.change == "hbm-256x8"} == {
        ("v9s b256 u8 g512", "v9 dispatched b1024 u4 g128")}
    assert ("v9ka s0 b256 u4 g256 K8", "v9kp s0 b256 u4 g256 K8") in {(p.candidate, p.baseline) for p in found}


def test_a_clear_gain_is_supported_and_a_loss_at_the_goal_size_refuted() -> None:
    verdict = _probe("inflight_verdict")
    candidates = {"hbm-256x8": ("v9s b256 u8 g512",), "launch-bounds": ("v9m ", "v9minb1"), "ticket": ("v9ka",)}
    baselines = {"hbm-256x8": ("v9 dispatched",), "launch-bounds": ("v9s ", "v9kp"), "ticket": ("v9kp",)}
    for change in verdict.GOAL_SIZES:
        gain = verdict.pairs(verdict.per_rep(_rows(_faster(candidates[change], 0.2))))
        assert verdict.verdict(change, gain).verdict == "SUPPORTED", change
        loss = verdict.pairs(verdict.per_rep(_rows(_faster(baselines[change], 0.2))))
        assert verdict.verdict(change, loss).verdict == "REFUTED", change


def test_a_gain_within_the_margin_or_a_loss_elsewhere_is_mixed() -> None:
    verdict = _probe("inflight_verdict")
    tiny = verdict.pairs(verdict.per_rep(_rows(_faster(("v9ka",), 0.02))))        # 0.2 %: below the margin
    assert verdict.verdict("ticket", tiny).verdict == "MIXED"

    def ticket_costs_at_2_21(name: str, n: int, rep: int) -> float:
        if name.startswith("v9ka"):
            return 10.2 if n == 2**21 else 9.8
        return 10.0
    elsewhere = verdict.pairs(verdict.per_rep(_rows(ticket_costs_at_2_21)))
    assert verdict.verdict("ticket", elsewhere).verdict == "SUPPORTED"   # 2^21 is not in the planned run
    assert verdict.verdict("ticket", verdict.pairs(verdict.per_rep(
        [r for r in _rows(ticket_costs_at_2_21) if r["n"] != 2**20]))).verdict == "INCOMPLETE"


def test_placements_become_one_median_per_repetition_and_bad_rows_are_marked() -> None:
    verdict = _probe("inflight_verdict")
    rows = [{"n": 4, "name": "v9ka x @0", "ok": True, "device_us_reps": [1.0, 5.0]},
            {"n": 4, "name": "v9ka x @1", "ok": True, "device_us_reps": [2.0, 6.0]},
            {"n": 4, "name": "v9ka x @2", "ok": True, "device_us_reps": [9.0, 1.0]},
            {"n": 4, "name": "v9kp x @0", "ok": False, "device_us_reps": [0.1, 0.1]},
            {"n": 4, "name": "v9kq x", "ok": True, "device_us_reps": [0.1, float("nan")]}]
    s = verdict.per_rep(rows)
    assert s[(4, "v9ka x")] == verdict.Series((2.0, 5.0))
    assert s[(4, "v9kp x")].why == "a wrong sum" and s[(4, "v9kq x")].why == "a time that is not finite"


def _gain(name: str, n: int, rep: int) -> float:
    return (9.8 if name.startswith(("v9ka", "v9m ", "v9minb1", "v9s b256 u8 g512")) and not name.startswith("v9s b1")
            else 10.0) + 0.001 * rep


def test_a_wrong_or_nan_row_of_a_counted_pair_makes_the_change_invalid() -> None:
    verdict = _probe("inflight_verdict")
    rows = _rows(_gain)
    for r in rows:
        if r["n"] == 2**23 and r["name"].startswith("v9minb1 s1 b256 u8 g512"):
            r["ok"] = False
        if r["n"] == 2**25 and r["name"] == "v9s b256 u8 g512":
            r["device_us_reps"][1] = float("nan")
    found = verdict.pairs(verdict.per_rep(rows))
    assert verdict.verdict("launch-bounds", found).verdict == "INVALID"
    assert verdict.verdict("hbm-256x8", found).verdict == "INVALID"
    text = verdict.report(rows)
    assert "rows not usable:" in text and "a wrong sum" in text and "not judged" in text


def test_a_run_cut_short_is_incomplete_not_supported() -> None:
    verdict = _probe("inflight_verdict")
    rows = [r for r in _rows(_gain) if r["n"] <= 2**24]        # the timeout struck during 2^25
    found = verdict.pairs(verdict.per_rep(rows))
    assert verdict.verdict("hbm-256x8", found).verdict == "INCOMPLETE"
    assert verdict.verdict("launch-bounds", found).verdict == "INCOMPLETE"
    assert verdict.verdict("ticket", found).verdict == "SUPPORTED"   # 2^20 and 2^24 were timed
    one_missing = [r for r in _rows(_gain) if not (r["n"] == 2**24 and r["name"].startswith("v9m b256 u8 g512"))]
    assert verdict.verdict("launch-bounds", verdict.pairs(verdict.per_rep(one_missing))).verdict == "INCOMPLETE"


def test_a_size_the_branch_has_no_shape_for_never_counts() -> None:
    verdict = _probe("inflight_verdict")
    p = verdict.Pair("ticket", 2**21, "v9ka s0 b512 u4 g256 K8", "v9kp s0 b512 u4 g256 K8", (1.0,), (1.0,))
    assert not p.counts
    q = verdict.Pair("ticket", 2**20, "v9ka s0 b256 u4 g2560 K8", "v9kp s0 b256 u4 g2560 K8", (1.0,), (1.0,))
    assert not q.counts       # g2560 is not g256: whole words, not substrings


def test_the_report_prints_every_change() -> None:
    text = _probe("inflight_verdict").report(_rows(_faster(("v9ka",), 0.2)))
    assert "ticket: SUPPORTED" in text and "hbm-256x8: MIXED" in text and "launch-bounds: MIXED" in text


def test_only_the_shape_the_branch_launches_decides() -> None:
    verdict = _probe("inflight_verdict")

    def bounds_cost_at_1024(name: str, n: int, rep: int) -> float:
        if name.startswith(("v9m ", "v9minb1")):
            return 10.5 if " b1024 " in name else 9.8       # slower only at a shape the branch does not launch
        return 10.0
    found = verdict.pairs(verdict.per_rep(_rows(bounds_cost_at_1024)))
    assert verdict.verdict("launch-bounds", found).verdict == "SUPPORTED"
    assert "(not the branch's shape)" in verdict.report(_rows(bounds_cost_at_1024))
