"""answers: the invariants on what a user acts on (issue 53), beside the
times checks.py holds.

    label-split  every row's bottleneck is on a side of DS-Analyzer's split
                 that has a stall of its own: a prep-side name (prep, gil,
                 memory-bandwidth, loader-overhead) only with a prep stall
                 at least as large as the fetch stall (a fetch-dominated
                 row never says prep), a fetch-side name only with a fetch
                 stall, gpu only with the
                 GPUs busy (training or their own prep) METRICS_GPU_BOUND of
                 the epoch, or, GPU-bound by their own prep, prep.
    advice       the advice's keys applied to the scenario and run again give
                 the simulator's GPU utilisation the advice printed (the
                 configuration printed is the one proven), at or above the
                 target less ADVICE_TOL where it says "found"; "short" names
                 the limit that stops it.

    findings = check_labels(doc)
    findings = check_advice(stallsim, scen, doc, tmp)
"""
import checks
import gen
import runner

PREP_SIDE = {"prep", "gil", "memory-bandwidth", "loader-overhead"}
FETCH_SIDE = {"storage-bandwidth", "storage-iops", "request-rate", "reads-in-flight", "network",
              "tier"}
SIDE_MIN = 0.01    # sim/run/binding.c's SIDE_MIN
GPU_BOUND = 0.97   # metrics.h's METRICS_GPU_BOUND
ADVICE_TOL = 0.02  # advice_find.h's ADVICE_TOL
SLACK = 1e-4       # the JSON's six significant digits


def _label_finding(row, where):
    bn, T = row.get("bottleneck"), row.get("epoch_s") or 0
    if T <= 0:
        return None
    busy = row.get("gpu_util", 0) + row.get("gpu_prep_s", 0) / T
    prep, fetch = row.get("prep_stall_s", 0) / T, row.get("fetch_stall_s", 0) / T
    ck = row.get("checkpoint_s", 0) / T
    if busy >= GPU_BOUND - SLACK and bn in ("gpu", "prep"):
        return None
    if bn == "checkpoint" and (ck < SIDE_MIN - SLACK or ck < max(prep, fetch) - SLACK):
        why = f"checkpoint with {ck:.2%} of the epoch waiting ({prep:.2%} prep, {fetch:.2%} fetch)"
    elif bn == "checkpoint":
        return None
    elif bn == "gpu":
        why = f"gpu with the GPUs {busy:.1%} busy"
    elif bn in PREP_SIDE and prep < SIDE_MIN - SLACK:
        why = f"{bn} with a prep stall of {prep:.2%} of the epoch"
    elif bn in PREP_SIDE and fetch > prep + SLACK:
        why = f"{bn} on a fetch-dominated row ({fetch:.2%} fetch, {prep:.2%} prep stall)"
    elif bn in FETCH_SIDE and fetch < SIDE_MIN - SLACK:
        why = f"{bn} with a fetch stall of {fetch:.2%} of the epoch"
    elif bn not in PREP_SIDE | FETCH_SIDE | {"gpu"}:
        why = f"unknown name {bn!r}"
    else:
        return None
    return checks.finding("answer:label-split", where, why, gpu=busy, prep_share=prep,
                          fetch_share=fetch, bottleneck=bn)


def check_labels(doc):
    out = []
    for var in doc["variants"]:
        for ji, job in enumerate(var["jobs"]):
            for e in job["epochs"]:
                for src in checks.SOURCES:
                    row = e.get(src)
                    f = row and _label_finding(row, f"job {ji} epoch {e['epoch']} {src}")
                    if f:
                        out.append(f)
    return out


def _number(text):
    """A key's value as the scenario's YAML would hold it."""
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text, text)


def check_advice(stallsim, scen, doc, tmp):
    out = []
    var = doc["variants"][0]
    adv = var.get("advice")
    if not adv or adv["status"] not in ("found", "short"):
        return out
    where = f"advice (epoch {adv['epoch']})"
    if adv["status"] == "short" and not adv.get("stops_it"):
        out.append(checks.finding("answer:advice", where, "short of the target, no limit named",
                                  **{k: v for k, v in adv.items() if k != "set"}))
    if not adv["set"] or "sim_gpu_util" not in adv:
        return out
    up = gen.clone(scen)
    for k, v in adv["set"].items():
        if k.startswith("jobs."):  # the fuzzer's jobs are a list
            _, i, rest = k.split(".", 2)
            up["jobs"][int(i)][rest] = _number(v)
        else:
            up["top"][k] = _number(v)
    r = runner.run(stallsim, up, tmp, "advice")
    if r.status != "ok":
        out.append(r.finding or checks.finding("answer:advice", where,
                                               f"the advised configuration is refused: "
                                               f"{r.err[-300:]}", **adv["set"]))
        return out
    row = r.doc["variants"][0]["jobs"][0]["epochs"][adv["epoch"] - 1]["sim"]
    got, said = row["gpu_util"], adv["sim_gpu_util"]
    if abs(got - said) > SLACK:
        out.append(checks.finding("answer:advice", where,
                                  f"applied, the advice gives GPU {got:.4f}; it printed {said:.4f}",
                                  got=got, said=said, **adv["set"]))
    elif adv["status"] == "found" and got < adv["target"] - ADVICE_TOL - SLACK:
        out.append(checks.finding("answer:advice", where,
                                  f"'found' at GPU {got:.4f}, below the target {adv['target']}",
                                  got=got, **adv["set"]))
    return out


def summary(doc):
    """What one run gave these checks to hold: rows labelled, the advice's status."""
    rows = sum(1 for var in doc["variants"] for job in var["jobs"] for e in job["epochs"]
               for src in checks.SOURCES if e.get(src))
    adv = doc["variants"][0].get("advice") or {}
    return {"rows": rows, "advice": adv.get("status", "none"),
            "applied": bool(adv.get("set")) and "sim_gpu_util" in adv}


def summary_line(stats):
    """The counts for the validation page: rows whose label was held to the
    split, and the advice by status, applied and rerun where it set keys."""
    stats = [s for s in stats if s]
    by = {}
    for s in stats:
        by[s["advice"]] = by.get(s["advice"], 0) + 1
    return (f"answers: {sum(s['rows'] for s in stats)} rows' labels held to their split; "
            f"advice " + ", ".join(f"{k} {v}" for k, v in sorted(by.items()))
            + f"; {sum(s['applied'] for s in stats)} applied and rerun")
