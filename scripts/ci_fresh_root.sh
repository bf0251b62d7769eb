#!/usr/bin/env bash
# CI stage: a newcomer's first hour, proven. In a brand-new Debian 12 root
# (debootstrap --variant=minbase, then nothing but git and ca-certificates),
# a clean clone of the committed HEAD runs exactly the README's two commands
# (scripts/readme-commands.sh: the README's own text), then installs the
# build, deletes the build tree and runs the installed program; the .deb it
# packs is installed with apt in a second fresh root and run there. A
# package missing from scripts/setup.sh fails here, whatever this machine has.
#
#   scripts/ci_fresh_root.sh          (as root; network to the Debian mirror)
#   scripts/ci_fresh_root.sh --with-components
#       the same, with PyTorch, nginx and Chromium installed in the root first
#       (scripts/setup.sh --torch --object --html), so README command 2 is
#       shown to pass, deterministic, where the validation tools are present
#
# The minbase root (with git and ca-certificates) is cached as a tarball in
# $STALLSIM_CI_CACHE (default /var/cache/stallsim-ci); delete it for a cold run.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "ci_fresh_root: $*" >&2; }
components=0
case ${1:-} in
  --with-components) components=1 ;;
  '') ;;
  *) say "unknown option '$1' (usage: ci_fresh_root.sh [--with-components])"; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { say "needs root (debootstrap, chroot, mount)"; exit 1; }
export DEBIAN_FRONTEND=noninteractive
if ! command -v debootstrap >/dev/null; then
  apt-get update -qq && apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi
cache=${STALLSIM_CI_CACHE:-/var/cache/stallsim-ci}
base=$cache/bookworm-minbase-git.tar.gz
mirror=${STALLSIM_CI_MIRROR:-http://deb.debian.org/debian}
work=$(mktemp -d /var/tmp/stallsim-fresh.XXXXXX)
roots=()

unmount_all() {
  local r m
  for r in "${roots[@]}"; do
    for m in dev/pts dev sys proc; do
      if mountpoint -q "$r/$m" 2>/dev/null; then umount "$r/$m" 2>/dev/null || umount -l "$r/$m"; fi
    done
  done
}
cleanup() {
  unmount_all
  # Never delete through a mount point (a bound /dev would lose the host's nodes).
  if findmnt -rn -o TARGET | grep -q "^$work/"; then
    say "mounts remain under $work; leaving it for inspection"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

# A fresh root in DIR: the cached base, or debootstrap (and then cache it).
make_root() {
  local dir=$1
  mkdir -p "$dir"
  roots+=("$dir")
  if [ -f "$base" ]; then
    tar -xzf "$base" -C "$dir"
    return
  fi
  say "debootstrap --variant=minbase bookworm (cold: no cached base at $base)"
  debootstrap --variant=minbase bookworm "$dir" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log"; exit 1; }
  enter "$dir"
  chroot "$dir" apt-get update -qq
  chroot "$dir" apt-get install -y -qq --no-install-recommends git ca-certificates >/dev/null
  chroot "$dir" apt-get clean
  unmount_all
  mkdir -p "$cache"
  tar -czf "$base.tmp" -C "$dir" . && mv "$base.tmp" "$base"
}

enter() {
  local dir=$1
  cp /etc/resolv.conf "$dir/etc/resolv.conf"
  mountpoint -q "$dir/proc" || mount -t proc proc "$dir/proc"
  mountpoint -q "$dir/sys" || mount -t sysfs sys "$dir/sys"
  mountpoint -q "$dir/dev" || mount --bind /dev "$dir/dev"
  mountpoint -q "$dir/dev/pts" || mount --bind /dev/pts "$dir/dev/pts"
}

in_root() { # DIR COMMAND: a login-like shell in DIR with a clean environment
  local dir=$1
  shift
  chroot "$dir" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive /bin/bash -euo pipefail -c "$*"
}

t0=$(date +%s)
a=$work/a
make_root "$a"
enter "$a"
say "fresh root ready ($(($(date +%s) - t0)) s)"

# A clean clone of the committed HEAD (not the working tree).
git bundle create -q "$a/tmp/stallsim.bundle" HEAD
in_root "$a" "git -c advice.detachedHead=false clone -q /tmp/stallsim.bundle /root/stallsim"
say "README command 1"
in_root "$a" "cd /root/stallsim && scripts/readme-commands.sh 1" | tail -n 4
if [ $components = 1 ]; then
  say "PyTorch, nginx and Chromium ($(($(date +%s) - t0)) s)"
  in_root "$a" "cd /root/stallsim && scripts/setup.sh --torch && scripts/setup.sh --object &&
    scripts/setup.sh --html" | tail -n 4
fi
t2=$(date +%s)
say "README command 2 ($((t2 - t0)) s)"
in_root "$a" "cd /root/stallsim && scripts/readme-commands.sh 2" | tail -n 6
say "README command 2 passed in $(($(date +%s) - t2)) s"

say "install, delete the build tree, run the installed program ($(($(date +%s) - t0)) s)"
in_root "$a" "cd /root/stallsim && cmake --install build --prefix /opt/stallsim >/dev/null &&
  (cd build && cpack -G DEB >/dev/null) && cp build/stallsim_*.deb /tmp/ && rm -rf build &&
  cd / && /opt/stallsim/bin/stallsim run /opt/stallsim/share/stallsim/scenarios/openimages.yaml |
  tail -n 4"
in_root "$a" "test -x /opt/stallsim/bin/stallsim && test ! -e /root/stallsim/build"
cp "$a"/tmp/stallsim_*.deb "$work/"
unmount_all

say "the .deb in a second fresh root ($(($(date +%s) - t0)) s)"
b=$work/b
make_root "$b"
enter "$b"
cp "$work"/stallsim_*.deb "$b/tmp/"
in_root "$b" "apt-get update -qq && apt-get install -y -qq --no-install-recommends /tmp/stallsim_*.deb >/dev/null &&
  stallsim --version && stallsim run /usr/share/stallsim/scenarios/openimages.yaml --epochs 1 | tail -n 3 &&
  test -f /usr/share/man/man1/stallsim.1 && test -f /usr/share/bash-completion/completions/stallsim"
say "passed in $(($(date +%s) - t0)) s"
