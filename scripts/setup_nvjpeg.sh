#!/usr/bin/env bash
# Puts nvJPEG's header and library where cmake can build cuda/nvjpeg_cuda.cu,
# for a CUDA toolkit that ships without them (this one: CUDA 13 without
# nvjpeg.h). Both come from Debian 12's non-free archive (nvidia-cuda-dev for
# nvjpeg.h, libnvjpeg11 for the library), fetched with apt into a private
# list and extracted into PREFIX: the system's apt sources are not changed
# and nothing is installed system-wide.
#   scripts/setup_nvjpeg.sh [PREFIX]     (default /opt/stallsim-nvjpeg)
#   cmake -S . -B build -DSTALLSIM_NVJPEG_ROOT=PREFIX
# Idempotent: prints nothing and changes nothing when PREFIX has both.
# The header is CUDA 11.8's; nvJPEG's C API is the same in later toolkits,
# and the module is then compiled, linked and loaded for real (running it
# needs a GPU; tests/test_nvjpeg_module.c says which happened).
set -euo pipefail
prefix=${1:-/opt/stallsim-nvjpeg}
[ -f "$prefix/include/nvjpeg.h" ] && [ -e "$prefix/lib/libnvjpeg.so" ] && exit 0
if [ "$(id -u)" -ne 0 ] && ! mkdir -p "$prefix" 2>/dev/null; then
  echo "setup_nvjpeg.sh: cannot write $prefix; run as root or give a PREFIX you own" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/nonfree.sources" <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
apt_opts=(-o "Dir::Etc::sourcelist=$work/nonfree.sources" -o Dir::Etc::sourceparts=-
          -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
          -o APT::Sandbox::User=root)
mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
echo "setup_nvjpeg.sh: fetching nvidia-cuda-dev (about 780 MB) and libnvjpeg11 from Debian non-free" >&2
apt-get "${apt_opts[@]}" update -qq
(cd "$work" && apt-get "${apt_opts[@]}" download -qq nvidia-cuda-dev libnvjpeg11)
mkdir -p "$work/x" "$prefix/include" "$prefix/lib"
dpkg-deb --fsys-tarfile "$work"/nvidia-cuda-dev_*.deb | tar -x -C "$work/x" ./usr/include/nvjpeg.h
dpkg-deb -x "$work"/libnvjpeg11_*.deb "$work/x"
cp "$work/x/usr/include/nvjpeg.h" "$prefix/include/"
cp -P "$work"/x/usr/lib/x86_64-linux-gnu/libnvjpeg.so.* "$prefix/lib/"
so=$(cd "$prefix/lib" && ls libnvjpeg.so.[0-9]* | sort | head -n 1)
ln -sf "$so" "$prefix/lib/libnvjpeg.so"
echo "setup_nvjpeg.sh: nvjpeg.h and $so in $prefix" >&2
