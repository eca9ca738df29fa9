"""``python -m helpers.bench``: time the reduction ladder against ``cupy.sum``, a plain copy and an empty
kernel, in one run, with two clocks kept apart (:mod:`helpers.bench.clock`).

    python -m helpers.bench                   # the ladder, 2^20 .. 2^28 (no GPU: the recorded H200 run)
    python -m helpers.bench --record          # ... and write local-recordings/bench_ladder.json
    python -m helpers.bench --sweep --record  # best kernels, cupy.sum, copy, empty over 2^10 .. 2^30
    python -m helpers.bench --tune --record   # block size x unroll of v8, onepass and v9

On a GPU it names that GPU's memory ceiling and its source (:mod:`helpers.bench.ceiling`) and checks
the relative goals (against ``cupy.sum`` in the same run, fractions of that ceiling); the H200's
absolute goals only on an H200. ``--record`` writes into ``$WARPLAB_RECORD_INTO``, else the
learner's ``local-recordings/`` (:func:`helpers.data.record_locally_unless_set`); the H200 scripts
set it to ``data``.

Contract (:func:`main`): prints the table, the ceiling and the checks on stdout, progress and failures on
stderr; exit status 0 (done, or the recording shown without a GPU), 1 (no GPU and nothing
recorded), 2 (``--record`` without a GPU), 3 (a version's check failed). ``--first-launch N`` is
the child process of :func:`helpers.bench.clock.fresh_first_launch_us`. Imports engine, topics and
the modules of :mod:`helpers.bench`.
"""
from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from helpers.bench.ceiling import ceiling_of
from helpers.bench.clock import DEFAULT_REPS, first_launch_us
from helpers.bench.report import format_acceptance, format_table
from helpers.bench.results import KINDS, load_recorded, record, record_name
from helpers.bench.runs import (DEFAULT_SIZES, SWEEP_SIZES, SWEEP_VERSIONS, TUNE_SIZES, TUNE_VERSIONS, random_input,
                                run_ladder, run_sweep, run_tune)
from helpers import data
from helpers.engine import backend
from helpers.topics import reduce as R


def show_recorded(kinds: Sequence[str] = KINDS, reason: str = "") -> bool:
    """Print the recorded runs of ``kinds`` (with their labels); False when none is recorded."""
    shown = False
    for kind in kinds:
        results = load_recorded(kind)
        if results is None:
            continue
        if not shown and reason:
            print(f"No usable CUDA GPU here ({reason}): showing the recorded results instead.")
        shown = True
        print()
        print(format_table(results, sizes=(2**20, 2**25, 2**28, 2**30) if kind != "tune" else None))
        if kind != "tune":   # the checks of today's definitions, on the recorded rows (the stored verdicts may predate them)
            print(ceiling_of(results).describe())
            print(format_acceptance({**results, "acceptance": None}))
    return shown


def _parse_sizes(text: str) -> list[int]:
    """``"20,25,28"`` (log2 sizes) or ``"1000,4096"`` (values >= 64 are sizes themselves)."""
    out = []
    for part in text.split(","):
        v = int(part)
        out.append(2**v if v < 64 else v)
    return out


def _first_launch_main(n: int) -> int:
    """The child of :func:`helpers.bench.clock.fresh_first_launch_us`: one cold launch of the seed kernel, as JSON."""
    import json

    x = random_input(n, seed=7)
    launch, _ = R.seed_launcher(x)
    print(json.dumps({"n": n, "first_launch_us": first_launch_us(launch)}))
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The command line (``argv``: its arguments, None for ``sys.argv``); returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m helpers.bench", description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--sweep", action="store_true", help="size sweep 2^10..2^30 of the fastest kernels")
    parser.add_argument("--tune", action="store_true", help="block size x unroll of v8, onepass and v9")
    parser.add_argument("--record", action="store_true", help="write data/bench_<kind>.json (GPU only)")
    parser.add_argument("--sizes", type=_parse_sizes, help="comma list of log2 sizes (20,25) or sizes")
    parser.add_argument("--versions", type=lambda s: s.split(","), help="comma list, e.g. v0,v4,onepass")
    parser.add_argument("--block", type=int, default=R.DEFAULT_BLOCK)
    parser.add_argument("--reps", type=int, default=DEFAULT_REPS, help="interleaved repetitions (goals use their median)")
    parser.add_argument("--replays", type=int, default=5, help="graph replays per repetition")
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    parser.add_argument("--first-launch", type=int, metavar="N",
                        help="(used by fresh_first_launch_us) time the seed kernel's first launch on N floats")
    args = parser.parse_args(argv)
    if args.first_launch:
        return _first_launch_main(args.first_launch)
    kind = "sweep" if args.sweep else "tune" if args.tune else "ladder"

    d = backend.detect()
    if not d.usable:
        if args.record:
            print(f"--record needs a CUDA GPU, and there is none here: {d.reason}.", file=sys.stderr)
            return 2
        if show_recorded((kind,), reason=d.reason):
            return 0
        print(f"No usable CUDA GPU here ({d.reason}), and no recorded {kind} run in "
              f"data/{record_name(kind)}.json yet: it is recorded on a GPU host by scripts/gpu/reduce.sh.")
        return 1

    print(backend.report("cupy"), file=sys.stderr)
    common = {"reps": args.reps, "replays": args.replays, "progress": not args.quiet}
    if kind == "ladder":
        results = run_ladder(sizes=args.sizes or DEFAULT_SIZES, versions=args.versions or R.VERSIONS,
                             block=args.block, **common)
    elif kind == "sweep":
        results = run_sweep(sizes=args.sizes or SWEEP_SIZES, versions=args.versions or SWEEP_VERSIONS,
                            block=args.block, **common)
    else:
        results = run_tune(sizes=args.sizes or TUNE_SIZES, versions=args.versions or TUNE_VERSIONS, **common)
    print(format_table(results))
    print(ceiling_of(results).describe())
    if kind != "tune":
        print(format_acceptance(results))
    if args.record:
        data.record_locally_unless_set()
        print(f"recorded: {record(results)}", file=sys.stderr)
    for line in results["failures"]:
        print(f"WRONG: {line}", file=sys.stderr)
    return 0 if not results["failures"] else 3
