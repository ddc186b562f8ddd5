#!/bin/sh
# Writes the seed corpora of every fuzz target into a work directory (never into the
# repository): the conformance buffers of ../shared/conformance/ete (or
# $TRACECODEC_CONFORMANCE_DIR), framed for each target, and traces made by the project's own
# encoder; for the flow target, each buffer with windows of its snapshot's memory dumps.
# Needs a build with -Dfuzzers=true.
#   fuzz/make_corpus.sh BUILD_DIR WORK_DIR      -> WORK_DIR/seeds/<target>/, WORK_DIR/seeds/raw/
set -eu
if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR WORK_DIR" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=$1
work=$2
conformance=${TRACECODEC_CONFORMANCE_DIR:-$root/../shared/conformance/ete}
seeds=$build/fuzz/ete-fuzz-seeds
if [ ! -x "$seeds" ]; then
  echo "make_corpus.sh: $seeds not built (configure with -Dfuzzers=true)" >&2
  exit 1
fi
mkdir -p "$work"
if [ ! -d "$conformance/snapshots" ]; then
  echo "make_corpus.sh: no conformance corpus at $conformance: encoder-made seeds only" >&2
  conformance=
fi
"$seeds" "$work/seeds" $conformance
