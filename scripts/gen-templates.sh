#!/usr/bin/env bash
# Rewrites the templates `stallsim init` wrote (scenarios/templates/*.yaml
# with a "# A starter scenario, written by:" line) from the command each
# records, keeping the lines above it; tests/init.sh fails while one differs.
#   scripts/gen-templates.sh build/sim/stallsim
set -euo pipefail
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$(dirname "$0")/.."
for t in scenarios/templates/*.yaml; do
  cmd=$(sed -n '/^# A starter scenario, written by:$/{n;s/^#   stallsim //p;}' "$t")
  [ -n "$cmd" ] || continue
  { sed -n '1,/^# A starter scenario, written by:$/p' "$t" | sed '$d'; eval "\"\$bin\" $cmd"; } >"$t.new"
  mv "$t.new" "$t"
  echo "gen-templates: $t"
done
