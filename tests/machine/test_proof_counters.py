"""Item 5: the machine's counters beside data/ncu_ladder.json for v0..v4 (teaching material: where
they differ, ptxas changed the program between PTX and SASS; see helpers.recording.proof.counters)."""
from __future__ import annotations

import pytest

from helpers import data
from helpers.recording.proof import counters


@pytest.fixture(scope="module")
def rows() -> list[counters.Row]:
    if not data.exists("ncu_ladder"):
        pytest.skip("data/ncu_ladder.json not recorded yet (scripts/gpu/reduce.sh)")
    return counters.ladder_table()


def test_table_has_every_version_and_counter(rows: list[counters.Row]) -> None:
    print("\n" + counters.format_table(rows))
    static = counters.format_static()
    if static:
        print("\n" + static)
    assert {r.version for r in rows} == set(counters.VERSIONS)
    assert all(r.machine is not None and r.machine >= 0 for r in rows)


def test_shared_stores_and_wavefronts_line_up(rows: list[counters.Row]) -> None:
    """Every st.shared of the PTX stays one STS in the SASS, so the store counts agree exactly; the
    machine's wavefronts follow the 32-bank rule, which ncu's counts exceed by a few percent."""
    for r in rows:
        if r.metric == "shared store instructions":
            assert r.ncu == r.machine, r
        if r.metric.endswith("wavefronts"):
            assert 0.9 <= r.ratio <= 1.15, r


def test_v1_bank_conflicts_are_counted(rows: list[counters.Row]) -> None:
    """v1's strided index gives real bank conflicts: the machine counts them within 10% of ncu."""
    r = next(r for r in rows if r.version == "v1" and r.metric == "shared load bank conflicts")
    assert r.machine > 0 and 0.9 <= r.ratio <= 1.1, r
