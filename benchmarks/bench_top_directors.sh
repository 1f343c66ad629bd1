#!/bin/sh
# The heavy top in directors over 10^5 steps (h = 1e-3, t = 100) under the
# conserving schemes: what they keep and what they only bound.  For each
# scheme one `livens run heavy-top --param formulation=directors` with
# every step written, then from the CSV: the largest relative energy error
# over the first and the second half of the run (a drift makes the second
# larger; a bounded error leaves them alike), the largest relative change of
# the two momentum maps (the vertical through the tip, the spin about the
# symmetry axis) and the largest |g|.  EM runs twice: with the paper's
# midpoint constraint gradients (the default) and with momentum=projected.
# A measurement, not a test (about a minute per scheme); --quick runs 10^4
# steps.  A scheme may carry an option after a slash (em/momentum=projected).
#   benchmarks/bench_top_directors.sh [--quick] [--j2 J2] [--schemes S1,S2]
#       [--livens PATH] [--out DIR]
# Writes DIR/bench_top_directors.csv (scheme,steps,E_first_half,
# E_second_half,J_vertical,J_spin,max_g,newton_per_step,status) and prints
# the same table.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
L=$top/build/livens
T=100
J2=0.4
schemes=em,em/momentum=projected,em-g/momentum=projected,vi-a,rattle
out=
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) T=10 ;;
    --j2) J2=$2; shift ;;
    --schemes) schemes=$2; shift ;;
    --livens) L=$2; shift ;;
    --out) out=$2; shift ;;
    *) echo "usage: $0 [--quick] [--j2 J2] [--schemes S1,S2] [--livens PATH] [--out DIR]" >&2
       exit 2 ;;
  esac
  shift
done
[ -n "$out" ] || out=$top/build/bench
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
csv=$out/bench_top_directors.csv
echo "scheme,steps,E_first_half,E_second_half,J_vertical,J_spin,max_g,newton_per_step,status" > "$csv"
printf '%-26s %8s %12s %12s %12s %12s %10s %8s %s\n' scheme steps "dE/E 1st" "dE/E 2nd" "dJ_vert/J" "dJ_spin/J" "max|g|" newton status
IFS=,
for s in $schemes; do
  name=${s%%/*}
  set --
  case "$s" in */*) set -- --opt "${s#*/}" ;; esac
  rc=0
  "$L" run heavy-top --param formulation=directors --param "J2=$J2" --scheme "$name" "$@" --step 1e-3 \
    --t-end "$T" --every 1 --out "$tmp/run.csv" --summary "$tmp/run.json" > "$tmp/run.txt" 2>&1 || rc=$?
  status=ok
  [ "$rc" -eq 0 ] || status="exit $rc"
  newton=$(awk -F'[:,]' '/"steps"/ { s = $2 } /"newton_iterations"/ { n = $2 }
    END { if (s > 0) printf "%.2f", n / s; else print "nan" }' "$tmp/run.json" 2>/dev/null)
  row=$(grep -v '^#' "$tmp/run.csv" | awk -F, -v T="$T" '
    NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "t") ct = i; if ($i == "energy") ce = i;
              if ($i == "momentum1") c1 = i; if ($i == "momentum2") c2 = i; if ($i == "g_norm") cg = i } next }
    NR == 2 { e0 = $ce; a0 = $c1; b0 = $c2 }
    { n++; de = ($ce - e0) / e0; if (de < 0) de = -de; h = ($ct > T / 2);
      if (de > me[h]) me[h] = de;
      da = ($c1 - a0) / a0; if (da < 0) da = -da; if (da > ma) ma = da;
      db = ($c2 - b0) / b0; if (db < 0) db = -db; if (db > mb) mb = db;
      if ($cg > mg) mg = $cg }
    END { printf "%d,%.3e,%.3e,%.3e,%.3e,%.3e", n - 1, me[0], me[1], ma, mb, mg }')
  echo "$s,$row,$newton,$status" >> "$csv"
  echo "$row" | awk -F, -v s="$s" -v nw="$newton" -v st="$status" \
    '{ printf "%-26s %8d %12s %12s %12s %12s %10s %8s %s\n", s, $1, $2, $3, $4, $5, $6, nw, st }'
done
echo "CSV: $csv"
