#!/bin/sh
# The quick benchmark set (`make bench`, issue 18): the figures the
# performance issue tracks, measured in one run and written as CSV, JSON and
# a Markdown table that names the machine and its load.
#   1. instructions per step of `livens run` (callgrind, a 10^4- minus a
#      10^3-step run: deterministic, the measure of the small-system
#      targets) for generalized-alpha index 3 and 2, BLieDF2 index 3 and 2
#      on the heavy top, VI-A and EM on four-particle;
#   2. the chain on the default (automatic) linear-solver path: CPU time per
#      step at N = 10^3 and 10^4 (a run of 2k steps minus one of k, so the
#      start-up cancels) and their ratio (linear scaling: 10), and Newton
#      iterations per step at both sizes, for RATTLE, VI-A, EM and
#      generalized-alpha.
# A measurement, not a test.  Wall time is not used: CPU time of whole
# runs (user + sys), and instruction counts where valgrind is present.
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
else
  echo "valgrind not found: instruction counts skipped"
fi

# 2. the chain on the default path
# CPU seconds (user + sys, microsecond resolution from getrusage) and the
# log of one run: `cpu_run STEPS N SCHEME` -> "cpu_seconds newton_iterations"
# The least CPU time of three identical runs: the load of a shared machine
# only adds to a run's time, and the N = 1e3 runs are short.
cpu_run() {
  c=$(/usr/bin/python3 -c 'import resource, subprocess, sys
best, prev = None, 0.0
for rep in range(3):
    with open(sys.argv[1], "w") as log:
        rc = subprocess.run(sys.argv[2:], stdout=log, stderr=log).returncode
    if rc != 0:
        best = None
        break
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = r.ru_utime + r.ru_stime
    best = t - prev if best is None else min(best, t - prev)
    prev = t
print("%.6f" % best if best is not None else "fail")' "$w/log" "$L" run chain --param N="$2" --scheme "$3" --step 0.01 \
    --t-end "$(awk -v n="$1" 'BEGIN { print n * 0.01 }')" --out /dev/null)
  [ "$c" != fail ] || { cat "$w/log" >&2; return 1; }
  it=$(sed -n 's/.*Newton iterations \([0-9]*\),.*/\1/p' "$w/log")
  echo "$c $it"
}
echo "chain, default linear-solver path, h = 0.01 (CPU time per step):"
# per step = (run of 2k steps - run of k steps) / k: start-up (projection,
# analysis, first factorisation) cancels, as in callgrind_steps.sh; the
# same window of the motion (steps 20 to 40) at both sizes
per_step() { # K N SCHEME -> "ms_per_step newton_per_step"
  set -- "$1" "$2" "$3" "$(cpu_run "$1" "$2" "$3")"
  a=$4
  b=$(cpu_run $(($1 * 2)) "$2" "$3")
  echo "$a $b" | awk -v k="$1" '{ printf "%.4g %.3f", ($3 - $1) / k * 1e3, ($4 - $2) / k }'
}
for s in rattle vi-a em genalpha; do
  set -- $(per_step 20 1000 $s) $(per_step 20 10000 $s)
  line=$(awk -v a="$1" -v i="$2" -v b="$3" -v j="$4" 'BEGIN { printf "%s %s %.2f %s %s", a, b, b / a, i, j }')
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
