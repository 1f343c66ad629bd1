#!/bin/sh
# The quick benchmark set (`make bench`, issue 18): the figures the
# performance issue tracks, measured in one run and written as CSV, JSON and
# a Markdown table that names the machine and its load.
#   1. instructions per step of `livens run` (callgrind, a 10^4- minus a
#      10^3-step run: deterministic, the measure of the small-system
#      targets) for generalized-alpha index 3 and 2, BLieDF2 index 3 and 2
#      on the heavy top, VI-A and EM on four-particle, and two of them
#      again writing a CSV row every step;
#   2. the chain on the default (automatic) linear-solver path: CPU time per
#      step at N = 10^3 and 10^4 over the same window of the motion, timed
#      in-process by bench_scale --default (the start-up is not in the
#      window), their ratio (linear scaling: 10), and Newton iterations per
#      step at both sizes, for RATTLE, VI-A, EM and generalized-alpha.
# A measurement, not a test.  Wall time is not used: CPU time, and
# instruction counts where valgrind is present.
#   benchmarks/bench_quick.sh [BUILD_DIR] [OUT_DIR] [--update-doc]
# --update-doc rewrites the block between the bench-quick markers of
# doc/performance.md with the new table.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build
out=
update=0
for a in "$@"; do
  case "$a" in
    --update-doc) update=1 ;;
    *) if [ -z "${build_set:-}" ]; then build=$a build_set=1; else out=$a; fi ;;
  esac
done
build=$(cd "$build" && pwd)
[ -n "$out" ] || out=$build/bench
mkdir -p "$out"
out=$(cd "$out" && pwd)
L=$build/livens
[ -x "$L" ] || { echo "no program at $L (build first)"; exit 1; }
export OPENBLAS_NUM_THREADS=1
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT

cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
ncpu=$(nproc 2>/dev/null || echo '?')
load0=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')
version=$("$L" --version 2>/dev/null | head -n 1 || echo livens)
when=$(date -u '+%Y-%m-%d %H:%M UTC')

csv=$out/bench_quick.csv
echo "measure,case,value,unit" >"$csv"
put() { echo "$1,$2,$3,$4" >>"$csv"; }

# 1. instructions per step
if command -v valgrind >/dev/null 2>&1; then
  ipc() { # LABEL MODEL SCHEME [options]
    label=$1
    shift
    r=$(sh "$top/benchmarks/callgrind_steps.sh" "$L" "$@" 2>/dev/null | sed -n 's/.*: \([0-9]*\) instructions per step/\1/p')
    [ -n "$r" ] && put instructions_per_step "$label" "$r" instructions && echo "  $label: $r instructions per step"
  }
  echo "instructions per step (callgrind):"
  ipc "heavy-top genalpha index 3" heavy-top genalpha
  ipc "heavy-top genalpha index 2" heavy-top genalpha --opt index=2
  ipc "heavy-top bliedf2 index 3" heavy-top bliedf2
  ipc "heavy-top bliedf2 index 2" heavy-top bliedf2 --opt index=2
  ipc "four-particle vi-a" four-particle vi-a
  ipc "four-particle em" four-particle em
  # the same runs writing a CSV row every step (the row costs more than
  # the step: doc/performance.md, "Writing the CSV")
  ipc "heavy-top genalpha index 3, CSV row every step" heavy-top genalpha --out "$w/rows.csv"
  ipc "four-particle vi-a, CSV row every step" four-particle vi-a --out "$w/rows.csv"
else
  echo "valgrind not found: instruction counts skipped"
fi

# 2. the chain on the default path, timed inside one process per size
# (bench_scale --default: steps 21..40 after an untimed start, the least CPU
# time of three runs per size, sizes alternated).  Whole-process runs of 20
# and 40 steps, which this script differenced before, put the ratio anywhere
# from 5.5 to 22 for the same code: at N = 10^3 the twenty steps take
# 0.1-0.3 s, within the host's scheduling noise.
B=$build/benchmarks/bench_scale
[ -x "$B" ] || { echo "no $B (make benchmarks)"; exit 1; }
echo "chain, default linear-solver path, h = 0.01 (CPU time per step, steps 21..40):"
"$B" --default --csv "$w/scale.csv" >"$w/scale.out" || { cat "$w/scale.out" >&2; exit 1; }
for s in rattle vi-a em genalpha; do
  # "default,SCHEME,N,n,backend,default,per_step_s,iters,..." for N = 1e3 and 1e4
  line=$(awk -F, -v s="$s" '$1 == "default" && $2 == s && $3 == 1000 { a = $7; i = $8 }
    $1 == "default" && $2 == s && $3 == 10000 { b = $7; j = $8 }
    END { if (a > 0 && b > 0) printf "%.4g %.4g %.2f %.3f %.3f", a * 1e3, b * 1e3, b / a, i, j }' "$w/scale.csv")
  [ -n "$line" ] || { echo "  $s: run failed"; cat "$w/scale.out" >&2; exit 1; }
  set -- $line
  put chain_ms_per_step "$s N=1000" "$1" ms
  put chain_ms_per_step "$s N=10000" "$2" ms
  put chain_cost_ratio "$s 1e4/1e3" "$3" ratio
  put chain_newton_per_step "$s N=1000" "$4" iterations
  put chain_newton_per_step "$s N=10000" "$5" iterations
  echo "  $s: $1 ms (N=1e3), $2 ms (N=1e4), ratio $3; Newton/step $4 -> $5"
done
load1=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')

# JSON and Markdown from the CSV
awk -F, -v when="$when" -v cpu="$cpu_model" -v n="$ncpu" -v l0="$load0" -v l1="$load1" -v ver="$version" '
  function esc(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return s }
  NR == 1 { next }
  { rows[++k] = sprintf("    {\"measure\": \"%s\", \"case\": \"%s\", \"value\": %s, \"unit\": \"%s\"}", esc($1), esc($2), $3, esc($4)) }
  END {
    printf "{\n  \"when\": \"%s\", \"version\": \"%s\", \"cpu\": \"%s\", \"processors\": \"%s\",\n", esc(when), esc(ver), esc(cpu), n
    printf "  \"load_before\": \"%s\", \"load_after\": \"%s\",\n  \"results\": [\n", l0, l1
    for (i = 1; i <= k; i++) printf "%s%s\n", rows[i], i < k ? "," : ""
    printf "  ]\n}\n"
  }' "$csv" >"$out/bench_quick.json"
{
  echo "<!-- bench-quick:begin (generated by benchmarks/bench_quick.sh; do not edit by hand) -->"
  echo "Measured $when with \`make bench\` ($version) on $ncpu × $cpu_model;"
  echo "load average $load0 before, $load1 after (CPU times, not wall times; instruction counts are load-independent)."
  echo
  echo "| measure | case | value |"
  echo "|---|---|---|"
  awk -F, 'NR > 1 { printf "| %s | %s | %s %s |\n", $1, $2, $3, $4 }' "$csv"
  echo "<!-- bench-quick:end -->"
} >"$out/bench_quick.md"
echo "CSV: $csv, JSON: $out/bench_quick.json, table: $out/bench_quick.md"

if [ "$update" = 1 ]; then
  doc=$top/doc/performance.md
  grep -q '^<!-- bench-quick:begin' "$doc" || { echo "no bench-quick markers in $doc" >&2; exit 1; }
  awk -v f="$out/bench_quick.md" '
    /^<!-- bench-quick:begin/ { while ((getline l < f) > 0) print l; skip = 1; next }
    /^<!-- bench-quick:end/ { skip = 0; next }
    !skip' "$doc" >"$w/doc" && cp "$w/doc" "$doc"
  echo "updated $doc"
fi
