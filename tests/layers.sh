#!/usr/bin/env bash
# The layers point one way: a source file may include headers of its own
# folder or of a lower layer, never of a higher one nor of a sibling at its
# own level (the simulator and the model do not know each other).
#   tests/layers.sh SRCDIR
# Lower number = lower layer. A folder missing here fails the test, so a new
# folder has to be placed.
set -euo pipefail
cd "${1:-.}"
declare -A rank=(
  [sim/util]=0 [cuda]=0
  [sim/scenario]=1
  [sim/kinds]=2 [microbench]=2
  [sim/engine]=3 [model]=3 [sim/import]=3
  [sim/mrc]=4
  [sim/run]=5
  [sim/report]=6
  [sim/sweep]=7 [microbench/measure]=7
  [sim/advise]=8 [sim/init]=8
  [sim/cli]=9
)
# Every header of the project, by name (names are unique across folders).
declare -A home=()
while IFS= read -r h; do
  name=${h##*/}
  [ -z "${home[$name]:-}" ] || { echo "layers: header name $name in two folders: ${home[$name]} and ${h%/*}"; exit 1; }
  home[$name]=${h%/*}
done < <(find sim model microbench cuda -name '*.h' | sort)
bad=0 n=0
while IFS= read -r f; do
  dir=${f%/*}
  [ -n "${rank[$dir]:-}" ] || { echo "layers: $dir has no layer (add it to tests/layers.sh)"; bad=1; continue; }
  while IFS= read -r inc; do
    hdir=${home[$inc]:-}
    [ -n "$hdir" ] || continue # a system or third-party header
    n=$((n + 1))
    [ "$hdir" = "$dir" ] && continue
    if [ "${rank[$hdir]}" -ge "${rank[$dir]}" ]; then
      echo "layers: $f includes $hdir/$inc: layer ${rank[$hdir]} from layer ${rank[$dir]}"
      bad=1
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | sed 's#.*/##')
done < <(find sim model microbench cuda \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) | sort)
[ $bad = 0 ] && echo "layers: $n project includes, all pointing down" || exit 1
