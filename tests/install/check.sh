#!/bin/sh
# The library works after `meson install` (headers + pkg-config file) and as a meson subproject.
# Usage: tests/install/check.sh BUILD_DIR
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

meson install -C "$build" --destdir "$work/stage" --quiet >/dev/null
pc=$(find "$work/stage" -name tracecodec.pc | head -n 1)
[ -n "$pc" ] || { echo "install-check: no tracecodec.pc installed"; exit 1; }
flags=$(PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR="$work/stage" pkg-config --cflags tracecodec)
c++ -std=c++20 $flags "$root/tests/install/consumer.cpp" -o "$work/consumer"
"$work/consumer"
echo "install-check: meson install + pkg-config consumer ok"

mkdir -p "$work/proj/subprojects"
ln -s "$root" "$work/proj/subprojects/tracecodec"
cp "$root/tests/install/consumer.cpp" "$work/proj/"
cat > "$work/proj/meson.build" <<'MESON'
project('consumer', 'cpp', default_options : ['cpp_std=c++20'])
dep = dependency('tracecodec', fallback : ['tracecodec', 'tracecodec_dep'])
executable('consumer', 'consumer.cpp', dependencies : dep)
MESON
# Only the library: a consumer's build does not compile tracecodec's benchmarks (ete-bench is
# one of its slowest files) or run its arm-none-eabi check.
meson setup "$work/proj/build" "$work/proj" -Dtracecodec:tests=false -Dtracecodec:examples=false \
  -Dtracecodec:tools=false -Dtracecodec:benchmarks=disabled -Dtracecodec:opencsd=disabled \
  -Dtracecodec:freestanding_check=disabled -Dtracecodec:firmware_qemu=disabled \
  -Dtracecodec:icount_gate=disabled >/dev/null
ninja -C "$work/proj/build" >/dev/null
"$work/proj/build/consumer"
echo "install-check: meson subproject consumer ok"
