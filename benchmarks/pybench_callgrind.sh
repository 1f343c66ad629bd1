#!/bin/sh
# Instructions per step of a run through Python against the same run through
# the program (issue 16's <= 1.05 target, measured deterministically):
# callgrind counts of a 1000- and a 3000-step run, differenced, so start-up
# (the interpreter, numpy, the program's set-up) cancels.  The system is the
# heavy top of examples/systems/heavy_top.yaml, built element by element with
# livens.System (benchmarks/pybench.py) and recording every 100th row, and
# the file itself through `livens run`, both under EM at h = 1e-3.
#   benchmarks/pybench_callgrind.sh PATH/TO/livens STAGED_PACKAGE_DIR [python3]
# (tests/test_python.sh shows how the package is staged.)
set -e
if [ $# -lt 2 ]; then
  echo "usage: $0 LIVENS STAGED_PACKAGE_DIR [PYTHON]" >&2
  exit 2
fi
exe=$1
stage=$2
py=${3:-/usr/bin/python3}
src=$(cd "$(dirname "$0")/.." && pwd)
export OPENBLAS_NUM_THREADS=1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/run.py" <<PYEOF
import sys
sys.path.insert(0, "$src/benchmarks")
import livens
from pybench import heavy_top_system
r = livens.simulate(heavy_top_system(), "em", 1e-3, float(sys.argv[1]), every=100)
assert r.status == "ok"
PYEOF
count() { sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$1"; }
for T in 1 3; do
  PYTHONPATH="$stage" valgrind --tool=callgrind --callgrind-out-file="$dir/py.$T" "$py" "$dir/run.py" $T \
    >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; exit 1; }
  valgrind --tool=callgrind --callgrind-out-file="$dir/prog.$T" "$exe" run "$src/examples/systems/heavy_top.yaml" \
    --scheme em --step 1e-3 --t-end $T >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; exit 1; }
done
p=$(($(count "$dir/py.3") - $(count "$dir/py.1")))
c=$(($(count "$dir/prog.3") - $(count "$dir/prog.1")))
echo "heavy top (System) em via Python: $((p / 2000)) instructions per step; heavy_top.yaml via the program: $((c / 2000)); ratio $(awk "BEGIN { printf \"%.4f\", $p / $c }")"
