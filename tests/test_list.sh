#!/bin/sh
# `livens list` (issue 15): the table of which scheme runs which model in
# which formulation.  Asserted: a column for every scheme and a row for every
# registered model (one per formulation where it has a formulation
# parameter); the marks where the answer is known from the theory (EM runs
# the heavy top in directors, refuses it in r3so3 for want of a linear
# space, refuses the Euler-parameter top for want of a constant mass
# matrix; genalpha runs every row); and every mark of the heavy-top,
# slider-crank and double-pendulum rows and of a forced system file agrees
# with what `livens run` does (x: a step runs with exit 0; any other mark:
# exit 2 and "cannot run model" with a sentence).  `livens list FILE.yaml`
# gives the file's rows per formulation; a bad file is one sentence.
set -u
T="timeout -s KILL 60"
sys=$(cd "${srcdir:-.}/examples/systems" && pwd)
. "${srcdir:-.}/tests/cli_lib.sh"

$T "$L" list >list.txt 2>err.txt || bad "list exit $?"
hdr=$(grep -A1 '^Which scheme runs which model' list.txt | tail -1)
schemes=$(echo "$hdr" | awk '{ for (i = 3; i <= NF; i++) print $i }')
ns=$(echo "$schemes" | wc -l)
[ "$ns" -ge 13 ] && echo "$hdr" | grep -q ' em ' && echo "$hdr" | grep -q ' rattlie' &&
  ok "header names $ns schemes" || bad "header: $hdr"
# mark MODEL-LABEL SCHEME: the mark in that row (labels are 1 or 2 words)
mark() {
  awk -v lab="$1" -v s="$2" -v hdr="$hdr" '
    BEGIN { n = split(hdr, h, " "); for (i = 3; i <= n; i++) if (h[i] == s) col = i - 2 }
    /^Which scheme runs which model/ { on = 1; next }
    on && /^    [MLFU?]: / { on = 0 }
    on { line = $0; sub(/^    /, "", line)
         w = (lab ~ / /) ? 2 : 1; split(line, f, " ")
         l = (w == 2) ? f[1] " " f[2] : f[1]
         if (l == lab && f[w + 1] != "" ) print f[w + col] }' list.txt
}
# every model of the registry has a row
for m in $(sed -n '/^Models/,/^Schemes/p' list.txt | awk '/^  [a-z]/ { print $1 }'); do
  sed -n '/^Which scheme runs which model/,$p' list.txt | grep -q "^    $m\( \|$\)" && ok "row for $m" || bad "no row for $m"
done
want() { # label scheme expected
  got=$(mark "$1" "$2")
  [ "$got" = "$3" ] && ok "$1 / $2: $got" || bad "$1 / $2: '$got', expected '$3'"
}
want "heavy-top formulation=directors" em x
want "heavy-top formulation=r3so3" em L
want "heavy-top formulation=directors" rattle x
want "heavy-top formulation=r3so3" genalpha x
want "heavy-top-ep" em M
want "heavy-top-ep" genalpha x
want "pendulum3d" midpoint U
want "slider-crank formulation=directors" vi-a x
# driving constraints (kapitza): genalpha runs it, every other scheme is D
# (midpoint U: it has no constraints at all) and livens run says why in one
# sentence
for s in $schemes; do
  case $s in genalpha) want kapitza "$s" x ;; midpoint) want kapitza "$s" U ;; *) want kapitza "$s" D ;; esac
done
$T "$L" run kapitza --scheme rattle --t-end 0.01 >out.txt 2>err.txt; st=$?
[ $st -eq 2 ] && grep -q "cannot run model 'kapitza': it supports only scleronomic constraints g(q) = 0, and this model has driving constraints" err.txt &&
  ok "kapitza / rattle: exit 2, $(cat err.txt)" || bad "kapitza / rattle: exit $st, $(cat err.txt)"

# the marks agree with livens run
n=0
for lab in "heavy-top formulation=directors" "heavy-top formulation=r3so3" "heavy-top formulation=se3" \
  "slider-crank formulation=r3so3" "slider-crank formulation=directors" "double-pendulum formulation=se3"; do
  model=${lab% *}; form=${lab#*=}
  for s in $schemes; do
    m=$(mark "$lab" "$s")
    $T "$L" run "$model" --param formulation=$form --scheme $s --step 1e-3 --t-end 2e-3 >out.txt 2>err.txt; st=$?
    if [ "$m" = x ]; then [ $st -eq 0 ] || bad "$lab $s: marked x, run exit $st ($(cat err.txt))"
    else [ $st -eq 2 ] && grep -q "cannot run model" err.txt || bad "$lab $s: marked '$m', run exit $st ($(cat err.txt))"; fi
    n=$((n + 1))
  done
done
ok "$n marks checked against livens run"

# a system file: one row per formulation, marks as livens run
$T "$L" list "$sys/driven_rotor.yaml" >file.txt 2>err.txt || bad "list FILE exit $?"
grep -q '^    formulation=directors ' file.txt && grep -q '^    formulation=r3so3 ' file.txt && ok "file rows" ||
  bad "file rows: $(cat file.txt err.txt)"
row=$(grep '^    formulation=directors ' file.txt)
i=1; k=0
for s in $schemes; do
  i=$((i + 1)); m=$(echo "$row" | awk -v i=$i '{ print $i }')
  $T "$L" run "$sys/driven_rotor.yaml" --scheme $s --step 1e-3 --t-end 2e-3 >out.txt 2>err.txt; st=$?
  if [ "$m" = x ]; then [ $st -eq 0 ] || bad "driven_rotor $s: marked x, exit $st"
  else [ $st -eq 2 ] && grep -q "cannot run model" err.txt || bad "driven_rotor $s: marked '$m', exit $st"; fi
  k=$((k + 1))
done
echo "$row" | grep -q ' F ' && ok "driven_rotor.yaml directors: $k marks agree with livens run (F: the forced model)" ||
  bad "driven_rotor.yaml directors row without F: $row"
# no --scheme: the default (VI-A) where it runs the model, else genalpha with
# a line that says why; a scheme the user names is never replaced
$T "$L" run heavy-top --t-end 0.01 >out.txt 2>err.txt; st=$?
[ $st -eq 0 ] && grep -q '^genalpha .* ok$' out.txt && grep -q 'no --scheme given.*constant mass matrix.*running genalpha' err.txt &&
  ok "heavy-top without --scheme runs genalpha and says why" || bad "heavy-top default scheme: exit $st $(cat out.txt err.txt)"
$T "$L" run "$sys/driven_rotor.yaml" --t-end 2e-3 >out.txt 2>err.txt; st=$?
[ $st -eq 0 ] && grep -q '^genalpha .* ok$' out.txt && grep -q 'conservative model.*running genalpha' err.txt &&
  ok "driven_rotor.yaml without --scheme runs genalpha" || bad "driven_rotor default scheme: exit $st $(cat out.txt err.txt)"
$T "$L" run four-particle --t-end 0.01 >out.txt 2>err.txt; st=$?
[ $st -eq 0 ] && grep -q '^vi-a .* ok$' out.txt && ! grep -q 'running genalpha' err.txt &&
  ok "four-particle without --scheme keeps VI-A" || bad "four-particle default scheme: exit $st $(cat out.txt err.txt)"
$T "$L" run kapitza --t-end 0.01 >out.txt 2>err.txt; st=$?
[ $st -eq 0 ] && grep -q '^genalpha .* ok$' out.txt && grep -q 'driving constraints.*running genalpha' err.txt &&
  ok "kapitza (driven) without --scheme runs genalpha" || bad "kapitza default scheme: exit $st $(cat out.txt err.txt)"
expect_usage "a named scheme that cannot run the model" run heavy-top --scheme vi-a --t-end 0.01
expect_usage "list of a missing file" list nothere.yaml
expect_usage "list with a non-file argument" list heavy-top
[ $fails -eq 0 ]
