#!/bin/sh
# BLieDF2's RKMK4 start-up on the chain (h = 5e-3) in steps' worth of
# instructions: callgrind counts of the first lv_integrator_step (the start,
# node 1 handed out) against the mean of 10 steps after the first BDF step,
# from `bench_bliedf --start-cg N` (deterministic, unlike the CPU times of
# `bench_bliedf --start`).
#   benchmarks/callgrind_start.sh PATH/TO/bench_bliedf [N ...]   (default 100 1000 10000)
set -e
if [ $# -lt 1 ]; then
  echo "usage: $0 BENCH_BLIEDF [N ...]" >&2
  exit 2
fi
exe=$1
shift
[ $# -gt 0 ] || set -- 100 1000 10000
. "$(dirname "$0")/valgrind_prelude.sh"
for N in "$@"; do
  $run valgrind --tool=callgrind --callgrind-out-file="$dir/cg.$N" "$exe" --start-cg "$N" >"$dir/out.$N" 2>"$dir/err.$N" || {
    cat "$dir/err.$N" >&2
    exit 1
  }
  s=$(sed -n 's/^\(summary\|totals\): *\([0-9]*\).*/\2/p' "$dir/cg.$N.1" | head -1)
  t=$(sed -n 's/^\(summary\|totals\): *\([0-9]*\).*/\2/p' "$dir/cg.$N.2" | head -1)
  echo "N = $N: start $s instructions, a step $((t / 10)), $(awk "BEGIN{printf \"%.2f\", 10 * $s / $t}") steps' worth," \
    "$((s / N)) per link"
done
