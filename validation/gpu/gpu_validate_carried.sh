#!/usr/bin/env bash
# validation/gpu/gpu_validate.sh for a GPU machine that cannot build stallsim (no
# GSL, libyaml, TurboJPEG, libcurl or cmocka, no network to fetch them): the
# build is made on another x86-64 host and carried over with its libraries.
#
#   validation/gpu/gpu_validate_carried.sh pack BUILD LIBDIR
#       here: copy the shared libraries BUILD/sim/stallsim and the CUDA test
#       need (not the C library's, nor libstdc++/libgcc_s, which the GPU
#       machine's newer system has; nor CUDA's, which it has too), and
#       nvJPEG's where the build used scripts/setup_nvjpeg.sh, into LIBDIR.
#   validation/gpu/gpu_validate_carried.sh run BUILD LIBDIR [gpu_validate.py's options]
#       there, in the checkout the build was configured from: the build
#       has that checkout's absolute path compiled in (its CUDA modules,
#       ctest's files), so that path is linked to this checkout first where
#       it is missing. Runs `ctest -R calib_gpu`, then gpu_validate.py with
#       stallsim run through a wrapper that finds LIBDIR (PyTorch's process
#       never sees LIBDIR). Results: $GV (default /tmp/gv); gpu_validate.md,
#       results.json, run.log and logs.tgz also into $OUT where it is set.
# A lease of the GPU cut short loses only the step it was in: rerun with the
# same $GV and gpu_validate.py goes on from results.json.
set -u
mode=${1:-}; build=${2:-}; libs=${3:-}
[ -n "$libs" ] || { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
shift 3
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
if [ "$mode" = pack ]; then
  mkdir -p "$libs" || exit 1
  ldd "$build/sim/stallsim" "$build/tests/calib/calib_gpu" | awk '/=> \//{print $3}' | sort -u |
    grep -v -E '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt)\.so' |
    xargs -r -I{} cp -L {} "$libs/" || exit 1
  nj=$(ldd "$build"/cuda/libstallsim_nvjpeg.so 2>/dev/null | awk '/libnvjpeg/{print $3}')
  [ -n "$nj" ] && cp -L "$nj" "$libs/"
  du -sh "$libs"
  exit 0
fi
[ "$mode" = run ] || { echo "gpu_validate_carried.sh: pack or run, not '$mode'" >&2; exit 2; }
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null)
[ -n "$src" ] || src=$(strings "$build/sim/stallsim" | sed -n 's#^C\{0,1\}\(/.*\)/[^/]*/cuda/libstallsim_gpu\.so$#\1#p' | head -1)
[ -n "$src" ] || { echo "gpu_validate_carried.sh: cannot tell where $build was configured" >&2; exit 1; }
G=${GV:-/tmp/gv}; mkdir -p "$G"
finish() {
  [ -n "${OUT:-}" ] || return
  cp "$G"/gpu_validate.md "$G"/results.json "$G"/run.log "$OUT"/ 2>/dev/null
  (cd "$G" && tar czf "$OUT"/logs.tgz --exclude=data --exclude='*.tmp' .) 2>/dev/null
}
trap finish EXIT
exec > >(tee -a "$G"/run.log) 2>&1
if [ "$(readlink -f "$src")" != "$here" ]; then
  [ -e "$src" ] && { echo "gpu_validate_carried.sh: $src exists and is not this checkout" >&2; exit 1; }
  mkdir -p "$(dirname "$src")" && ln -s "$here" "$src" || exit 1
fi
libs=$(cd "$libs" && pwd)
nj=$(ls "$libs"/libnvjpeg.so.* 2>/dev/null | head -1)
njdir=$(readelf -d "$build"/cuda/libstallsim_nvjpeg.so 2>/dev/null | sed -n 's/.*runpath: \[\([^]:]*\).*/\1/p')
[ -n "$nj" ] && [ -n "$njdir" ] && mkdir -p "$njdir" && cp -n "$nj" "$njdir"/ 2>/dev/null
wrap=$G/stallsim
printf '#!/bin/sh\nLD_LIBRARY_PATH=%s:/usr/local/cuda/lib64 exec %s "$@"\n' "$libs" "$here/$build/sim/stallsim" >"$wrap"
chmod +x "$wrap"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; uptime
(cd "$build/tests/calib" && LD_LIBRARY_PATH=$libs:/usr/local/cuda/lib64 timeout 300 ctest -R calib_gpu --output-on-failure -V) \
  >"$G"/ctest-calib_gpu.log 2>&1
echo "ctest -R calib_gpu: exit $?"
PYTHONUNBUFFERED=1 ${PYTHON:-python3} validation/gpu/gpu_validate.py --bin "$wrap" --out-dir "$G" \
  --ctest-log "$G"/ctest-calib_gpu.log "$@"
rc=$?
echo "gpu_validate.py: exit $rc"; uptime
exit $rc
