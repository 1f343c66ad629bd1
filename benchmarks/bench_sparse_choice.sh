#!/bin/sh
# The sparse back-end choice (issue 18, LV_LINSOL_SPARSE in lv_linsol.h):
# for each system and scheme, the CPU time of the same run with KLU and with
# UMFPACK, the predicted flops per factor entry that `--linsol sparse` (the
# automatic path from 26 unknowns, LV_LINSOL_AUTO_THRESHOLD) reads off KLU's analysis, the back-end
# it chose, and whether that was the faster one (within 10 %, below which
# the two are even on a shared machine).  Systems: the particle chain
# (N = 10^3, 10^4), the rigid-body chain (N = 300), nets of M x M particles
# joined by rods (closed loops everywhere: heavy fill) for M = 20, 40, and
# the slider-crank (a closed loop of three bodies; below the size threshold,
# so the automatic path takes dense LU and the sparse rows are for scale).
# A measurement, not a test.  CPU time (user + sys) of whole runs.
#   benchmarks/bench_sparse_choice.sh [BUILD_DIR] [OUT.csv] [--quick]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build
out=bench_sparse_choice.csv
quick=0
for a in "$@"; do
  case "$a" in
    --quick) quick=1 ;;
    *.csv) out=$a ;;
    *) build=$a ;;
  esac
done
L=$build/livens
[ -x "$L" ] || { echo "no program at $L (build first)"; exit 1; }
export OPENBLAS_NUM_THREADS=1
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT

# An M x M net of unit masses joined by rods of length 1 along the grid
# lines, two corners hung from the ground by rods, released from rest in a
# horizontal plane 1 below the hanging points.
net() {
  awk -v M="$1" 'BEGIN {
    print "formulation: directors\nrun: {step: 1e-2, t_end: 0.1}\ngravity: [0, 0, -9.81]\nparticles:";
    for (i = 0; i < M; i++) for (j = 0; j < M; j++)
      printf "  - {name: p%d_%d, mass: 1, position: [%d, %d, 0], velocity: [0, 0, 0]}\n", i, j, i, j;
    print "joints:";
    for (i = 0; i < M; i++) for (j = 0; j < M; j++) {
      if (i + 1 < M) printf "  - {type: distance, a: p%d_%d, point_a: [0,0,0], b: p%d_%d, point_b: [0,0,0], length: 1}\n", i, j, i + 1, j;
      if (j + 1 < M) printf "  - {type: distance, a: p%d_%d, point_a: [0,0,0], b: p%d_%d, point_b: [0,0,0], length: 1}\n", i, j, i, j + 1;
    }
    printf "  - {type: distance, a: p0_0, point_a: [0,0,0], b: ground, point_b: [0,0,1], length: 1}\n";
    printf "  - {type: distance, a: p0_%d, point_a: [0,0,0], b: ground, point_b: [0,%d,1], length: 1}\n", M - 1, M - 1;
  }' >"$w/net$1.yaml"
}
net 20
net 40

# cpu SECONDS of one run: `cpu ARGS...`
cpu() {
  /usr/bin/time -f "%U %S" -o "$w/time" "$L" run "$@" --out /dev/null >"$w/log" 2>&1 || { echo "run failed: $*" >&2; cat "$w/log" >&2; return 1; }
  awk '{ printf "%.3f", $1 + $2 }' "$w/time"
}

echo "system,scheme,steps,flops_per_entry,chosen,cpu_klu,cpu_umfpack,faster,rule_ok" >"$out"
printf '%-22s %-9s %6s %10s %8s %9s %9s  %s\n' system scheme steps flops/ent chosen klu[s] umfpack[s] "rule picks the faster"
total=0
good=0
case_() { # LABEL SCHEME STEPS MODEL-OR-FILE [ARGS...]
  label=$1 scheme=$2 steps=$3
  shift 3
  "$L" run "$@" --scheme "$scheme" --linsol sparse --t-end "$(awk -v n="$steps" 'BEGIN { print n * 0.01 }')" --step 0.01 \
    --out /dev/null >"$w/choice" 2>&1 || { echo "run failed: $label $scheme" >&2; cat "$w/choice" >&2; return 1; }
  chosen=$(sed -n 's/^linear solver \([a-z]*\), chosen for \([0-9.e+-]*\) .*/\1/p' "$w/choice")
  fpe=$(sed -n 's/^linear solver \([a-z]*\), chosen for \([0-9.e+-]*\) .*/\2/p' "$w/choice")
  [ -n "$chosen" ] || { echo "no choice reported for $label $scheme" >&2; cat "$w/choice" >&2; return 1; }
  tk=$(cpu "$@" --scheme "$scheme" --linsol klu --step 0.01 --t-end "$(awk -v n="$steps" 'BEGIN { print n * 0.01 }')")
  tu=$(cpu "$@" --scheme "$scheme" --linsol umfpack --step 0.01 --t-end "$(awk -v n="$steps" 'BEGIN { print n * 0.01 }')")
  verdict=$(awk -v k="$tk" -v u="$tu" -v c="$chosen" 'BEGIN {
    f = (k <= u) ? "klu" : "umfpack";
    even = (k <= 1.1 * u && u <= 1.1 * k);
    ok = (c == f || even) ? "yes" : "no";
    printf "%s %s %s", f, ok, even ? "(even)" : "" }')
  set -- $verdict
  faster=$1 ok=$2 even=${3:-}
  total=$((total + 1))
  [ "$ok" = yes ] && good=$((good + 1))
  printf '%-22s %-9s %6s %10s %8s %9s %9s  %s %s\n' "$label" "$scheme" "$steps" "$fpe" "$chosen" "$tk" "$tu" "$ok" "$even"
  echo "$label,$scheme,$steps,$fpe,$chosen,$tk,$tu,$faster,$ok" >>"$out"
}

if [ "$quick" = 1 ]; then s1=20 s2=5; else s1=100 s2=20; fi
for s in rattle vi-a em genalpha; do case_ "chain N=1000" $s $s1 chain --param N=1000; done
for s in rattle em genalpha; do case_ "chain N=10000" $s $s2 chain --param N=10000; done
for s in genalpha bliedf2; do case_ "rigid-chain N=300" $s $s1 rigid-chain --param N=300; done
for s in rattle genalpha em; do case_ "net 20x20" $s $s2 "$w/net20.yaml"; done
for s in rattle genalpha; do case_ "net 40x40" $s $s2 "$w/net40.yaml"; done
case_ "net 40x40" em 2 "$w/net40.yaml"
for s in genalpha bliedf2; do case_ "slider-crank (dense)" $s $s1 slider-crank; done
echo "the rule picked the faster back-end (or one within 10 %) in $good of $total cases; CSV: $out"
