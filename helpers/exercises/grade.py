"""Grading a class: every ``%%exercise`` cell of every notebook, headlessly, into a table and a CSV.

    python -m helpers.exercises grade submissions/*.ipynb --csv grades.csv [--seed 0] [--by-folder]
    python -m helpers.exercises check NAME answer.cu
    python -m helpers.exercises list

A student is a notebook's file name without its suffix, or with ``--by-folder`` the folder that
holds it (``alice/04_block_reduce_shared_memory.ipynb`` -> ``alice``). In a notebook the last cell
for an exercise counts; an exercise with no cell is "missing", one whose cell still holds the
starter code is "not_started". The seed is fixed (default 0) so that every student gets the same
launches and a re-run gives the same grades.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Sequence

from helpers.exercises.catalog import EXERCISES

MAGIC = "%%exercise"


@dataclass(frozen=True)
class Grade:
    """One student's answer to one exercise."""

    student: str
    notebook: str
    exercise: str
    status: str
    passed: bool
    seconds: float
    feedback: str


def answers(path: Path) -> dict[str, str]:
    """{exercise name: the CUDA C of its last ``%%exercise`` cell} in a notebook file."""
    nb = json.loads(Path(path).read_text())
    out: dict[str, str] = {}
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        first, _, body = src.partition("\n")
        if first.strip().startswith(MAGIC):
            words = first.split()
            if len(words) >= 2:
                out[words[1]] = body
    return out


def grade(paths: Sequence[Path], *, seed: int = 0, by_folder: bool = False, engine: Optional[str] = "machine",
          progress: bool = True) -> list[Grade]:
    """Grade every exercise cell of every notebook in ``paths``."""
    from helpers.exercises import check

    grades: list[Grade] = []
    for path in paths:
        path = Path(path)
        student = path.parent.name if by_folder else path.stem
        try:
            found = answers(path)
        except (OSError, ValueError) as exc:
            grades.append(Grade(student, path.name, "-", "unreadable", False, 0.0, f"{path}: {exc}"))
            continue
        for name, body in found.items():
            if name not in EXERCISES:
                grades.append(Grade(student, path.name, name, "unknown_exercise", False, 0.0,
                                    f"no exercise named {name!r}"))
                continue
            t = time.perf_counter()
            r = check(name, body, seed=seed, engine=engine, first_line=2)
            g = Grade(student, path.name, name, r.status, r.passed, time.perf_counter() - t, r.feedback)
            grades.append(g)
            if progress:
                print(f"{student:>20}  {name:<24} {r.status:<16} {g.seconds:5.1f} s", file=sys.stderr, flush=True)
    return grades


def table(grades: Iterable[Grade]) -> str:
    """A plain-text table: one row per student, one column per exercise that appears."""
    grades = list(grades)
    names = [n for n in EXERCISES if any(g.exercise == n for g in grades)]
    students = list(dict.fromkeys(g.student for g in grades))
    cell = {(g.student, g.exercise): ("passed" if g.passed else g.status) for g in grades}
    widths = [max(7, len("student"), *(len(s) for s in students))] + [max(len(n), 16) for n in names]
    lines = ["  ".join(h.ljust(w) for h, w in zip(["student", *names], widths))]
    for s in students:
        row = [s] + [cell.get((s, n), "missing") for n in names]
        passed = sum(1 for n in names if cell.get((s, n)) == "passed")
        lines.append("  ".join(v.ljust(w) for v, w in zip(row, widths)) + f"  {passed}/{len(names)}")
    return "\n".join(lines)


def write_csv(grades: Iterable[Grade], path: Path) -> None:
    """One row per (student, exercise): status, passed, seconds and the whole feedback."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student", "notebook", "exercise", "status", "passed", "seconds", "feedback"])
        for g in grades:
            w.writerow([g.student, g.notebook, g.exercise, g.status, int(g.passed), f"{g.seconds:.2f}", g.feedback])


def _seed(text: str) -> int:
    """``--seed``: an int >= 0; argparse prints the message with the option's name."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an int >= 0; got {text!r}")
    return value


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.exercises",
                                     description="Warp Lab exercises: list them, check one answer, grade notebooks.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the exercises, by notebook")
    p_check = sub.add_parser("check", help="check one answer (a .cu file) and print the feedback")
    p_check.add_argument("name", choices=list(EXERCISES))
    p_check.add_argument("file", type=Path)
    p_check.add_argument("--seed", type=_seed, default=None, help="an int >= 0 (default: new random launches)")
    p_grade = sub.add_parser("grade", help="grade every %%%%exercise cell of the notebooks given")
    p_grade.add_argument("notebooks", nargs="+", type=Path)
    p_grade.add_argument("--csv", type=Path, default=None, help="also write one row per student and exercise here")
    p_grade.add_argument("--seed", type=_seed, default=0,
                         help="seed of the random launches, an int >= 0 (default 0: the same for all)")
    p_grade.add_argument("--by-folder", action="store_true", help="a student is the notebook's folder, not its name")
    p_grade.add_argument("--engine", choices=("machine", "gpu"), default="machine")
    args = parser.parse_args(argv)
    if getattr(args, "engine", None) == "gpu":
        from helpers.engine import backend

        if not backend.detect().usable:   # say so once, before any notebook is read
            parser.error(f"--engine gpu needs CuPy and a usable CUDA GPU, but {backend.detect().reason}; "
                         f"use --engine machine")
    if args.command == "list":
        for ex in EXERCISES.values():
            print(f"{ex.notebook}  {ex.name:<24} {ex.signature}")
        return 0
    if args.command == "check":
        from helpers.exercises import check

        r = check(args.name, args.file.read_text(), seed=args.seed)
        print(r.feedback)
        return 0 if r.passed else 1
    missing = [p for p in args.notebooks if not p.is_file()]
    if missing:
        parser.error(f"notebooks must be files; not found: {', '.join(map(str, missing))}")
    grades = grade(args.notebooks, seed=args.seed, by_folder=args.by_folder, engine=args.engine)
    print(table(grades))
    if args.csv:
        write_csv(grades, args.csv)
        print(f"wrote {args.csv} ({len(grades)} rows)")
    return 0
