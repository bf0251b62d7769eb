#!/usr/bin/env bash
# measure_http: `stallsim measure --url` against Python's http.server on a
# loopback port. Reading the items over HTTP reads the same items and bytes
# as reading the files; MinIO works the same; an object the server lacks is
# reported and counted as a failed item; no server, or one that holds none of
# the objects, ends the run with a clear message; what --url cannot run
# exits 2. Skips (77) without /usr/bin/python3.
# usage: measure_http.sh STALLSIM WORKDIR
set -u
bin=$1
W=$2
py=/usr/bin/python3
if [ ! -x "$py" ]; then
  echo "measure_http: SKIP: $py not found (it serves the test's objects over HTTP)"
  exit 77
fi
rm -rf "$W" && mkdir -p "$W" || exit 1
. "$(dirname "$0")/measure_lib.sh"

server_traps


# counts EPOCH: what the epoch's stderr line says was fetched, decoded and read.
counts() {
  grep "epoch $1: " "$W/err" | sed -n 's/.*; \([0-9]* items fetched .* bytes)\),.*/\1/p'
}

scenario measure-http-test 5 'storage: {queue_depth: 100}'
S=$W/s.yaml
D=$W/data
N=40
# http.server answers HTTP/1.0 (a connection per GET) with a listen backlog
# of 5: a few threads keep its connects from being dropped and retried.
T=4

# The files, read from disk: the reference.
expect 0 "generating $N JPEGs" -- "$bin" measure "$S" --data "$D" --generate $N --format csv \
  --io-threads $T
cp "$W/out" "$W/file.csv"
file1=$(counts 1) file2=$(counts 2)
total=$(find "$D" -name '*.jpg' -printf '%s\n' | awk '{ s += $1 } END { print s }')
[ "$file1" = "$N items fetched once each, $N decoded, 0 failed; $N files read ($total bytes)" ] \
  && ok || bad "file run, epoch 1: '$file1'"

# The server, on a port it picks (the log names it; created first, so the
# wait below never reads a file the background shell has not opened yet).
: >"$W/server.log"
"$py" -u -m http.server --bind 127.0.0.1 0 --directory "$D" >"$W/server.log" 2>&1 &
srv=$!
port=
for _ in $(seq 100); do
  port=$(sed -n 's/^Serving HTTP on .* port \([0-9]*\) .*/\1/p' "$W/server.log")
  [ -n "$port" ] && break
  sleep 0.1
done
if [ -z "$port" ]; then
  echo "FAIL: http.server did not start: $(cat "$W/server.log")"
  exit 1
fi
U=http://127.0.0.1:$port

# The same items over HTTP: same counts, same bytes, every GET on the server.
expect 0 "items come from $U/" -- "$bin" measure "$S" --data "$D" --url "$U/" --format csv \
  --io-threads $T
cp "$W/out" "$W/url.csv"
[ "$(counts 1)" = "$file1" ] && [ "$(counts 2)" = "$file2" ] && ok \
  || bad "url run: '$(counts 1)' / '$(counts 2)', file run: '$file1' / '$file2'"
for e in 1 2; do
  [ "$(col "$W/url.csv" $e storage_read_bytes)" = "$(col "$W/file.csv" $e storage_read_bytes)" ] \
    && [ "$(col "$W/url.csv" $e storage_read_bytes)" = "$total" ] && ok \
    || bad "epoch $e: url read $(col "$W/url.csv" $e storage_read_bytes) bytes, files $total"
  [ "$(col "$W/url.csv" $e hit_rate)" = "0.000000" ] && ok || bad "url run: hits in epoch $e"
done
grep -qF "warmed the server: GET $N objects ($total bytes)" "$W/err" && ok \
  || bad "url run: no warm pass: $(cat "$W/err")"
gets=$(grep -c '"GET /class_[0-9]*/img_[0-9]*\.jpg HTTP/1\.1" 200' "$W/server.log")
[ "$gets" = $((3 * N)) ] && ok || bad "server saw $gets GETs, want $((3 * N)) (warm + 2 epochs)"
# BASE without the trailing slash names the same objects.
expect 0 "" -- "$bin" measure "$S" --data "$D" --url "$U" --format csv --io-threads $T --epochs 1
[ "$(col "$W/out" 1 storage_read_bytes)" = "$total" ] && ok || bad "BASE without '/': bytes differ"

# MinIO over HTTP: at 100% epoch 2 GETs nothing.
expect 0 "" -- "$bin" measure "$S" --data "$D" --url "$U/" --format csv --io-threads $T \
  --set loader.cache=minio --minio-size 100%
[ "$(col "$W/out" 1 storage_read_bytes)" = "$total" ] && [ "$(col "$W/out" 2 storage_read_bytes)" = 0 ] \
  && [ "$(col "$W/out" 2 hit_rate)" = "1.000000" ] && ok \
  || bad "minio 100% over HTTP: epoch reads $(col "$W/out" 1 storage_read_bytes), $(col "$W/out" 2 storage_read_bytes)"

# An object the server lacks (404): reported, counted as a failed item, not fatal.
cp -r "$D" "$W/more"
one=$(find "$D" -name '*.jpg' | sort | head -n 1)
cp "$one" "$W/more/class_00/zz_not_served.jpg"
expect 0 "skipping $U/class_00/zz_not_served.jpg: HTTP status 404" -- \
  "$bin" measure "$S" --data "$W/more" --url "$U" --format csv --io-threads $T
size1=$(stat -c %s "$one")
[ "$(counts 1)" = "$((N + 1)) items fetched once each, $N decoded, 1 failed; $N files read ($total bytes)" ] \
  && ok || bad "404: epoch 1 '$(counts 1)'"
grep -qF "1 of $((N + 1)) objects not served" "$W/err" && ok || bad "404 not noted by the warm pass"
[ "$(col "$W/out" 2 storage_read_bytes)" = "$total" ] && ok \
  || bad "404: read $(col "$W/out" 2 storage_read_bytes) bytes, want $total (not $((total + size1)))"

# A server with none of the objects, and no server at all: a clear end, no hang.
expect 2 "none of the $N objects is served there" -- \
  "$bin" measure "$S" --data "$D" --url "$U/no-such-prefix/" --io-threads $T
dead=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
expect 1 "cannot GET http://127.0.0.1:$dead/class_" -- \
  timeout 60 "$bin" measure "$S" --data "$D" --url "http://127.0.0.1:$dead/"
# ... whose note gives the default fetch threads with --url: the queue depth, at most 64.
grep -qF "64 fetch threads" "$W/err" && ok || bad "--url default threads: $(cat "$W/err")"

# What --url cannot run.
expect 2 "--cache page-cold: with --url" -- \
  "$bin" measure "$S" --data "$D" --url "$U" --cache page-cold
expect 2 "--cache page-cold-epoch: with --url" -- \
  "$bin" measure "$S" --data "$D" --url "$U" --cache page-cold-epoch
expect 2 "key 'loader.cache': with --url" -- \
  "$bin" measure "$S" --data "$D" --url "$U" --set loader.cache=lru
expect 2 "--url: expected http://" -- "$bin" measure "$S" --data "$D" --url "ftp://127.0.0.1/"
mkdir -p "$W/odd"
cp "$one" "$W/odd/a b.jpg"
expect 2 "only the characters [A-Za-z0-9._/-]" -- "$bin" measure "$S" --data "$W/odd" --url "$U"

stop_server
finish measure_http
