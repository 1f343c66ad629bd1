#!/bin/sh
# The divergence guard as the program shows it (issue 14): a blown-up run
# has status LV_EDIVERGED in the summary, a sentence on stderr and exit 1.
set -u
. "${srcdir:-.}/tests/cli_lib.sh"

# expect_diverged "description" scheme args...: exit 1, the scheme's summary
# row ends in LV_EDIVERGED, stderr names the time and the figure.
expect_diverged() {
  d=$1; s=$2; shift 2
  "$L" "$@" >out.txt 2>err.txt; st=$?
  if [ "$st" -eq 1 ] && awk -v s="$s" '$1 == s && $NF == "LV_EDIVERGED" { f = 1 } END { exit !f }' out.txt &&
     grep -q "^livens: $s stopped: diverged at t = .* exceeds the bound" err.txt; then ok "$d: $(cat err.txt)"
  else bad "$d (status $st, stdout: $(cat out.txt), stderr: $(cat err.txt))"; fi
}

expect_diverged "gyro-top genalpha h=1e-3" genalpha compare gyro-top --schemes genalpha,em --step 1e-3 --t-end 0.5
# the other scheme of the comparison is still ok
awk '$1 == "em" && $NF == "ok" { f = 1 } END { exit !f }' out.txt && ok "em next to it ok" || bad "em row: $(cat out.txt)"
expect_diverged "four-particle rattle h=1 with halving" rattle run four-particle --scheme rattle --step 1 --t-end 20 --halving 30

[ "$fails" -eq 0 ] || { echo "$fails guard check(s) failed"; exit 1; }
