#!/usr/bin/env bash
# Robustness round 3 (issue 33), `measure --url` against hostile servers on a
# loopback port (a Python server this test starts and stops): H3 a server
# that trickles its answer at 2 KB/s (above libcurl's low-speed limit), C1 one
# that streams without end, or announces a terabyte, B8 one that answers 500.
# Each ends in bounded time and memory with a message that says what the
# server did. Skips (77) without /usr/bin/python3.
# usage: robust3_http.sh STALLSIM WORKDIR
set -u
bin=$1
W=$2
py=/usr/bin/python3
if [ ! -x "$py" ]; then
  echo "robust3_http: SKIP: $py not found (it plays the hostile server)"
  exit 77
fi
rm -rf "$W" && mkdir -p "$W" || exit 1
. "$(dirname "$0")/measure_lib.sh"

server_traps

scenario robust3-http 5 'storage: {queue_depth: 4}'
S=$W/s.yaml
D=$W/data
expect 0 "generating 4 JPEGs" -- "$bin" measure "$S" --data "$D" --generate 4 --epochs 1 --io-threads 2

cat >"$W/server.py" <<'PY'
import http.server, os, sys, time
root = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def do_GET(self):
        mode, _, rel = self.path.lstrip('/').partition('/')
        path = os.path.join(root, rel)
        size = os.path.getsize(path) if os.path.isfile(path) else 0
        try:
            if mode == 'err500':
                body = b'<html><body>database\n  connection refused</body></html>'
                self.send_response(500)
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            elif mode == 'trickle':  # 2 KB/s: above libcurl's 1 KB/s low-speed limit
                self.send_response(200)
                self.send_header('Content-Length', str(size))
                self.end_headers()
                for _ in range(size // 1024 + 1):
                    self.wfile.write(b'x' * 1024)
                    self.wfile.flush()
                    time.sleep(0.5)
            elif mode == 'stream':  # no Content-Length, no end
                self.send_response(200)
                self.end_headers()
                while True:
                    self.wfile.write(b'x' * 65536)
            elif mode == 'huge':  # announces a terabyte
                self.send_response(200)
                self.send_header('Content-Length', str(10 ** 12))
                self.end_headers()
                while True:
                    self.wfile.write(b'x' * 65536)
        except (BrokenPipeError, ConnectionResetError):
            pass
s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
s.daemon_threads = True
print(s.server_address[1], flush=True)
s.serve_forever()
PY
: >"$W/port"
"$py" -u "$W/server.py" "$D" >"$W/port" 2>"$W/server.err" &
srv=$!
for _ in $(seq 100); do
  [ -s "$W/port" ] && break
  sleep 0.1
done
port=$(head -n 1 "$W/port")
if [ -z "$port" ]; then
  echo "FAIL: the test server did not start: $(cat "$W/server.err")"
  exit 1
fi
U=http://127.0.0.1:$port

# H3: at 2 KB/s an object of ~100 KB takes ~50 s, and libcurl's low-speed
# limit (1 KB/s) never fires: f72e534 held the GET until `timeout` killed it.
t0=$(date +%s)
expect 1 "a GET must average 64 KB/s: the server trickles" -- \
  timeout 100 "$bin" measure "$S" --data "$D" --url "$U/trickle/" --epochs 1 --io-threads 2
check "H3 ended within 60 s (took $(($(date +%s) - t0)) s)" '[ $(($(date +%s) - t0)) -lt 60 ]'

# C1: a stream without end is cut at the file's size; f72e534 grew the object
# until memory ran out (here: the 2 GB limit, or `timeout`). Under
# AddressSanitizer the program cannot start in 2 GB of address space (its
# shadow memory alone is terabytes): then `timeout` is the only bound. Every
# object then fails: since issue 58 (NS1) an epoch with no item decoded is
# exit 1 with no result, where dba7216 printed one from nothing (exit 0).
vlim=2000000
bash -c 'ulimit -v 2000000; exec "$@"' _ "$bin" help >/dev/null 2>&1 || vlim=unlimited
expect 1 "the server sent more than the file under --data has" -- \
  bash -c 'ulimit -v "$0"; exec timeout 100 "$@"' "$vlim" \
  "$bin" measure "$S" --data "$D" --url "$U/stream/" --epochs 1 --io-threads 2
check "C1 every streamed object counted as failed" 'grep -q "4 objects differ in size" "$W/err"'
expect 1 "the server announces 1000000000000 bytes, its file under --data has" -- \
  bash -c 'ulimit -v "$0"; exec timeout 100 "$@"' "$vlim" \
  "$bin" measure "$S" --data "$D" --url "$U/huge/" --epochs 1 --io-threads 2

# B8: a 500 names itself, what it means and what the server said; it is not
# "is BASE right?" (a wrong BASE gives 404s).
expect 1 "HTTP status 500 (Internal Server Error: a fault of the server" -- \
  timeout 100 "$bin" measure "$S" --data "$D" --url "$U/err500/" --epochs 1 --io-threads 2
check "B8 the server's own words quoted" \
  'grep -qF "the server said: '"'"'<html><body>database connection refused</body></html>'"'"'" "$W/err"'
check "B8 a 500 is not called a wrong BASE" '! grep -q "is BASE right" "$W/err"'

finish robust3_http
