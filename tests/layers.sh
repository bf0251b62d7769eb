#!/usr/bin/env bash
# The layers point one way: a source file may include headers of its own
# folder or of a lower layer, never of a higher one nor of a sibling at its
# own level (the simulator and the model do not know each other).
#   tests/layers.sh SRCDIR [BUILDDIR]
# With BUILDDIR it also reads the calls, which includes miss (a prototype
# written in the .c, or a lower header declaring what a higher folder
# defines): every global symbol a project object file leaves undefined
# (nm -u) must be defined in its own folder or a lower layer. The objects
# are the members of the layer libraries (BUILDDIR's libstallsim_*.a), so a
# folder that shares a library with another (sim/scenario and sim/kinds) is
# checked on its own.
# Lower number = lower layer. A folder missing here fails the test, so a new
# folder has to be placed.
set -euo pipefail
cd "${1:-.}"
declare -A rank=(
  [sim/util]=0 [cuda]=0
  [sim/scenario]=1 [sim/benchlib]=1
  [sim/kinds]=2 [sim/calibrate]=2
  [sim/engine]=3 [sim/model]=3
  [sim/mrc]=4
  [sim/run]=5
  [sim/report]=6
  [sim/sweep]=7 [sim/measure]=7 [sim/compare]=7 [sim/simulate]=7 [sim/import]=7
  [sim/advise]=8 [sim/init]=8
  [sim/cli]=9
)
# Every header of the project, by name (names are unique across folders).
declare -A home=()
while IFS= read -r h; do
  name=${h##*/}
  [ -z "${home[$name]:-}" ] || { echo "layers: header name $name in two folders: ${home[$name]} and ${h%/*}"; exit 1; }
  home[$name]=${h%/*}
done < <(find sim cuda -name '*.h' | sort)
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
done < <(find sim cuda \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) | sort)
[ $bad = 0 ] && echo "layers: $n project includes, all pointing down" || exit 1
[ -n "${2:-}" ] || exit 0

# Calls: the folder of each library member (source names are unique across
# folders, as header names are).
declare -A src=()
while IFS= read -r c; do
  name=${c##*/}
  [ -z "${src[$name]:-}" ] || { echo "layers: source name $name in two folders: ${src[$name]} and ${c%/*}"; exit 1; }
  src[$name]=${c%/*}
done < <(find sim cuda \( -name '*.c' -o -name '*.cu' \) | sort)
mapfile -t libs < <(find "$2" -name 'libstallsim_*.a' | sort)
[ ${#libs[@]} -gt 0 ] || { echo "layers: no libstallsim_*.a under $2 (build first)"; exit 1; }
# nm -P -A: "LIB[MEMBER]: SYMBOL TYPE ...": a global definition (upper-case
# type but U) or an undefined reference, per member.
syms=$(nm -P -A "${libs[@]}" | sed -n 's/^[^[]*\[\([^]]*\)\.o\]: \([^ ]*\) \([A-Z]\).*/\1 \2 \3/p')
declare -A def=()
while read -r m s ty; do
  [ "$ty" = U ] && continue
  def[$s]=${src[$m]:-}
done <<<"$syms"
calls=0
while read -r m s ty; do
  [ "$ty" = U ] || continue
  to=${def[$s]:-}
  [ -n "$to" ] || continue # the C library, libyaml, GSL, ...
  from=${src[$m]:-}
  [ -n "$from" ] || { echo "layers: library member $m.o has no source in the tree"; bad=1; continue; }
  calls=$((calls + 1))
  [ "$to" = "$from" ] && continue
  if [ "${rank[$to]}" -ge "${rank[$from]}" ]; then
    echo "layers: $from/$m uses $s of $to: layer ${rank[$to]} from layer ${rank[$from]}"
    bad=1
  fi
done <<<"$syms"
[ $bad = 0 ] && echo "layers: $calls project symbols used across objects, all defined in their own folder or below" || exit 1
