"""The recordings the proof's replay tests read (data/machine_*), loaded once per process: the very
objects :func:`helpers.recording.proof.replay.run_parallel` replays. A test that needs one is skipped,
with the reason, where it is not recorded."""
from __future__ import annotations

import pytest

from helpers.recording.proof import replay, store


def _recorded(what: str):
    reason = store.missing_reason(what)
    if reason:
        pytest.skip(reason)
    return replay.recording(what)


@pytest.fixture(scope="module")
def kernel_recording() -> replay.KernelRecording:
    """data/machine_kernels.*: every recorded kernel launch."""
    return _recorded("kernels")


@pytest.fixture(scope="module")
def program_recording() -> replay.ProgramRecording:
    """data/machine_programs.*: every recorded generated program."""
    return _recorded("programs")
