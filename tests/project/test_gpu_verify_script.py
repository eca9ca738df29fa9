"""scripts/gpu_verify.sh without a GPU: the steps run in order, each reports its exit status, and
everything (summary, logs, recordings) lands under $OUT; data/ is left alone unless SHIP=1."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gpu_verify.sh"


def test_the_script_parses_and_names_its_steps() -> None:
    subprocess.run(["bash", "-n", str(SCRIPT)], check=True)
    head = SCRIPT.read_text()
    assert 'STEPS=${STEPS:-"tests bench record notebooks"}' in head
    for words in ("python -m helpers.bench --record", "memory ceiling", "$OUT/recordings", "SHIP=1"):
        assert words in head


def test_without_a_gpu_each_step_reports_and_everything_is_under_out(tmp_path: Path) -> None:
    before = sorted(p.name for p in (ROOT / "data").iterdir())
    env = {**os.environ, "OUT": str(tmp_path), "STEPS": "bench record",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("WARPLAB_RECORD_INTO", None)
    env.pop("SHIP", None)
    done = subprocess.run(["bash", str(SCRIPT)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    summary = (tmp_path / "summary.txt").read_text()
    assert f"recordings into: {tmp_path}/recordings" in summary, done.stdout + done.stderr
    assert "== bench: exit 2" in summary and "== record: exit 2" in summary   # no GPU: refused, said why
    assert "needs a CUDA GPU" in (tmp_path / "record.log").read_text()
    assert (tmp_path / "recordings.tar.gz").is_file() and (tmp_path / "bench.log").is_file()
    assert sorted(p.name for p in (ROOT / "data").iterdir()) == before
