# What the measure tests share (sourced by tests/measure.sh and
# tests/measure_http.sh, which set W, their work folder, first): tests/lib.sh,
# with expect's stdout and stderr kept in $W/out and $W/err; col (a field of
# a measured CSV row); and scenario, the one-GPU scenario both measure.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
expect_out=$W/out
expect_err=$W/err

# col CSV EPOCH COLUMN: one field of the measured row of an epoch.
col() {
  awk -F, -v e="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
    $3 == e && $4 == "measured" { print $k }' "$1"
}

# scenario NAME SEED [SERVER_KEYS]: writes $W/s.yaml, the scenario NAME with
# SEED, and SERVER_KEYS added to its server.
scenario() {
  cat >"$W/s.yaml" <<EOF2
name: $1
seed: $2
epochs: 2
dataset: {items: 1, item_kb: 1}
server: {count: 1, cpus: 2, gpus: 1, cache_gb: 0${3:+, $3}}
jobs:
  - {name: job, gpus: 1, batch_per_gpu: 8, compute_s_per_batch: 0.002, prefetch_batches: 2}
loader: {cache: none}
EOF2
}

# For the tests that start a loopback server: its pid in $srv, stopped on
# exit or interruption (call server_traps once, set srv=PID after starting it).
srv=
stop_server() {
  if [ -n "$srv" ]; then
    kill "$srv" 2>/dev/null
    wait "$srv" 2>/dev/null
    srv=
  fi
}
server_traps() {
  trap stop_server EXIT
  trap 'exit 1' INT TERM
}
