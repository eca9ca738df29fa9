"""The H200 recordings under data/ that tests compare against: each test skips, saying how to make
the file, where it has not been recorded yet."""
from __future__ import annotations

import pytest

from helpers import data


def needs(name: str) -> dict:
    """``data/NAME.json``, loaded; skips the calling test where it is not recorded yet."""
    if not data.exists(name):
        pytest.skip(f"data/{name}.json not recorded yet (python -m helpers.recording.record on a GPU writes it)")
    return data.load(name)
