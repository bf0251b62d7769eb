"""Compatibility: the notebooks here `import stallsim_nb as nb`, and run in
this folder; the module is stallsim.nb in the package under python/ (its
data loader stallsim.data). This puts the repository's python/ folder first
on sys.path, so a checkout's notebooks use its own package whether or not
one is installed, and makes `stallsim_nb` that very module."""
import importlib
import os
import sys

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "python")))
sys.modules[__name__] = importlib.import_module("stallsim.nb")
