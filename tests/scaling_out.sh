#!/usr/bin/env bash
# docs/scaling-out.md's Slurm array script and Kubernetes Indexed Job, run as
# written: the script's stallsim line under each task's Slurm variables (the
# tasks of its #SBATCH --array), the manifest's command under each
# JOB_COMPLETION_INDEX (its completions), each set of parts merged with
# `stallsim sweep --merge` and compared byte for byte with the unsharded
# sweep; then --shard auto's refusals and --merge's. No scheduler needed.
# usage: scaling_out.sh STALLSIM SOURCE_DIR
set -u
. "$(dirname "$0")/lib.sh"
in_tmp "$1" "$2"
expect_err=$tmp/err.txt
ln -s "$src/scenarios" scenarios
doc=$src/docs/scaling-out.md
block() { sed -n "/<!-- $1:begin -->/,/<!-- $1:end -->/p" "$doc" | sed '1,2d;$d' | sed '$d'; }
block slurm >sweep.sbatch
block k8s >job.yaml
# The script's command: its stallsim line, stallsim being this build's.
cmd=$(grep '^stallsim ' sweep.sbatch | sed "s|^stallsim |\"\$bin\" |")
check "the Slurm script has one stallsim line" '[ "$(grep -c "^stallsim " sweep.sbatch)" = 1 ]'
range=$(sed -n 's/^#SBATCH --array=\([0-9]*\)-\([0-9]*\)$/\1 \2/p' sweep.sbatch)
check "the Slurm script has an --array=A-B ($range)" '[ -n "$range" ]'
read -r lo hi <<<"$range"
# The unsharded sweep: the same command without --shard and -o.
whole=$(sed 's/ --shard auto.*//' <<<"$cmd")
eval "$whole -o whole.csv" 2>/dev/null
check "the unsharded sweep ran" '[ -s whole.csv ]'
mkdir slurm && cd slurm && ln -s ../scenarios scenarios
for id in $(seq "$lo" "$hi"); do
  SLURM_ARRAY_TASK_ID=$id SLURM_ARRAY_TASK_MIN=$lo SLURM_ARRAY_TASK_MAX=$hi SLURM_ARRAY_TASK_STEP=1 \
    SLURM_ARRAY_TASK_COUNT=$((hi - lo + 1)) eval "$cmd" 2>>"$expect_err"
done
expect 0 "" "$bin" sweep --merge -o grid.csv grid.*.csv
check "Slurm: the merged shards are the unsharded sweep, byte for byte" 'cmp -s grid.csv ../whole.csv'
cd ..

# The manifest's command (a JSON list on its command: line), $(VAR) as
# Kubernetes expands it, /out a folder here.
n=$(sed -n 's/^  completions: \([0-9]*\)$/\1/p' job.yaml)
check "the manifest is an Indexed Job of N completions ($n)" \
  'grep -q "completionMode: Indexed" job.yaml && [ -n "$n" ]'
mkdir k8s out
python3 - job.yaml >k8s/argv <<'PY'
import json, re, sys
line = next(l for l in open(sys.argv[1]) if l.strip().startswith("command:"))
for a in json.loads(line.split("command:", 1)[1]):
    print(a)
PY
cd k8s && ln -s ../scenarios scenarios
for k in $(seq 0 $((n - 1))); do
  mapfile -t argv < <(sed "s|\$(JOB_COMPLETION_INDEX)|$k|g; s|^/out/|../out/|" argv)
  [ "${argv[0]}" = stallsim ] && JOB_COMPLETION_INDEX=$k "$bin" "${argv[@]:1}" 2>>"$expect_err"
done
cd ..
expect 0 "" "$bin" sweep --merge -o grid.csv out/grid.*.csv
check "Kubernetes: the merged shards are the unsharded sweep, byte for byte" 'cmp -s grid.csv whole.csv'

# --shard auto's refusals.
g=(--vary server.cpus=1:3:1 --model-only)
cp "$small" small.yaml
expect 2 "neither a Slurm array job" env -u SLURM_ARRAY_TASK_ID -u JOB_COMPLETION_INDEX \
  "$bin" sweep small.yaml "${g[@]}" --shard auto -o a.csv
expect 2 "needs the Job's completions: --shard auto/N" env JOB_COMPLETION_INDEX=1 \
  "$bin" sweep small.yaml "${g[@]}" --shard auto -o a.csv
expect 2 "needs the Job's completions" env JOB_COMPLETION_INDEX=4 "$bin" sweep small.yaml "${g[@]}" --shard auto/4 -o a.csv
expect 2 "do not name a task" env SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_COUNT=4 \
  "$bin" sweep small.yaml "${g[@]}" --shard auto -o a.csv
check "nothing written by a refused --shard auto" '[ ! -e a.csv ] && [ ! -e a.csv.partial ]'
# A 1-based array (--array=1-3) is the same shards.
for id in 1 2 3; do
  env SLURM_ARRAY_TASK_ID=$id SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=3 \
    "$bin" sweep small.yaml "${g[@]}" --shard auto -o s.$id.csv 2>/dev/null
done
"$bin" sweep small.yaml "${g[@]}" -o s.csv 2>/dev/null
expect 0 "" "$bin" sweep --merge -o s.all.csv s.3.csv s.1.csv s.2.csv
check "a 1-based array merges to the unsharded sweep" 'cmp -s s.all.csv s.csv'

# --merge's refusals: nothing written.
expect 2 "shard 2/3 is missing" "$bin" sweep --merge -o m.csv s.1.csv s.3.csv
expect 2 "shard 1/3 twice" "$bin" sweep --merge -o m.csv s.1.csv s.1.csv s.2.csv
"$bin" sweep small.yaml --vary server.cpus=2:4:1 --model-only --shard 3/3 -o other.3.csv 2>/dev/null
expect 2 "a shard of another sweep" "$bin" sweep --merge -o m.csv s.1.csv s.2.csv other.3.csv
sed -i 's/"status": "complete"/"status": "running"/' s.2.csv.meta.json
expect 2 "not finished" "$bin" sweep --merge -o m.csv s.1.csv s.2.csv s.3.csv
cp whole.csv nometa.csv
expect 2 "no PART.meta.json beside it" "$bin" sweep --merge -o m.csv nometa.csv
check "nothing written by a refused merge" '[ ! -e m.csv ]'
sed -i 's/"status": "running"/"status": "complete"/' s.2.csv.meta.json
cp s.1.csv s1.keep
expect 2 "is also -o" "$bin" sweep --merge -o s.1.csv s.1.csv s.2.csv s.3.csv
check "a part named as -o is left as it was" 'cmp -s s.1.csv s1.keep'

finish scaling_out
