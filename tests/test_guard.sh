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

# expect_failure "description" "sentence (grep -E)" args...: exit 1 and the
# sentence on stderr (issue 14 §6: each failure says what happened).
expect_failure() {
  d=$1; pat=$2; shift 2
  "$L" "$@" >out.txt 2>err.txt; st=$?
  if [ "$st" -eq 1 ] && grep -Eq "$pat" err.txt; then ok "$d: $(cat err.txt)"
  else bad "$d (status $st, stderr: $(cat err.txt))"; fi
}
# a singular first step whose saddle-point matrix is regular blames the step, not the constraints
expect_failure "singular first step, too large" "singular in the first step.*regular there.*too large" \
  run four-particle --scheme bliedf2 --step 0.3 --t-end 1
# with halving on, the sentence says how many halvings were spent instead of suggesting them
expect_failure "halving exhausted" "did not converge.*the step was halved 2 times without success" \
  run four-particle --scheme rattle --step 2 --t-end 20 --halving 2
# without halving the sentence may suggest it
expect_failure "halving off" "a smaller step or step halving may help" \
  run four-particle --scheme rattle --step 2 --t-end 20 --halving 0
# BLieDF's start is not halved: its own sentence, not LV_ESTEPMIN's "after repeated halving"
expect_failure "BLieDF start without halving" "RKMK4 start at t = 0 missed start-tol = 1e-15 with 4096 sub-steps \(step halving does not apply" \
  run heavy-top --scheme bliedf2 --opt start-tol=1e-15 --step 0.1 --t-end 1

[ "$fails" -eq 0 ] || { echo "$fails guard check(s) failed"; exit 1; }
