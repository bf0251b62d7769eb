#!/usr/bin/python3
"""Holds run's "what to change" to its word (issue 53), for tests/advise.sh:

    advice_proven.py BIN SCENARIO [run's arguments...]

runs `BIN run SCENARIO ARGS --format json`, takes the first variant's
advice, applies its keys with --set (the scenario must not have a variant
that sets them: variants override --set) and runs again. Exit 1 where the
rerun's simulated GPU utilisation of the advice's epoch differs from the
one the advice printed, or where it says "found" below the target less 2
points; else prints "STATUS BINDS KEY=VALUE..." (STOPS_IT appended where
short) for the caller's greps."""
import json
import subprocess
import sys

TOL = 0.02
SLACK = 1e-4


def run(argv):
    out = subprocess.run(argv + ["--format", "json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["variants"][0]


def main(argv):
    base = [argv[0], "run"] + argv[1:]
    a = run(base)["advice"]
    keys = [f"{k}={v}" for k, v in a["set"].items()]
    line = " ".join([a["status"], a["binds"]] + keys + [a.get("stops_it", "")]).strip()
    if "sim_gpu_util" in a and keys:
        again = base + [x for kv in keys for x in ("--set", kv)]
        got = run(again)["jobs"][0]["epochs"][a["epoch"] - 1]["sim"]["gpu_util"]
        if abs(got - a["sim_gpu_util"]) > SLACK:
            print(f"advice_proven: applied, the advice gives GPU {got:.4f}; it printed "
                  f"{a['sim_gpu_util']:.4f}: {line}", file=sys.stderr)
            return 1
        if a["status"] == "found" and got < a["target"] - TOL:
            print(f"advice_proven: 'found' at GPU {got:.4f}: {line}", file=sys.stderr)
            return 1
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
