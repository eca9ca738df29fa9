"""Leader election and warp-aggregated atomics: emulator against NumPy (and the GPU, where present)."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.topics import ballot_uses

LANE = np.arange(32)


def test_popc_ffs() -> None:
    assert ballot_uses.popc([0, 1, 0xFFFFFFFF, 0b1011]).tolist() == [0, 1, 32, 3]
    assert ballot_uses.ffs([0, 1, 0x80000000, 0b1000]).tolist() == [0, 1, 32, 4]


def test_elect() -> None:
    e = ballot_uses.elect(LANE % 3 == 2, backend="emulator")
    assert e.leader == 2 and e.mask == sum(1 << l for l in range(2, 32, 3))
    assert e.rank[2] == 0 and e.rank[5] == 1 and e.rank[0] == -1
    assert ballot_uses.elect(np.zeros(32, bool), backend="emulator").leader == -1


@pytest.mark.parametrize("n", [1, 31, 33, 1000, 4097])
def test_compact_matches_numpy(n: int) -> None:
    v = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    r = ballot_uses.compact(v, 0.5, backend="emulator")
    assert np.array_equal(np.sort(r.kept), np.sort(v[v > 0.5]))
    warps_with_any = sum((v[w:w + 32] > 0.5).any() for w in range(0, n, 32))
    assert r.atomics == warps_with_any and r.per_thread_atomics == int((v > 0.5).sum())


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="values must be a non-empty 1-D array"):
        ballot_uses.compact(np.zeros(0), 0.0)
    with pytest.raises(ValueError, match="predicate must have shape \\(32,\\)"):
        ballot_uses.elect(np.zeros((2, 32), bool))


def test_compact_with_cooperative_groups_on_the_emulator() -> None:
    v = np.random.default_rng(3).standard_normal(1000).astype(np.float32)
    a, b = ballot_uses.compact(v, 0.5, "emulator"), ballot_uses.compact(v, 0.5, "emulator", method="cg")
    assert ballot_uses.same_elements(a, b)
    with pytest.raises(ValueError, match="method must be one of 'ballot', 'cg'"):
        ballot_uses.compact(v, 0.5, method="coalesced")


def test_compact_runs_the_kernel_on_the_machine_in_bounded_launches(monkeypatch: pytest.MonkeyPatch) -> None:
    from helpers.topics import launch as L

    calls: list[int] = []
    real = L.launch

    def spy(name, expr, grid, block, args, *a, **k):
        assert (name, expr) == ("warp_aggregated", "compact_kernel")
        calls.append(args[0].size)
        return real(name, expr, grid, block, args, *a, **k)

    monkeypatch.setattr(ballot_uses, "launch", spy)
    monkeypatch.setattr(ballot_uses, "_CHUNK", 256)
    v = np.random.default_rng(4).standard_normal(600).astype(np.float32)
    r = ballot_uses.compact(v, 0.5, backend="emulator")
    assert calls == [256, 256, 88] and r.source == "SIMT machine"
    assert r.kept.tolist() == v[v > 0.5].tolist()           # the machine's atomics land in thread order
    assert r.atomics == sum((v[w:w + 32] > 0.5).any() for w in range(0, 600, 32))
