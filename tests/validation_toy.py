"""A harness on the validation package's base that needs nothing real:
each row "measures" its own square in a fresh process and "predicts" the
row's number, so the error is known. tests/validation_base.py runs it."""

import os

from validation.base import Harness, Target


class Toy(Harness):
    name = "toy"
    title = "A toy harness: squares against their roots"
    module = "validation_toy"
    targets = [Target("median", "med", 0.5, quick=0.9), Target("worst", "worst", 2.0)]

    def add_arguments(self, ap):
        ap.add_argument("--needs", default="", help="a module this run needs")
        ap.add_argument("--why-not", default="", help="requires() gives this")

    def requires(self, a):
        if a.needs:
            self.needs = (a.needs,)
            return self.skip_reason(a)
        return a.why_not or None

    def rows(self, a):
        return [dict(x=x) for x in ((1, 2) if a.quick else (1, 2, 3))]

    def run_row(self, a, r):
        return dict(square=r["x"] ** 2, pid=os.getpid())

    def predict(self, a, r, m):
        return dict(err=(r["x"] - m["square"]) / m["square"], pid=m["pid"])

    def report(self, a, results):
        errs = sorted(abs(c["err"]) for _, c in results)
        lines = ["| x | error | pid |", "|---:|---:|---:|"]
        lines += [f"| {r['x']} | {c['err']:+.1%} | {c['pid']} |" for r, c in results]
        return "\n".join(lines) + "\n", dict(med=errs[len(errs) // 2], worst=errs[-1])


if __name__ == "__main__":
    Toy.main()
