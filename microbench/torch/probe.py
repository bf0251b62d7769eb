#!/usr/bin/python3
"""Compatibility: the probe is stallsim.probe in the package under python/
(`stallsim-probe` once installed: docs/pytorch.md). Scripts, tests, the
docs, the scenario templates and `stallsim init`'s output run this path, so
it stays: it runs stallsim.probe's main with the repository's python/ folder
first on sys.path. Its own folder stays on sys.path too (Python puts a
script's folder there), so --dataset http_dataset:from_env and
text_dataset:TokenisedText load from here as before."""
import os
import sys

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "python")))
from stallsim.probe import main  # noqa: E402

if __name__ == "__main__":
    main()
