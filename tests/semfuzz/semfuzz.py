#!/usr/bin/python3
"""semfuzz: a semantic fuzzer for stallsim's compositions.

Generates random valid scenarios over every kind and composition the schema
allows (gen.py), runs each with `stallsim run --format json`, and checks
invariants (checks.py: bounds, lower bounds, conservation, model against
simulator; mono.py: more of a resource never lengthens an epoch). A failing
scenario is shrunk to a minimal one failing the same invariant (shrink.py)
and printed as YAML with its figures. Findings the lead knows of and has not
fixed yet are listed in known.py: they are reported as KNOWN, never hidden,
and do not fail the run; any other finding does (exit 1).

    tests/semfuzz/semfuzz.py --stallsim build/sim/stallsim --seed 1 --count 100
    tests/semfuzz/semfuzz.py --stallsim build/sim/stallsim --seed 7 --minutes 40 --report out.json

Deterministic from the seed: scenario i depends on (seed, i) and the key
table alone, so --count N gives the same scenarios and, for the same code,
the same findings on any machine (--minutes stops after a time instead, so
how far it gets depends on the machine). At most two worker processes.
"""
import argparse
import collections
import json
import multiprocessing
import os
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import answers  # noqa: E402
import checks  # noqa: E402
import gen  # noqa: E402
import known  # noqa: E402
import mono  # noqa: E402
import runner  # noqa: E402
import shrink  # noqa: E402
from keytable import KeyTable  # noqa: E402

_W = {}


def _init(stallsim, table):
    _W["stallsim"], _W["table"] = stallsim, table
    _W["tmp"] = tempfile.mkdtemp(prefix="semfuzz.")


def evaluate(stallsim, scen, tmp, knob=None, text=False):
    """Run scen (and its twin with `knob` turned up); return (status,
    findings, excused, refusal)."""
    res = runner.run(stallsim, scen, tmp, "base")
    if res.status == "refused":
        return "refused", [], [], res.err
    if res.status == "finding":
        return "checked", [res.finding], [], ""
    findings = checks.check_all(scen, res.doc)
    findings += answers.check_labels(res.doc)
    findings += answers.check_advice(stallsim, scen, res.doc, tmp)
    _W["answers"] = answers.summary(res.doc)
    if text:
        findings += runner.text_findings(stallsim, tmp, "base")
    twin = mono.mtbf_twin(scen)
    if twin:  # failures more often: goodput never rises
        r3 = runner.run(stallsim, twin, tmp, "mtbf")
        if r3.status == "ok":
            findings += mono.mtbf_compare(res.doc, r3.doc)
        elif r3.status == "finding":
            findings.append(r3.finding)
    excused = []
    if knob:
        up = mono.perturb(scen, knob)
        r2 = runner.run(stallsim, up, tmp, "up")
        if r2.status == "ok":
            f, e = mono.compare(scen, knob, res.doc, r2.doc)
            findings += f
            excused += e
        elif r2.status == "finding":
            findings.append(r2.finding)
    return "checked", findings, excused, ""


def work(index):
    seed = _W["seed"]
    scen = gen.generate(_W["table"], seed, index)
    knob = mono.pick(scen, random.Random(f"mono:{seed}:{index}"))
    # the text table too, for every fourth scenario (a third run costs time)
    _W["answers"] = None
    status, findings, excused, err = evaluate(_W["stallsim"], scen, _W["tmp"], knob,
                                              text=index % 4 == 0)
    return {"index": index, "scen": scen, "knob": knob, "status": status,
            "findings": findings, "excused": excused, "refusal": _first_line(err),
            "generic": scen["generic"], "answers": _W["answers"]}


def _first_line(err):
    for line in err.splitlines():
        if "error" in line:
            # drop the file:line:col, keep the rule
            return line.split("error:", 1)[-1].strip()[:90]
    return err[:90]


def _pool_init(stallsim, table, seed):
    _init(stallsim, table)
    _W["seed"] = seed


def fails_fn(stallsim, tmp, inv, knob):
    def fails(s):
        status, f, _, _ = evaluate(stallsim, s, tmp, knob if inv.startswith("mono:") else None,
                                   text=inv == "bounds:text")
        if status != "checked":
            return None
        same = [x for x in f if x["invariant"] == inv]
        return same or None
    return fails


def report_finding(out, r, small, found, runs, tag):
    f = found[0] if found else r["findings"][0]
    out.write(f"\n=== {tag} {f['invariant']} (scenario {r['index']}"
              f"{', knob ' + r['knob'] if f['invariant'].startswith('mono:') else ''}; "
              f"shrunk in {runs} runs)\n")
    out.write(f"{f['where']}: {f['detail']}\n")
    out.write(f"figures: {json.dumps(f['figures'])}\n")
    out.write(gen.to_yaml(small))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stallsim", default="build/sim/stallsim")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=0, help="scenarios to generate (deterministic)")
    ap.add_argument("--minutes", type=float, default=0, help="or: generate for this long")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (at most 2)")
    ap.add_argument("--shrink-per-invariant", type=int, default=1,
                    help="findings of one invariant shrunk (the first ones)")
    ap.add_argument("--shrink-budget", type=int, default=150, help="runs per shrink at most")
    ap.add_argument("--report", help="write every finding (JSON) here")
    ap.add_argument("--check-known", action="store_true",
                    help="also run each known finding's minimal case and say if it still fails")
    ap.add_argument("--case", help="check one scenario YAML (jobs: list) instead of generating")
    ap.add_argument("--knob", help="with --case: also turn this knob up (" + ", ".join(mono.KNOBS)
                    + ")")
    ap.add_argument("--shrink", metavar="INVARIANT", help="with --case: shrink it for this one")
    ap.add_argument("--replay", metavar="INDEX", type=int,
                    help="check (and with --shrink, shrink) generated scenario INDEX of --seed")
    a = ap.parse_args(argv)
    # every scratch file under one folder, removed at the end (workers fork
    # and inherit it)
    scratch = tempfile.TemporaryDirectory(prefix="semfuzz.")
    tempfile.tempdir = scratch.name
    try:
        return _main(a)
    finally:
        tempfile.tempdir = None
        scratch.cleanup()


def _main(a):
    if a.case or a.replay is not None:
        return one_case(a)
    if not a.count and not a.minutes:
        a.count = 50
    stallsim = os.path.abspath(a.stallsim)
    table = KeyTable.load(stallsim)
    t0 = time.time()
    results = []
    jobs = max(1, min(2, a.jobs))
    with multiprocessing.Pool(jobs, _pool_init, (stallsim, table, a.seed)) as pool:
        if a.count:
            results = pool.map(work, range(a.count), chunksize=4)
        else:
            deadline = t0 + a.minutes * 60
            i = 0
            while time.time() < deadline:
                results += pool.map(work, range(i, i + 40), chunksize=4)
                i += 40
    return summarise(a, stallsim, table, results, time.time() - t0)


def summarise(a, stallsim, table, results, elapsed):
    out = sys.stdout
    n = len(results)
    refused = [r for r in results if r["status"] == "refused"]
    checked = [r for r in results if r["status"] == "checked"]
    by_inv, known_hits, new = collections.Counter(), collections.Counter(), []
    known_inv = collections.defaultdict(set)
    excused = collections.Counter()
    for r in checked:
        for e in r["excused"]:
            excused[(e["invariant"], e["excuse"])] += 1
        seen = set()
        for f in r["findings"]:
            if f["invariant"] in seen:
                continue
            seen.add(f["invariant"])
            by_inv[f["invariant"]] += 1
            k = known.match(r["scen"], f)
            if k:
                known_hits[k] += 1
                known_inv[k].add(f["invariant"])
            else:
                new.append((r, f))
    out.write(f"semfuzz: seed {a.seed}, {n} scenarios generated in {elapsed:.0f} s: "
              f"{len(checked)} valid and checked, {len(refused)} refused by stallsim "
              f"({len(refused) / max(n, 1):.1%})\n")
    reasons = collections.Counter(r["refusal"] for r in refused)
    for why, c in reasons.most_common(8):
        out.write(f"  refused {c:4d}: {why}\n")
    generic = sorted({g for r in results for g in r["generic"]})
    if generic:
        out.write(f"keys without a rule in gen.py, drawn generically: {', '.join(generic)}\n")
    out.write(answers.summary_line([r.get("answers") for r in checked]) + "\n")
    out.write("findings by invariant (scenarios): "
              + (", ".join(f"{k} {v}" for k, v in sorted(by_inv.items())) or "none") + "\n")
    for (inv, why), c in sorted(excused.items()):
        out.write(f"excused {inv} by {why}: {c} epoch rows\n")
    for k, c in sorted(known_hits.items()):
        out.write(f"KNOWN {k} ({', '.join(sorted(known_inv[k]))}): {c} scenarios: "
                  f"{known.KNOWN[k]['why']}\n")
    tmp = tempfile.mkdtemp(prefix="semfuzz-shrink.")
    shrunk = collections.Counter()
    report = [{"index": r["index"], "knob": r["knob"], "finding": f, "scenario": r["scen"]}
              for r, f in new]
    known_rows = [{"index": r["index"], "knob": r["knob"], "finding": f, "known": k,
                   "scenario": r["scen"]}
                  for r in checked for f in r["findings"]
                  for k in [known.match(r["scen"], f)] if k]

    def write_report():
        if a.report:
            with open(a.report, "w") as fh:
                json.dump({"seed": a.seed, "generated": n, "checked": len(checked),
                           "refused": len(refused), "by_invariant": by_inv,
                           "excused": {f"{i} by {w}": c for (i, w), c in excused.items()},
                           "known": known_hits, "new": report, "known_rows": known_rows},
                          fh, indent=1, default=str)
    write_report()  # before shrinking, which may take long
    out.flush()
    for r, f in new:
        inv = f["invariant"]
        entry = next(e for e in report if e["finding"] is f)
        if shrunk[inv] < a.shrink_per_invariant:
            shrunk[inv] += 1
            small, found, runs = shrink.shrink(r["scen"], fails_fn(stallsim, tmp, inv, r["knob"]),
                                               a.shrink_budget)
            report_finding(out, r, small, found, runs, "NEW")
            entry["minimal"] = small
            entry["minimal_finding"] = found[0] if found else None
            out.flush()
            write_report()
    if a.check_known:
        check_known(out, stallsim, tmp)
    new_inv = collections.Counter(f["invariant"] for _, f in new)
    out.write(f"semfuzz: {len(new)} new findings"
              + (f" ({', '.join(f'{k} {v}' for k, v in sorted(new_inv.items()))})" if new else "")
              + f", {sum(known_hits.values())} known\n")
    return 1 if new else 0


def one_case(a):
    import yaml
    stallsim = os.path.abspath(a.stallsim)
    knob = a.knob
    if a.case:
        with open(a.case) as fh:
            top = yaml.safe_load(fh)
        scen = {"top": top, "jobs": top.pop("jobs"), "generic": []}
    else:
        scen = gen.generate(KeyTable.load(stallsim), a.seed, a.replay)
        knob = knob or mono.pick(scen, random.Random(f"mono:{a.seed}:{a.replay}"))
    tmp = tempfile.mkdtemp(prefix="semfuzz-case.")
    status, findings, excused, err = evaluate(stallsim, scen, tmp, knob, text=True)
    print(gen.to_yaml(scen) + f"# {status}{': ' + err if err else ''}")
    for f in findings + excused:
        print(f"{f['invariant']}{' (excused: ' + f['excuse'] + ')' if 'excuse' in f else ''} "
              f"{f['where']}: {f['detail']} {json.dumps(f['figures'])}")
    if a.shrink:
        small, found, runs = shrink.shrink(scen, fails_fn(stallsim, tmp, a.shrink, knob),
                                           a.shrink_budget)
        print(f"# shrunk in {runs} runs" + (f": {found[0]['where']}: {found[0]['detail']} "
                                             f"{json.dumps(found[0]['figures'])}" if found else
                                             ": does not fail " + a.shrink))
        print(gen.to_yaml(small))
    return 1 if findings else 0


def check_known(out, stallsim, tmp):
    import yaml
    for k, e in known.KNOWN.items():
        top = yaml.safe_load(e["case"])
        jobs = top.pop("jobs")
        scen = {"top": top, "jobs": jobs}
        f = fails_fn(stallsim, tmp, e["invariant"], e.get("knob"))(scen)
        out.write(f"known {k}: {'still fails' if f else 'NO LONGER FAILS: remove it from known.py'}"
                  f"{': ' + f[0]['detail'] if f else ''}\n")


if __name__ == "__main__":
    sys.exit(main())
