"""The examples docs/python.md shows, run as a user runs them."""
import os
import runpy

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


@pytest.mark.parametrize("name", ["quickstart.py"])
def test_example_runs(name, capsys):
    runpy.run_path(os.path.join(EXAMPLES, name), run_name="__main__")
    out = capsys.readouterr().out
    assert "tau" in out
