#!/bin/sh
# Body-level output of the multibody layer (issue 15): every element's pose
# in the run CSV, whatever the formulation.  The heavy top described in
# directors (EM), r3so3 and euler-parameters (genalpha) writes the same
# top.x1..top.R33 columns at t = 0 and they agree at t = 0.2 to O(h^2) (the
# difference drops by 4 when h halves); a system file's CSV has its
# elements' named columns (bodies: x and R, particles: x only), whose values
# satisfy the joints; livens plot --y takes them; a name that cannot head a
# column is refused.
set -u
T="timeout -s KILL 120"
sys=$(cd "${srcdir:-.}/examples/systems" && pwd)
. "${srcdir:-.}/tests/cli_lib.sh"
if ! "$L" run "$sys/heavy_top.yaml" --step 1e-3 --t-end 1e-3 >/dev/null 2>err.txt &&
  grep -q 'no YAML reader' err.txt; then
  echo "skip: $(cat err.txt)"
  exit 77
fi

# maxdiff PREFIX first|last A.csv B.csv: max |a - b| over the columns
# PREFIX.* of A's header, looked up by name in B, in the first or last data
# row, and how many columns ("missing COL" if B lacks one)
maxdiff() {
  awk -F, -v pre="$1" -v row="$2" '
    /^#/ { next }
    FILENAME != cur { cur = FILENAME; f++; for (i = 1; i <= NF; i++) col[f, $i] = i; if (f == 1) hdr = $0; next }
    row == "first" && (f in got) { next }
    { got[f] = 1; line[f] = $0 }
    END { nh = split(hdr, h, ","); split(line[1], a, ","); split(line[2], b, ","); m = 0; n = 0
      for (i = 1; i <= nh; i++) if (index(h[i], pre ".") == 1) {
        if (!((2, h[i]) in col)) { print "missing " h[i]; exit }
        d = a[col[1, h[i]]] - b[col[2, h[i]]]; if (d < 0) d = -d; if (d > m) m = d; n++ }
      printf "%.3g %d\n", m, n }' "$3" "$4"
}

# --- (a) one motion in three formulations, compared through the pose columns
ht="$sys/heavy_top.yaml"
for h in 1e-3 5e-4; do
  for fs in "directors em" "r3so3 genalpha" "euler-parameters genalpha"; do
    set -- $fs
    $T "$L" run "$ht" --param formulation=$1 --scheme $2 --step $h --t-end 0.2 --out "$1_$h.csv" >/dev/null 2>err.txt ||
      bad "heavy_top.yaml $1 $2 h = $h: $(cat err.txt)"
  done
done
for p in r3so3 euler-parameters; do
  set -- $(maxdiff top first directors_1e-3.csv "${p}_1e-3.csv")
  [ "$1" != missing ] && [ "$2" -eq 12 ] && awk -v d="$1" 'BEGIN { exit !(d + 0 <= 1e-14) }' &&
    ok "t = 0: directors and $p write the same 12 columns top.x1..top.R33 (max |diff| = $1 <= 1e-14)" ||
    bad "t = 0: directors vs $p: $*"
  set -- $(maxdiff top last directors_1e-3.csv "${p}_1e-3.csv"); d1=$1
  set -- $(maxdiff top last directors_5e-4.csv "${p}_5e-4.csv"); d2=$1
  awk -v a="$d1" -v b="$d2" 'BEGIN { r = a / b; exit !(b + 0 > 0 && r >= 3.5 && r <= 4.5 && b + 0 <= 0.02) }' &&
    ok "t = 0.2: directors (EM) vs $p (genalpha), max |diff| of the pose = $d1 (h = 1e-3), $d2 (h = 5e-4): ratio $(awk -v a="$d1" -v b="$d2" 'BEGIN { printf "%.2f", a / b }') in [3.5, 4.5], O(h^2)" ||
    bad "t = 0.2: directors vs $p: $d1, $d2 (expected a ratio near 4)"
done

# --- (b) a system file's CSV: named columns, values that satisfy the joints
wg="$sys/watt_governor.yaml"
$T "$L" run "$wg" --scheme em --step 1e-3 --t-end 0.5 --out w.csv >/dev/null 2>err.txt || bad "watt_governor.yaml: $(cat err.txt)"
hdr=$(grep -v '^#' w.csv | head -1)
want=""
for b in spindle arm1 arm2 sleeve; do
  want="$want,$b.x1,$b.x2,$b.x3,$b.R11,$b.R12,$b.R13,$b.R21,$b.R22,$b.R23,$b.R31,$b.R32,$b.R33"
done
case "$hdr" in *",newton_iters$want") ok "watt_governor.yaml: 48 columns spindle.x1 .. sleeve.R33 after newton_iters" ;;
  *) bad "watt_governor.yaml header: $hdr" ;; esac
# arm1's centre of mass is 0.5 from its hinge, the spindle point (0.05, 0, 0.5):
# |arm1.x - (spindle.x + spindle.R (0.05, 0, 0.5))| = 0.5 on every row, and R
# is a rotation (|R^T R - I| small)
d=$(awk -F, '/^#/ { next } !n++ { for (i = 1; i <= NF; i++) c[$i] = i; next }
  { s = "spindle."; rows++
    for (i = 1; i <= 3; i++) hx[i] = $c[s "x" i] + 0.05 * $c[s "R" i "1"] + 0.5 * $c[s "R" i "3"]
    r = 0; for (i = 1; i <= 3; i++) r += ($c["arm1.x" i] - hx[i])^2
    e = sqrt(r) - 0.5; if (e < 0) e = -e; if (e > m) m = e
    for (i = 1; i <= 3; i++) for (k = 1; k <= 3; k++) { o = -(i == k)
      for (j = 1; j <= 3; j++) o += $c["arm2.R" j i] * $c["arm2.R" j k]
      if (o < 0) o = -o; if (o > m) m = o } }
  END { if (rows < 500) print "short"; else printf "%.3g\n", m }' w.csv)
awk -v d="$d" 'BEGIN { exit !(d != "short" && d + 0 <= 1e-12) }' &&
  ok "watt_governor.yaml: |arm1 - hinge| - 0.5 and |R^T R - I| of arm2 <= $d <= 1e-12 on 501 rows" ||
  bad "watt_governor.yaml pose columns: $d"
# the arms swing: arm1.x3 moves (the pose columns are not frozen at t = 0)
sw=$(awk -F, '/^#/ { next } !n++ { for (i = 1; i <= NF; i++) if ($i == "arm1.x3") c = i; next }
  { if (lo == "" || $c < lo) lo = $c; if (hi == "" || $c > hi) hi = $c } END { printf "%.3g\n", hi - lo }' w.csv)
awk -v s="$sw" 'BEGIN { exit !(s + 0 > 0.01) }' && ok "arm1.x3 varies by $sw over 0.5 s" || bad "arm1.x3 range $sw"
# particles: position only
$T "$L" run "$sys/spring_chain.yaml" --scheme em --step 1e-3 --t-end 0.01 --out p.csv >/dev/null 2>err.txt
hdr=$(grep -v '^#' p.csv | head -1)
case "$hdr" in *",newton_iters,p1.x1,p1.x2,p1.x3,p2.x1,p2.x2,p2.x3,p3.x1,p3.x2,p3.x3") ok "spring_chain.yaml: particles p1..p3 with x1..x3 only" ;;
  *) bad "spring_chain.yaml header: $hdr $(cat err.txt)" ;; esac
# a built-in model built by the layer: default names body<id>
$T "$L" run heavy-top --param formulation=directors --scheme em --step 1e-3 --t-end 0.01 --out b.csv >/dev/null 2>err.txt
grep -v '^#' b.csv | head -1 | grep -q ',newton_iters,body1.x1,.*,body1.R33$' &&
  ok "heavy-top formulation=directors: columns body1.x1 .. body1.R33" || bad "heavy-top default names: $(cat err.txt)"
# the readers that find columns by name still read such a CSV
$T "$L" converge "$wg" --scheme em --steps 4e-3,2e-3 --t-end 0.1 --reference w.csv >out.txt 2>err.txt &&
  ok "converge --reference a CSV with pose columns" || bad "converge --reference: $(cat err.txt)"

# --- (c) plot --y on the pose columns
if command -v gnuplot >/dev/null 2>&1; then
  LIVENS_PLOT_KEEP_SCRIPT=y.gp "$L" plot w.csv --y arm1.x3,sleeve.x3 --out y.png >/dev/null 2>err.txt && [ -s y.png ] &&
    grep -q "^set title 'arm1.x3" y.gp && ok "plot --y arm1.x3,sleeve.x3: drawn" || bad "plot --y arm1.x3: $(cat err.txt)"
else skip "plot --y: gnuplot is not installed"; fi

# --- names must be able to head a column
printf '%s\n' "particles:" "  - {name: 'a,b', mass: 1, position: [1, 0, 0]}" >bad.yaml
"$L" run bad.yaml --step 1e-3 --t-end 1e-3 >out.txt 2>err.txt; st=$?
[ $st -eq 2 ] && grep -q "bad.yaml:2: name: .*letters, digits, _ and -" err.txt && ok "name 'a,b' refused: $(cat err.txt)" ||
  bad "name 'a,b' (exit $st: $(cat err.txt))"
printf '%s\n' "particles:" "  - {name: particle2, mass: 1, position: [1, 0, 0]}" "  - {mass: 1, name: q, position: [2, 0, 0]}" >bad.yaml
"$L" run bad.yaml --step 1e-3 --t-end 1e-3 >out.txt 2>err.txt; st=$?
[ $st -eq 2 ] && grep -q "default name of another element" err.txt && ok "another element's default name refused: $(cat err.txt)" ||
  bad "name particle2 on element 1 (exit $st: $(cat err.txt))"
[ $fails -eq 0 ]
