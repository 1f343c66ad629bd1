#!/bin/sh
# livens sweep on MPI (issue 21): the speed-up of 20 equal cases on
# `mpirun -n 2` over the plain one-process sweep, and the balance of a sweep
# of mixed cost on 2 ranks (makespan against the ideal sum of case times / 2).
# A measurement, not a test; it needs idle cores to mean anything.
# --bind-to none: rank 0 runs two threads (the hand-out loop and a case);
# Open MPI's default binding pins both to one core (measured: 16.5 s against
# 15.1 s unbound for the equal cases below).
#   benchmarks/bench_sweep.sh [BUILD_DIR] [OUT.csv]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
out=${2:-bench_sweep.csv}
L=$build/livens
[ -x "$L" ] || { echo "no program at $L (build first)"; exit 1; }
command -v mpirun >/dev/null || { echo "mpirun not found: apt-get install openmpi-bin libopenmpi-dev"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
now() { date +%s.%N; }

# 20 equal cases: the chain (N = 40) under EM, differing only in the initial
# velocity amplitude (same cost, ~1.3 s each, so mpirun's start-up of about
# a second does not dominate).
cat >"$w/equal.ini" <<INI
[run]
model = chain
scheme = em
step = 0.01
t-end = 16
[param]
N = 40
[axes]
param.vy = lin:0.5:1.5:20
INI
# 20 cases of mixed cost: t-end from 2 to 40 (a factor 20).
cat >"$w/mixed.ini" <<INI
[run]
model = chain
scheme = em
step = 0.01
[param]
N = 40
[axes]
t-end = lin:2:40:20
INI

run() { # run NAME RANKS -> seconds
  rm -rf "$w/$1-$2"
  t0=$(now)
  if [ "$2" -eq 1 ]; then "$L" sweep "$w/$1.ini" --out "$w/$1-$2" >/dev/null
  else mpirun --oversubscribe --bind-to none -n "$2" "$L" sweep "$w/$1.ini" --out "$w/$1-$2" >/dev/null; fi
  t1=$(now)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }'
}
sumcases() { awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "wall_time") c = i; next } { s += $c } END { print s }' "$1"; }

e1=$(run equal 1)
e2=$(run equal 2)
m2=$(run mixed 2)
mw=$(sumcases "$w/mixed-2/summary.csv")
calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }
speedup=$(calc "$e1 / $e2")
ideal=$(calc "$mw / 2")
excess=$(calc "100 * ($m2 / $ideal - 1)")
printf '20 equal cases: plain %.2f s, mpirun -n 2 %.2f s, speed-up %.2f (target >= 1.8)\n' "$e1" "$e2" "$speedup"
printf '20 mixed cases on 2 ranks: makespan %.2f s, sum of case times %.2f s, ideal %.2f s, %.1f %% above ideal (target <= 15 %%)\n' \
  "$m2" "$mw" "$ideal" "$excess"
printf 'equal_plain_s,equal_mpi2_s,speedup,mixed_makespan_s,mixed_sum_s,mixed_excess_pct\n%.4f,%.4f,%.4f,%.4f,%.4f,%.2f\n' \
  "$e1" "$e2" "$speedup" "$m2" "$mw" "$excess" >"$out"
echo "CSV: $out"
