#!/bin/sh
# Expects compilation of $3 to fail with the BRBIDR0_EL1 configuration static_assert message.
# Usage: compile_fail.sh CXX INCLUDE_DIR SOURCE
set -u
out=$("$1" -std=c++20 -I"$2" -fsyntax-only "$3" 2>&1)
status=$?
if [ $status -eq 0 ]; then echo "FAIL: $3 compiled"; exit 1; fi
echo "$out" | grep -q "invalid BRBIDR0_EL1 configuration" || { echo "FAIL: wrong error:"; echo "$out"; exit 1; }
echo "ok: invalid BRBIDR0_EL1 fixed_config rejected at compile time"
