#!/bin/sh
# Compiles one instantiation of the E-Trace codec (payload codec, stream decoder, encoder; fixed
# and run-time configuration) with the embedded toolchain (-ffreestanding -fno-exceptions
# -fno-rtti, Cortex-M4, -Os) and checks that it references no allocation, exception or RTTI
# symbol, nor stdio.
# Usage: freestanding_check.sh CXX NM SIZE INCLUDE_DIR SOURCE
set -eu
cxx=$1; nm=$2; size=$3; inc=$4; src=$5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$cxx -std=c++20 -ffreestanding -fno-exceptions -fno-rtti -mcpu=cortex-m4 -mthumb -Os \
  -Wall -Wextra -Werror -I"$inc" -c "$src" -o "$tmp/inst.o"
$nm "$tmp/inst.o" > "$tmp/syms"
grep -q etrace_decode "$tmp/syms" || { echo "FAIL: nm read no symbols"; exit 1; }
if grep -E ' U (_Znw|_Zna|_Zdl|_Zda|__cxa_|_ZTI|_ZTV|malloc|free|printf|puts)' "$tmp/syms"; then
  echo "FAIL: instantiation references runtime support"; exit 1
fi
echo "ok: etrace stream_decoder, encoder and payload_codec instantiated freestanding"
$size "$tmp/inst.o" | sed 's/^/  /'
