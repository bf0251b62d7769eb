"""validation: stallsim against real components, one harness protocol.

Each harness is a module validation/<name>.py holding one subclass of
validation.base.Harness that declares only what is its own:

    from validation.base import Harness, Target

    class Tier(Harness):
        name = "tier"                       # `python3 -m validation.tier`, docs/validation/tier.md
        title = "PyTorch over a cache tier"  # what stallsim is held against
        data = "/var/tmp/stallsim-torch/data"  # --data's default (--items, --epochs alike)
        needs = ("torch", "torchvision")    # modules; one missing: skip (77) saying which
        targets = [Target("median |error|", "med", 0.10, quick=0.20),
                   Target("every row", "worst", 0.15, quick=0.50)]

        def requires(self, a): ...   # None, or why this host cannot measure (skip, 77)
        def setup(self, a): ...      # data, profile, scenario: once, before the rows
        def rows(self, a): ...       # the matrix: a list of dicts (--quick: its subset)
        def run_row(self, a, r): ... # in a fresh process (Harness.isolated): a JSON-able dict
        def predict(self, a, r, m): ...  # stallsim's side of row r, measured m: the row's result
        def report(self, a, results):    # -> (Markdown table, {figure: value} the targets read)

    if __name__ == "__main__":
        Tier.main()

The base owns the rest: the arguments (--bin --data --items --epochs --seed
--quick --out --page), each row measured in its own process (measure()
defaults to isolated(a, r, wrap=None): run_row under `--one ROW`, wrap(cmd)
putting it in a namespace or cgroup; isolated_many() runs rows at once;
RowFailed carries a failed row's exit and stderr), skip reasons (exit 77:
`needs`, requires(), or Skip raised anywhere, a row's process included),
the busy-host check (load average above one per core: busy(), load1()),
repeats (repeat(fn, n)), the targets (exit 0 met, 1 not; Target(...,
quick=, full_only=)) and the result page docs/validation/<name>.md
(command, targets, date, host, commit, the table; written by every full
run, --quick only with --page). Optional hooks: add_arguments(ap),
configure(a) (derived arguments, in the run and each row alike),
teardown(a), row_line(r, res), and run(a) for a harness whose rows are not
one matrix. validation.fixtures holds what harnesses share
(JPEGs and WAVs, cold files, cgroups, the object store, the Datasets only
validation uses); validation.predict the stallsim side (`run`, `compare`).
`python3 -m validation --suite` runs every validation test (the ctest label
validation) with the busy-host check, one retry and a --budget;
`python3 -m validation --list` names the harnesses. Beside the package,
not harnesses of the protocol: measure.sh (stallsim's own C pipeline,
`stallsim measure`), gpu/ (the one-call GPU machine run, gpu_validate.sh)
and studies/ (one-off measurements behind a key's default: the GIL's
hand-off, a DataLoader epoch's phases).

Run from the repository root (or with it on PYTHONPATH); the repository's
python/ (the stallsim package) is put first on sys.path here, once."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = os.path.join(ROOT, "python")
# The Datasets only validation uses (fixtures/datasets/: a --dataset
# module:factory loads them from PYTHONPATH, in the probe and in the rows).
DATASETS = os.path.join(ROOT, "validation", "fixtures", "datasets")
if PYTHON not in sys.path:
    sys.path.insert(0, PYTHON)  # the repository's stallsim package, not an installed one
