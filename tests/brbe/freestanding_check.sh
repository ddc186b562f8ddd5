#!/bin/sh
# Compiles one instantiation of every BRBE / SPE / TRBE codec with the embedded toolchain
# (-ffreestanding -fno-exceptions -fno-rtti, Cortex-M4, -Os) and checks that it references no
# allocation, exception or RTTI symbol.
# Usage: freestanding_check.sh CXX NM INCLUDE_DIR SOURCE
set -eu
cxx=$1; nm=$2; inc=$3; src=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$cxx -std=c++20 -ffreestanding -fno-exceptions -fno-rtti -mcpu=cortex-m4 -mthumb -Os \
  -Wall -Wextra -Werror -I"$inc" -c "$src" -o "$tmp/inst.o"
$nm "$tmp/inst.o" > "$tmp/syms"
grep -q sysreg_brbe_record "$tmp/syms" || { echo "FAIL: nm read no symbols"; exit 1; }
# memset/memcpy are what GCC may call even freestanding; nothing from the C++ runtime.
if grep -E ' U (_Znw|_Zna|_Zdl|_Zda|__cxa_|_ZTI|_ZTV|malloc|free|printf|puts)' "$tmp/syms"; then
  echo "FAIL: instantiation references runtime support"; exit 1
fi
echo "ok: brbe record_codec (fixed and run-time), PMBSR and TRBSR codecs instantiated freestanding"
