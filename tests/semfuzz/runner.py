"""runner: one `stallsim run --format json` of a generated scenario.

    res = run(stallsim, scen, tmpdir)
    res.status   # "ok", "refused" (exit 2: stallsim check's refusal), or a finding
    res.doc      # the parsed JSON when ok

Strict JSON: `inf`, `nan` (and JSON's own NaN/Infinity) make the output
invalid, a finding of invariant "json". Exit 1 (an impossible value stopped
the run), a signal or a hang are findings too.
"""
import json
import os
import re
import subprocess

import gen

RUN_TIMEOUT_S = 60  # a hang, not a slow machine: runs take well under 1 s


class Result:
    def __init__(self, status, doc=None, err="", finding=None):
        self.status, self.doc, self.err, self.finding = status, doc, err, finding


def _no_const(name):
    raise ValueError(f"non-finite number {name}")


def run(stallsim, scen, tmpdir, tag="s"):
    path = os.path.join(tmpdir, f"{tag}.yaml")
    with open(path, "w") as f:
        f.write(gen.to_yaml(scen))
    try:
        p = subprocess.run([stallsim, "run", path, "--format", "json"], capture_output=True,
                           text=True, timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return Result("finding", finding={"invariant": "hang", "where": "run",
                                          "detail": f"no answer in {RUN_TIMEOUT_S} s",
                                          "figures": {}})
    err = p.stderr.strip()
    if p.returncode == 2:
        return Result("refused", err=err)
    if p.returncode != 0:
        inv = "exit1" if p.returncode == 1 else "crash"
        return Result("finding", err=err, finding={
            "invariant": inv, "where": "run",
            "detail": f"exit {p.returncode}: {err[-400:]}", "figures": {}})
    try:
        doc = json.loads(p.stdout, parse_constant=_no_const)
    except ValueError as e:
        bad = [w for w in ("inf", "nan") if w in p.stdout]
        return Result("finding", err=err, finding={
            "invariant": "json", "where": "run", "detail": f"invalid JSON ({e}); holds {bad}",
            "figures": {}})
    return Result("ok", doc=doc, err=err)


# A number that is not one: inf, nan (any sign or case), or a negative zero.
_BAD_TEXT = re.compile(r"(?<![\w.])[-+]?(inf|nan)(?![\w])|(?<![\w.])-0(\.0+)?(?![\d.])",
                       re.IGNORECASE)


def text_findings(stallsim, tmpdir, tag="base"):
    """The text table of the scenario last written under `tag`: no inf, nan
    or -0.0 anywhere (issue 29: impossible values are never output)."""
    path = os.path.join(tmpdir, f"{tag}.yaml")
    try:
        p = subprocess.run([stallsim, "run", path], capture_output=True, text=True,
                           timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return []
    out = []
    for line in p.stdout.splitlines():
        m = _BAD_TEXT.search(line)
        if m:
            out.append({"invariant": "bounds:text", "where": "run (text)",
                        "detail": f"'{m.group(0)}' in: {line.strip()[:160]}",
                        "figures": {"token": m.group(0)}})
            break
    return out
