#!/usr/bin/env bash
# stallsim on a GPU machine (issue 38; docs/validation/gpu_validate.md), in
# one run: build with the CUDA toolkit, run the CUDA tests (ctest -R
# calib_gpu), then validation/gpu/gpu_validate.py: calibrate's GPU figures, GPU
# decode, the models' own GPU rates against the published ones, and real
# ResNet-18/50 training against stallsim's predictions; it prints a summary
# and writes the tables (BUILD/gpu-validate/gpu_validate.md).
#
#   validation/gpu/gpu_validate.sh [--build-dir build] [--nvjpeg-root DIR] [--no-build]
#       [--python PY] [--cpu-smoke] [-- gpu_validate.py's options]
#
#   --build-dir DIR     the build tree (default build)
#   --nvjpeg-root DIR   -DSTALLSIM_NVJPEG_ROOT=DIR: an nvJPEG beside the toolkit
#                       (scripts/setup_nvjpeg.sh)
#   --no-build          use the build tree as it is
#   --python PY         a python3 whose PyTorch has CUDA (default $PYTHON, else
#                       /usr/bin/python3)
#   --cpu-smoke         every step on the CPU at tiny sizes: tests the harness;
#                       its figures are labelled CPU smoke figures, never GPU ones
# After `--`: gpu_validate.py's options, e.g. --update docs/validation/gpu_validate.md,
# --time-budget 540 (a rerun goes on where it stopped), --steps train.
# Exit 77 (nothing measured) without a CUDA device and without --cpu-smoke;
# else gpu_validate.py's exit (0 whole, 1 a step failed, 3 out of time).
set -u
cd "$(dirname "$0")/../.."
build=build nvjpeg="" do_build=1 smoke=() py=${PYTHON:-/usr/bin/python3}
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) build=$2; shift 2 ;;
    --nvjpeg-root) nvjpeg=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --python) py=$2; shift 2 ;;
    --cpu-smoke) smoke=(--cpu-smoke); shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu_validate.sh: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done
# Nothing to build for where nothing can be measured (77: ctest's skip).
"$py" validation/gpu/gpu_validate.py --check "${smoke[@]}" || exit $?
out=$build/gpu-validate${smoke:+-smoke}
mkdir -p "$out" || exit 1
if [ "$do_build" = 1 ]; then
  flags=(-DCMAKE_BUILD_TYPE=Release)
  [ -n "$nvjpeg" ] && flags+=("-DSTALLSIM_NVJPEG_ROOT=$nvjpeg")
  echo "gpu_validate.sh: cmake ${flags[*]} (log: $out/build.log)" >&2
  { cmake -S . -B "$build" "${flags[@]}" && cmake --build "$build" -j "$(nproc)"; } >"$out/build.log" 2>&1 \
    || { tail -30 "$out/build.log" >&2; echo "gpu_validate.sh: the build failed" >&2; exit 1; }
  grep -E "stallsim: (CUDA kernels|nvJPEG)" "$out/build.log" | sed 's/^-- /gpu_validate.sh: /' >&2
fi
[ -x "$build/sim/stallsim" ] || { echo "gpu_validate.sh: no $build/sim/stallsim: build first" >&2; exit 1; }
if [ ${#smoke[@]} = 0 ] && ! ls "$build"/cuda/*stallsim_gpu*.so >/dev/null 2>&1; then
  echo "gpu_validate.sh: $build was built without CUDA (no nvcc or toolkit found): calibrate" \
       "could measure no GPU; install the CUDA toolkit and rebuild" >&2
  exit 1
fi
# The CUDA tests: the augment kernel against its C reference, nvJPEG's decode
# against TurboJPEG's, and what each says when it cannot run.
(cd "$build" && ctest -R calib_gpu --output-on-failure -V) >"$out/ctest-calib_gpu.log" 2>&1
rc=$?
grep -E "testing on|no GPU to test on|nvJPEG|% tests passed" "$out/ctest-calib_gpu.log" \
  | sed 's/^[0-9]*: //' | sort -u | sed 's/^/gpu_validate.sh: ctest: /' >&2
[ $rc = 0 ] || echo "gpu_validate.sh: ctest -R calib_gpu FAILED (see $out/ctest-calib_gpu.log)" >&2
"$py" validation/gpu/gpu_validate.py --bin "$build/sim/stallsim" --out-dir "$out" \
  --ctest-log "$out/ctest-calib_gpu.log" "${smoke[@]}" "$@"
py_rc=$?
[ $rc = 0 ] || [ $py_rc != 0 ] || py_rc=1
exit $py_rc
