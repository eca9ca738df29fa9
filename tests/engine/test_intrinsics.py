"""The intrinsic table (helpers/engine/intrinsics.py) against what it describes: the kernels' source and
shipped PTX, the public API, the operator table, and the proof cases the H200 ran."""
from __future__ import annotations

import gzip
import hashlib
import json
import re
from pathlib import Path

import pytest

from helpers.engine import cases
from helpers.engine import intrinsics
from helpers.engine import ops
from helpers.engine import warp
from helpers.engine.intrinsics import INTRINSICS
from helpers.recording.proof import intrinsics as proof

ROOT = Path(__file__).resolve().parents[2]
SOURCE = (ROOT / "kernels" / f"{intrinsics.FILE}.cu").read_text()
# What the H200 ran (tests/gpu/test_equivalence.py; recorded in data/): the first cases of the proof's
# set, pinned by content, so that a new row can only add cases after them.
H200_ROWS = ("shfl_down", "shfl_up", "shfl_xor", "shfl_idx", "ballot", "any_sync", "all_sync", "activemask",
             "match_any", "reduce_add", "reduce_min", "reduce_max")
H200_CASES = 3_584
H200_SHA256 = "6d0311fb3c07acfcb041235f29994d4a141384c30ce8d1cbbd80b271218b7241"


def _anchored(name: str) -> str:
    """The source between ``[anchor:name]`` and ``[end:name]`` in kernels/warp_intrinsics.cu."""
    m = re.search(rf"// \[anchor:{name}\]\n(.*?)// \[end:{name}\]", SOURCE, re.S)
    assert m, f"no [anchor:{name}] in kernels/{intrinsics.FILE}.cu"
    return m.group(1)


def test_names_are_unique_and_each_family_names_its_kinds_once() -> None:
    assert len(set(intrinsics.names())) == len(INTRINSICS)
    for family in intrinsics.FAMILIES:
        kinds = [r.kind for r in intrinsics.rows(family)]
        assert kinds and len(set(kinds)) == len(kinds), family
    assert {r.family for r in INTRINSICS} == set(intrinsics.FAMILIES)


def test_a_shuffle_has_a_mode_and_the_others_a_column() -> None:
    for r in INTRINSICS:
        assert (r.mode is not None) == (r.family == "shuffle") == (r.column is None), r.name
        assert r.kernel in SOURCE, r.name


def test_columns_of_each_kernel_are_its_words_in_order() -> None:
    """out[W*i + c]: every column 0..W-1 written by exactly one row, W = words(kernel)."""
    for kernel in {r.kernel for r in INTRINSICS if r.column is not None}:
        columns = sorted(r.column for r in INTRINSICS if r.kernel == kernel)
        assert columns == list(range(intrinsics.words(kernel))), kernel


def test_every_column_row_is_the_call_its_kernel_writes_to_that_column() -> None:
    for r in INTRINSICS:
        if r.column is None:
            continue
        body = _anchored(r.kernel)
        w = intrinsics.words(r.kernel)
        assert re.search(rf"out\[{w} \* i \+ {r.column}\] = [^;]*\b{re.escape(r.cuda)}\(", body), (r.name, r.cuda)


def test_every_shuffle_mode_is_the_dispatch_of_its_cuda_call() -> None:
    """warplab::shuffle<T, Mode>: ``if (Mode == kX) return <cuda>(``, the last mode unguarded."""
    enum_body = re.search(r"enum ShuffleMode \{([^}]*)\}", SOURCE).group(1)
    enum = {k: int(v) for k, v in re.findall(r"(k\w+) = (\d+)", enum_body)}
    body = _anchored("shuffle_dispatch")
    called = {enum[k]: cuda for k, cuda in re.findall(r"if \(Mode == (k\w+)\) return (\w+)\(", body)}
    (rest,) = set(enum.values()) - set(called)          # the one mode the dispatch falls through to
    called[rest] = re.findall(r"^    return (\w+)\(", body, re.M)[-1]
    assert {r.mode: r.cuda for r in intrinsics.rows("shuffle")} == called


def test_every_ptx_instruction_is_in_the_shipped_ptx() -> None:
    ptx = gzip.decompress((ROOT / "kernels" / "shipped" / "sm_90" / f"{intrinsics.FILE}.ptx.gz").read_bytes()).decode()
    for r in INTRINSICS:
        assert re.search(rf"\b{re.escape(r.ptx)}\.(b32|pred|s32|u32)\b", ptx), (r.name, r.ptx)


def test_every_public_intrinsic_has_a_row_and_the_table_order() -> None:
    public = [n for n in warp.__all__ if callable(getattr(warp, n)) and not isinstance(getattr(warp, n), type)]
    assert public == [*intrinsics.names(), "syncwarp"]   # __syncwarp returns no value: no row
    for r in intrinsics.rows("collective"):
        fn = getattr(warp, r.name)
        assert (fn.__name__, fn.__doc__) == (r.name, r.doc)
    assert all(r.doc for r in intrinsics.rows("collective"))
    assert not any(r.doc for r in INTRINSICS if r.family != "collective")   # warp.py writes those


def test_reduce_rows_name_their_operator_and_compute_capability() -> None:
    """``__reduce_*_sync``: ops.REDUCE_SYNC names the same intrinsic; compute capability 8.x (CUDA C++
    Programming Guide, Warp Reduce Functions), checked before a launch; the other rows launch unchecked."""
    for r in INTRINSICS:
        redux = r.ptx.startswith("redux.sync.")
        assert (r.op is not None) == redux == (r.cc is not None), r.name
        if redux:
            assert ops.REDUCE_SYNC[r.op] == r.cuda and r.cc == (8, 0)


def test_the_cases_the_h200_ran_come_first_and_the_count_is_the_tables() -> None:
    case_list = proof.equivalence_cases()
    assert len(case_list) == sum(cases.random_count(r) for r in INTRINSICS)
    assert proof.configurations(case_list) == proof.N_WARPS * len(case_list)
    assert intrinsics.names()[:len(H200_ROWS)] == H200_ROWS
    assert sum(cases.random_count(intrinsics.row(n)) for n in H200_ROWS) == H200_CASES
    digest = hashlib.sha256(json.dumps(case_list[:H200_CASES]).encode()).hexdigest()
    assert digest == H200_SHA256, "the H200's proof cases changed: append new rows last"


def test_lookups_name_what_exists() -> None:
    assert intrinsics.row("ballot").cuda == "__ballot_sync"
    assert intrinsics.by_kind("collective", "add").name == "reduce_add"
    with pytest.raises(KeyError, match="shfl_down"):
        intrinsics.row("reduce_or")
    with pytest.raises(KeyError, match="ballot"):
        intrinsics.by_kind("vote", "or")
    with pytest.raises(ValueError, match="'shuffle'"):
        intrinsics.rows("barrier")
    with pytest.raises(KeyError):
        intrinsics.words("shuffle_kernel")
