"""The documentation site builds with ``--strict``: no broken link, page or reference."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


@pytest.mark.slow
def test_the_docs_site_builds_strictly(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "concepts" / "statuses" / "index.html").exists()
    reference = (tmp_path / "site" / "reference" / "index.html").read_text(encoding="utf-8")
    assert "build_graph" in reference and "first_stop" in reference  # read off the docstrings
