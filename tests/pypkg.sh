#!/usr/bin/env bash
# The Python package (python/: stallsim.probe, stallsim.pipeline,
# stallsim.data, stallsim.nb) installs as docs/pytorch.md says, offline, on
# Debian 12 (PEP 668: into a venv that sees Debian's packages):
#   python3 -m venv --system-site-packages V && V/bin/pip install --no-build-isolation ./python
# then `stallsim-probe --help` runs from the venv, the package imports from
# there (without PyTorch: --help and the imports never load it), the
# notebooks' loader imports, and the checkout's paths (python/probe.py,
# notebooks/stallsim_nb.py) still reach the same code. Needs no network and
# no PyTorch; skips (77) only where venv, pip or setuptools are missing.
#   tests/pypkg.sh SRCDIR
set -u
src=$(cd "$1" && pwd)
. "$(dirname "$0")/lib.sh"
skip() { echo "pypkg: skipped: $*"; exit 77; }
# Debian's python3 (the one docs/pytorch.md names), else the first on PATH.
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3) || skip "no python3"
"$py" -c 'import venv, ensurepip' 2>/dev/null \
  || skip "$py has no venv with ensurepip (Debian: apt-get install python3-venv)"
# Offline and on this package alone: no index, no other wheels, no user site.
unset PYTHONPATH PYTHONHOME PIP_REQUIRE_VIRTUALENV PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL
export PYTHONNOUSERSITE=1
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_NO_CACHE_DIR=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" -m venv --system-site-packages "$tmp/v" >"$tmp/venv.log" 2>&1 \
  || { echo "FAIL: $py -m venv --system-site-packages: $(tail -5 "$tmp/venv.log")"; exit 1; }
v=$tmp/v/bin/python
"$v" -m pip --version >/dev/null 2>&1 || skip "the venv has no pip (Debian: python3-venv, python3-pip)"
# --no-build-isolation builds with what the venv sees: setuptools >= 61 (the
# [project] table), and before 70.1 the wheel package for bdist_wheel
# (Debian 12: python3-setuptools 66, python3-wheel).
why=$("$v" - <<'PY'
try:
    import setuptools
except ImportError:
    print("no setuptools (Debian: apt-get install python3-setuptools)")
    raise SystemExit
ver = tuple(int(x) for x in setuptools.__version__.split(".")[:2] if x.isdigit())
if ver < (61, 0):
    print(f"setuptools {setuptools.__version__} is older than 61 (pyproject.toml's [project])")
elif ver < (70, 1):
    try:
        import wheel  # noqa: F401
    except ImportError:
        print(f"setuptools {setuptools.__version__} needs the wheel package (Debian: python3-wheel)")
PY
)
[ -z "$why" ] || skip "$why"

# pip builds a folder in place (build/, *.egg-info): build a copy, as a user
# must from the read-only /usr/share/stallsim/python, and keep the checkout clean.
cp -r "$src/python" "$tmp/pkg"
rm -rf "$tmp/pkg/build" "$tmp/pkg"/*.egg-info
find "$tmp/pkg" -name __pycache__ -prune -exec rm -rf {} +
if "$v" -m pip install --no-index --no-build-isolation "$tmp/pkg" >"$tmp/pip.log" 2>&1; then
  ok
else
  bad "pip install --no-index --no-build-isolation ./python: $(tail -15 "$tmp/pip.log")"
  finish pypkg
  exit 1
fi
cd "$tmp" || exit 1
rm -rf "$tmp/pkg"  # from here on only the installed copy can answer

# The command, from the venv's bin, as a user runs it.
out=$("$tmp/v/bin/stallsim-probe" --help 2>&1)
[ $? = 0 ] && grep -q -- "--data" <<<"$out" && grep -q "usage: stallsim-probe" <<<"$out" && ok \
  || bad "stallsim-probe --help: $out"
head -1 "$tmp/v/bin/stallsim-probe" | grep -qF "$tmp/v/bin/python" && ok \
  || bad "stallsim-probe does not run the venv's python: $(head -1 "$tmp/v/bin/stallsim-probe")"
# What it was asked for is a clear error, not a traceback.
expect 2 "required: --data" -- "$tmp/v/bin/stallsim-probe" --out x.yaml

# The package imports from the venv, without loading PyTorch, at the
# version CMakeLists.txt's project() has and pip recorded.
cmake_ver=$(sed -n 's/^project(stallsim VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
out=$("$v" - "$tmp/v" "$cmake_ver" 2>&1 <<'PY'
import importlib.metadata, os, sys
venv, want = sys.argv[1], sys.argv[2]
import stallsim, stallsim.pipeline, stallsim.probe, stallsim.watch
where = os.path.realpath(stallsim.__file__)
assert where.startswith(os.path.realpath(venv)), f"stallsim imported from {where}, not the venv"
assert "torch" not in sys.modules, "importing stallsim.probe loaded torch"
assert stallsim.__version__ == want, f"stallsim.__version__ {stallsim.__version__}, CMake's {want}"
got = importlib.metadata.version("stallsim")
assert got == want, f"pip's metadata says {got}, CMake's {want}"
assert stallsim.probe.fit_cost([1.0, 2.0], [3.0, 5.0])[:2] == (1.0, 2.0)
assert [b for b in stallsim.watch.watch([1, 2], out=None)] == [1, 2]
PY
)
[ $? = 0 ] && ok || bad "the installed package: $out"

# The notebooks' loader: stallsim.data (pandas) and stallsim.nb (numpy,
# matplotlib). Where those are missing, the module is there and says which.
out=$("$v" - 2>&1 <<'PY'
import importlib, importlib.util
for mod, needs in (("stallsim.data", ["pandas"]), ("stallsim.nb", ["pandas", "numpy", "matplotlib"])):
    assert importlib.util.find_spec(mod), f"{mod} is not installed"
    missing = [n for n in needs if importlib.util.find_spec(n) is None]
    try:
        m = importlib.import_module(mod)
    except ModuleNotFoundError as e:
        assert missing and e.name in missing, f"import {mod}: {e}"
        print(f"{mod}: installed; not imported here: {e.name} is missing")
        continue
    assert not missing, f"{mod} imported without {missing}"
    assert callable(m.load_sweep) and callable(m.load_run), f"{mod} lacks the loader"
print("ok")
PY
)
[ $? = 0 ] && ok || bad "the notebooks' loader: $out"
grep -v '^ok$' <<<"$out"

# Without installing: python -m, and the checkout's paths their callers run.
out=$(PYTHONPATH="$src/python" "$py" -m stallsim.probe --help 2>&1)
[ $? = 0 ] && grep -q -- "--data" <<<"$out" && ok || bad "python3 -m stallsim.probe --help: $out"
out=$("$py" "$src/python/probe.py" --help 2>&1)
[ $? = 0 ] && grep -q -- "--pipelines" <<<"$out" && ok || bad "python/probe.py --help: $out"
out=$("$py" -c "import sys; sys.path.insert(0, '$src/notebooks')
import importlib.util
if importlib.util.find_spec('matplotlib') and importlib.util.find_spec('pandas'):
    import stallsim_nb, stallsim.nb
    assert stallsim_nb is stallsim.nb and stallsim.nb.__file__.startswith('$src/python/'), stallsim_nb
" 2>&1)
[ $? = 0 ] && ok || bad "notebooks/stallsim_nb.py: $out"
finish pypkg
