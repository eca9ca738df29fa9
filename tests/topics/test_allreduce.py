"""Notebook 08's emulated all-reduce: ring and tree against independent float32 references and NumPy,
for many rank counts and sizes (also sizes the rank count does not divide); NCCL's tree rule; the
byte counts and bandwidth formulas; the figures and the explorer over their whole range."""
from __future__ import annotations

import ast
import itertools

import numpy as np
import pytest

from helpers.topics import allreduce as A
from helpers.viz import allreduce as F
from helpers.widgets import allreduce as W

RANKS = (1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 31, 64)
ELEMENTS = (1, 2, 3, 5, 8, 17, 100, 1000)


# ---------------------------------------------------------------- independent references


def ring_reference(x: np.ndarray) -> np.ndarray:
    """Chunk c is summed along the ring starting at rank c: ((x_c + x_{c+1}) + ...) + x_{c-1}, in float32."""
    n, m = x.shape
    out = np.empty(m, np.float32)
    for c, (a, b) in enumerate(A.chunk_bounds(m, n)):
        acc = x[c, a:b].copy()
        for k in range(1, n):
            acc = (acc + x[(c + k) % n, a:b]).astype(np.float32)
        out[a:b] = acc
    return out


def tree_reference(x: np.ndarray) -> np.ndarray:
    """Every rank's partial = (own + lower child's partial) + higher child's partial, in float32."""
    parent = A.btree_parents(x.shape[0])

    def partial(r: int) -> np.ndarray:
        acc = x[r].copy()
        for child in sorted(q for q, p in enumerate(parent) if p == r):
            acc = (acc + partial(child)).astype(np.float32)
        return acc
    return partial(0)


def evaluate(expression: str, x: np.ndarray) -> np.ndarray:
    """Evaluate a summation_order expression over x0 .. x{n-1} in float32, grouping as written."""
    def ev(node: ast.AST) -> np.ndarray:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return (ev(node.left) + ev(node.right)).astype(np.float32)
        assert isinstance(node, ast.Name)
        return x[int(node.id[1:])]
    return ev(ast.parse(expression, mode="eval").body)


# ---------------------------------------------------------------- the algorithms


@pytest.mark.parametrize("n", RANKS)
@pytest.mark.parametrize("m", ELEMENTS)
def test_ring_and_tree_match_their_float32_order(n: int, m: int) -> None:
    x = A.random_inputs(n, m, seed=n * 1000 + m)
    ring, tree = A.run(x, "ring"), A.run(x, "tree")
    for r, ref in ((ring, ring_reference(x)), (tree, tree_reference(x))):
        assert r.result.dtype == np.float32 and r.result.shape == (n, m)
        assert (A.ulps_apart(r.result, ref[None, :]) == 0).all(), "every rank holds the reference, bit for bit"
        assert r.agrees()


@pytest.mark.parametrize("n", (2, 3, 4, 6, 8, 11))
def test_summation_order_is_what_the_run_computes(n: int) -> None:
    m = 3 * n + 2    # uneven chunks
    x = A.random_inputs(n, m, seed=3)
    for name in A.ALGORITHMS:
        run = A.run(x, name)
        for c, (a, b) in enumerate(run.bounds):
            expr = A.summation_order(run.schedule, c)
            assert (A.ulps_apart(evaluate(expr, x[:, a:b]), run.result[0, a:b]) == 0).all(), (name, c, expr)


def test_summation_order_text() -> None:
    assert A.summation_order(A.ring_schedule(4), 2) == "((x2 + x3) + x0) + x1"
    assert A.summation_order(A.tree_schedule(4), 0) == "x0 + ((x2 + x1) + x3)"
    assert A.summation_order(A.ring_schedule(1), 0) == "x0"
    with pytest.raises(ValueError, match="chunk"):
        A.summation_order(A.ring_schedule(4), 4)


@pytest.mark.parametrize("n", RANKS)
def test_integer_inputs_are_exact_in_any_order(n: int) -> None:
    x = A.integer_inputs(n, 37)
    for name in A.ALGORITHMS:
        r = A.run(x, name)
        assert np.array_equal(r.result, np.broadcast_to(np.sum(x, axis=0), r.result.shape))
        assert np.array_equal(r.result[0], r.reference)


def test_float_orders_differ_but_stay_inside_the_bound() -> None:
    cmp = A.compare_orders(A.random_inputs(8, 4096, seed=0))
    assert cmp.differ("ring", "tree") > 0 and cmp.differ("ring", "numpy float32") > 0
    for name in cmp.results:
        assert cmp.within_bound(name) and cmp.worst_fraction(name) <= 1
    text = A.order_text(cmp)
    assert "ring" in text and "inside" in text and "OUTSIDE" not in text


@pytest.mark.parametrize("n", (2, 3, 8, 16, 64))
@pytest.mark.parametrize("m", (2, 7, 1000))
def test_numpy_sums_axis0_rank_by_rank_for_these_shapes(n: int, m: int) -> None:
    """What notebook 08 says of NumPy: np.sum(x, axis=0) on a C-contiguous (ranks, elements) float32
    array with at least 2 elements adds the ranks one after the other, rank 0 first."""
    x = A.random_inputs(n, m, seed=5)
    acc = x[0].copy()
    for r in range(1, n):
        acc = acc + x[r]
    assert np.array_equal(np.sum(x, axis=0), acc)


def test_one_rank_is_a_copy() -> None:
    x = A.random_inputs(1, 9)
    for name in A.ALGORITHMS:
        r = A.run(x, name, history=True)
        assert r.schedule.n_steps == 0 and np.array_equal(r.result, x) and r.held.shape == (1, 1, 9)


@pytest.mark.parametrize("n", RANKS)
def test_schedules_complete_every_cell(n: int) -> None:
    for sched in (A.ring_schedule(n), A.tree_schedule(n), A.tree_schedule(n, 1), A.tree_schedule(n, 3)):
        assert A.contributors(sched)[-1].all()
        writes = [[(t.dst, t.chunk, t.op) for t in ts] for ts in sched.steps]
        for ts in writes:   # a cell is never both added into and overwritten in one step
            cells = {(d, c) for d, c, op in ts if op == "copy"}
            assert len(cells) == sum(op == "copy" for _, _, op in ts)
            assert not cells & {(d, c) for d, c, op in ts if op == "add"}


def test_step_counts() -> None:
    for n in RANKS:
        assert A.ring_schedule(n).n_steps == 2 * (n - 1)
        h = A.tree_heights(A.btree_parents(n))[0]
        assert A.tree_schedule(n, 5).n_steps == (4 + 2 * h if n > 1 else 0)
    assert [A.tree_heights(A.btree_parents(n))[0] for n in (2, 4, 8, 16, 64)] == [1, 2, 3, 4, 6]


def test_meaningful_cells_are_the_ones_read_later() -> None:
    for sched in (A.ring_schedule(5), A.tree_schedule(6)):
        m = A.meaningful(sched)
        assert m[-1].all()
        for k, ts in enumerate(sched.steps, start=1):
            for t in ts:
                assert m[k - 1, t.src, t.chunk], "a value that is sent still matters"
    after_reduce_scatter = A.meaningful(A.ring_schedule(4))[3]
    assert after_reduce_scatter.tolist() == [[c == (r + 1) % 4 for c in range(4)] for r in range(4)], \
        "only each rank's complete chunk still matters: the all-gather overwrites the rest"


# ---------------------------------------------------------------- NCCL's trees


def test_btree_matches_ncclgetbtree_illustration() -> None:
    """The 14-rank tree drawn in NCCL's src/graph/trees.cc."""
    parent = A.btree_parents(14)
    expect = {1: 2, 3: 2, 5: 6, 7: 6, 9: 10, 11: 10, 13: 12, 2: 4, 6: 4, 10: 12, 4: 8, 12: 8, 8: 0, 0: -1}
    assert {r: parent[r] for r in expect} == expect


@pytest.mark.parametrize("n", range(1, 65))
def test_btree_is_a_binary_tree_rooted_at_zero(n: int) -> None:
    parent = A.btree_parents(n)
    kids = [sum(p == r for p in parent) for r in range(n)]
    assert parent[0] == -1 and kids[0] <= 1 and max(kids) <= 2
    for r in range(n):
        seen = set()
        while r != 0:
            assert r not in seen
            seen.add(r)
            r = parent[r]


def test_dtree_mirror_and_shift() -> None:
    """NCCL's ncclGetDtree illustrations: 12 ranks (mirror) and 13 ranks (shift)."""
    _, b12 = A.dtree_parents(12)
    assert (b12[11], b12[3], b12[7], b12[1], b12[0]) == (-1, 11, 3, 3, 1)
    _, b13 = A.dtree_parents(13)
    assert (b13[1], b13[9], b13[0], b13[5]) == (-1, 1, 9, 9)
    for n in range(2, 40):   # each tree is a tree; a rank is an interior node in at most one of them
        trees = A.dtree_parents(n)
        for t in trees:
            assert sum(p == -1 for p in t) == 1
        if n % 2 == 0 and n >= 4:
            interior = [{r for r in range(n) if any(p == r for p in t)} for t in trees]
            assert not interior[0] & interior[1]


# ---------------------------------------------------------------- bytes and bandwidth


@pytest.mark.parametrize("n", RANKS)
@pytest.mark.parametrize("m", (1, 5, 64, 1000, 1024))
def test_ring_bytes(n: int, m: int) -> None:
    sent, received = A.bytes_moved(A.ring_schedule(n), m)
    sizes = [b - a for a, b in A.chunk_bounds(m, n)]
    for r in range(n):   # every chunk but the one a rank owns after reduce-scatter, and the one after that
        expect = 0 if n == 1 else 4 * (2 * m - sizes[(r + 1) % n] - sizes[(r + 2) % n])
        assert sent[r] == expect
    assert sent.sum() == received.sum()
    if m % n == 0:
        assert (sent == A.ring_bytes_per_rank(4 * m, n)).all()


def test_tree_bytes() -> None:
    for n in (2, 4, 7, 8, 16):
        sent, _ = A.bytes_moved(A.tree_schedule(n), 64 * n)
        assert np.allclose(sent, A.tree_bytes_sent(n, 4 * 64 * n))
    for n in (4, 8, 16, 32):
        assert A.tree_bytes_sent(n, 1.0).max() == 3.0
        assert A.tree_bytes_sent(n, 1.0, double=True).max() == 2.0
    assert A.reduce_broadcast_bytes_sent(8, 1.0).tolist() == [7.0] + [1.0] * 7


def test_bandwidth_formulas() -> None:
    """nccl-tests doc/PERFORMANCE.md: algbw = S / t; all-reduce busbw = algbw * 2 (n - 1) / n."""
    assert A.algbw(1e9, 0.5) == 2e9
    assert A.busbw(1e9, 0.5, 8) == pytest.approx(2e9 * 14 / 8)
    assert A.busbw(1e9, 0.5, 1) == 0
    assert [A.busbw_factor(n) for n in (1, 2, 4)] == [0.0, 1.0, 1.5]
    with pytest.raises(ValueError, match="seconds"):
        A.algbw(1, 0)


def test_tables() -> None:
    traffic = A.traffic_table((2, 8)).splitlines()
    assert traffic[2].split()[1:] == ["1.750S", "3.000S", "2.000S", "7.000S", "1.750S"]
    assert A.step_table((8,)).splitlines()[1].split() == ["8", "14", "3", "6", "13"]
    assert "1.750" in A.factor_table()


# ---------------------------------------------------------------- inputs and checks


def test_chunk_bounds() -> None:
    for m, n in itertools.product((0, 1, 3, 10, 17, 1000), (1, 2, 3, 7, 64)):
        b = A.chunk_bounds(m, n)
        sizes = [e - s for s, e in b]
        assert len(b) == n and b[0][0] == 0 and b[-1][1] == m and sum(sizes) == m
        assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)
        assert all(b[k][1] == b[k + 1][0] for k in range(n - 1))


def test_bad_input_names_the_parameter() -> None:
    with pytest.raises(ValueError, match="algorithm must be one of"):
        A.schedule("butterfly", 4)
    with pytest.raises(ValueError, match=r"n_ranks .* \[1, 64\]"):
        A.ring_schedule(65)
    with pytest.raises(ValueError, match="n_chunks must equal n_ranks"):
        A.schedule("ring", 4, 3)
    with pytest.raises(ValueError, match="float32"):
        A.run(np.ones((2, 3)), "ring")
    with pytest.raises(ValueError, match="shape"):
        A.run(np.ones(3, np.float32), "ring")
    with pytest.raises(ValueError, match="history=True"):
        A.run(np.ones((64, 1 << 16), np.float32), "ring", history=True)
    with pytest.raises(ValueError, match="step"):
        A.ring_schedule(3).transfers(5)


def test_sizes_and_versions() -> None:
    assert [A.parse_size(s) for s in ("8", "64K", "1MiB", "4GiB", " 2 gb ")] == [8, 65536, 1 << 20, 4 << 30, 2 << 30]
    with pytest.raises(ValueError, match="size must be"):
        A.parse_size("4 TB")
    assert [A.size_label(v) for v in (8, 4096, 3 << 20, 4 << 30, 1000)] == ["8 B", "4 KiB", "3 MiB", "4 GiB", "1000 B"]
    sizes = A.sweep_sizes()
    assert sizes[0] == 8 and sizes[-1] == 4 << 30 and len(sizes) == 30
    with pytest.raises(ValueError, match="power of two"):
        A.sweep_sizes(6, 64)
    assert A.iterations_for(8) == 50 and A.iterations_for(1 << 20) == 16 and A.iterations_for(1 << 30) == 1
    assert A.nccl_version_text(22809) == "2.28.9" and A.nccl_version_text(2708) == "2.7.8"
    assert A.child_env({"NCCL_NVLS_ENABLE": "1", "X": "y"}) == {"NCCL_NVLS_ENABLE": "0", "X": "y"}


# ---------------------------------------------------------------- figures and the explorer


def test_members_label() -> None:
    m = lambda *r: np.isin(np.arange(8), r)  # noqa: E731
    assert F.members_label(m(3)) == "3" and F.members_label(m(2, 3, 4)) == "2–4"
    assert F.members_label(m(6, 7, 0, 1)) == "6–1" and F.members_label(m(*range(8))) == "0–7"
    assert F.members_label(m(0, 2)) == "2 of 8"


@pytest.mark.parametrize("name,n,m", [("ring", 4, 4), ("ring", 5, 3), ("tree", 6, 5), ("tree", 3, 7), ("ring", 1, 2)])
def test_frames_draw_every_step(name: str, n: int, m: int) -> None:
    run = A.run(A.integer_inputs(n, m), name, history=True)
    for step in range(run.schedule.n_steps + 1):
        fig = F.frame_figure(run, step, follow=0)
        assert len(fig.axes[0].patches) >= n * run.schedule.n_chunks
    anim = F.animation(run)
    assert len(list(anim.new_frame_seq())) == run.schedule.n_steps + 1
    assert "chunk" in F.cells_text(run, run.schedule.n_steps)
    assert F.steps_text(run.schedule).count("\n") == run.schedule.n_steps


def test_frame_rejects_bad_steps() -> None:
    run = A.run(A.integer_inputs(3, 3), "ring")
    with pytest.raises(ValueError, match="step"):
        F.frame_figure(run, 9)
    with pytest.raises(ValueError, match="follow"):
        F.frame_figure(run, 0, follow=3)


def test_traffic_chart() -> None:
    fig = F.traffic_chart()
    assert len(fig.axes[0].patches) == 16


@pytest.fixture
def no_figures(monkeypatch: pytest.MonkeyPatch) -> list:
    calls: list = []
    monkeypatch.setattr(F, "frame_figure", lambda *a, **k: calls.append(a) or "fig")
    return calls


def test_explorer_view_whole_range(no_figures: list) -> None:
    """Every algorithm x ranks x elements x values x step x chunk: a view or a message, never an exception."""
    for name, n, m, values in itertools.product(A.ALGORITHMS, range(1, W.MAX_RANKS + 1), (1, 3, 64), W.VALUES):
        steps = A.schedule(name, n).n_steps
        for step, chunk in itertools.product({0, steps // 2, steps, steps + 1}, {0, n - 1, n}):
            v = W.allreduce_view(name, n, m, values, step, chunk)
            assert (v.message is None) == (step <= steps and chunk < n), (name, n, m, step, chunk, v.message)
            if v.message is None:
                assert v.figure == "fig" and "added as" in v.table


@pytest.mark.parametrize("kwargs,needle", [
    ({"algorithm": "star"}, "algorithm must be one of"), ({"ranks": 0}, "ranks must be"),
    ({"ranks": 13}, "ranks must be"), ({"elements": 65}, "elements must be"), ({"values": "zeros"}, "values must be"),
    ({"step": -1}, "step"), ({"chunk": 9}, "chunk"), ({"ranks": "4"}, "ranks must be"),
])
def test_explorer_messages(kwargs: dict, needle: str) -> None:
    v = W.allreduce_view(**kwargs)
    assert v.figure is None and needle in v.message


def test_explorer_final_line() -> None:
    v = W.allreduce_view("ring", 4, 8, "integers")
    assert "8 of 8 bitwise equal to NumPy" in v.table and "inside" in v.table
    assert "not finished" in W.allreduce_view("tree", 4, 8, step=1).table


def test_explorer_widget_follows_the_schedule() -> None:
    box = W.allreduce_explorer()
    c = box.controls
    c["ranks"].value = 7
    assert c["step"].max == 12 and c["chunk"].max == 6
    c["algorithm"].value = "tree"
    assert c["step"].max == A.tree_schedule(7).n_steps
    c["step"].value = c["step"].max
    c["ranks"].value = 2
    assert c["step"].value <= c["step"].max == A.tree_schedule(2).n_steps
    assert box.children[-3].value == ""   # no message: every control inside its range


def test_ring_model_is_latency_bound_small_and_reaches_the_link_large() -> None:
    """The model's shape: t = 2(n-1) latencies plus 2(n-1)/n · S / B; busbw tends to B, algbw to B·n/(2(n-1))."""
    t, alg, bus = A.ring_model(8, 1e-6)
    assert t == pytest.approx(14.0) and bus < 1e-6
    t, alg, bus = A.ring_model(8, 1e9)
    assert bus == pytest.approx(1.0, rel=1e-6) and alg == pytest.approx(8 / 14, rel=1e-6)
    assert A.ring_model_table(4).count("\n") == 8


@pytest.mark.parametrize("args", [(1, 1.0), (8, 0), (8, -1.0)])
def test_ring_model_names_its_bad_parameter(args: tuple) -> None:
    with pytest.raises(ValueError, match="n_ranks|size"):
        A.ring_model(*args)
