"""Every numbered example in examples/ runs to completion (examples are tests)."""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("[0-9][0-9]_*.py"))


def test_examples_exist():
    assert EXAMPLES, "no numbered examples found"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(example):
    proc = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, f"{example.name} failed:\n{proc.stdout}\n{proc.stderr}"
