#!/usr/bin/python3
"""Checks a `stallsim run --trace` file: valid JSON in the Chrome Trace Event
object format, every event well formed, and, given the run's --format json
output, that each GPU track's waits in each whole traced epoch sum to the
epoch's reported stall (prep and fetch apart).

usage: trace_check.py TRACE.json [RUN.json]   (exit 1 with the reasons)"""
import json
import math
import sys
from collections import defaultdict

errors = []


def bad(msg):
    if len(errors) < 20:
        errors.append(msg)


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


with open(sys.argv[1], encoding="utf-8") as f:
    doc = json.load(f)
events = doc.get("traceEvents") if isinstance(doc, dict) else None
if not isinstance(events, list) or not events:
    sys.exit("no traceEvents list")

open_b = defaultdict(list)
names = {}  # (pid, tid) -> thread name
processes = {}
for i, e in enumerate(events):
    if not isinstance(e, dict):
        bad(f"event {i} is not an object")
        continue
    ph = e.get("ph")
    if ph not in ("X", "B", "E", "C", "M", "i", "b", "e", "n"):
        bad(f"event {i}: ph {ph!r}")
    for k in ("pid", "tid"):
        if not isinstance(e.get(k), int) or e[k] < 0:
            bad(f"event {i}: {k} {e.get(k)!r}")
    if not number(e.get("ts")) or e["ts"] < 0:
        bad(f"event {i}: ts {e.get('ts')!r}")
    if not isinstance(e.get("name"), str) or not e["name"]:
        bad(f"event {i}: name {e.get('name')!r}")
    if "args" in e and not isinstance(e["args"], dict):
        bad(f"event {i}: args not an object")
    if ph == "X" and (not number(e.get("dur")) or e["dur"] < 0):
        bad(f"event {i}: dur {e.get('dur')!r}")
    if ph == "C" and (not e.get("args") or not all(number(v) for v in e["args"].values())):
        bad(f"event {i}: counter args {e.get('args')!r}")
    if ph == "M" and e.get("name") == "thread_name":
        names[(e["pid"], e["tid"])] = e["args"]["name"]
    if ph == "M" and e.get("name") == "process_name":
        processes[e["pid"]] = e["args"]["name"]
    if ph == "B":
        open_b[(e["pid"], e["tid"])].append(e["ts"])
    if ph == "E":
        if not open_b[(e["pid"], e["tid"])]:
            bad(f"event {i}: E without B")
        else:
            open_b[(e["pid"], e["tid"])].pop()
for k, v in open_b.items():
    if v:
        bad(f"track {k}: {len(v)} B without E")

# Slices on one track must not overlap (each track is one GPU set, core or worker).
spans = defaultdict(list)
for e in events:
    if e.get("ph") == "X":
        spans[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], e["name"]))
for k, v in spans.items():
    v.sort()
    for a, b in zip(v, v[1:]):
        if b[0] < a[1] - 1e-3 * max(1.0, abs(a[1])) * 1e-6 - 0.002:
            bad(f"track {names.get(k, k)}: {a[2]} [{a[0]}, {a[1]}] overlaps {b[2]} at {b[0]}")
            break

if len(sys.argv) > 2:
    with open(sys.argv[2], encoding="utf-8") as f:
        run = json.load(f)
    window = doc["otherData"]
    whole = window["iterations"] == "1-all"
    checked = 0
    stall = defaultdict(float)  # (variant, job, epoch, cat) -> seconds
    iters = defaultdict(int)
    for e in events:
        if e.get("ph") != "X" or not e["cat"].startswith(("stall", "gpu")):
            continue
        track = names[(e["pid"], e["tid"])]
        variant = processes[e["pid"]].removeprefix("variant ")
        job = track.removeprefix("GPUs of ").rsplit(" (", 1)[0]
        key = (variant, job, e["args"]["epoch"])
        if e["cat"] == "gpu":
            iters[key] += 1
        else:
            stall[key + (e["cat"],)] += e["dur"] / 1e6
    for v in run["variants"]:
        for j in v["jobs"]:
            for ep in j["epochs"]:
                key = (v["name"], j["name"], ep["epoch"])
                if key not in iters:
                    continue
                m = ep["sim"]
                if not whole:
                    continue
                prep = stall[key + ("stall.prep",)]
                fetch = stall[key + ("stall.fetch",)]
                tol = 1e-6 * m["epoch_s"] + 1e-6 * iters[key]
                want_fetch = max(m["fetch_stall_s"], 0.0)
                want_prep = m["prep_stall_s"] + min(m["fetch_stall_s"], 0.0)
                if abs(prep + fetch - m["prep_stall_s"] - m["fetch_stall_s"]) > tol:
                    bad(f"{key}: waits sum to {prep + fetch:.9f} s, the run reports a stall of "
                        f"{m['prep_stall_s'] + m['fetch_stall_s']:.9f} s")
                if abs(fetch - want_fetch) > tol or abs(prep - want_prep) > tol:
                    bad(f"{key}: fetch {fetch:.9f} s / prep {prep:.9f} s, the run reports "
                        f"{m['fetch_stall_s']:.9f} / {m['prep_stall_s']:.9f}")
                checked += 1
    if not checked:
        bad("no whole epoch in the trace to compare with the run")
    print(f"trace_check: {checked} whole epochs match the reported stalls")

if errors:
    print("\n".join(errors))
    sys.exit(1)
print(f"trace_check: {len(events)} events well formed")
