#!/bin/sh
# Instructions per step of `livens run` (issue 18's measure): callgrind counts
# of a 10^4- and a 10^3-step run at h = 1e-3, differenced, so start-up and
# output set-up cancel.  Deterministic, unlike wall time on a shared machine.
#   benchmarks/callgrind_steps.sh PATH/TO/livens MODEL SCHEME [livens run options]
#   e.g. benchmarks/callgrind_steps.sh ./livens heavy-top genalpha --opt index=2
# OPENBLAS_NUM_THREADS is set because livens otherwise executes itself again
# to set it (src/cli/main.c), which valgrind refuses to follow.
set -e
if [ $# -lt 3 ]; then
  echo "usage: $0 LIVENS MODEL SCHEME [options]" >&2
  exit 2
fi
exe=$1
model=$2
scheme=$3
shift 3
. "$(dirname "$0")/valgrind_prelude.sh"
for T in 1 10; do
  valgrind --tool=callgrind --callgrind-out-file="$dir/cg.$T" "$exe" run "$model" --scheme "$scheme" \
    --step 1e-3 --t-end $T "$@" >/dev/null 2>"$dir/err.$T" || {
    cat "$dir/err.$T" >&2
    exit 1
  }
done
a=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$dir/cg.1")
b=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$dir/cg.10")
echo "$model $scheme $*: $(((b - a) / 9000)) instructions per step"
