#!/bin/sh
# func_length: no function of the project's C (sim/, cuda/) is over 100
# lines (the project's rule), counted from the line that names it to its
# closing brace in column 0 (clang-format's layout). Prints the longest. It first checks itself on a function of 101 lines (its
# parameters on two), which must fail. Any function over the limit fails:
# there are no known exceptions.
# usage: func_length.sh SRCDIR WORKDIR
set -u
SRC=$1 W=$2
LIMIT=100
mkdir -p "$W" || exit 1
# "LINES FILE:LINE NAME" for every function of the files given, longest first.
lengths() {
    for f in "$@"; do
        awk -v F="$f" '
!start && /^[A-Za-z_].*\(/ { cand = NR; name = $0 }
!start && cand && /;[[:space:]]*$/ { cand = 0 }
!start && cand && /\{[[:space:]]*$/ { start = cand; nm = name }
start && /^}/ { print NR - start + 1, F ":" start, substr(nm, 1, 60); start = 0; cand = 0 }
' "$f"
    done | sort -rn
}
{
    echo "static int long_one(int a,"
    echo "                    int b) {"
    i=0
    while [ $i -lt 98 ]; do echo "    (void)0;"; i=$((i + 1)); done
    echo "}"
} >"$W/long.c"
n=$(lengths "$W/long.c" | awk '{ print $1; exit }')
[ "$n" = 101 ] || { echo "FAIL: the counter gives $n lines for a function of 101"; exit 1; }
files=$(find "$SRC/sim" "$SRC/cuda" \( -name '*.c' -o -name '*.cu' \) | sort)
lengths $files >"$W/lengths"
echo "longest: $(head -n 1 "$W/lengths" | sed "s#$SRC/##")"
# "LINES FILE:LINE NAME..." of the functions over.
over=$(sed "s#$SRC/##" "$W/lengths" | awk -v L=$LIMIT '$1 > L')
[ -z "$over" ] || { echo "FAIL: functions over $LIMIT lines:"; echo "$over"; exit 1; }
echo "no function in sim/ or cuda/ over $LIMIT lines"
