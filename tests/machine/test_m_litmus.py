"""Litmus tests (helpers.machine.litmus, kernels/litmus/litmus.cu): MP, SB, LB, IRIW, 2+2W, CoRR at
.cta and .gpu scope, with and without fence.sc, on the machine, against the outcomes the PTX model
allows; and every outcome a GPU showed (data/litmus.json, when recorded) against the same sets."""
import json
from pathlib import Path

import pytest

from helpers.machine import litmus as L

pytestmark = pytest.mark.needs_nvrtc

DATA = Path(__file__).resolve().parents[2] / "data" / "litmus.json"


@pytest.fixture(scope="module")
def mod():
    return L.module()


@pytest.mark.parametrize("shape, scope, fence", L.configs())
def test_machine_outcome_is_one_the_model_allows(mod, shape, scope, fence):
    """Relaxed accesses at a scope that includes both threads are morally strong (PTX ISA 8.7): no
    data race. The machine's outcome, where it holds the registers defined, is an allowed one."""
    rep, o, defined = L.run_on_machine(mod, shape, scope, fence, blocks=2)
    assert not [f for f in rep.issues if f.kind != "race"], rep.summary()
    assert all("no data race" in f.message for f in rep.of_kind("race")), rep.summary()
    allowed = L.SHAPES[shape].allowed(fence)
    for row, d in zip(o.tolist(), defined.tolist()):
        if all(d):
            assert tuple(row) in allowed, (row, sorted(allowed))


@pytest.mark.parametrize("scope", L.SCOPES)
def test_message_passing_without_fences_leaves_the_data_read_undefined(mod, scope):
    """MP without fences: the reader saw y = 1 and then reads x, which nothing orders after the
    write of x (no release/acquire, PTX ISA, Release and Acquire Patterns): the machine marks r1 undefined, so it admits the
    weak outcome r0 = 1, r1 = 0 that the model allows; with fences r1 is defined (and 1)."""
    rep, o, defined = L.run_on_machine(mod, "MP", scope, False)
    assert (o[:, 0] == 1).all() and not defined[:, 1].any()
    assert rep.of_kind("race") and "may return the old value" in rep.of_kind("race")[0].message
    rep, o, defined = L.run_on_machine(mod, "MP", scope, True)
    assert rep.clean and defined.all() and (o == 1).all()


def test_the_model_tables():
    assert L.SHAPES["MP"].allowed(False) == {(0, 0), (0, 1), (1, 0), (1, 1)}
    assert (1, 0) not in L.SHAPES["MP"].allowed(True)
    assert (0, 0) not in L.SHAPES["SB"].allowed(True)
    assert (1, 0, 1, 0) not in L.SHAPES["IRIW"].allowed(True) and len(L.SHAPES["IRIW"].allowed(False)) == 16
    assert (1, 0) not in L.SHAPES["CoRR"].allowed(False)
    assert (1, 1) not in L.SHAPES["2+2W"].allowed(True)


@pytest.mark.skipif(not DATA.exists(), reason="data/litmus.json is recorded on a GPU (helpers.recording.record_litmus)")
def test_no_recorded_outcome_is_one_the_model_forbids():
    rec = json.loads(DATA.read_text())
    assert rec["stamp"]["gpu"]
    seen = 0
    for row in rec["results"]:
        allowed = L.SHAPES[row["shape"]].allowed(row["fence"])
        for key, count in row["outcomes"].items():
            outcome = tuple(int(v) for v in key.split(","))
            assert outcome in allowed, (row["shape"], row["scope"], row["fence"], outcome, count)
            seen += count
    assert seen > 0
