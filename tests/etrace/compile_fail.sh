#!/bin/sh
# Expects compilation of $3 to fail with the te_inst parameter static_assert message.
# Usage: compile_fail.sh CXX INCLUDE_DIR SOURCE
set -u
out=$("$1" -std=c++20 -I"$2" -fsyntax-only "$3" 2>&1)
status=$?
if [ $status -eq 0 ]; then echo "FAIL: $3 compiled"; exit 1; fi
echo "$out" | grep -q "invalid te_inst parameters: iaddress_lsb_p must be below iaddress_width_p" || { echo "FAIL: wrong error:"; echo "$out"; exit 1; }
echo "ok: invalid te_inst fixed_config rejected at compile time with its reason"
