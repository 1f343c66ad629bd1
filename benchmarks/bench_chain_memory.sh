#!/bin/sh
# Peak memory and CPU time per step of the chain at large N (issue 18,
# target 3: 10^6 bodies with at most 4 kB per particle; VI-A and EM at
# N = 10^5 within 500 MB).  For each scheme, two runs of `livens run chain`
# on the default linear-solver path, h = 0.01: one of 1 step and one of
# 1 + K steps.  Peak memory is the maximum resident set size of the longer
# run (getrusage of the child), bytes per particle that divided by N, and
# the time per step the difference of the two runs' CPU times (user + sys)
# over K, so start-up (model, projection, symbolic analysis, first
# factorisation) cancels.  A measurement, not a test: N = 10^6 needs several
# GB and minutes per scheme, run the schemes one at a time on a quiet
# machine.  --quick (N = 10^4, K = 2) is cheap.  A scheme may carry run
# options after a slash, e.g. bliedf2/start=ramp (--opt start=ramp): BLieDF2
# is measured with both starts, its default RKMK4 start (one sub-step per
# node on the chain up to N = 10^6, its saddle-point matrix freed after the
# start) and the order ramp.
#   benchmarks/bench_chain_memory.sh [--quick] [--n N] [--steps K]
#       [--schemes rattle,vi-a,em,genalpha,bliedf2,bliedf2/start=ramp] [--livens PATH]
#       [--out DIR] [--timeout SECONDS]
# Writes DIR/bench_chain_memory.csv (scheme,N,peak_MB,bytes_per_particle,
# s_per_step,startup_s,newton_per_step,status) and prints the same table.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
L=$top/build/livens
N=100000
K=2
schemes=rattle,vi-a,em,genalpha,bliedf2,bliedf2/start=ramp
out=
tmo=1800
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) N=10000 K=2 ;;
    --n) N=$2; shift ;;
    --steps) K=$2; shift ;;
    --schemes) schemes=$2; shift ;;
    --livens) L=$2; shift ;;
    --out) out=$2; shift ;;
    --timeout) tmo=$2; shift ;;
    *) echo "usage: $0 [--quick] [--n N] [--steps K] [--schemes S1,S2] [--livens PATH] [--out DIR] [--timeout S]" >&2
       exit 2 ;;
  esac
  shift
done
case "$N$K$tmo" in *[!0-9]*) echo "$0: --n, --steps and --timeout take whole numbers" >&2; exit 2 ;; esac
[ "$N" -ge 1 ] && [ "$K" -ge 1 ] || { echo "$0: N and K must be positive" >&2; exit 2; }
[ -x "$L" ] || { echo "no program at $L (build first, or --livens PATH)" >&2; exit 1; }
[ -n "$out" ] || out=$(dirname "$L")/bench
mkdir -p "$out"
out=$(cd "$out" && pwd)
export OPENBLAS_NUM_THREADS=1
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
py=/usr/bin/python3
[ -x "$py" ] || py=python3

# one run: `measure STEPS SCHEME[/K=V/..]` -> "status cpu_seconds max_rss_kB newton_iterations"
measure() {
  sch=${2%%/*}
  set -- "$1" "$2" $(echo "$2" | tr / ' ' | awk '{ for (i = 2; i <= NF; i++) printf " --opt %s", $i }')
  st=$1
  shift 2
  "$py" - "$w/log" "$tmo" "$L" run chain --param N="$N" --scheme "$sch" "$@" --step 0.01 \
    --t-end "$(awk -v n="$st" 'BEGIN { printf "%.10g", n * 0.01 }')" <<'EOF'
import re, resource, subprocess, sys
log, tmo, cmd = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
with open(log, "w") as f:
    try:
        rc = subprocess.run(cmd, stdout=f, stderr=f, timeout=tmo).returncode
    except subprocess.TimeoutExpired:
        rc = "timeout"
r = resource.getrusage(resource.RUSAGE_CHILDREN)
it = re.findall(r"Newton iterations (\d+),", open(log).read())
print("%s %.6f %d %s" % ("ok" if rc == 0 else "fail:%s" % rc, r.ru_utime + r.ru_stime, r.ru_maxrss,
                          it[-1] if it else "-"))
EOF
}

csv=$out/bench_chain_memory.csv
echo "scheme,N,peak_MB,bytes_per_particle,s_per_step,startup_s,newton_per_step,status" >"$csv"
echo "chain, default linear-solver path, h = 0.01, N = $N, 1 and $((K + 1)) steps ($(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?') load)"
printf '%-10s %9s %10s %12s %10s %10s %8s  %s\n' scheme N peak_MB B/particle s/step startup_s newton status
for s in $(echo "$schemes" | tr , ' '); do
  set -- $(measure 1 "$s")
  st1=$1 c1=$2
  if [ "$st1" = ok ]; then
    set -- $(measure $((K + 1)) "$s")
    st=$1 c2=$2 rss=$3 it=$4
  else
    st=$st1 c2=$c1 rss=$3 it=$4
  fi
  [ "$st" = ok ] || tail -n 3 "$w/log" >&2
  line=$(awk -v n="$N" -v k="$K" -v c1="$c1" -v c2="$c2" -v rss="$rss" -v it="$it" -v ok="$st" 'BEGIN {
    mb = rss / 1024.0; bpp = rss * 1024.0 / n
    sps = ok == "ok" ? sprintf("%.4g", (c2 - c1) / k) : "-"
    su = ok == "ok" ? sprintf("%.4g", c1 - (c2 - c1) / k) : "-"
    nps = (ok == "ok" && it != "-") ? sprintf("%.2f", it / (k + 1)) : "-"
    printf "%.1f %.0f %s %s %s", mb, bpp, sps, su, nps }')
  set -- $line
  printf '%-10s %9s %10s %12s %10s %10s %8s  %s\n' "$s" "$N" "$1" "$2" "$3" "$4" "$5" "$st"
  echo "$s,$N,$1,$2,$3,$4,$5,$st" >>"$csv"
done
echo "CSV: $csv"
