#!/bin/sh
# CI: sanitizers and fuzzing (fuzz/README.md). In a second build directory, with clang,
# AddressSanitizer + UndefinedBehaviorSanitizer and the fuzz targets (-Dfuzzers=true):
#   1. the whole test suite (meson test), which includes replaying every target's seed corpus
#      (the conformance buffers and traces made by the encoder);
#   2. a replay of the corpus saved by earlier runs (FUZZ_WORK/corpus), if any;
#   3. each libFuzzer target for FUZZ_SECONDS (default 60) seconds, FUZZ_JOBS (default: the
#      number of cores) at a time.
# A finding makes it fail, with the input saved under FUZZ_WORK/artifacts/.
# Environment: FUZZ_BUILD (default build-fuzz), FUZZ_WORK (default $FUZZ_BUILD/fuzz-work),
# FUZZ_SECONDS, FUZZ_JOBS, FUZZ_TARGETS (default: all built). Works on a fresh Debian 12 as root.
# -O1 with line tables only (no full debug info): stack traces still name file and line. Under
# ASan the library does not force its hot paths inline (include/tracecodec/detail/hot.hpp), which
# keeps this build to minutes.
set -eu
cd "$(dirname "$0")/.."

build=${FUZZ_BUILD:-build-fuzz}
work=${FUZZ_WORK:-$build/fuzz-work}
seconds=${FUZZ_SECONDS:-60}

packages="meson ninja-build pkg-config python3 clang libclang-rt-14-dev g++ doctest-dev libopencsd-dev"
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo ".ci/fuzz.sh: installing:$missing"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

options="-Dfuzzers=true -Db_sanitize=address,undefined -Db_lundef=false -Dbenchmarks=disabled
  -Dopencsd=disabled -Dfreestanding_check=disabled -Dicount_gate=disabled -Daarch64_qemu=disabled -Dexamples=false -Dtools=false
  -Doptimization=1 -Ddebug=false -Dcpp_args=-gline-tables-only"
if [ -f "$build/build.ninja" ]; then
  meson setup --reconfigure "$build" $options >/dev/null
else
  CC=clang CXX=clang++ meson setup "$build" $options >/dev/null
fi
# Quiet when it builds; the compiler's messages when it does not (clang 14 rejects some code
# GCC takes, e.g. a structured binding captured by a lambda).
if ! ninja -C "$build" >"$build/ninja.log" 2>&1; then
  echo ".ci/fuzz.sh: the sanitizer build (clang) failed:" >&2
  grep -E "error|FAILED" "$build/ninja.log" | head -40 >&2
  exit 1
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:halt_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1}

echo "== test suite under ASan+UBSan ($build)"
meson test -C "$build" --print-errorlogs --timeout-multiplier 3 --num-processes 2

fuzzdir=$build/fuzz
targets=${FUZZ_TARGETS:-$(cd "$fuzzdir" && ls ete-fuzz-*-replay | sed 's/^ete-fuzz-//; s/-replay$//')}
seeds=$fuzzdir/seeds
mkdir -p "$work/artifacts"

echo "== corpus replays"
for t in $targets; do
  if [ -d "$work/corpus/$t" ] && [ -n "$(ls -A "$work/corpus/$t")" ]; then
    "$fuzzdir/ete-fuzz-$t-replay" "$work/corpus/$t" | sed "s/^/$t: /"
  fi
done

if [ ! -x "$fuzzdir/ete-fuzz-decode" ]; then
  echo ".ci/fuzz.sh: libFuzzer binaries not built (need clang + libclang-rt-14-dev)" >&2
  exit 1
fi
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
echo "== fuzzing, ${seconds}s per target, $jobs at a time"
# One target per core at a time: each libFuzzer run is one process on one core, so the CPU
# time per target is the same as one at a time, in a fraction of the wall time.
fuzz_one() {
  t=$1
  mkdir -p "$work/corpus/$t"
  log=$work/$t.log
  if "$fuzzdir/ete-fuzz-$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$work/artifacts/$t-" \
       "$work/corpus/$t" "$seeds/$t" >"$log" 2>&1; then
    stats=$(grep -E "^#[0-9]+.*(DONE|pulse)" "$log" | tail -1)
    echo "$t: ok: $stats" >"$work/$t.result"
  else
    { echo "$t: FAILED (log $log):"
      grep -E "FUZZ_CHECK|ERROR|SUMMARY|Test unit written" "$log" | head -20; } >"$work/$t.result"
  fi
}
running=0
for t in $targets; do
  rm -f "$work/$t.result"
  fuzz_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait
    running=0
  fi
done
wait
status=0
for t in $targets; do
  if [ -f "$work/$t.result" ]; then
    cat "$work/$t.result"
    grep -q "^$t: ok:" "$work/$t.result" || status=1
  else
    echo "$t: FAILED (no result)"
    status=1
  fi
done
exit $status
