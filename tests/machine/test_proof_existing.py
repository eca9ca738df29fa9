"""Item 1, with the recordings already in data/: block reductions (data/block_reduce.json) and every
warp-reduce method (data/warp_reduce_traces.json) as the H200 returned them, replayed on the machine."""
from __future__ import annotations

import pytest

from helpers import data
from helpers.recording.proof import existing


@pytest.fixture(scope="module")
def rows() -> list[existing.Replayed]:
    if not (data.exists("block_reduce") and data.exists("warp_reduce_traces")):
        pytest.skip("data/block_reduce.json and data/warp_reduce_traces.json not recorded yet (scripts/gpu/block.sh)")
    out = existing.block_cases() + existing.warp_methods()
    print("\n" + existing.format_replayed(out))
    return out


@pytest.mark.needs_nvrtc
def test_machine_runs_every_recorded_kernel(rows: list[existing.Replayed]) -> None:
    errors = [(r.name, r.error) for r in rows if r.error]
    assert not errors, errors


@pytest.mark.needs_nvrtc
def test_bit_identical_where_both_say_defined(rows: list[existing.Replayed]) -> None:
    bad = [(r.name, r.mismatches) for r in rows if r.mismatches]
    assert not bad, bad
    assert sum(r.compared for r in rows) > 4000


def test_machine_does_not_hide_defined_results(rows: list[existing.Replayed]) -> None:
    """Where the model (checked against these very recordings) says a value is defined, the machine
    must not call it undefined: that would hatch a correct result in a notebook."""
    hidden = [(r.name, r.machine_undefined_only) for r in rows if r.machine_undefined_only]
    assert not hidden, hidden
