#!/bin/sh
# calib_cli: `calibrate` as a user runs it: usage errors exit 2, --help exits
# 0, a --quick run writes a valid profile (in under 30 s, unless
# CALIB_QUICK_LIMIT_S=none: the deterministic suite leaves the time to the
# validation test calib_quick_time) and removes its
# temporary data (also when SIGTERM or SIGINT ends it), --data with bad files
# skips them, and --out may not name a --data file.
# usage: cli_test.sh "CALIBRATE-COMMAND" CHECKER WORKDIR
# (CHECKER is calib_profile: it validates profiles and makes test JPEGs)
set -u
CAL=$1 CHECK=$2 W=$3
QUICK_LIMIT_S=${CALIB_QUICK_LIMIT_S:-30}
rm -rf "$W" && mkdir -p "$W/tmp" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

expect_rc() { # expected-rc description command...
    want=$1 what=$2
    shift 2
    "$@" >"$W/out" 2>"$W/err"
    got=$?
    [ "$got" = "$want" ] || { fail "$what: exit $got, want $want"; cat "$W/err"; }
}

expect_rc 0 "--help" $CAL --help
grep -q "usage: stallsim calibrate" "$W/out" || fail "--help prints no usage on stdout"
expect_rc 2 "unknown option" $CAL --bogus
grep -q "unknown option" "$W/err" || fail "unknown option: no message"
expect_rc 2 "missing --data dir" $CAL --data "$W/does-not-exist"
grep -q "does-not-exist" "$W/err" || fail "missing --data: message does not name it"
expect_rc 2 "missing --videos dir" $CAL --videos "$W/no-videos-here"
grep -q "no-videos-here" "$W/err" || fail "missing --videos: message does not name it"
mkdir -p "$W/novideo" && printf 'x' >"$W/novideo/notes.txt"
expect_rc 2 "--videos without video files" $CAL --videos "$W/novideo"
grep -q "no video file" "$W/err" || fail "--videos without video files: not said"
expect_rc 2 "unwritable --out" $CAL --out /nonexistent-dir/p.yaml
grep -q "cannot write /nonexistent-dir/p.yaml: No such file or directory" "$W/err" ||
    fail "unwritable --out: unclear message: $(cat "$W/err")"
expect_rc 2 "--out a directory" $CAL --out "$W"
grep -q "is a directory" "$W/err" || fail "--out DIR: unclear message: $(cat "$W/err")"
expect_rc 2 "--threads 0" $CAL --threads 0
expect_rc 2 "--out without value" $CAL --out

# The quick run, timed, with its temporary data set under $W/tmp.
start=$(date +%s)
TMPDIR="$W/tmp" $CAL --quick --out "$W/quick.yaml" 2>"$W/quick.err"
rc=$?
elapsed=$(( $(date +%s) - start ))
echo "calibrate --quick: exit $rc in ${elapsed} s"
[ "$rc" = 0 ] || { fail "--quick exit $rc"; cat "$W/quick.err"; }
[ "$QUICK_LIMIT_S" = none ] || [ "$elapsed" -le "$QUICK_LIMIT_S" ] || fail "--quick took ${elapsed} s (limit ${QUICK_LIMIT_S} s)"
"$CHECK" "$W/quick.yaml" || fail "--quick profile invalid"
# The profile as a scenario's host, the README's path (STALLSIM_BIN: the
# program; run once refused every profile calibrate wrote, over a value's
# 255 characters in its measured section).
if [ -n "${STALLSIM_BIN:-}" ]; then
    printf 'host: quick.yaml\ndataset: {items: 1000, item_kb: 100}\nserver: {gpus: 1}\njobs: [{gpus: 1, gpu_items_per_s: 1000}]\n' >"$W/uses.yaml"
    "$STALLSIM_BIN" run "$W/uses.yaml" --model-only >"$W/uses.out" 2>&1 ||
        fail "run with calibrate's profile as host: $(head -3 "$W/uses.out")"
fi
[ -z "$(ls -A "$W/tmp")" ] || fail "temporary data left in $W/tmp: $(ls -A "$W/tmp")"
ls "$W"/quick.yaml.tmp* >/dev/null 2>&1 && fail "temporary profile left behind"
grep -q "^calibrate: storage" "$W/quick.err" || fail "no progress on stderr"
if grep -q "gpu_augment_ms" "$W/quick.yaml"; then
    grep -q "available: true" "$W/quick.yaml" || fail "gpu figure without a measured GPU"
else
    grep -q "GPU" "$W/quick.err" || fail "no GPU, and stderr does not say so"
    grep -q "available: false" "$W/quick.yaml" || fail "no GPU, and the profile does not say so"
fi

# --data: a folder of good JPEGs plus bad files, which are counted and skipped.
mkdir -p "$W/data" && "$CHECK" --mkdata "$W/data" 12 || fail "cannot make test JPEGs"
mkdir -p "$W/data/junk"
printf 'not a jpeg' >"$W/data/junk/fake.jpg"
head -c 3000 "$W/data/class_00/img_000000.jpg" >"$W/data/junk/cut.JPEG"
printf 'x' >"$W/data/junk/notes.txt"
mkfifo "$W/data/junk/pipe.jpg" # opening it for reading would block: must be skipped, not waited on
# A JPEG with a sparse 256 MB tail decodes, but its bytes are not image data.
cp "$W/data/class_00/img_000000.jpg" "$W/data/junk/padded.jpg" && truncate -s 256M "$W/data/junk/padded.jpg"
expect_rc 0 "--data with bad files" $CAL --quick --data "$W/data" --out "$W/data.yaml" --threads 1
grep -q "skipping .*fake.jpg" "$W/err" || fail "--data: fake.jpg not reported"
grep -q "skipping .*cut.JPEG" "$W/err" || fail "--data: cut.JPEG not reported"
grep -q "skipping .*pipe.jpg: not a regular file" "$W/err" || fail "--data: pipe.jpg not reported"
grep -q "skipping .*padded.jpg: 268435456 bytes for .* pixels, more than their raw RGB" "$W/err" || fail "--data: padded.jpg not reported"
grep -q "files_bad: 4" "$W/data.yaml" || fail "--data: files_bad is not 4"
awk '/max_kb:/ { found = 1; ok = $2 < 10000 } END { exit !(found && ok) }' "$W/data.yaml" || fail "--data: the padded file counted: $(grep max_kb "$W/data.yaml")"
rm -f "$W/data/junk/padded.jpg"
grep -q "files_used: 12" "$W/data.yaml" || fail "--data: files_used is not 12"
grep -q "files_not_jpeg: 1" "$W/data.yaml" || fail "--data: files_not_jpeg is not 1"
grep -q "cpus: 1" "$W/data.yaml" || fail "--threads 1 not honoured"
"$CHECK" "$W/data.yaml" || fail "--data profile invalid"
# --out naming one of the --data files is refused before anything is written.
img="$W/data/class_00/img_000000.jpg"
sum=$(cksum <"$img")
expect_rc 2 "--out one of the --data files" $CAL --quick --data "$W/data" --out "$W/data/class_00/../class_00/img_000000.jpg" --threads 1
grep -q "would write over .*img_000000.jpg, one of the --data files" "$W/err" || fail "--out a data file: unclear message: $(cat "$W/err")"
[ "$(cksum <"$img")" = "$sum" ] || fail "--out a data file: the image was changed"

# SIGTERM or SIGINT while the data set is generated, and while storage is
# measured: the run ends by the signal and leaves no temporary folder or
# profile. (A shell starts background jobs with SIGINT ignored; env
# --default-signal undoes that, and the INT case is skipped without it.)
mkdir -p "$W/sig"
dflt=
env --default-signal=INT true 2>/dev/null && dflt="env --default-signal=INT"
for sig in 15 2; do
    [ $sig = 2 ] && [ -z "$dflt" ] && { echo "SIGINT case skipped: env has no --default-signal"; continue; }
    for phase in generating "storage:"; do
        # The last case's log goes first: read before this run's shell opens
        # (truncates) it, it would send the signal before env has let the
        # background job take SIGINT, and the run would go on to the end.
        rm -f "$W/sig.err"
        TMPDIR="$W/sig" $dflt $CAL --quick --files 40 --out "$W/sig.yaml" 2>"$W/sig.err" &
        pid=$!
        n=0
        while [ $n -lt 200 ] && ! grep -q "$phase" "$W/sig.err" 2>/dev/null; do sleep 0.05; n=$((n + 1)); done
        kill -$sig $pid
        wait $pid
        got=$?
        [ "$got" = $((128 + sig)) ] || fail "signal $sig during '$phase': exit $got, want $((128 + sig)) ($(tail -n 1 "$W/sig.err"))"
        [ -z "$(ls -A "$W/sig")" ] || fail "signal $sig during '$phase': left in \$TMPDIR: $(ls -A "$W/sig")"
        ls "$W"/sig.yaml* >/dev/null 2>&1 && fail "signal $sig during '$phase': profile files left: $(ls "$W"/sig.yaml*)"
        rm -rf "$W/sig" "$W"/sig.yaml* && mkdir -p "$W/sig"
    done
done

# A full disk: a file-size limit (ulimit -f, 512-byte blocks) makes the profile's
# writes fail part way. Exit 1 with the reason; the old profile stays whole.
printf 'old profile\n' >"$W/full.yaml"
# (stderr goes through a pipe: the limit would cut a file short too)
( (trap '' XFSZ; ulimit -f 4; exec $CAL --quick --data "$W/data" --out "$W/full.yaml" --threads 1) \
    2>&1 >/dev/null; echo "exit=$?") | cat >"$W/err"
got=$(sed -n 's/^exit=//p' "$W/err")
[ "$got" = 1 ] || fail "--out on a full disk: exit $got, want 1"
grep -q "File too large (left unchanged)" "$W/err" || fail "--out on a full disk: unclear message: $(tail -n 2 "$W/err")"
[ "$(cat "$W/full.yaml")" = "old profile" ] || fail "--out on a full disk: the old profile was changed"
ls "$W"/full.yaml.tmp* >/dev/null 2>&1 && fail "--out on a full disk: temporary file left behind"
# The profile to stdout on a full device.
$CAL --quick --data "$W/data" --threads 1 >/dev/full 2>"$W/err"
got=$?
[ "$got" = 1 ] || fail "profile to /dev/full: exit $got, want 1"
grep -q "No space left on device" "$W/err" || fail "profile to /dev/full: unclear message"
# --out names a file that is replaced by a rename: a device is refused and kept.
$CAL --quick --data "$W/data" --threads 1 --out /dev/full 2>"$W/err"
got=$?
[ "$got" = 2 ] || [ "$got" = 1 ] || fail "--out /dev/full: exit $got, want 1 or 2"
[ -c /dev/full ] || fail "--out /dev/full replaced the device"
grep -q "not a regular file" "$W/err" || fail "--out /dev/full: unclear message"

# A sample that could not be held in memory is refused before it is read.
mkdir -p "$W/huge" && cp "$W/data/class_00/img_000000.jpg" "$W/huge/a.jpg" && truncate -s 10T "$W/huge/b.jpg"
expect_rc 2 "--data larger than memory" $CAL --quick --data "$W/huge" --threads 1
grep -q "the 2 sampled files hold .* GB, but only .* GB of memory is free" "$W/err" || fail "--data larger than memory: unclear message: $(cat "$W/err")"
rm -rf "$W/huge"

# A folder with nothing decodable is bad input.
mkdir -p "$W/empty"
expect_rc 2 "--data without JPEGs" $CAL --quick --data "$W/empty"

[ "$fails" = 0 ] && echo "all calibrate command-line checks passed"
[ "$fails" = 0 ]
