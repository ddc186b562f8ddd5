#!/bin/sh
# Compiles one instantiation file with the embedded toolchain (-ffreestanding -fno-exceptions
# -fno-rtti, Cortex-M4, -Os) and checks that the object references no allocation, exception,
# RTTI or stdio symbol (memset/memcpy are what GCC may call even freestanding).
# Usage: instantiate.sh CXX NM SIZE INCLUDE_DIR SOURCE SYMBOL LABEL
#   SYMBOL: a symbol the object must define (proves nm read it); LABEL: what was instantiated.
set -eu
cxx=$1; nm=$2; size=$3; inc=$4; src=$5; symbol=$6; label=$7
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$cxx -std=c++20 -ffreestanding -fno-exceptions -fno-rtti -mcpu=cortex-m4 -mthumb -Os \
  -Wall -Wextra -Werror -I"$inc" -c "$src" -o "$tmp/inst.o"
$nm "$tmp/inst.o" > "$tmp/syms"
grep -q "$symbol" "$tmp/syms" || { echo "FAIL: nm read no symbols"; exit 1; }
if grep -E ' U (_Znw|_Zna|_Zdl|_Zda|__cxa_|_ZTI|_ZTV|malloc|free|printf|puts)' "$tmp/syms"; then
  echo "FAIL: $label references runtime support"; exit 1
fi
echo "ok: $label instantiated freestanding"
$size "$tmp/inst.o" | sed 's/^/  /'
