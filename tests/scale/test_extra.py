"""Without the scale extra, the Ray engine stops with one line naming the extra; `rag --help` never
imports the extra's packages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from raggity.core.errors import ConfigError
from raggity.core.extras import require

WORKTREE = Path(__file__).resolve().parents[2]


def test_a_missing_module_of_the_extra_is_a_config_error_naming_the_extra() -> None:
    with pytest.raises(ConfigError) as caught:
        require("raggity_absent_module")
    assert "raggity_absent_module" in str(caught.value)
    assert "pip install 'raggity[scale]'" in caught.value.hint


def test_rag_help_imports_none_of_the_scale_extra(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "sys.argv = ['rag', '--help']\n"
        "from raggity.cli.main import run\n"
        "try:\n    run()\nexcept SystemExit:\n    pass\n"
        "extra = ('ray', 'lance_ray', 'boto3', 'botocore', 'raggity.pipeline.ingest.ray_engine')\n"
        "print(sorted(m for m in extra if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=WORKTREE,
        env={"PYTHONPATH": str(WORKTREE), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert "ingest" in done.stdout  # the help was printed
    assert done.stdout.strip().splitlines()[-1] == "[]"
