"""Compatibility for the scripts not on the validation package yet
(scripts/gpu_validate.py and the validate_*.py still
to port): the names they used, from where they live now (validation/,
python/stallsim/pipeline.py). New harnesses: validation/__init__.py."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from validation.base import skip  # noqa: E402,F401  (first: it puts python/ on sys.path)
from validation.fixtures.cgroup import remove_cgroup  # noqa: E402,F401
from validation.fixtures.data import generate, has_jpegs, has_wavs, jpegs, write_wavs  # noqa: E402,F401
from stallsim.pipeline import evict  # noqa: E402,F401
from validation.predict import compare_measured, compare_row, epoch_metrics, predict_epochs  # noqa: E402,F401


def update_markers(path, name, text, tool):
    """validation.base.update_markers, saying scripts/TOOL.py as before."""
    from validation.base import update_markers as update

    return update(path, name, text, f"scripts/{tool}.py")
