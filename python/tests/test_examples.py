"""The examples docs/python.md shows, run as a user runs them."""
import os
import runpy

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


def test_quickstart(capsys):
    runpy.run_path(os.path.join(EXAMPLES, "quickstart.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "tau" in out and "sigma" in out


def test_train_ebm_torch():
    pytest.importorskip("torch")  # scripts/install_deps.sh installs it into tools/.venv
    example = runpy.run_path(os.path.join(EXAMPLES, "train_ebm_torch.py"))
    near = example["main"](steps=1000)
    # Uniform points in [-4, 4]^2 lie within 0.5 of one of the eight modes with probability
    # 8 pi 0.25 / 64 = 0.098 (the discs do not overlap); over 2,000 samples its standard error is
    # 0.0067, so 0.15 is 7.7 standard errors above it: the learned energy concentrates its samples.
    assert near > 0.15
