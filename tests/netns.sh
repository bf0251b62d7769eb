#!/usr/bin/env bash
# Validation (issue 29): partitioned caching across servers when the NIC
# binds, against a real run in network namespaces joined by tbf-shaped veth
# links, nginx in each (validation/net.py: 2, 3 and 4 "servers",
# 6 epochs each, ~3.5 min). Needs root, ip, tc, nginx and curl (scripts/setup.sh
# --object); skips (77) with the reason where the machine cannot. The script
# removes every namespace, link, qdisc and process it made.
#   tests/netns.sh STALLSIM SRCDIR
set -u
if ! command -v python3 >/dev/null; then
  echo "netns: skipped: no python3 on this machine"
  exit 77
fi
# (The full run, but no results page: a test does not write the docs.)
cd "$2" && exec python3 -m validation.net --bin "$1" --page none
