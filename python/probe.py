#!/usr/bin/python3
"""The probe from a checkout without installing: stallsim.probe's main, with
this folder (the package's, python/) first on sys.path as Python puts a
script's own folder there. Installed, it is `stallsim-probe`
(docs/pytorch.md). The README, the scenario templates, `stallsim init`'s
output, the probe's tests and validation/gpu/gpu_validate.py run this path."""
from stallsim.probe import main

if __name__ == "__main__":
    main()
