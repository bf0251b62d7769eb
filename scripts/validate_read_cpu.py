#!/usr/bin/python3
"""Validates the reader's CPU per read (server.cache_cpu_us_per_read and
_per_mb, which `stallsim calibrate` measures) against a real reader on this
host (issue 29 item 1; VALIDATION.md, "The reader's CPU per read").

  /usr/bin/python3 scripts/validate_read_cpu.py [--bin build/sim/stallsim]
      [--profile HOST.yaml] [--threads 4] [--seconds 3] [--quick]
      [--update VALIDATION.md]

The real run: a C reader (compiled here with cc) whose threads read files
of one size from a fresh folder where calibrate writes its own ($TMPDIR,
else /var/tmp; just written, so every read a hit in the page cache), whole, each opened, read and closed, as a
loader does per item, with no other work, pinned to 2 cores
(sched_setaffinity), for a few seconds: the CPU binds. It reports items/s
and its CPU per item (getrusage(RUSAGE_SELF), user + system).
The prediction: stallsim run on 2 cores, no prep, a GPU that never binds,
every item in the page cache from epoch 2, with calibrate's profile (its
server.cache_cpu_us_* from warm reads of one thread); epoch 2's items/s.
Calibrate's figures come from --profile, else a `stallsim calibrate --quick`
run here. Target: items/s within 15 % at each size.

The wall-clock rate means something only on a quiet host: with the 1-minute
load average above the online cores, it prints the CPU per item (which a
busy host moves little) beside calibrate's and exits 77, host busy.
Exit 0 met, 1 not met, 77 skipped (no cc, fewer than 2 cores, host busy)."""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402

TOOL = "validate_read_cpu"

READER = r"""
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
static char **paths; static int nfiles, nthreads; static double stop_at;
static long counts[256];
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec; }
static void *run(void *arg) {
  long id = (long)arg, n = 0; char *buf = malloc(1 << 21);
  for (int i = (int)id; now() < stop_at; i = (i + nthreads) % nfiles) {
    int fd = open(paths[i], O_RDONLY); if (fd < 0) abort();
    while (read(fd, buf, 1 << 21) > 0) {}
    close(fd); n++;
  }
  counts[id] = n; free(buf); return NULL;
}
int main(int argc, char **argv) {
  nthreads = atoi(argv[1]); double secs = atof(argv[2]);
  paths = argv + 3; nfiles = argc - 3;
  pthread_t th[256]; struct rusage u0, u1; getrusage(RUSAGE_SELF, &u0);
  double t0 = now(); stop_at = t0 + secs;
  for (long i = 0; i < nthreads; i++) pthread_create(&th[i], NULL, run, (void *)i);
  long total = 0;
  for (int i = 0; i < nthreads; i++) { pthread_join(th[i], NULL); total += counts[i]; }
  double wall = now() - t0; getrusage(RUSAGE_SELF, &u1);
  double cpu = (u1.ru_utime.tv_sec - u0.ru_utime.tv_sec) + (u1.ru_stime.tv_sec - u0.ru_stime.tv_sec)
    + 1e-6 * ((u1.ru_utime.tv_usec - u0.ru_utime.tv_usec) + (u1.ru_stime.tv_usec - u0.ru_stime.tv_usec));
  printf("{\"items\": %ld, \"wall_s\": %.6f, \"cpu_s\": %.6f}\n", total, wall, cpu);
  return 0;
}
"""

SIZES_KB = (4, 64, 256)


def two_cores():
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[:2] if len(cpus) >= 2 else None


def real_run(exe, folder, kb, files, threads, seconds, cpus):
    paths = []
    data = os.urandom(int(kb * 1000))
    for i in range(files):
        p = os.path.join(folder, f"{kb}-{i}")
        with open(p, "wb") as f:
            f.write(data)
        paths.append(p)
    out = subprocess.run([exe, str(threads), str(seconds)] + paths, check=True,
                         capture_output=True, text=True,
                         preexec_fn=lambda: os.sched_setaffinity(0, cpus)).stdout
    for p in paths:
        os.unlink(p)
    r = json.loads(out)
    return r["items"] / r["wall_s"], r["cpu_s"] / r["items"] * 1e6


def predict(a, profile, kb, files):
    scen = f"""epochs: 2
host: {profile}
dataset: {{items: {files}, item_kb: {kb}}}
server: {{cpus: 2, gpus: 1, cache_gb: 100}}
prep: {{decode_ms_per_mb: 0, decode_ms_per_item: 0, augment_ms: 0, mem_mb_per_item: 0,
        scaling: ""}}
loader: {{kind: pool, cache: lru}}
jobs: [{{gpus: 1, batch_per_gpu: 32, gpu_items_per_s: 100000000}}]
"""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(scen)
    try:
        out = subprocess.run([a.bin, "run", f.name, "--format", "json"], check=True,
                             capture_output=True, text=True).stdout
    finally:
        os.unlink(f.name)
    ep = json.loads(out)["variants"][0]["jobs"][0]["epochs"][1]
    return ep["sim"]["throughput_items_s"], ep["model"]["throughput_items_s"]


def profile_figures(path):
    import yaml
    with open(path) as f:
        srv = yaml.safe_load(f)["scenario"]["server"]
    return srv.get("cache_cpu_us_per_read", 0), srv.get("cache_cpu_us_per_mb", 0)


def host_only(path, work):
    """The profile's scenario keys alone, as a host file: run reads its
    `measured:` section too, and refuses some of calibrate's longer lines
    there (values over 255 characters)."""
    import yaml
    with open(path) as f:
        p = yaml.safe_load(f)
    out = os.path.join(work, "host-scenario.yaml")
    with open(out, "w") as f:
        yaml.safe_dump({"profile_version": p["profile_version"], "scenario": p["scenario"]}, f)
    return out


def calibrate(a, work):
    prof = os.path.join(work, "host.yaml")
    print(f"{TOOL}: stallsim calibrate --quick (its figures: the prediction's)", flush=True)
    subprocess.run([a.bin, "calibrate", "--quick", "--out", prof], check=True,
                   stdout=subprocess.DEVNULL)
    return prof


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "sim", "stallsim"))
    ap.add_argument("--profile", help="a host profile from stallsim calibrate (else run it)")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--quick", action="store_true", help="2 s a size")
    ap.add_argument("--update", metavar="VALIDATION.md")
    a = ap.parse_args()
    if a.quick:
        a.seconds = 2
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        harness.skip(TOOL, "no C compiler (cc) for the real reader")
    cpus = two_cores()
    if not cpus:
        harness.skip(TOOL, "fewer than 2 cores to pin the reader to")
    work = tempfile.mkdtemp(prefix="stallsim-readcpu-")
    # Files where calibrate writes its own ($TMPDIR, else /var/tmp), just
    # written: every read a hit in the page cache.
    shm = tempfile.mkdtemp(prefix="stallsim-readcpu-files-",
                           dir=os.environ.get("TMPDIR") or "/var/tmp")
    try:
        exe = os.path.join(work, "reader")
        with open(exe + ".c", "w") as f:
            f.write(READER)
        subprocess.run([cc, "-O2", "-pthread", "-o", exe, exe + ".c"], check=True)
        profile = os.path.abspath(a.profile) if a.profile else calibrate(a, work)
        per_read, per_mb = profile_figures(profile)
        return report(a, exe, shm, cpus, host_only(profile, work), per_read, per_mb, profile)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(shm, ignore_errors=True)


def report(a, exe, shm, cpus, host, per_read, per_mb, profile):
    load0 = os.getloadavg()[0]
    rows, ok = [], True
    for kb in SIZES_KB:
        files = max(64, min(2000, int(64e6 / (kb * 1000))))
        real, cpu_us = real_run(exe, shm, kb, files, a.threads, a.seconds, cpus)
        sim, model = predict(a, host, kb, files)
        calib_us = per_read + per_mb * kb / 1000
        err = (sim - real) / real * 100
        ok = ok and abs(err) <= 15 and abs(model - sim) / sim <= 0.05
        rows.append(f"| {kb} KB | {files} | {real:,.0f} | {cpu_us:.2f} | {calib_us:.2f} | "
                     f"{sim:,.0f} | {model:,.0f} | {err:+.1f} % |")
    load1 = os.getloadavg()[0]
    ncores = os.cpu_count() or 1
    busy = max(load0, load1) > ncores
    lines = [f"{a.threads} reader threads on cores {cpus[0]},{cpus[1]}, files in the page cache, "
             f"{a.seconds:g} s a size; calibrate's warm line {per_read:.3g} us a read + "
             f"{per_mb:.3g} us/MB ({profile}).", "",
             "| size | files | real items/s | real CPU us/item | calibrate us/read | "
             "sim items/s | model items/s | sim vs real |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"] + rows + [
             "", f"Load average (1 min) {load0:.1f} at the start, {load1:.1f} at the end "
             f"({ncores} online cores)."]
    text = "\n".join(lines)
    print(text)
    if busy:
        print(f"{TOOL}: skipped: host busy (load average {max(load0, load1):.1f} > {ncores} "
              "cores): the real items/s is the host's share, not 2 cores'; the CPU per item "
              "above is still the reader's own")
        return 77
    if a.update:
        harness_update(a.update, text)
    print(f"{TOOL}: {'target met' if ok else 'target NOT met'} (within 15 % at every size)")
    return 0 if ok else 1


def harness_update(path, text):
    with open(path) as f:
        doc = f.read()
    begin, end = "<!-- read_cpu:begin -->", "<!-- read_cpu:end -->"
    if begin in doc and end in doc:
        doc = doc[:doc.index(begin) + len(begin)] + "\n" + text + "\n" + doc[doc.index(end):]
        with open(path, "w") as f:
            f.write(doc)


if __name__ == "__main__":
    sys.exit(main())
