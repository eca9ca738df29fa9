"""Item 4: the equivalence configurations (every row of helpers/engine/intrinsics.py) and
data/warp_intrinsics.json, with kernels/warp_intrinsics.cu itself running on the machine."""
from __future__ import annotations

import pytest

from helpers import data
from helpers.engine import cases
from helpers.engine import intrinsics as table
from helpers.recording.proof import intrinsics


@pytest.mark.needs_nvrtc
def test_the_equivalence_configurations_match_the_emulator_on_the_machine() -> None:
    case_list = intrinsics.equivalence_cases()
    # the count is the table's (28,672 when the H200 ran them: tests/engine/test_intrinsics.py pins those)
    assert intrinsics.configurations(case_list) == intrinsics.N_WARPS * sum(map(cases.random_count, table.rows()))
    reference = [cases.run(c, "emulator") for c in case_list]
    bad = intrinsics.compare(case_list, reference)
    print(f"\nINTRINSICS ON THE MACHINE: {intrinsics.configurations(case_list)} configurations in "
          f"{len(case_list)} cases, {len(bad)} mismatching cases")
    assert not bad, bad[:10]


@pytest.mark.needs_nvrtc
def test_recorded_h200_cases_match_on_the_machine() -> None:
    if not data.exists("warp_intrinsics"):
        pytest.skip("data/warp_intrinsics.json not recorded yet (python -m helpers.recording.record on a GPU)")
    rec = data.load("warp_intrinsics")["cases"]
    bad = intrinsics.compare(rec, [c["result"] for c in rec])
    assert not bad, bad[:10]
