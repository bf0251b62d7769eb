#!/usr/bin/env bash
# `cmake --install` gives a stallsim that works from anywhere: the program,
# the shipped scenarios under share/stallsim, a man page and bash completion
# generated from the program's tables (they name real keys and flags).
#   tests/install.sh BUILD_DIR
set -u
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
cmake --install "$build" --prefix "$tmp/p" >/dev/null || { echo "FAIL: cmake --install"; exit 1; }
# DESTDIR too: everything under it, nothing outside.
DESTDIR="$tmp/d" cmake --install "$build" --prefix /usr >/dev/null && [ -x "$tmp/d/usr/bin/stallsim" ] \
  && ok || bad "DESTDIR install"
p=$tmp/p
cd / || exit 1
out=$("$p/bin/stallsim" run "$p/share/stallsim/scenarios/openimages.yaml" --model-only --epochs 1 2>&1)
[ $? = 0 ] && grep -q "openimages-resnet18" <<<"$out" && ok || bad "installed run: $out"
[ -f "$p/share/stallsim/scenarios/hosts/README.md" ] && ok || bad "host-profile README not installed"
# A build with CUDA installs its module where the installed program looks first.
if [ -f "$build/cuda/libstallsim_gpu.so" ]; then
  [ -f "$p/lib/stallsim/libstallsim_gpu.so" ] && ok || bad "CUDA module not in lib/stallsim"
fi
# The Python package (the PyTorch probe and the notebooks' loader) is
# installed as its source folder beside the scenarios, and runs from there
# (tests/pypkg.sh pip-installs it).
pk=$p/share/stallsim/python
[ -f "$pk/pyproject.toml" ] && [ -f "$pk/stallsim/probe.py" ] && [ -f "$pk/stallsim/pipeline.py" ] \
  && [ -f "$pk/stallsim/data.py" ] && ok || bad "the Python package is not in share/stallsim/python"
[ -f "$p/share/stallsim/torch/http_dataset.py" ] && [ ! -e "$p/share/stallsim/torch/probe.py" ] && ok \
  || bad "share/stallsim/torch: the example Datasets, and no loose probe"
if [ -x /usr/bin/python3 ]; then
  PYTHONPATH=$pk /usr/bin/python3 -m stallsim.probe --help | grep -q -- "--data" && ok \
    || bad "PYTHONPATH=share/stallsim/python python3 -m stallsim.probe --help"
fi
man=$p/share/man/man1/stallsim.1
for w in server.storage.read_mb_s loader.cache "stallsim sweep" --threads belady "stallsim init" --gpu-items-per-s "GPU RATES" arxiv.org; do
  grep -qF -- "$w" "$man" && ok || bad "man page lacks $w"
done
comp=$p/share/bash-completion/completions/stallsim
for w in server.cpus= jobs.0.gpus= --threads --vary calibrate --trace-iters --html jobs.0.gpu= --gpu-items-per-s gpus; do
  grep -qF -- "$w" "$comp" && ok || bad "completion lacks $w"
done
# The completion offers --set keys as a shell would.
got=$(bash -c "source '$comp'; COMP_WORDS=(stallsim run x.yaml --set server.cp); COMP_CWORD=4; _stallsim; echo \${COMPREPLY[*]}")
[ "$got" = "server.cpus=" ] && ok || bad "completion of --set server.cp gave '$got'"
finish install
