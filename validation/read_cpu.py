"""Validates the reader's CPU per read (server.cache_cpu_us_per_read and
_per_mb, which `stallsim calibrate` measures) against a real reader on this
host (issue 29 item 1; docs/validation/read_cpu.md).

  python3 -m validation.read_cpu [--bin build/sim/stallsim]
      [--profile HOST.yaml] [--threads 4] [--seconds 3] [--quick] [--page FILE.md]

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

import json
import os
import shutil
import subprocess
import tempfile

from validation.base import Harness, Skip, Target, busy, load1

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


def stallsim_rate(a, profile, kb, files):
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



class ReadCpu(Harness):
    name = "read_cpu"
    title = "The reader's CPU per read (server.cache_cpu_us_*) against C reader threads"
    targets = [Target("sim vs real, every size", "worst", 0.15),
               Target("model vs sim, every size", "model_worst", 0.05)]

    def add_arguments(self, ap):
        ap.add_argument("--profile", help="a host profile from stallsim calibrate (else run it)")
        ap.add_argument("--threads", type=int, default=4)
        ap.add_argument("--seconds", type=float, default=3)

    def configure(self, a):
        if a.quick:  # 2 s a size
            a.seconds = 2

    def requires(self, a):
        self.cc = shutil.which("cc") or shutil.which("gcc")
        if not self.cc:
            return "no C compiler (cc) for the real reader"
        self.cpus = two_cores()
        return None if self.cpus else "fewer than 2 cores to pin the reader to"

    def setup(self, a):
        self.work = tempfile.mkdtemp(prefix="stallsim-readcpu-")
        # Files where calibrate writes its own ($TMPDIR, else /var/tmp), just
        # written: every read a hit in the page cache.
        self.shm = tempfile.mkdtemp(prefix="stallsim-readcpu-files-",
                                    dir=os.environ.get("TMPDIR") or "/var/tmp")
        self.exe = os.path.join(self.work, "reader")
        with open(self.exe + ".c", "w") as f:
            f.write(READER)
        subprocess.run([self.cc, "-O2", "-pthread", "-o", self.exe, self.exe + ".c"], check=True)
        self.profile = os.path.abspath(a.profile) if a.profile else calibrate(a, self.work)
        self.per_read, self.per_mb = profile_figures(self.profile)
        self.host = host_only(self.profile, self.work)
        self.load0 = load1()

    def teardown(self, a):
        for d in (getattr(self, "work", None), getattr(self, "shm", None)):
            if d:
                shutil.rmtree(d, ignore_errors=True)

    def rows(self, a):
        return [dict(kb=kb, files=max(64, min(2000, int(64e6 / (kb * 1000))))) for kb in SIZES_KB]

    def measure(self, a, r):
        real, cpu_us = real_run(self.exe, self.shm, r["kb"], r["files"], a.threads, a.seconds,
                                self.cpus)
        return dict(real=real, cpu_us=cpu_us)

    def predict(self, a, r, m):
        sim, model = stallsim_rate(a, self.host, r["kb"], r["files"])
        return dict(m, sim=sim, model=model, calib_us=self.per_read + self.per_mb * r["kb"] / 1000,
                    err=(sim - m["real"]) / m["real"])

    def report(self, a, results):
        rows = [f"| {r['kb']} KB | {r['files']} | {c['real']:,.0f} | {c['cpu_us']:.2f} | "
                f"{c['calib_us']:.2f} | {c['sim']:,.0f} | {c['model']:,.0f} | {100 * c['err']:+.1f} % |"
                for r, c in results]
        load_end, ncores = load1(), os.cpu_count() or 1
        lines = [f"{a.threads} reader threads on cores {self.cpus[0]},{self.cpus[1]}, files in the "
                 f"page cache, {a.seconds:g} s a size; calibrate's warm line {self.per_read:.3g} us "
                 f"a read + {self.per_mb:.3g} us/MB ({self.profile}).", "",
                 "| size | files | real items/s | real CPU us/item | calibrate us/read | "
                 "sim items/s | model items/s | sim vs real |",
                 "| --- | --- | --- | --- | --- | --- | --- | --- |"] + rows + [
                 "", f"Load average (1 min) {self.load0:.1f} at the start, {load_end:.1f} at the end "
                 f"({ncores} online cores)."]
        text = "\n".join(lines) + "\n"
        if busy(max(self.load0, load_end)):
            print(text)
            raise Skip(f"host busy (load average {max(self.load0, load_end):.1f} > {ncores} "
                       "cores): the real items/s is the host's share, not 2 cores'; the CPU per "
                       "item above is still the reader's own")
        return text, dict(worst=max(abs(c["err"]) for _, c in results),
                          model_worst=max(abs(c["model"] - c["sim"]) / c["sim"] for _, c in results))


if __name__ == "__main__":
    ReadCpu.main()
