"""Everything the SIMT machine can be asked to run without NVRTC (a Mac) is shipped: every version
of the ladder at every block size and unroll a learner, a notebook, a widget or a test can choose,
with the defines :func:`helpers.topics.reduce.run_passes` builds it with (v9 also as its one-block
kernel). A build missing here fails on a Mac only after it is launched."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.engine import kernels
from helpers.topics import launch as L
from helpers.topics import reduce as R


def _builds() -> list[tuple[str, str, tuple[str, ...]]]:
    out = []
    for version in (*R.VERSIONS, "v4_legacy"):
        for block in R.BLOCKS:
            for unroll in (R.UNROLLS if R.uses_unroll(version) else (R.DEFAULT_UNROLL,)):
                for grid in ((1, 2) if version == "v9" else (None,)):
                    expr = R.kernel_name(version, block, grid)
                    out.append((expr.split("<")[0], expr, R.launch_defines(version, unroll)))
    return out


def test_every_machine_build_of_the_ladder_is_shipped() -> None:
    missing = []
    for name, expr, defines in _builds():
        try:
            shipped = kernels.shipped_ptx(name, arch=L.MACHINE_ARCH, defines=defines)
        except (ValueError, FileNotFoundError):
            shipped = None
        if shipped is None or expr not in shipped.lowered:
            missing.append(f"{expr} with {list(defines)}")
    assert not missing, f"not shipped (add to kernels.SHIPPED_DEFINES or the registry, then ./warplab ship): {missing}"


def test_v9_at_block_64_runs_from_the_shipped_ptx(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Mac failure of issue 27: v9's own launch picks REDUCE_UNROLL=1 for a small input."""
    monkeypatch.setenv("WARPLAB_NVRTC", "none")
    x = np.ones(3 * 64 * 4 + 5, np.float32)
    assert R.launch_defines("v9", 1) == ("REDUCE_UNROLL=1",) and R.launch_defines("v9", 4) == ()
    run = R.run_passes(x, "v9", 64, backend="emulator")
    assert run.value == x.size and run.defined
