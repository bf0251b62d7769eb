"""The harness protocol (validation/__init__.py says how to write one): the
arguments, a row in its own process, skips, the busy-host check, repeats,
the targets and the result page."""

import argparse
import datetime
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys

from validation import DATASETS, ROOT

SKIP = 77  # ctest's SKIP_RETURN_CODE: nothing measured, and why said
PAGES = os.path.join(ROOT, "docs", "validation")


class Skip(Exception):
    """This host cannot measure: the harness exits 77 with the reason."""


class RowFailed(RuntimeError):
    """A row's process failed: its exit status and whole stderr."""

    def __init__(self, msg, returncode, stderr):
        super().__init__(msg)
        self.returncode, self.stderr = returncode, stderr


def skip(tool, why):
    """Exit 77 (ctest's skip) with the reason (for code outside a harness)."""
    print(f"{tool}: skipped: {why}", file=sys.stderr)
    sys.exit(SKIP)


def load1(path=None):
    """The 1-minute load average (VALIDATION_LOADAVG names another file in
    /proc/loadavg's format, to try the busy and idle paths)."""
    with open(path or os.environ.get("VALIDATION_LOADAVG", "/proc/loadavg")) as f:
        return float(f.read().split()[0])


def busy(load=None):
    """Above one per core: the rule calibrate's stability check uses."""
    return (load1() if load is None else load) > (os.cpu_count() or 1)


def repeat(fn, n):
    """fn() n times: the list of what it gave (the caller takes the median,
    the best, or every one)."""
    return [fn() for _ in range(n)]


def median_abs(xs):
    return statistics.median(abs(x) for x in xs) if xs else 0.0


def worst_abs(xs):
    return max((abs(x) for x in xs), default=0.0)


class Target:
    """One bar a figure of the report is held to: figures[key] <= limit
    (or >= with op ">="); quick: the --quick run's limit; full_only: none
    on --quick. A figure the report gives as None (no such rows) is not
    judged."""

    def __init__(self, label, key, limit, quick=None, fmt="{:.0%}", op="<=", full_only=False):
        self.label, self.key, self.limit, self.quick = label, key, limit, quick
        self.fmt, self.op, self.full_only = fmt, op, full_only

    def limit_for(self, quick):
        return self.quick if quick and self.quick is not None else self.limit

    def holds(self, figures, quick):
        v, lim = figures[self.key], self.limit_for(quick)
        return v >= lim if self.op == ">=" else v <= lim

    def text(self, quick):
        return f"{self.label} {self.op} {self.fmt.format(self.limit_for(quick))}"


def git_commit():
    """HEAD's short hash, "+ changes" when the tree differs from it."""
    def git(*args):
        return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True)
    head = git("rev-parse", "--short", "HEAD")
    if head.returncode != 0:
        return "unknown (not a git checkout)"
    dirty = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
    return head.stdout.strip() + (" plus uncommitted changes" if dirty else "")


class Harness:
    """The base a harness subclasses (validation/__init__.py shows one)."""

    name = ""
    title = ""
    data = "/var/tmp/stallsim-torch/data"
    items = 1200
    epochs = 2
    needs = ()
    targets = []
    module = None  # the module --one runs (default validation.<name>)

    # What a harness declares ------------------------------------------------
    def add_arguments(self, ap):
        """Options of this harness's own, beside the base's."""

    def configure(self, a):
        """Arguments derived from others (--quick's sizes), in the run and
        in each row's process alike."""

    def requires(self, a):
        """None, or why this host cannot measure (the skip's reason)."""
        return None

    def setup(self, a):
        """Data, profile and scenario, once before the rows."""

    def teardown(self, a):
        """What setup made and the run leaves behind, removed (run or not)."""

    def rows(self, a):
        return []

    def measure(self, a, r):
        """Row r measured: by default run_row in a fresh process."""
        return self.isolated(a, r)

    def run_row(self, a, r):
        raise NotImplementedError(f"{self.name}: run_row")

    def predict(self, a, r, m):
        """stallsim's side of row r, measured m: the row's result."""
        raise NotImplementedError(f"{self.name}: predict")

    def row_line(self, r, res):
        """The progress line for a row (stderr); None prints nothing."""
        return None

    def report(self, a, results):
        """(the Markdown table, {figure: value} the targets read)."""
        raise NotImplementedError(f"{self.name}: report")

    def run(self, a):
        """The whole measurement: setup, then each row measured, predicted
        and reported; returns report()'s (text, figures). A harness whose
        rows are not one matrix overrides this alone."""
        self.setup(a)
        results = []
        for r in self.rows(a):
            res = self.predict(a, r, self.measure(a, r))
            results.append((r, res))
            line = self.row_line(r, res)
            if line:
                print(line, file=sys.stderr, flush=True)
        return self.report(a, results)

    # What the base does ------------------------------------------------------
    @property
    def tool(self):
        return f"validate_{self.name}"

    def parser(self):
        ap = argparse.ArgumentParser(prog=f"python3 -m validation.{self.name}",
                                     description=self.title)
        ap.add_argument("--bin", default=os.path.join(ROOT, "build", "sim", "stallsim"))
        ap.add_argument("--data", default=self.data)
        ap.add_argument("--items", type=int, default=self.items)
        ap.add_argument("--epochs", type=int, default=self.epochs)
        ap.add_argument("--seed", type=int, default=1)
        ap.add_argument("--quick", action="store_true", help="CI's subset, to the looser bars")
        ap.add_argument("--out", help="write the Markdown table here")
        ap.add_argument("--page", help=f"the result page (default: docs/validation/{self.name}.md"
                        " on a full run, none on --quick; 'none': no page)")
        ap.add_argument("--one", metavar="ROW", help=argparse.SUPPRESS)
        self.add_arguments(ap)
        return ap

    def isolated(self, a, r, wrap=None, timeout=None):
        """run_row(a, r) in a fresh process (this module with --one ROW and
        this run's arguments): the dict it printed as its last JSON line.
        wrap(cmd) -> argv runs it inside something (unshare, a cgroup). A
        row that skips (77, raising Skip in run_row) skips the harness."""
        return self.isolated_many(a, [r], wrap, timeout)[0]

    def isolated_many(self, a, rows, wrap=None, timeout=None):
        """isolated() for each row, all at once: their dicts, in order."""
        mod = self.module or f"validation.{self.name}"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, DATASETS, env.get("PYTHONPATH")) if p)
        procs = []
        for r in rows:
            cmd = [sys.executable, "-m", mod, *self.argv, "--one", json.dumps(r)]
            procs.append(subprocess.Popen(wrap(cmd) if wrap else cmd, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True, env=env))
        try:
            outs = [p.communicate(timeout=timeout) for p in procs]
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
                p.wait()
            raise
        return [self.row_result(r, p.returncode, out, err)
                for r, p, (out, err) in zip(rows, procs, outs)]

    def row_result(self, r, rc, out, err):
        lines = [x for x in out.splitlines() if x.startswith("{")]
        if rc == SKIP:
            raise Skip(err.strip().splitlines()[-1].split("skipped: ", 1)[-1]
                       if err.strip() else f"row {r} skipped")
        if rc != 0 or not lines:
            raise RowFailed(f"{self.name}: row {r}: exit {rc}: {err[-800:]}", rc, err)
        return json.loads(lines[-1])

    def missing(self):
        """The first module of `needs` this Python cannot import, or None."""
        for m in self.needs:
            try:
                importlib.import_module(m)
            except ImportError:
                return m
        return None

    def judge(self, a, figures):
        """Each target's text and whether it held; ok when all did."""
        held = [(t.text(a.quick), t.holds(figures, a.quick)) for t in self.targets
                if not (t.full_only and a.quick) and figures.get(t.key) is not None]
        return held, all(h for _, h in held)

    def page_path(self, a):
        if a.page == "none" or (a.quick and not a.page):
            return None
        return a.page or os.path.join(PAGES, f"{self.name}.md")

    def write_page(self, a, text, held, loads):
        """docs/validation/<name>.md: what it holds, the command, targets,
        date, host, commit, the table."""
        path = self.page_path(a)
        if not path:
            return
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        targets = "; ".join(f"{t} ({'met' if h else 'NOT met'})" for t, h in held) or \
            "none: a report (the table says each row's verdict)"
        cmd = " ".join(["python3 -m validation." + self.name, *self.argv])
        head = [f"# {self.title}", "",
                f"Written by `python3 -m validation.{self.name}` (validation/{self.name}.py) "
                "when it runs; do not edit by hand: rerun it.", "",
                f"- Command: `{cmd}`", f"- Targets: {targets}", f"- Date: {now}",
                f"- Host: {platform.node()}, {os.cpu_count()} cores, load average "
                f"{loads[0]:.2f} at the start, {loads[1]:.2f} at the end",
                f"- Commit: {git_commit()}", "", ""]
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path + ".tmp", "w") as f:
            f.write("\n".join(head) + text)
        os.replace(path + ".tmp", path)

    def finish(self, a, text, figures, loads):
        """The table printed, --out and the page written, the targets judged:
        the exit status."""
        print(text)
        if a.out:
            with open(a.out, "w") as f:
                f.write(text)
        held, ok = self.judge(a, figures)
        self.write_page(a, text, held, loads)
        if held:
            print(f"{self.tool}: targets ({', '.join(t for t, _ in held)}) "
                  f"{'met' if ok else 'NOT met'}", file=sys.stderr)
        return 0 if ok else 1

    def skip_reason(self, a):
        m = self.missing()
        if m:
            return (f"{m} is missing (scripts/setup.sh --torch installs Debian's "
                    "python3-torch, python3-torchvision and python3-torchaudio)")
        return self.requires(a)

    def execute(self, argv):
        self.argv = [x for x in argv]
        a = self.parser().parse_args(argv)
        self.configure(a)
        if a.one is not None:
            try:
                print(json.dumps(self.run_row(a, json.loads(a.one))), flush=True)
            except Skip as e:
                print(f"{self.tool}: skipped: {e}", file=sys.stderr)
                return SKIP
            return 0
        try:
            why = self.skip_reason(a)
            if why:
                raise Skip(why)
            load0 = load1()
            if busy(load0):
                print(f"{self.tool}: warning: host busy (load average {load0:.1f} on "
                      f"{os.cpu_count()} cores): the figures may be off", file=sys.stderr)
            text, figures = self.run(a)
        except Skip as e:
            print(f"{self.tool}: skipped: {e}", file=sys.stderr)
            return SKIP
        finally:
            self.teardown(a)
        return self.finish(a, text, figures, (load0, load1()))

    @classmethod
    def main(cls, argv=None):
        sys.exit(cls().execute(sys.argv[1:] if argv is None else argv))


def update_markers(path, name, text, tool):
    """Puts text between `<!-- NAME:begin ... -->` and `<!-- NAME:end -->` in
    path, atomically (a page that holds more than one harness's table). 0,
    or 2 when the markers are missing."""
    begin = f"<!-- {name}:begin (written by {tool}; do not edit by hand) -->"
    end = f"<!-- {name}:end -->"
    with open(path) as f:
        doc = f.read()
    if begin not in doc or end not in doc:
        print(f"{tool}: {path} lacks the markers {begin} ... {end}", file=sys.stderr)
        return 2
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(path + ".tmp", "w") as f:
        f.write(head + begin + "\n" + text + end + tail)
    os.replace(path + ".tmp", path)
    return 0
