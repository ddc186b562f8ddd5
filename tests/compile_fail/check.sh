#!/bin/sh
# Expects compilation of $3 to fail with the configuration static_assert message.
# Usage: check.sh CXX INCLUDE_DIR SOURCE
set -u
out=$("$1" -std=c++20 -I"$2" -fsyntax-only "$3" 2>&1)
status=$?
if [ $status -eq 0 ]; then echo "FAIL: $3 compiled"; exit 1; fi
echo "$out" | grep -q "invalid ETE trace unit configuration" || { echo "FAIL: wrong error:"; echo "$out"; exit 1; }
echo "ok: invalid fixed configuration rejected at compile time"
