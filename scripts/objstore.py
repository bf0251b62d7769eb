#!/usr/bin/python3
"""A real HTTP object store on loopback for the validation harnesses: nginx
serving a folder inside a network namespace this module creates and removes,
with the first-byte latency and the bandwidth made real at the server.
Standard library only; needs root, ip, tc, nginx and, for a latency, nginx's
echo module (Debian: nginx, libnginx-mod-http-echo); probe() needs curl.

    with ObjectStore("/data", latency_ms=10, rate_mbit=100) as s:
        subprocess.run(s.exec_prefix + ["curl", s.url + "f0.jpg"])
        p = probe(s, files)            # p.ttfb_s, p.conn_mb_s, ...

ObjectStore(root_dir, latency_ms=0.0, rate_mbit=None, port=None)
  A context manager. __enter__ raises Cannot(reason) when this machine
  cannot run it (not root; no ip, tc or nginx; no echo module while
  latency_ms > 0): callers turn that into harness.skip(). A server that was
  expected to start and did not raises RuntimeError with nginx's error log.
  Attributes once entered: url ("http://127.0.0.1:PORT/"), netns (the
  namespace, stallsim-obj-<pid>-<n>), exec_prefix (["ip", "netns", "exec",
  NAME]: prefix a client's command with it, the server is reachable only
  from inside), port, root, tmp (the temporary folder).
  __exit__ (or close()) stops nginx and waits for it, deletes the namespace
  and the temporary folder, also when the body raised. Stores still open
  when the interpreter exits are closed by an atexit hook; SIGTERM and SIGHUP
  (where they had their default action) raise SystemExit so that the with
  blocks and that hook run, and Ctrl-C is a KeyboardInterrupt that does the
  same. nginx gets SIGTERM if the thread that started it dies. A namespace or
  temporary folder left by a process that was SIGKILLed (its pid in the
  name, the pid gone) is removed the next time a store starts.

  Latency: each GET waits latency_ms at the server before the response
  (headers included) is sent, then the file is served by nginx's static
  module (sendfile, Content-Length, ranges):
      location / { echo_sleep S; echo_exec @object; }   location @object { }
  A missing object is a 404, after the latency as at a real store. (The
  first idea, echo_location_async to an internal alias location, streams
  the file chunked, and a missing file comes back as 200 with nginx's 404
  page as the body: a subrequest's status does not reach the client.)
  echo_sleep takes seconds with at most 3 decimals (more is "invalid sleep
  duration", a 400) and nginx's timers are whole milliseconds: latency_ms
  is rounded to whole ms (1 at least), and time to first byte is that plus
  0.1-0.9 ms. latency_ms == 0: plain static serving.

  Bandwidth: rate_mbit is the rate of object bytes (TCP payload) the server
  sends, shared by all connections; requests and ACKs are not shaped.
  In the namespace lo's MTU is set to 1500, and
      tc qdisc add dev lo root handle 1: htb                 (default 0: the
          unclassified packets, requests and ACKs, bypass it)
      tc class add dev lo parent 1: classid 1:1 htb rate 10gbit
      tc qdisc add dev lo parent 1:1 tbf rate R burst B limit 32MiB
      tc filter ... u32 match ip sport PORT flowid 1:1
  R = rate_mbit * 1514/1448 (a 1448-byte segment is a 1514-byte frame on lo:
  14 Ethernet, 20 IP, 32 TCP with timestamps), so payload arrives at
  rate_mbit. B = max(3100 bytes, 40 us at R): two frames. tbf splits lo's
  64 KB GSO packets into frames no larger than B; with lo's own MTU of 65536
  B would have to hold a 64 KB packet, and a 100 KB object would then
  arrive mostly at memory speed after an idle gap. With B at one frame tbf
  loses tokens to timer slack and delivers ~25 % under the rate. limit is
  large because a drop on lo costs a retransmission timeout; TCP small
  queues keep the real queue far shorter. (No netem here: tbf and htb are
  what this kernel has; htb logs "tbf qdisc ... is non-work-conserving?"
  once to dmesg, which is harmless.)

probe(store, paths, conns=1) -> Probe
  Fetches paths (relative to root_dir, or absolute under it) with `conns`
  curl processes inside the namespace, the paths dealt out round robin,
  each process one keep-alive connection. Probe fields: n, bytes, ttfb_s
  (median of time_starttransfer - time_pretransfer: request to first byte,
  connection setup excluded), ttfbs (all of them), conn_mb_s (bytes over
  the summed first-to-last-byte times: what one connection gets while the
  others run), busy_mb_s (bytes over the time at least one transfer was
  receiving: the store's rate when busy), aggregate_mb_s (bytes over wall
  time, latencies included), wall_s, fit_mb_s (1 / the slope of request-to-
  last-byte time against object size, least squares; None unless the sizes
  differ: free of the fixed offsets that bias conn_mb_s, such as the bytes
  that arrive with the first one or a client's late wake-up, but noisy when
  the sizes differ little). MB = 1e6 bytes. Raises RuntimeError when a fetch
  is not a 200. With ~100 KB objects conn_mb_s reads 2-5 % over the rate at
  100 Mbit/s (the bucket's two frames), and tens of % off from ~400 Mbit/s
  up, where a transfer lasts under 2 ms and curl's wake-up after an idle
  latency shows: use fit_mb_s, or busy_mb_s of several connections, there.

fetch_status(store, path) -> the HTTP status of one GET.
fetch_intact(store, paths) -> the paths whose fetched bytes differ (sha256).
check(latency=True, rate=True, client=True) raises Cannot where a store
  with those features, or probe(), cannot run: to skip before preparing.

Self-test (root): python3 scripts/objstore.py --selftest DIR
  50 random files of ~100 KB in a temporary folder under DIR; latency 0, 10
  and 50 ms x rate none and 100 Mbit/s: content intact (sha256), a missing
  object is a 404, median time to first byte within max(10 %, 1 ms) of the
  latency, and for the rated rows one connection's rate and the busy rate of
  8 concurrent curl processes within 10 % of the rate. Exit 0 all met, 1
  not, 77 when it cannot run.
Serve a folder until Ctrl-C: python3 scripts/objstore.py --serve DIR
  [--latency-ms X] [--rate-mbit Y] [--port P]
"""

import argparse
import atexit
import ctypes
import glob
import hashlib
import itertools
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

NAME_PREFIX = "stallsim-obj-"
DEFAULT_PORT = 8080          # the namespace is new: any port is free
FRAME = 1514                 # bytes on lo per full segment at MTU 1500
MSS = 1448                   # payload of that segment (TCP timestamps on)
TBF_LIMIT = 32 << 20
HTB_CEIL_BIT = 10 * 10**9


class Cannot(Exception):
    """This machine cannot run the store (the caller skips)."""


def _which(name, extra=("/usr/sbin", "/sbin", "/usr/bin", "/bin")):
    p = shutil.which(name)
    if p:
        return p
    for d in extra:
        c = os.path.join(d, name)
        if os.access(c, os.X_OK):
            return c
    return None


def echo_module():
    """Path of ngx_http_echo_module.so, or None. Debian puts it in
    /usr/lib/nginx/modules and names it (relative to nginx's prefix) in
    /usr/share/nginx/modules-available/mod-http-echo.conf."""
    cands = ["/usr/lib/nginx/modules/ngx_http_echo_module.so"]
    for conf in glob.glob("/usr/share/nginx/modules-available/*echo*.conf"):
        try:
            with open(conf) as f:
                for m in re.finditer(r"load_module\s+([^;\s]+)\s*;", f.read()):
                    p = m.group(1)
                    if not os.path.isabs(p):
                        cands += [os.path.join(d, p)
                                  for d in ("/usr/share/nginx", "/usr/lib/nginx")]
                    else:
                        cands.append(p)
        except OSError:
            pass
    cands += glob.glob("/usr/lib*/nginx/modules/*echo*.so")
    cands += glob.glob("/usr/lib/*/nginx/modules/*echo*.so")
    for c in cands:
        if os.path.isfile(c):
            return os.path.realpath(c)
    return None


def _run(cmd, check=True):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"objstore: {' '.join(cmd)} failed ({p.returncode}): "
                           f"{p.stderr.strip() or p.stdout.strip()}")
    return p


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _netns_list(ip):
    p = _run([ip, "netns", "list"], check=False)
    return [line.split()[0] for line in p.stdout.splitlines() if line.strip()]


def _reap_stale(ip):
    """Removes namespaces and temporary folders of stores whose process is
    gone (it was SIGKILLed before it could clean up)."""
    pat = re.compile(re.escape(NAME_PREFIX) + r"(\d+)-\d+$")
    for name in _netns_list(ip):
        m = pat.match(name)
        if not m or int(m.group(1)) == os.getpid() or _pid_alive(int(m.group(1))):
            continue
        pids = _run([ip, "netns", "pids", name], check=False).stdout.split()
        if pids:
            print(f"objstore: stale namespace {name} still holds processes {' '.join(pids)}; "
                  "left alone", file=sys.stderr)
            continue
        _run([ip, "netns", "del", name], check=False)
    tpat = re.compile(re.escape(NAME_PREFIX) + r"(\d+)-\d+-")
    for d in glob.glob(os.path.join(tempfile.gettempdir(), NAME_PREFIX + "*")):
        m = tpat.match(os.path.basename(d))
        if m and int(m.group(1)) != os.getpid() and not _pid_alive(int(m.group(1))):
            shutil.rmtree(d, ignore_errors=True)


_live = set()
_live_lock = threading.Lock()
_signals_done = False


def _close_all():
    with _live_lock:
        stores = list(_live)
    for s in stores:
        s.close()


atexit.register(_close_all)


def _on_signal(signum, frame):
    raise SystemExit(128 + signum)


def _install_signals():
    """SIGTERM/SIGHUP -> SystemExit, so with blocks and atexit clean up.
    Only where the default action is in place, and only from the main thread."""
    global _signals_done
    if _signals_done or threading.current_thread() is not threading.main_thread():
        return
    _signals_done = True
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) == signal.SIG_DFL:
            signal.signal(sig, _on_signal)


def _die_with_parent():
    """preexec_fn: SIGTERM to the child when the thread that forked it dies."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)      # PR_SET_PDEATHSIG
    except Exception:
        pass


def check(latency=True, rate=True, client=True):
    """Raises Cannot(reason) unless a store (with a latency, a rate) and
    probe() (client) can run here; else (ip, tc, nginx, echo module) paths."""
    if os.geteuid() != 0:
        raise Cannot("needs root (network namespaces, tc)")
    ip, tc, nginx, echo = _which("ip"), _which("tc"), _which("nginx"), echo_module()
    if not ip:
        raise Cannot("no `ip` (iproute2)")
    if rate and not tc:
        raise Cannot("no `tc` (iproute2)")
    if not nginx:
        raise Cannot("no nginx (apt-get install nginx)")
    if latency and not echo:
        raise Cannot("no nginx echo module (apt-get install libnginx-mod-http-echo)")
    if client and not _which("curl"):
        raise Cannot("no curl")
    return ip, tc, nginx, echo


class ObjectStore:
    """nginx serving root_dir on 127.0.0.1:port inside a network namespace
    of its own, with latency_ms before each response and rate_mbit of
    payload shared by all connections (see the module docstring)."""

    _seq = itertools.count()

    def __init__(self, root_dir, latency_ms=0.0, rate_mbit=None, port=None, workers=2,
                 start_timeout_s=10.0):
        self.root = os.path.realpath(root_dir)
        self.latency_ms = float(latency_ms or 0.0)
        self.rate_mbit = float(rate_mbit) if rate_mbit else None
        self.port = int(port or DEFAULT_PORT)
        self.workers = int(workers)
        self.start_timeout_s = start_timeout_s
        self.netns = None
        self.tmp = None
        self.url = f"http://127.0.0.1:{self.port}/"
        self.exec_prefix = None
        self.tc_rate_bit = None
        self.tc_burst = None
        self._proc = None
        self._ip = None
        self._closed = False

    # -- checks -----------------------------------------------------------
    def _check(self):
        self._ip, self._tc, self._nginx, self._echo = check(self.latency_ms > 0,
                                                            bool(self.rate_mbit))
        if not os.path.isdir(self.root):
            raise ValueError(f"objstore: {self.root} is not a folder")
        if any(c in self.root for c in '"$\\{};\n'):
            raise ValueError(f"objstore: {self.root}: a character nginx's configuration "
                             "cannot hold")
        if self.latency_ms < 0 or (self.rate_mbit is not None and self.rate_mbit <= 0):
            raise ValueError("objstore: latency_ms >= 0 and rate_mbit > 0")

    # -- start ------------------------------------------------------------
    def __enter__(self):
        self._check()
        _install_signals()
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _start(self):
        ip = self._ip
        _reap_stale(ip)
        existing = set(_netns_list(ip))
        while True:
            name = f"{NAME_PREFIX}{os.getpid()}-{next(ObjectStore._seq)}"
            if name not in existing:
                break
        with _live_lock:
            _live.add(self)
        p = _run([ip, "netns", "add", name], check=False)
        if p.returncode != 0:
            raise Cannot(f"ip netns add failed: {p.stderr.strip()}")
        self.netns = name
        self.exec_prefix = [ip, "netns", "exec", name]
        self.tmp = tempfile.mkdtemp(prefix=f"{name}-")
        _run([ip, "-n", name, "link", "set", "lo", "up"])
        if self.rate_mbit:
            self._shape()
        conf = os.path.join(self.tmp, "nginx.conf")
        with open(conf, "w") as f:
            f.write(self.nginx_conf())
        self._log = open(os.path.join(self.tmp, "nginx.out"), "wb")
        self._proc = subprocess.Popen(
            self.exec_prefix + [self._nginx, "-e", os.path.join(self.tmp, "error.log"),
                                "-p", self.tmp + "/", "-c", conf],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True, preexec_fn=_die_with_parent)
        self._wait_ready()

    def _shape(self):
        tc, ns = self._tc, self.netns
        _run([self._ip, "-n", ns, "link", "set", "lo", "mtu", "1500"])
        self.tc_rate_bit = int(round(self.rate_mbit * 1e6 * FRAME / MSS))
        self.tc_burst = max(2 * FRAME + 72, int(self.tc_rate_bit / 8 * 40e-6))
        ceil = max(HTB_CEIL_BIT, 4 * self.tc_rate_bit)
        for cmd in (
                ["qdisc", "add", "dev", "lo", "root", "handle", "1:", "htb"],
                ["class", "add", "dev", "lo", "parent", "1:", "classid", "1:1", "htb",
                 "rate", f"{ceil}bit", "quantum", "60000"],
                ["qdisc", "add", "dev", "lo", "parent", "1:1", "handle", "10:", "tbf",
                 "rate", f"{self.tc_rate_bit}bit", "burst", str(self.tc_burst),
                 "limit", str(TBF_LIMIT)],
                ["filter", "add", "dev", "lo", "parent", "1:", "protocol", "ip", "prio", "1",
                 "u32", "match", "ip", "sport", str(self.port), "0xffff", "flowid", "1:1"]):
            p = _run([tc, "-n", ns] + cmd, check=False)
            if p.returncode != 0:       # a kernel without htb, tbf or u32
                raise Cannot(f"tc {' '.join(cmd)}: {p.stderr.strip()}")

    def nginx_conf(self):
        t = self.tmp
        if self.latency_ms > 0:
            sleep_ms = max(1, round(self.latency_ms))       # echo_sleep: 3 decimals
            locations = (f"        location / {{ echo_sleep {sleep_ms / 1e3:.3f}; "
                         "echo_exec @object; }\n"
                         "        location @object { }\n")
            load = f'load_module "{self._echo}";\n'
        else:
            locations = "        location / { }\n"
            load = ""
        return f"""# written by scripts/objstore.py
{load}daemon off;
master_process on;
user root root;
worker_processes {self.workers};
pid "{t}/nginx.pid";
lock_file "{t}/nginx.lock";
error_log "{t}/error.log" warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    server_tokens off;
    sendfile on;
    tcp_nodelay on;
    keepalive_requests 10000000;
    keepalive_timeout 3600s;
    types {{ }}
    default_type application/octet-stream;
    client_body_temp_path "{t}/client_body";
    proxy_temp_path "{t}/proxy";
    fastcgi_temp_path "{t}/fastcgi";
    uwsgi_temp_path "{t}/uwsgi";
    scgi_temp_path "{t}/scgi";
    server {{
        listen 127.0.0.1:{self.port} backlog=4096;
        root "{self.root}";
        autoindex off;
{locations}    }}
}}
"""

    def error_log(self):
        out = []
        for n in ("nginx.out", "error.log"):
            try:
                with open(os.path.join(self.tmp, n), errors="replace") as f:
                    out.append(f.read().strip())
            except (OSError, TypeError):
                pass
        return "\n".join(x for x in out if x)

    def _wait_ready(self):
        """Connect loop inside the namespace (one helper process)."""
        code = ("import socket,sys,time\n"
                "d=time.monotonic()+float(sys.argv[2])\n"
                "while time.monotonic()<d:\n"
                "    s=socket.socket()\n"
                "    try:\n"
                "        s.connect(('127.0.0.1',int(sys.argv[1]))); sys.exit(0)\n"
                "    except OSError: time.sleep(0.01)\n"
                "    finally: s.close()\n"
                "sys.exit(1)\n")
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                break
            p = subprocess.run(self.exec_prefix + [sys.executable, "-c", code, str(self.port),
                                                   "0.5"], capture_output=True)
            if p.returncode == 0:
                if self._proc.poll() is None:
                    return
                break
        rc = self._proc.poll()
        why = (f"exited with {rc}" if rc is not None
               else f"not listening after {self.start_timeout_s:g} s")
        raise RuntimeError(f"objstore: nginx {why} in {self.netns}; its log:\n{self.error_log()}")

    # -- stop -------------------------------------------------------------
    def close(self):
        if self._closed:
            return
        self._closed = True
        try:
            if self._proc is not None:
                if self._proc.poll() is None:
                    try:
                        self._proc.terminate()          # nginx: fast shutdown
                        self._proc.wait(10)
                    except subprocess.TimeoutExpired:
                        try:
                            os.killpg(self._proc.pid, signal.SIGKILL)
                        except ProcessLookupError:
                            pass
                        self._proc.wait()
                # workers leave with the master; any straggler is in our group
                try:
                    os.killpg(self._proc.pid, 0)
                    time.sleep(0.05)
                    os.killpg(self._proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                self._proc = None
            if getattr(self, "_log", None):
                self._log.close()
                self._log = None
            if self.netns:
                _run([self._ip, "netns", "del", self.netns], check=False)
                self.netns = None
            if self.tmp:
                shutil.rmtree(self.tmp, ignore_errors=True)
                self.tmp = None
        finally:
            with _live_lock:
                _live.discard(self)

    def __del__(self):
        if not getattr(self, "_closed", True) and (self.netns or self._proc):
            self.close()

    # -- helpers ----------------------------------------------------------
    def pids(self):
        """nginx's processes, master and workers (its process group)."""
        out = []
        for d in os.listdir("/proc") if self._proc is not None else ():
            try:
                if d.isdigit() and os.getpgid(int(d)) == self._proc.pid:
                    out.append(int(d))
            except OSError:  # gone between listdir and getpgid
                pass
        return out

    def url_of(self, path):
        """URL of a file given relative to root (or absolute under it)."""
        if os.path.isabs(path):
            path = os.path.relpath(os.path.realpath(path), self.root)
            if path.startswith(".."):
                raise ValueError(f"objstore: {path} is not under {self.root}")
        return self.url + urllib.parse.quote(path.replace(os.sep, "/"))


class Probe:
    """What probe() measured (see the module docstring)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __repr__(self):
        return (f"Probe(n={self.n}, conns={self.conns}, ttfb_ms={self.ttfb_s * 1e3:.3f}, "
                f"conn_mb_s={self.conn_mb_s:.2f}, busy_mb_s={self.busy_mb_s:.2f}, "
                f"aggregate_mb_s={self.aggregate_mb_s:.2f}, fit_mb_s="
                f"{'-' if self.fit_mb_s is None else format(self.fit_mb_s, '.2f')})")


_WFMT = ("%{http_code} %{size_download} %{time_pretransfer} %{time_starttransfer} "
         "%{time_total} %{url_effective}\\n")


def _curl_config(path, pairs):
    def q(s):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    with open(path, "w") as f:
        for url, out in pairs:
            f.write(f"url = {q(url)}\noutput = {q(out)}\n")


def _curl():
    c = _which("curl")
    if not c:
        raise Cannot("no curl")
    return c


def probe(store, paths, conns=1):
    """Fetches paths with `conns` concurrent curl processes inside the
    store's namespace, one keep-alive connection each; returns a Probe."""
    curl = _curl()
    urls = [store.url_of(p) for p in paths]
    if not urls:
        raise ValueError("objstore.probe: no paths")
    conns = max(1, min(int(conns), len(urls)))
    shares = [urls[i::conns] for i in range(conns)]
    cfgs = []
    for i, share in enumerate(shares):
        cfg = os.path.join(store.tmp, f"probe-{os.getpid()}-{i}.curl")
        _curl_config(cfg, [(u, "/dev/null") for u in share])
        cfgs.append(cfg)
    results = [None] * conns

    def one(i):
        p = subprocess.Popen(store.exec_prefix + [curl, "-sS", "--config", cfgs[i], "-w", _WFMT],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = p.communicate()
        results[i] = (time.monotonic(), p.returncode, out, err)

    t0 = time.monotonic()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for cfg in cfgs:
        os.unlink(cfg)
    t_last = max(r[0] for r in results)
    ttfbs, fits, nbytes, xfer, intervals, bad = [], [], 0, 0.0, [], []
    for t_end, rc, out, err in results:
        rows = [line.split(" ", 5) for line in out.splitlines() if line.strip()]
        if rc != 0:
            bad.append(f"curl exited {rc}: {err.strip()}")
        # curl runs its transfers one after another: lay them out backwards
        # from the moment the process ended
        end = t_end
        for code, size, pre, start, total, url in reversed(rows):
            size, pre, start, total = int(size), float(pre), float(start), float(total)
            if code != "200":
                bad.append(f"{url}: HTTP {code}")
                continue
            ttfbs.append(start - pre)
            fits.append((size, total - pre))
            nbytes += size
            xfer += total - start
            intervals.append((end - (total - start), end))
            end -= total
    if bad:
        raise RuntimeError("objstore.probe: " + "; ".join(bad[:5]) +
                           (f" (+{len(bad) - 5} more)" if len(bad) > 5 else ""))
    busy = 0.0
    cur_a = cur_b = None
    for a, b in sorted(intervals):
        if cur_b is None or a > cur_b:
            if cur_b is not None:
                busy += cur_b - cur_a
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    if cur_b is not None:
        busy += cur_b - cur_a
    wall = t_last - t0
    fit_mb_s = None
    if len({f[0] for f in fits}) >= 3:
        slope, _ = statistics.linear_regression([f[0] for f in fits], [f[1] for f in fits])
        fit_mb_s = 1 / slope / 1e6 if slope > 0 else None
    return Probe(n=len(ttfbs), conns=conns, bytes=nbytes, ttfb_s=statistics.median(ttfbs),
                 ttfbs=ttfbs, fit_mb_s=fit_mb_s,
                 conn_mb_s=nbytes / xfer / 1e6 if xfer > 0 else float("inf"),
                 busy_mb_s=nbytes / busy / 1e6 if busy > 0 else float("inf"),
                 aggregate_mb_s=nbytes / wall / 1e6, wall_s=wall)


def fetch_status(store, path):
    """HTTP status of one GET of path (relative to root), body discarded."""
    p = _run(store.exec_prefix + [_curl(), "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                  store.url + urllib.parse.quote(path)], check=False)
    return int(p.stdout or 0)


def fetch_intact(store, paths):
    """Fetches every path into the store's temporary folder with one curl and
    compares sha256 with the file; returns the paths that differ."""
    outdir = tempfile.mkdtemp(dir=store.tmp, prefix="fetch-")
    try:
        pairs = [(store.url_of(p), os.path.join(outdir, f"{i}.out")) for i, p in enumerate(paths)]
        cfg = os.path.join(outdir, "fetch.curl")
        _curl_config(cfg, pairs)
        _run(store.exec_prefix + [_curl(), "-sS", "--fail", "--config", cfg], check=False)
        bad = []
        for p, (_, out) in zip(paths, pairs):
            full = p if os.path.isabs(p) else os.path.join(store.root, p)
            try:
                with open(out, "rb") as f:
                    got = hashlib.sha256(f.read()).digest()
            except OSError:
                bad.append(p)
                continue
            with open(full, "rb") as f:
                if hashlib.sha256(f.read()).digest() != got:
                    bad.append(p)
        return bad
    finally:
        shutil.rmtree(outdir, ignore_errors=True)


# -- self-test ----------------------------------------------------------------

def _selftest(base):
    check()
    os.makedirs(base, exist_ok=True)
    data = tempfile.mkdtemp(dir=base, prefix="stallsim-objstore-selftest-")
    rng = random.Random(16)
    files = []
    try:
        os.makedirs(os.path.join(data, "sub dir"))
        for i in range(50):
            rel = f"f{i:02d}.bin" if i % 10 else os.path.join("sub dir", f"f {i:02d}.bin")
            with open(os.path.join(data, rel), "wb") as f:
                f.write(os.urandom(rng.randint(80_000, 120_000)))
            files.append(rel)
        mean_kb = statistics.mean(os.path.getsize(os.path.join(data, p)) for p in files) / 1e3
        print(f"objstore selftest: {len(files)} files, {mean_kb:.1f} KB mean; MB = 1e6 bytes",
              file=sys.stderr)
        hdr = ("| latency ms | rate Mbit/s | intact | missing | TTFB median ms | 1 conn MB/s "
               "| 1 conn fit MB/s | 8 conns busy MB/s | 8 conns wall MB/s | 8 conns TTFB ms "
               "| verdict |")
        lines = [hdr, "|" + "---:|" * 11]
        failed = 0
        for lat in (0, 10, 50):
            for rate in (None, 100):
                with ObjectStore(data, latency_ms=lat, rate_mbit=rate) as s:
                    bad = fetch_intact(s, files)
                    miss = fetch_status(s, "no-such-object.bin")
                    p1 = probe(s, files, conns=1)
                    p8 = probe(s, files * 4, conns=8)
                errs = []
                if bad:
                    errs.append(f"{len(bad)} differ")
                if miss != 404:
                    errs.append(f"missing gave {miss}")
                if abs(p1.ttfb_s * 1e3 - lat) > max(0.1 * lat, 1.0):
                    errs.append("TTFB")
                if rate:
                    want = rate / 8
                    if abs(p1.conn_mb_s / want - 1) > 0.10:
                        errs.append("1-conn rate")
                    if abs(p8.busy_mb_s / want - 1) > 0.10:
                        errs.append("busy rate")
                failed += bool(errs)
                exp = f" ({rate / 8:g})" if rate else ""
                lines.append(
                    f"| {lat} | {rate or '-'} | {len(files) - len(bad)}/{len(files)} | {miss} "
                    f"| {p1.ttfb_s * 1e3:.2f} | {p1.conn_mb_s:.1f}{exp} "
                    f"| {'-' if p1.fit_mb_s is None else format(p1.fit_mb_s, '.1f')} "
                    f"| {p8.busy_mb_s:.1f}{exp} "
                    f"| {p8.aggregate_mb_s:.1f} | {p8.ttfb_s * 1e3:.2f} "
                    f"| {'ok' if not errs else 'FAIL: ' + ', '.join(errs)} |")
                print(lines[-1], file=sys.stderr, flush=True)
        print("\n".join(lines))
        return 1 if failed else 0
    finally:
        shutil.rmtree(data, ignore_errors=True)


def _serve(a):
    with ObjectStore(a.serve, latency_ms=a.latency_ms, rate_mbit=a.rate_mbit, port=a.port) as s:
        print(f"objstore: {s.url} in namespace {s.netns}; clients: "
              f"{' '.join(s.exec_prefix)} curl {s.url}FILE; Ctrl-C stops", file=sys.stderr)
        try:
            while s._proc.poll() is None:
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--selftest", metavar="DIR")
    g.add_argument("--serve", metavar="DIR")
    ap.add_argument("--latency-ms", type=float, default=0.0)
    ap.add_argument("--rate-mbit", type=float)
    ap.add_argument("--port", type=int)
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import harness
    try:
        return _selftest(a.selftest) if a.selftest else _serve(a)
    except Cannot as e:
        harness.skip("objstore", str(e))


if __name__ == "__main__":
    sys.exit(main())
