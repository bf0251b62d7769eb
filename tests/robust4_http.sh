#!/usr/bin/env bash
# Robustness round 4 (issue 58) NS1: `measure --url` against a server whose
# answers have no body (a 302, 304, 204, or a 403/503 without a page, as a
# proxy or an expired signed URL sends). dba7216 took each for a 200 of 0
# bytes, failed every item and still printed a result with exit 0. A Python
# server on a loopback port, started and stopped here. Skips (77) without
# /usr/bin/python3.
# usage: robust4_http.sh STALLSIM WORKDIR
set -u
bin=$1
W=$2
py=/usr/bin/python3
if [ ! -x "$py" ]; then
  echo "robust4_http: SKIP: $py not found (it plays the server)"
  exit 77
fi
rm -rf "$W" && mkdir -p "$W" || exit 1
. "$(dirname "$0")/measure_lib.sh"
server_traps

scenario robust4-http 5 'storage: {queue_depth: 4}'
S=$W/s.yaml
D=$W/data
expect 0 "generating 4 JPEGs" -- "$bin" measure "$S" --data "$D" --generate 4 --epochs 1 --io-threads 2

cat >"$W/server.py" <<'PY'
import http.server, os, sys
root = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def do_GET(self):
        mode, _, rel = self.path.lstrip('/').partition('/')
        if mode == 'some' and 'class_00' not in rel:  # the others' real bytes
            with open(os.path.join(root, rel), 'rb') as f:
                body = f.read()
            self.send_response(200)
            self.send_header('Content-Length', str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if mode == 'some':
            mode = '404'
        if mode == 'junk':  # a 200 of the right size, not a JPEG
            size = os.path.getsize(os.path.join(root, rel))
            self.send_response(200)
            self.send_header('Content-Length', str(size))
            self.end_headers()
            self.wfile.write(b'\0' * size)
            return
        self.send_response(int(mode))
        if mode == '302':
            self.send_header('Location', self.path)
        if mode not in ('204', '304'):
            self.send_header('Content-Length', '0')
        self.end_headers()
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

for code in 302 304 204 403 503; do
  expect_out=$W/out.$code
  "$bin" measure "$S" --data "$D" --url "$U/$code/" --epochs 1 --io-threads 2 >"$expect_out" 2>"$W/err"
  rc=$?
  check "NS1 an empty $code is an error, not a result (exit $rc: $(tail -2 "$W/err"))" \
    '[ "$rc" != 0 ] && [ ! -s "$expect_out" ] && grep -q "HTTP status $code" "$W/err"'
done
# Every object of the right size but undecodable: no epoch result from nothing.
expect_out=$W/out
expect 1 "none of the 4 items was decoded" -- \
  timeout 100 "$bin" measure "$S" --data "$D" --url "$U/junk/" --epochs 1 --io-threads 2
check "NS1 no result row when every item failed" '[ ! -s "$W/out" ]'
# Some items failed: a result, with their share beside it in text and JSON.
expect 0 "" -- timeout 100 "$bin" measure "$S" --data "$D" --url "$U/some/" --epochs 1 --io-threads 2
check "NS1 the failed share beside the result ($(grep failed "$W/out"))" \
  'grep -q "^variant -: 1 of 4 items failed (25.0%" "$W/out"'
expect 0 "" -- timeout 100 "$bin" measure "$S" --data "$D" --url "$U/some/" --epochs 1 --io-threads 2 --format json
check "NS1 items_failed in the JSON" 'grep -q "\"items_failed\": 1," "$W/out"'

finish robust4_http
