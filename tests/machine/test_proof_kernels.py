"""Item 1: every instantiation of every kernel, as recorded on the H200, replayed on the machine.

CI replays every recorded launch; ``WARPLAB_PROOF=sample`` runs a quicker sample (every kernel file and
launch family at least once, then the smallest launches up to a thread budget) for local runs."""
from __future__ import annotations

import pytest

from helpers.recording.proof import replay, store


@pytest.fixture(scope="module")
def recording() -> replay.KernelRecording:
    reason = store.missing_reason("kernels")
    if reason:
        pytest.skip(reason)
    return replay.KernelRecording()


def test_recording_covers_every_instantiation(recording: replay.KernelRecording) -> None:
    from helpers.topics.registry import registry

    recorded = {(r["launch"]["file"], r["launch"]["expr"]) for r in recording.rows}
    assert recorded == {(f, e) for f, es in registry().items() for e in es}
    failed = [(r["launch"]["id"], r["status"]) for r in recording.rows if r["status"] != "ok"]
    assert not failed, f"launches that failed on the H200: {failed[:5]}"


def test_machine_reproduces_the_h200_bit_for_bit_where_defined(recording: replay.KernelRecording) -> None:
    rows = recording.rows if replay.full() else recording.sample()
    out = replay.run_parallel("kernels", replay.ci_jobs(), keys=[r["key"] for r in rows])
    s = replay.summary(out)
    print("\n" + replay.format_summary("kernels (" + ("all" if replay.full() else "sample") + ")", s))
    assert s["by_status"].get("inputs_differ", 0) == 0, "inputs rebuilt from the seeds differ from the H200's"
    assert not s["machine_errors"], s["machine_errors"]
    assert s["by_status"].get("mismatch", 0) == 0, s["mismatches"]
    assert s["compared"] > 0
