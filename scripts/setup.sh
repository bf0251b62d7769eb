#!/usr/bin/env bash
# Installs the Debian 12 packages stallsim needs to build, test and plot.
# Idempotent: prints nothing and changes nothing when all are present.
set -euo pipefail
pkgs=(build-essential cmake pkg-config git libyaml-dev libgsl-dev
      libturbojpeg0-dev libjpeg-turbo-progs libcmocka-dev libcurl4-openssl-dev
      valgrind clang libclang-rt-14-dev   # memcheck test; libFuzzer targets
      python3 python3-yaml                # the semantic fuzzer (tests/semfuzz)
      libavcodec-dev libavformat-dev libavutil-dev libswscale-dev)  # calibrate's video decode
# --torch: Debian's PyTorch, torchvision and torchaudio for the DataLoader
# probe and its validations (python/stallsim/probe.py,
# validation/torch.py, validation/pipelines.py), run with /usr/bin/python3;
# venv, setuptools and wheel to install the probe's package offline
# (docs/pytorch.md; tests/pypkg.sh).
if [ "${1:-}" = "--torch" ]; then
  pkgs+=(python3-torch python3-torchvision python3-torchaudio python3-pil python3-numpy
         python3-venv python3-setuptools python3-wheel)
fi
# --object: nginx and its echo module (first-byte delays), curl and iproute2,
# for the object store that validation/object.py serves on loopback.
if [ "${1:-}" = "--object" ]; then
  pkgs+=(nginx libnginx-mod-http-echo curl iproute2 python3)
fi
# --html: Debian's Chromium, to render the HTML pages headless in tests/html.sh.
if [ "${1:-}" = "--html" ]; then
  pkgs+=(chromium python3)
fi
if [ "${1:-}" = "--notebooks" ]; then
  pkgs+=(jupyter-nbconvert python3-nbformat python3-ipykernel python3-pandas python3-matplotlib
        python3-yaml)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "setup.sh: missing packages: ${missing[*]}; run as root (or with sudo)" >&2
  exit 1
fi
echo "setup.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
