#!/usr/bin/env bash
# A new kind is still three files (docs/extending.md, "Adding one"): in a
# copy of the source tree, a throwaway cache policy (cache_none.c under
# another name) gets its own file, its extern and one entry appended to
# caches[] in sim/kinds/kinds.c, and one line in sim/CMakeLists.txt; nothing
# else changes. The copy builds with warnings as errors, `help kinds` and the
# key reference list the policy, and run simulates with it, as none does.
# The copy, with the policy, is removed on exit. A recipe that no longer
# applies (kinds.c or the CMake line laid out otherwise) fails here: then
# the doc and this test change together.
#   tests/new_kind.sh SRCDIR
set -u
. "$(dirname "$0")/lib.sh"
src=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
t=$tmp/src
mkdir -p "$t"
# What the program's build reads: no tests, no Python, no build folders.
cp -a "$src/CMakeLists.txt" "$src/sim" "$src/cuda" "$src/scenarios" "$src/scripts" "$t/" \
  || { echo "FAIL: copying the source tree"; exit 1; }
cp -a "$t" "$tmp/orig"

# The three files.
k=$t/sim/kinds
sed -e 's/cache_none: no cache; every access goes to storage\./cache_scratch: a throwaway copy of cache_none (tests\/new_kind.sh)./' \
  -e 's/const cache_ops_t cache_none/const cache_ops_t cache_scratch/' \
  -e 's/\.name = "none"/.name = "scratch"/' -e 's/\.help = "no cache"/.help = "a throwaway policy: no cache"/' \
  "$k/cache_none.c" >"$k/cache_scratch.c"
grep -q 'cache_scratch = {' "$k/cache_scratch.c" && grep -q '"scratch"' "$k/cache_scratch.c" && ok \
  || bad "cache_scratch.c: cache_none.c no longer reads as the recipe expects"
perl -0pi -e 's/(static const cache_ops_t \*const caches\[\] = \{[^}]*?)\s*\}/$1, &cache_scratch}/s
  and s/(\nstatic const cache_ops_t \*const caches\[\])/\nextern const cache_ops_t cache_scratch;$1/' "$k/kinds.c"
grep -q '^extern const cache_ops_t cache_scratch;' "$k/kinds.c" && grep -q '&cache_scratch}' "$k/kinds.c" && ok \
  || bad "kinds.c: no caches[] list to append to"
perl -pi -e 's#kinds/cache_none\.c#kinds/cache_none.c kinds/cache_scratch.c#' "$t/sim/CMakeLists.txt"
grep -q 'kinds/cache_scratch\.c' "$t/sim/CMakeLists.txt" && ok || bad "sim/CMakeLists.txt: no kinds/cache_none.c to add beside"
changed=$(cd "$tmp" && diff -rq orig src | sort)
want="Files orig/sim/CMakeLists.txt and src/sim/CMakeLists.txt differ
Files orig/sim/kinds/kinds.c and src/sim/kinds/kinds.c differ
Only in src/sim/kinds: cache_scratch.c"
[ "$changed" = "$want" ] && ok || bad "the new kind touched other than its three files: $changed"

# It builds, warnings as errors (the program only: no tests, no CUDA).
if ! { cmake -S "$t" -B "$tmp/build" -DSTALLSIM_WERROR=ON -DSTALLSIM_TESTS=OFF -DSTALLSIM_CUDA=OFF \
  -DCMAKE_BUILD_TYPE=Release && cmake --build "$tmp/build" -j "$(nproc)" --target stallsim; } >"$tmp/log" 2>&1; then
  bad "the copy with the new kind does not build: $(tail -20 "$tmp/log")"
  finish new_kind
  exit
fi
ok
bin=$tmp/build/sim/stallsim

# Listed where kinds are listed, and chosen as any other.
"$bin" help kinds >"$tmp/kinds" && grep -qE '^  scratch +a throwaway policy: no cache$' "$tmp/kinds" && ok \
  || bad "help kinds does not list scratch: $(head -12 "$tmp/kinds")"
"$bin" help keys >"$tmp/keys" && grep -q 'scratch' "$tmp/keys" && ok || bad "help keys does not name scratch"
small=$src/tests/data/small.yaml
for m in --model-only ""; do
  a=$("$bin" run "$small" --variant base --set loader.cache=scratch $m --format csv 2>&1) \
    && b=$("$bin" run "$small" --variant base --set loader.cache=none $m --format csv 2>&1) \
    && [ "$(sed 's/scratch/none/g' <<<"$a")" = "$b" ] && ok \
    || bad "run ${m:-(simulated)} with loader.cache=scratch differs from none: $a"
done
finish new_kind
