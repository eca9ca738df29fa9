"""Item 2: the 2,000 generated programs recorded on the H200, every one replayed on the machine.

0 mismatches on defined outputs: registers and exact atomics bit for bit, tickets as multisets,
order-free float atomics within the float32 rounding bound of their terms."""
from __future__ import annotations

import pytest

from helpers.recording.proof import programs, replay, store


@pytest.fixture(scope="module")
def recording() -> replay.ProgramRecording:
    reason = store.missing_reason("programs")
    if reason:
        pytest.skip(reason)
    return replay.ProgramRecording()


def test_at_least_2000_programs_were_recorded(recording: replay.ProgramRecording) -> None:
    assert recording.count >= programs.PROGRAMS
    failed = [(p["name"], p["status"]) for _, p in recording.items() if p["status"] != "ok"]
    assert len(failed) <= recording.count // 100, f"programs that failed on the H200: {failed[:5]}"


def test_every_program_matches_on_defined_outputs(recording: replay.ProgramRecording) -> None:
    # every program, one module per work unit, over replay.ci_jobs() processes (about 35 s on 2 cores)
    out = replay.run_parallel("programs", replay.ci_jobs())
    s = replay.summary(out)
    print("\n" + replay.format_summary(f"programs (all, {replay.ci_jobs()} processes)", s))
    assert s["by_status"].get("inputs_differ", 0) == 0, "inputs rebuilt from the seeds differ from the H200's"
    assert not s["machine_errors"], s["machine_errors"]
    assert s["by_status"].get("mismatch", 0) == 0, s["mismatches"]
    assert s["items"] >= programs.PROGRAMS * 0.99
