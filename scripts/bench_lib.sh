# What the benchmark scripts share; source it from the repository root (`. scripts/bench_lib.sh`).

# median: the median of the numbers on stdin, one a line (the mean of the
# middle two for an even count).
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# t COMMAND...: runs it (output dropped) and prints "WALL CPU" seconds (CPU:
# user + system), through the caller's scratch folder $tmp.
t() { /usr/bin/time -f "%e %U %S" -o "$tmp/t" "$@" >/dev/null 2>&1; awk '{print $1, $2 + $3}' "$tmp/t"; }
