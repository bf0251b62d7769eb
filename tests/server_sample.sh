#!/usr/bin/env bash
# Server-sampled runs (sim.servers, sim/engine/server_sample.h) against the
# exact run they stand for: tests/data/servers.yaml at 8, 32 and 64 servers
# (each variant binding on something else), sampled at 4 of 8 and 16 of 32
# and 64. Each epoch's time and storage bytes within 1 % of the exact run's,
# hit rates within 1 percentage point; the rows marked and the bound stated
# (text and JSON); the same seed byte-identical; sampling refused with its
# reason where the servers are not alike; auto keeps the exact run where it
# fits. Prints the comparison. usage: server_sample.sh BIN SRCDIR
set -uo pipefail
bin=$1
cd "$2" || exit 1
. tests/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sc=tests/data/servers.yaml

echo "servers variant epoch  exact_s  sampled_s  diff  | hit exact sampled | bytes diff"
for n in 8 32 64; do
  k=$([ "$n" = 8 ] && echo 4 || echo 16)
  at=(--set server.count=$n --set jobs.0.gpus=$((n * 8)) --format csv)
  "$bin" run $sc "${at[@]}" --set sim.servers=exact >"$tmp/exact.$n" || bad "exact run at $n servers"
  "$bin" run $sc "${at[@]}" --set sim.servers=sampled --set sim.server_sample=$k >"$tmp/sampled.$n" ||
    bad "sampled run at $n servers"
  # variant, epoch, epoch_s, hit_rate, storage bytes of each simulated row
  rows() { awk -F, -v want="$2" 'NR > 1 && $4 == want {print $1, $3, $5, $10, $12}' "$1"; }
  [ "$(rows "$tmp/exact.$n" sim | wc -l)" -eq 8 ] || bad "$n servers: exact rows"
  [ "$(rows "$tmp/sampled.$n" sample | wc -l)" -eq 8 ] || bad "$n servers: rows not marked sample"
  paste -d' ' <(rows "$tmp/exact.$n" sim) <(rows "$tmp/sampled.$n" sample) >"$tmp/pair"
  out=$(awk -v n="$n" -v k="$k" '{
    d = 100 * ($8 / $3 - 1); b = 100 * ($10 / $5 - 1); h = 100 * ($9 - $4)
    printf "%3d(%2d) %-8s %d %9.4f %9.4f %+6.2f%% | %.4f %.4f | %+6.2f%%\n", n, k, $1, $2, $3, $8, d, $4, $9, b
    if (d > 1 || d < -1 || b > 1 || b < -1 || h > 1 || h < -1) printf "OVER\n"
  }' "$tmp/pair")
  echo "$out" | grep -v OVER
  if echo "$out" | grep -q OVER; then bad "$n servers: a sampled figure more than 1 % (1 pp) from the exact run"; else ok; fi
done

# Marked and bounded, in text and JSON; the same seed, the same bytes.
args=($sc --set server.count=32 --set jobs.0.gpus=256 --set sim.servers=sampled)
"$bin" run "${args[@]}" >"$tmp/t" || bad "sampled text"
grep -q "^sampled: 16 of 32 servers, bound ±[0-9.]* % (conns)" "$tmp/t" && ok || bad "text does not state the sample and its bound"
"$bin" run "${args[@]}" --format json >"$tmp/j1" && "$bin" run "${args[@]}" --format json >"$tmp/j2" || bad "sampled json"
grep -q '"sim_sampled_servers": {"sampled": 16, "servers": 32, "bound_pct": [0-9.]*, "text": "sampled: 16 of 32 servers, bound ±' "$tmp/j1" &&
  ok || bad "JSON does not state the sample and its bound"
cmp -s "$tmp/j1" "$tmp/j2" && ok || bad "the same seed gave different output"
# Only the sampled servers have per-server rows.
[ "$(grep -cE '^conns +[0-9]+ +[0-9] +sample ' "$tmp/t")" -eq 32 ] && ok || bad "per-server rows: expected 16 servers x 2 epochs"

# Not alike: refused with the reason (exit 2); exact where asked or where it fits.
expect_rc() { "$@" >"$tmp/o" 2>"$tmp/e"; echo $?; }
rc=$(expect_rc "$bin" run "${args[@]}" --set loader.dist_cache=partitioned --set loader.cache=minio)
[ "$rc" = 2 ] && grep -q "sim.servers: sampled: .*partitioned caching" "$tmp/e" && ok ||
  bad "sampling partitioned caches: expected exit 2 and the reason, got $rc: $(head -2 "$tmp/e")"
rc=$(expect_rc "$bin" run "${args[@]}" --trace "$tmp/trace.json")
[ "$rc" = 2 ] && grep -q "simulates 16 of its 32 servers" "$tmp/e" && [ ! -e "$tmp/trace.json" ] && ok ||
  bad "--trace of a server-sampled run: expected exit 2 and the reason, got $rc: $(head -2 "$tmp/e")"
"$bin" run $sc --set server.count=32 --set jobs.0.gpus=256 --format csv >"$tmp/auto" || bad "auto run"
cmp -s "$tmp/auto" "$tmp/exact.32" && ok || bad "auto did not keep the exact run that fits"
finish server_sample
