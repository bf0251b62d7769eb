#!/usr/bin/env bash
# Validation (issue 29): partitioned caching across servers when the NIC
# binds, against a real run in network namespaces joined by tbf-shaped veth
# links, nginx in each (scripts/validate_net.py: 2, 3 and 4 "servers",
# 6 epochs each, ~3.5 min). Needs root, ip, tc, nginx and curl (scripts/setup.sh
# --object); skips (77) with the reason where the machine cannot. The script
# removes every namespace, link, qdisc and process it made.
#   tests/netns.sh STALLSIM SRCDIR
set -u
if ! command -v python3 >/dev/null; then
  echo "netns: skipped: no python3 on this machine"
  exit 77
fi
exec python3 "$2/scripts/validate_net.py" --bin "$1"
