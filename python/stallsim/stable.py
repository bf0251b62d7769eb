"""stable: the probe's figures repeated until they agree, and calibrate's
busy-host check for them, so that a figure from a busy host says so (issue
36: the probe's figures moved 6.7x between two runs 25 minutes apart on a
busy host, with no word).

  host = stable.HostLoad()                  # at the start: load average, /proc/stat
  r = stable.repeat(run_once, {"item": lambda run: run.cpu}, policy, what="item CPU")
  r.values["item"], r.spreads["item"], r.n, r.result   # the run kept
  host.end()                                # other processes' share, steal
  host.warnings + [w for r in figures for w in r.warnings]

The statistic is calibrate's (sim/calibrate/stability.c, stability_figure):
(max - min) / median, here over the `keep` (3) repeats that agree best, i.e.
the neighbouring ones in sorted order with the smallest (max - min) / median.
More repeats can only widen the spread of all of them, so judging all would
never settle; a busy host only ever slows a run, so the repeats that agree
best are the host's own speed and the slow ones are its neighbours'. A
figure is repeated until that spread is within policy.bound, or
policy.max_repeats runs or policy.max_s seconds are spent (after at least
`keep`); then it is flagged with the spread and the host's load.

The busy-host rule and its wording are calibrate's: the thresholds below are
sim/calibrate/stability.h's and the messages stability.c's format strings
(tests/probe_fits.py checks both against the C), so there is one definition
of a busy host, whichever program measured."""

import os
import platform
import resource
import statistics
import threading
import time

# sim/calibrate/stability.h: load average per online core, other processes'
# share of all CPU time, stolen time.
STABILITY_MAX_LOAD = 1.0
STABILITY_MAX_OTHER = 0.25
STABILITY_MAX_STEAL = 0.05
# sim/calibrate/stability.c's messages, as its C format strings.
HOST_LOAD = "host busy: load average %.2f on %d cores; rerun on an idle host"
HOST_OTHER = "host busy: other processes took %.0f%% of the CPU time; figures may be slow"
HOST_STEAL = "the hypervisor stole %.0f%% of the CPU time; figures may be slow"
FIGURE = "%s varied by %.0f%% over %d repetitions (%.4g..%.4g): unstable"

STATISTIC = "(max - min) / median of the 3 neighbouring repeats that agree best"


class Policy:
    """When to stop repeating a figure: its spread within bound, or
    max_repeats runs, or max_s seconds (after at least keep runs)."""

    def __init__(self, bound=0.10, max_repeats=10, max_s=300.0, keep=3, clock=time.monotonic):
        self.bound, self.max_repeats, self.max_s = bound, max_repeats, max_s
        self.keep, self.clock = keep, clock


def run_delay():
    """Seconds this thread has spent runnable, waiting for a core
    (/proc/thread-self/schedstat's second field; 0 where the kernel keeps
    none): what a busy host takes from a timed figure."""
    try:
        with open("/proc/thread-self/schedstat", "rb") as f:
            return _delay_s(f.read())
    except (OSError, IndexError, ValueError):
        return 0.0


def _delay_s(schedstat):
    """The run delay, seconds, of a schedstat line's bytes (its second field)."""
    return int(schedstat.split()[1]) / 1e9


class RunDelay:
    """run_delay() from a descriptor kept open per thread (os.pread of
    /proc/thread-self/schedstat): a few microseconds a read where opening
    the file each time took about 20, which a timed item of a fast Dataset
    carried. The descriptor is reopened in a forked child or another thread
    (thread-self names the thread that opened it)."""

    def __init__(self):
        self.owner, self.fd = None, -1

    def __call__(self):
        me = (os.getpid(), threading.get_ident())
        try:
            if self.owner != me:
                self.close()
                self.fd = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
                self.owner = me
            return _delay_s(os.pread(self.fd, 128, 0))
        except (OSError, IndexError, ValueError):
            return 0.0

    def close(self):
        if self.fd >= 0:
            os.close(self.fd)
        self.fd = -1

    def __del__(self):
        self.close()


def judge_host(load1, cores, other, steal):
    """calibrate's stability_judge_host: the warnings for these readings."""
    out = []
    if load1 / cores > STABILITY_MAX_LOAD:
        out.append(HOST_LOAD % (load1, cores))
    if other > STABILITY_MAX_OTHER:
        out.append(HOST_OTHER % (100 * other))
    if steal > STABILITY_MAX_STEAL:
        out.append(HOST_STEAL % (100 * steal))
    return out


def tightest(values, keep):
    """The `keep` neighbouring values in sorted order with the smallest
    (max - min) / median: (spread, median, lo, hi). Fewer values: all of
    them. A median of 0 gives spread 0 when all are 0, else infinity."""
    v = sorted(values)
    k = min(keep, len(v))
    best = None
    for i in range(len(v) - k + 1):
        w = v[i: i + k]
        med = statistics.median(w)
        spread = (w[-1] - w[0]) / abs(med) if med else (0.0 if w[-1] == w[0] else float("inf"))
        if best is None or spread < best[0]:
            best = (spread, med, w[0], w[-1])
    return best


class Repeated:
    """What repeat() measured: per figure its value (the median of the
    repeats kept), spread, and lo..hi of those repeats; n runs in all; the
    run whose first figure is nearest that figure's value (result); whether
    every judged figure is within the bound, and the warnings if not."""

    def __init__(self):
        self.values, self.spreads, self.ranges = {}, {}, {}
        self.n, self.result, self.stable, self.warnings, self.seen = 0, None, True, [], {}


def repeat(run_once, figures, policy, what, judged=None, host=None):
    """Calls run_once(r) for r = 0, 1, ... and reads each figure of the run
    with figures[name](run); stops once every judged figure (default: all)
    has its spread within policy.bound over policy.keep repeats, or at the
    policy's limits. host (a HostLoad) is named in the warning of a figure
    that did not settle."""
    judged = list(figures) if judged is None else judged
    runs, seen = [], {k: [] for k in figures}
    t0 = policy.clock()
    while True:
        run = run_once(len(runs))
        runs.append(run)
        for k, f in figures.items():
            seen[k].append(f(run))
        if len(runs) < policy.keep:
            continue
        if all(tightest(seen[k], policy.keep)[0] <= policy.bound for k in judged):
            break
        if len(runs) >= policy.max_repeats or policy.clock() - t0 >= policy.max_s:
            break
    out = Repeated()
    out.n, out.seen = len(runs), seen
    for k in figures:
        spread, med, lo, hi = tightest(seen[k], policy.keep)
        out.values[k], out.spreads[k], out.ranges[k] = med, spread, (lo, hi)
        if k in judged and spread > policy.bound:
            out.stable = False
            msg = FIGURE % (f"{what}: {k}", 100 * spread, out.n, lo, hi)
            msg += f" (best {min(policy.keep, out.n)} of {out.n}; bound {100 * policy.bound:.0f}%)"
            if host is not None:
                msg += "; " + host.now()
            out.warnings.append(msg)
    first = next(iter(figures))
    i = min(range(len(runs)), key=lambda j: abs(seen[first][j] - out.values[first]))
    out.result = runs[i]
    return out


def read_stat():
    """All CPUs' jiffies from /proc/stat: (total, idle + iowait, steal), or None."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:11]]
    except (OSError, ValueError):
        return None
    if len(v) < 8:
        return None
    return sum(v[:8]), v[3] + v[4], v[7]


def tasks_cpu_s(pid):
    """CPU seconds the live threads of process pid have run
    (/proc/PID/task/*/schedstat, nanoseconds): finer than /proc/PID/stat's
    clock ticks, which a worker's few ms of exit would be lost in."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, IndexError, ValueError):
            pass
    return total / 1e9


def own_cpu_s():
    """This process's CPU seconds and its reaped children's (the
    DataLoader's workers are processes, and they are the probe's own)."""
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def load_avg():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return -1.0


class HostLoad:
    """calibrate's stability_begin/_end for the probe: the load average at
    the start, then other processes' share of all CPU time and the stolen
    share over the run, judged by calibrate's rule."""

    def __init__(self):
        self.hostname = platform.node()
        self.cores = os.cpu_count() or 1
        self.load1 = load_avg()
        self.stat0, self.self0 = read_stat(), own_cpu_s()
        self.other = self.steal = 0.0
        self.known = self.stat0 is not None
        self.warnings = []

    def shares(self):
        """(other processes' share, stolen share) since the start."""
        now, hz = read_stat(), os.sysconf("SC_CLK_TCK")
        if not self.known or now is None or now[0] <= self.stat0[0] or hz <= 0:
            return 0.0, 0.0
        total = now[0] - self.stat0[0]
        busy = total - (now[1] - self.stat0[1]) - (now[2] - self.stat0[2])
        mine = (own_cpu_s() - self.self0) * hz
        return (max(0.0, busy - mine) / total, (now[2] - self.stat0[2]) / total)

    def now(self):
        """The host as it is now, for a figure's warning."""
        other, steal = self.shares()
        return (f"host {self.hostname}: load average {load_avg():.2f} on {self.cores} cores, "
                f"other processes {100 * other:.0f}% of the CPU time, stolen {100 * steal:.0f}%")

    def end(self):
        self.other, self.steal = self.shares()
        self.warnings = judge_host(max(self.load1, 0.0), self.cores, self.other, self.steal)
        return self.warnings


def profile_lines(host, policy, figures, notes):
    """The profile's measured.stability section (calibrate's keys, and
    `spread:` and `repeats:` by scenario key, which `stallsim run` reads for
    the prediction's sensitivity). figures: [(scenario key, spread, n)];
    notes: the figures' warnings."""
    def q(s):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = ["  stability:", f"    hostname: {q(host.hostname)}",
             f"    load_avg_1m_at_start: {host.load1:.4g}", f"    online_cores: {host.cores}"]
    if host.known:
        lines += [f"    other_processes_cpu_share: {host.other:.4g}",
                  f"    steal_share: {host.steal:.4g}"]
    lines += [f"    max_spread: {policy.bound:.4g}", f"    statistic: {q(STATISTIC)}",
              f"    max_repeats: {policy.max_repeats}", f"    max_s: {policy.max_s:.4g}",
              "    warnings: [" + ", ".join(q(w) for w in host.warnings + notes) + "]"]
    if figures:
        lines.append("    spread:")
        lines += [f"      {k}: {s:.4g}" for k, s, _ in figures]
        lines.append("    repeats:")
        lines += [f"      {k}: {n}" for k, _, n in figures]
    return lines
