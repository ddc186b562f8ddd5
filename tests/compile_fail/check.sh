#!/bin/sh
# Expects compilation of $3 to fail with a configuration static_assert: MESSAGE, by default the
# ETE trace unit's.
# Usage: check.sh CXX INCLUDE_DIR SOURCE [MESSAGE]
set -u
message=${4:-invalid ETE trace unit configuration}
out=$("$1" -std=c++20 -I"$2" -fsyntax-only "$3" 2>&1)
status=$?
if [ $status -eq 0 ]; then echo "FAIL: $3 compiled"; exit 1; fi
echo "$out" | grep -q "$message" || { echo "FAIL: wrong error:"; echo "$out"; exit 1; }
echo "ok: rejected at compile time: $message"
