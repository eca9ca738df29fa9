"""The README's pictures come from scripts/readme_figures.py, and stay in step with the code."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_figures_are_drawn_by_the_script(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("readme_figures", ROOT / "scripts" / "readme_figures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    written = mod.main(tmp_path)
    readme = (ROOT / "README.md").read_text()
    for p in written:
        assert p.stat().st_size > 10_000
        assert f"docs/img/{p.name}" in readme
        assert (ROOT / "docs" / "img" / p.name).is_file(), f"run scripts/readme_figures.py to add docs/img/{p.name}"
