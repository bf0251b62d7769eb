#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time from a seed corpus (the
# repository's scenarios, bad-input corpus, test data, a host profile and
# one --set per key) with a dictionary of scenario keys generated from
# `stallsim help keys`, and prints one line of figures per target.
# Exit 1 when a target finds a crash, leak, UB, timeout or memory blow-up
# (the input is left in WORK/artifacts/).
# usage: [FUZZ_ONLY="cli set"] run.sh BUILD_DIR STALLSIM SECONDS_PER_TARGET [WORK]
#   BUILD_DIR  a build with -DSTALLSIM_FUZZ=ON (CC=clang)
#   STALLSIM   any stallsim binary (for the key list)
set -u
build=$1 stallsim=$2 secs=$3
work=${4:-$build/fuzz-work}
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$work/artifacts" || exit 1

# Dictionary: every key, its path components, choices, and YAML's edge values.
dict=$work/keys.dict
{
  "$stallsim" help keys | awk '/^[a-z]/{print $1}' | sed 's/^jobs\[\]\.//' |
    tr '.' '\n' | sort -u
  "$stallsim" help keys | awk '/^[a-z]/{print $1}' | sed 's/^jobs\[\]\./jobs.0./'
  printf '%s\n' jobs variants profile_version scenario measured none lru minio fifo belady \
    partitioned coordinated local true false .nan .inf -.inf -0 1e400 -1e400 \
    9223372036854775807 9223372036854775808 -9223372036854775809 4294967296 0x10 1e-400 \
    '---' '...' '{' '}' '[' ']' ': ' '- ' '&a ' '*a' '!!str ' '!!int ' '<<: ' '"' "'" '#'
} | awk '{gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); printf "k%d=\"%s\"\n", NR, $0}' >"$dict"
# Bytes names must not hold (issue 21): ESC, C1 CSI, DEL, a stray byte, and
# the CSV's own comma and quote.
printf '%s\n' 'kesc="\x1b"' 'kcsi="\xc2\x9b"' 'kdel="\x7f"' 'kff="\xff"' 'kcomma=","' \
  'kquote="\""' >>"$dict"

# Seeds.
for t in scenario profile set cli; do mkdir -p "$work/seeds-$t" "$work/corpus-$t"; done
cp "$src"/scenarios/*.yaml "$src"/tests/bad/*.yaml "$src"/tests/data/*.yaml "$work/seeds-scenario/"
cp "$src"/tests/fuzz/seeds/*.yaml "$work/seeds-profile/"
"$stallsim" help keys | awk '/^[a-z]/{print $1, $5}' | sed 's/^jobs\[\]\./jobs.0./' |
  awk '{v=$2; if (v=="required") v="1"; if (v=="\"\"") v="x"; print $1 "=" v > ("'"$work"'/seeds-set/" NR)}'
printf 'server.count=2\nserver.gpus=2\njobs.0.gpus=4\nloader.prep=coordinated\n' >"$work/seeds-set/multi"
printf 'name=a\033[31m\njobs.0.name=n\377\n' >"$work/seeds-set/control"
printf 'jobs.0.name=a,"b\nname=c\302\233d\n' >"$work/seeds-set/csv"
# The sweep command line (fuzz_cli): one argument a line.
printf -- '--vary\nserver.cpus=2,4:8:2\n--vary\nserver.cache_gb=0:0.01:0.005\n--threads\n2\n' >"$work/seeds-cli/grid"
printf -- '--vary\nvariant=base,minio\n--vary\njobs.0.batch_per_gpu=8,16\n--shard\n2/3\n--model-only\n' >"$work/seeds-cli/shard"
printf -- '--set\njobs.batch_per_gpu=4\n--vary\njobs.00.count=1,2\n--epochs\n1\n--variant\nbase\n' >"$work/seeds-cli/sets"
printf -- '--vary\nserver.cpus=1e0:3:1\n--jobs\n3\n-o\n-\n--vary=loader.cache=lru,none\n' >"$work/seeds-cli/aliases"

status=0
for t in ${FUZZ_ONLY:-scenario profile set cli}; do
  bin=$build/tests/fuzz/fuzz_$t
  log=$work/fuzz_$t.log
  "$bin" "$work/corpus-$t" "$work/seeds-$t" -dict="$dict" -max_total_time="$secs" \
    -max_len=8192 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -close_fd_mask=3 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/$t-" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  echo "fuzz_$t: ${secs} s, ${execs:-?} executions, ${rate:-?} exec/s, coverage ${cov:-?} edges, ${ft:-?} features, corpus ${corp:-?} inputs, exit $rc"
  if [ "$rc" != 0 ]; then
    status=1
    echo "fuzz_$t FOUND A PROBLEM (exit $rc); input in $work/artifacts/:"
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -20
  fi
done
exit $status
