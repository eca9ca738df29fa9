"""Item 1: every instantiation of every kernel, as recorded on the H200, replayed on the machine.

CI replays every recorded launch; ``WARPLAB_PROOF=sample`` runs a quicker sample (every kernel file and
launch family at least once, then the smallest launches up to a thread budget) for local runs."""
from __future__ import annotations

import pytest

from helpers.recording.proof import replay


def test_recording_covers_every_instantiation(kernel_recording: replay.KernelRecording) -> None:
    from helpers.topics.registry import registry

    recorded = {(r["launch"]["file"], r["launch"]["expr"]) for r in kernel_recording.rows}
    assert recorded == {(f, e) for f, es in registry().items() for e in es}
    failed = [(r["launch"]["id"], r["status"]) for r in kernel_recording.rows if r["status"] != "ok"]
    assert not failed, f"launches that failed on the H200: {failed[:5]}"


@pytest.mark.slow
def test_machine_reproduces_the_h200_bit_for_bit_where_defined(kernel_recording: replay.KernelRecording) -> None:
    rows = kernel_recording.rows if replay.full() else kernel_recording.sample()
    out = replay.run_parallel("kernels", replay.ci_jobs(), keys=[r["key"] for r in rows])
    s = replay.summary(out)
    print("\n" + replay.format_summary("kernels (" + ("all" if replay.full() else "sample") + ")", s))
    assert not replay.failures(s), replay.failures(s)
    assert s["compared"] > 0
