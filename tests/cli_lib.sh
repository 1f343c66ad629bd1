# Shared by the program's shell tests (test_cli, test_guard, test_hostile,
# test_output): the program under test, a private work directory removed on
# exit, and the ok/bad/skip reporting with its failure count.  Source it
# from the build directory before anything else.
L="$(pwd)/livens"
# configure leaves the program out without inih: nothing to test (skip)
[ -x "$L" ] || { echo "skip: no livens program (configure found no inih)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fails=0
T=${T:-}
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
skip() { echo "skip $1"; }

# expect_usage "description" args...: exit status 2 and exactly one line on
# stderr, a sentence (it ends in '.' or ')').  $T may hold a timeout prefix.
expect_usage() {
  d=$1; shift
  $T "$L" "$@" >out.txt 2>err.txt; st=$?
  n=$(wc -l <err.txt)
  if [ "$st" -eq 2 ] && [ "$n" -eq 1 ] && grep -q '^livens: .*[.)]$' err.txt; then ok "$d: $(cat err.txt)"
  else bad "$d (status $st, stderr: $(cat err.txt))"; fi
}

# data FILE: a CSV without its '#' metadata lines (issue 17)
data() { grep -v '^#' "$1"; }

# numeq "A B C ..." "X Y Z ...": the two lists of numbers read as the same
# doubles, one by one (the CSV rows print the shortest digits that read
# back to a double, or %.17g without double-conversion: 0.1 and
# 0.10000000000000001 are the same number)
numeq() {
  awk -v a="$1" -v b="$2" 'BEGIN { n = split(a, x, " "); m = split(b, y, " ");
    if (n != m) exit 1; for (i = 1; i <= n; i++) if (x[i] + 0 != y[i] + 0) exit 1; exit 0 }'
}
