#!/bin/sh
# Compiles every freestanding codec header, and one instantiation of decoder and encoder, with
# the embedded toolchain: -ffreestanding -fno-exceptions -fno-rtti, Cortex-M4, -Os.
# Usage: check.sh CXX SIZE NM INCLUDE_DIR INSTANTIATE_CPP
# The rule is a folder: every header under INCLUDE_DIR/tracecodec except those in
# tracecodec/host/ (formatting, file reading, tool helpers) is a freestanding codec header.
set -eu
cxx=$1; size=$2; nm=$3; inc=$4; inst=$5
set -- $(cd "$inc" && find tracecodec -name '*.hpp' ! -path 'tracecodec/host/*' | sort)
flags="-std=c++20 -ffreestanding -fno-exceptions -fno-rtti -mcpu=cortex-m4 -mthumb -Os -Wall -Wextra -Werror"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
for h in "$@"; do
  printf '#include <%s>\n' "$h" > "$tmp/one.cpp"
  $cxx $flags -I"$inc" -c "$tmp/one.cpp" -o "$tmp/one.o"
  # Codec headers may only use the freestanding standard headers.
  if grep -hE '^#include <' "$inc/$h" | grep -vE '<(cstdint|cstddef|type_traits)>' ; then
    echo "FAIL: $h includes a hosted header"; exit 1
  fi
  echo "ok: $h"
  n=$((n + 1))
done
"$(dirname "$0")/instantiate.sh" "$cxx" "$nm" "$size" "$inc" "$inst" tracecodec_decode \
  "ETE decoder<fixed_config<presets::ete_1_0>>, encoder, decode tree and producer"
echo "$n headers compiled freestanding"
