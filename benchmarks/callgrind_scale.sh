#!/bin/sh
# Issue 18, target 2 in instructions: the chain's cost per step at N = 10^3
# and 10^4 on the default path (`bench_scale --default`'s window, steps
# 21-40, h = 0.01, automatic linear solver, each scheme's Newton defaults),
# counted by callgrind as the difference of a 40- and a 20-step run of
# `bench_scale --one`, so the start-up cancels.  CPU time on a shared
# machine moved `bench_scale --default`'s ratios by up to 2x between two
# consecutive runs; these counts are the same in every run.  They leave out
# what the instruction count cannot see (cache misses: the working set at
# 10^4 is larger than the last-level cache, doc/performance.md); --cache
# runs cachegrind instead, with the machine's last-level cache (32 MB,
# 16-way, 64-byte lines, or LV_LL="size,assoc,line"), and adds its
# last-level misses per step.
#   benchmarks/callgrind_scale.sh PATH/TO/bench_scale [--cache] [--csv FILE] [SCHEME ...]
#   (default schemes: rattle vi-a em genalpha; CSV default callgrind_scale.csv)
# Takes about 15 minutes for the four schemes (cachegrind: longer).
set -e
if [ $# -lt 1 ]; then
  echo "usage: $0 BENCH_SCALE [--cache] [--csv FILE] [SCHEME ...]" >&2
  exit 2
fi
exe=$1
shift
cache=0
csv=callgrind_scale.csv
while [ $# -gt 0 ]; do
  case $1 in
  --cache) cache=1 ;;
  --csv)
    [ $# -ge 2 ] || { echo "$0: --csv needs a file" >&2; exit 2; }
    csv=$2
    shift
    ;;
  -*) echo "$0: unknown option $1" >&2; exit 2 ;;
  *) break ;;
  esac
  shift
done
[ $# -gt 0 ] || set -- rattle vi-a em genalpha
. "$(dirname "$0")/valgrind_prelude.sh"
if [ $cache = 1 ]; then
  tool=cachegrind
  opts="--cache-sim=yes --LL=${LV_LL:-33554432,16,64}"
else
  tool=callgrind
  opts=""
fi

# count FILE: "Ir LLmisses" of a callgrind or cachegrind output file
count() {
  if [ $cache = 1 ]; then
    # cachegrind's summary line follows "events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw"
    awk '/^summary:/ {print $2, $4 + $7 + $10}' "$1"
  else
    sed -n 's/^\(summary\|totals\): *\([0-9]*\).*/\2 0/p' "$1" | head -1
  fi
}

echo "scheme,N,linsol,instructions_per_step,ll_misses_per_step,newton_iterations_per_step,steps" >"$csv"
printf '%-9s %6s %8s %14s %8s %12s\n' scheme N linsol "instr/step" "it/step" "LL miss/step"
for s in "$@"; do
  for N in 1000 10000; do
    for steps in 20 40; do
      out="$dir/cg.$s.$N.$steps"
      # shellcheck disable=SC2086
      $run valgrind --tool=$tool $opts --$tool-out-file="$out" "$exe" --one "$s" "$N" $steps \
        >"$dir/out.$steps" 2>"$dir/err" || {
        cat "$dir/err" >&2
        exit 1
      }
    done
    a=$(count "$dir/cg.$s.$N.20")
    b=$(count "$dir/cg.$s.$N.40")
    ia=$(sed -n 's/.*newton_iterations=\([0-9]*\).*/\1/p' "$dir/out.20")
    ib=$(sed -n 's/.*newton_iterations=\([0-9]*\).*/\1/p' "$dir/out.40")
    ls=$(sed -n 's/.*linsol=\([a-z]*\).*/\1/p' "$dir/out.40")
    line=$(echo "$a $b $ia $ib" | awk '{printf "%.0f %.0f %.2f", ($3 - $1) / 20, ($4 - $2) / 20, ($6 - $5) / 20}')
    ir=${line%% *}
    rest=${line#* }
    ll=${rest%% *}
    it=${rest#* }
    printf '%-9s %6d %8s %14s %8s %12s\n' "$s" "$N" "$ls" "$ir" "$it" "$([ $cache = 1 ] && echo "$ll" || echo -)"
    echo "$s,$N,$ls,$ir,$([ $cache = 1 ] && echo "$ll"),$it,20" >>"$csv"
    eval "ir_$N=$ir it_$N=$it"
  done
  awk -v a="$ir_1000" -v b="$ir_10000" -v ia="$it_1000" -v ib="$it_10000" -v s="$s" \
    'BEGIN {printf "%-9s ratio 10^4/10^3 of instructions: %.2f per step, %.2f per Newton iteration\n", s, b / a, (b / ib) / (a / ia)}'
done
echo "CSV: $csv"
