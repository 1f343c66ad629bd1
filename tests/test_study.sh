#!/bin/sh
# The study workflow (issue 17): CSV metadata, overlay figures in PNG, SVG,
# PDF and LaTeX with titles and legends from the metadata, any column
# against t, JSON summaries, compare/converge tables, output times and the
# per-model defaults.
set -u
. "${srcdir:-.}/tests/cli_lib.sh"
PY=/usr/bin/python3
ver=$("$L" --version | sed 's/^livens //')

# --- every CSV starts with '#' metadata naming the run
"$L" run pendulum3d --scheme rattle --step 0.02 --t-end 0.4 --param l=2 --out alpha_run.csv >sum1.txt 2>err.txt ||
  bad "run for the metadata: $(cat err.txt)"
for kv in "livens = $ver" "kind = run" "model = pendulum3d" "param.l = 2" "param.m = 1" "scheme = rattle" \
  "h = 0.02" "t_end = 0.40000000000000002" "every = 1" "linsol = auto"; do
  grep -qx "# $kv" alpha_run.csv || bad "run CSV metadata lacks '# $kv'"
done
[ "$(sed -n '/^[^#]/{p;q}' alpha_run.csv | cut -d, -f1)" = t ] && ok "run CSV: metadata lines, then the header" ||
  bad "run CSV: the first non-comment line is not the header"
# SI units where the model has them (pendulum3d: g = (|q|^2/l^2 - 1)/2 is
# dimensionless, so its multiplier is in J); none invented for four-particle
n=0
for kv in "unit.t = s" "unit.energy = J" "unit.momentum = J s" "unit.q1..q3 = m" "unit.v1..v3 = m/s" "unit.lambda1 = J" \
  "unit.gv_norm = 1/s"; do grep -qx "# $kv" alpha_run.csv && n=$((n + 1)); done
[ "$n" -eq 7 ] && ok "run CSV metadata: SI units of t, energy, momentum, q, v, lambda, |Gv|" ||
  bad "unit metadata: $(grep '^# unit' alpha_run.csv | tr '\n' ' ')"
"$L" run rigid-chain --param N=2 --scheme rattlie --step 0.01 --t-end 0.02 --out rc_run.csv >/dev/null 2>&1
[ "$(grep '^# unit\.[qv]' rc_run.csv | tr '\n' ' ')" = "# unit.q1..q3 = m # unit.q4..q12 = 1 # unit.q13..q15 = m # unit.q16..q24 = 1 \
# unit.v1..v3 = m/s # unit.v4..v6 = rad/s # unit.v7..v9 = m/s # unit.v10..v12 = rad/s " ] &&
  grep -qx '# unit.lambda1..lambda6 = N' rc_run.csv && ok "rigid chain: positions m, rotation entries 1, rad/s, joint forces N" ||
  bad "rigid-chain units: $(grep '^# unit' rc_run.csv | tr '\n' ' ')"
"$L" run four-particle --scheme rattle --step 0.01 --t-end 0.1 --out fp_run.csv >/dev/null 2>&1 && ! grep -q '^# unit' fp_run.csv &&
  ok "four-particle (no units in its data): no unit metadata" || bad "four-particle units: $(grep '^# unit' fp_run.csv)"
if [ -x $PY ] && $PY -c 'import numpy' 2>/dev/null; then
  # the recipe of doc/guide.md
  $PY -c '
import numpy, sys
d = numpy.genfromtxt([l for l in open(sys.argv[1]) if not l.startswith("#")], delimiter=",", names=True)
assert len(d) == 21 and abs(d["t"][-1] - 0.4) < 1e-12 and abs(d["energy"][0] - d["energy"][-1]) < 1e-2, d["t"]
' alpha_run.csv 2>err.txt && ok "numpy.genfromtxt on the non-comment lines reads the CSV: 21 rows to t = 0.4" ||
    bad "numpy reading the CSV: $(cat err.txt)"
else skip "no numpy in /usr/bin/python3"; fi
"$L" converge pendulum3d --scheme rattle --steps 0.04,0.02 --t-end 0.4 --out c.csv >/dev/null 2>err.txt &&
  grep -qx '# kind = convergence' c.csv && grep -qx '# scheme = rattle' c.csv && grep -qx '# ref_step = 0.00125' c.csv &&
  ok "convergence CSV metadata (kind, scheme, reference step)" || bad "convergence CSV metadata: $(head -5 c.csv)"

# --- overlay figures: titles and legends from the metadata, never file names
"$L" run pendulum3d --scheme vi-a --step 0.02 --t-end 0.4 --param l=2 --out beta_run.csv >sum2.txt 2>&1
"$L" run pendulum3d --scheme em --step 0.02 --t-end 0.4 --param l=2 --out gamma_run.csv >sum3.txt 2>&1
# the largest relative energy error of the three runs, from their summaries
emax=$(awk '$NF == "ok" && $2 + 0 > m { m = $2 + 0 } END { print m }' sum1.txt sum2.txt sum3.txt)
if command -v gnuplot >/dev/null 2>&1; then
  LIVENS_PLOT_KEEP_SCRIPT=ov.gp "$L" plot alpha_run.csv beta_run.csv gamma_run.csv --out ov.png >out.txt 2>err.txt; st=$?
  [ "$st" -eq 0 ] && [ "$(head -c 8 ov.png | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] &&
    [ "$(wc -c <ov.png)" -gt 20000 ] && ok "3 runs overlaid in one PNG" || bad "overlay PNG (status $st, $(cat err.txt))"
  grep -q "title 'pendulum3d, l = 2, h = 0.02, T = 0.4" ov.gp && ok "title from the metadata: shared model, parameter, h, T" ||
    bad "overlay title: $(grep multiplot ov.gp)"
  n=0
  # each legend starts with the scheme; options that differ follow (vi-a's
  # default Newton start is guess = auto, em's guess = taylor)
  for s in rattle vi-a em; do grep -q "title '$s[',]" ov.gp && n=$((n + 1)); done
  [ "$n" -eq 3 ] && ok "legends name the schemes (what differs between the runs)" || bad "legends: $(grep -c title ov.gp)"
  grep -q 'alpha_run\|beta_run\|gamma_run' ov.gp && bad "a file name reached the figure" || ok "no file name in the figure"
  grep -q 'noenhanced' ov.gp && ! grep -q ' enhanced' ov.gp && ok "noenhanced terminal: underscores stay" || bad "enhanced text"
  grep -q "^set key at screen" ov.gp && ok "legend outside the panels" || bad "legend placement"
  # the energy panel's log range: whole decades around the data
  rng=$(awk '/relative energy error/ { e = 1 } e && /^set yrange/ { print; exit }' ov.gp | tr -d '[]' | sed 's/set yrange //')
  lo=${rng%%:*}; hi=${rng##*:}
  awk -v lo="$lo" -v hi="$hi" -v e="$emax" 'BEGIN { exit !(lo > 0 && lo < e && e <= hi && hi <= 10 * e) }' &&
    ok "energy log range [$lo, $hi]: the decade above the largest error $emax" || bad "energy range '$rng' vs $emax"
  # formats by extension and by --format
  "$L" plot alpha_run.csv gamma_run.csv --out f.svg >/dev/null 2>err.txt && $PY -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' f.svg &&
    ok "SVG (well-formed XML)" || bad "SVG: $(cat err.txt)"
  "$L" plot alpha_run.csv gamma_run.csv --out f.pdf >/dev/null 2>err.txt && [ "$(head -c 5 f.pdf)" = "%PDF-" ] &&
    ok "PDF" || bad "PDF: $(cat err.txt)"
  "$L" plot alpha_run.csv gamma_run.csv --out f.tex >/dev/null 2>err.txt && head -n 1 f.tex | grep -q 'begin{tikzpicture}' &&
    grep -q '{rattle}' f.tex && grep -q '^\\end{tikzpicture}' f.tex && grep -q '{t \[s\]}' f.tex &&
    ok "LaTeX (TikZ) with the legend as text" || bad "LaTeX: $(cat err.txt)"
  # underscores in the legend (a parameter name) and title escaped for LaTeX;
  # a default value is named in a legend when the other run's differs
  "$L" run gyro-top --scheme rattle --t-end 0.01 --param omega_p=12 --out g12_run.csv >/dev/null 2>&1
  "$L" run gyro-top --scheme rattle --t-end 0.01 --out g10_run.csv >/dev/null 2>&1
  "$L" plot g12_run.csv g10_run.csv --out g.tex >/dev/null 2>err.txt && grep -q '{omega\\_p = 12}' g.tex &&
    grep -q '{omega\\_p = 10}' g.tex && ! grep -q 'omega_p\|g1[02]_run' g.tex && grep -q '\[J s\]' g.tex &&
    ok "LaTeX: legends 'omega\\_p = 12' and 'omega\\_p = 10' (underscore escaped, no file name)" ||
    bad "LaTeX underscores: $(grep -o '.\{12\}omega.\{12\}' g.tex | head -3) $(cat err.txt)"
  # and drawn literally in the other formats (enhanced text would make the p a subscript)
  "$L" plot g12_run.csv g10_run.csv --out g.svg >/dev/null 2>err.txt && grep -q '>omega_p = 12<' g.svg &&
    grep -q '>omega_p = 10<' g.svg && ok "SVG: the legend 'omega_p = 12' drawn as written" ||
    bad "SVG underscores: $(grep -o '.\{20\}omega.\{20\}' g.svg | head -2) $(cat err.txt)"
  # one colour per run
  [ "$(grep "^plot 'd0.txt' using 1:2 " ov.gp | grep -o "lc rgb '#[0-9A-F]*'" | sort -u | wc -l)" -eq 3 ] &&
    ok "one colour per run (3 runs, 3 colours)" || bad "colours: $(grep "^plot 'd0.txt' using 1:2 " ov.gp)"
  # a thinned CSV says so, in its metadata and in the figure's title
  "$L" run pendulum3d --scheme rattle --step 0.01 --t-end 0.4 --every 5 --out ev5_run.csv >/dev/null 2>&1 &&
    LIVENS_PLOT_KEEP_SCRIPT=ev5.gp "$L" plot ev5_run.csv --out ev5.png >/dev/null 2>&1 && grep -qx '# every = 5' ev5_run.csv &&
    [ "$(data ev5_run.csv | sed 1d | wc -l)" -eq 9 ] && grep -q "title '.*every n-th step, n = 5'" ev5.gp &&
    grep -q "title 'rattle'" ev5.gp && ! grep -q "title 'run 1'" ev5.gp &&
    ok "--every 5: 9 rows, '# every = 5' and 'every n-th step, n = 5' in the title; a lone run's legend is its scheme" || bad "--every in metadata/title"
  if command -v pdflatex >/dev/null 2>&1 && kpsewhich gnuplot-lua-tikz.sty >/dev/null 2>&1; then
    printf '\\documentclass{article}\\usepackage{gnuplot-lua-tikz}\\begin{document}\\input{g.tex}\\end{document}\n' >doc.tex
    pdflatex -interaction=nonstopmode -no-shell-escape doc.tex >latex.log 2>&1 && [ -s doc.pdf ] &&
      ok "pdflatex compiles the figure" || bad "pdflatex: $(grep '^!' latex.log | head -3)"
  else skip "no pdflatex with gnuplot-lua-tikz.sty: the LaTeX figure is not compiled"; fi
  "$L" plot alpha_run.csv --format svg --out f.figure >/dev/null 2>err.txt && grep -q '<svg' f.figure &&
    ok "--format svg with any output name" || bad "--format svg: $(cat err.txt)"
  "$L" plot alpha_run.csv >/dev/null 2>err.txt && [ -s alpha_run.png ] && ok "default output: the first CSV's name as .png" ||
    bad "default output name"
  # any column against t, signed
  LIVENS_PLOT_KEEP_SCRIPT=y.gp "$L" plot alpha_run.csv beta_run.csv --y lam1,q3,v1,energy --out y.png >/dev/null 2>err.txt &&
    [ -s y.png ] && grep -q "^set title 'lam1" y.gp && grep -q "^set title 'v1" y.gp && ! grep -q logscale y.gp &&
    ok "--y lam1,q3,v1,energy: one panel each, linear (signed) axes" || bad "--y: $(cat err.txt)"
  # units in the labels: from the metadata, never invented
  grep -q "^set xlabel 't \[s\]'" y.gp && grep -q "^set title 'energy \[J\]'" y.gp && grep -q "^set title 'lam1 \[J\]'" y.gp &&
    grep -q "^set title 'q3 \[m\]'" y.gp && grep -q "^set title 'v1 \[m/s\]'" y.gp && grep -q "^set xlabel 't \[s\]'" ov.gp &&
    grep -q "^set title 'momentum maps .* \[J s\]'" ov.gp && ok "units in the labels: t [s], energy [J], lam1 [J], q3 [m], v1 [m/s], J_k [J s]" ||
    bad "units in labels: $(grep -h 'title\|label' y.gp ov.gp | cut -c1-60)"
  LIVENS_PLOT_KEEP_SCRIPT=fp.gp "$L" plot fp_run.csv --y energy,q1 --out fp.png >/dev/null 2>&1 &&
    LIVENS_PLOT_KEEP_SCRIPT=fp2.gp "$L" plot fp_run.csv --out fp2.png >/dev/null 2>&1 &&
    LIVENS_PLOT_KEEP_SCRIPT=mix.gp "$L" plot alpha_run.csv fp_run.csv --y energy --out mix.png >/dev/null 2>&1 &&
    [ "$(grep -h '^set \(title\|xlabel\)' fp.gp fp2.gp mix.gp | grep -c '\[')" -eq 0 ] &&
    grep -q "^set title 'energy'" mix.gp && ok "no unit for a model without units, nor for a mix of models" ||
    bad "invented units: $(grep -h '^set \(title\|xlabel\)' fp.gp fp2.gp mix.gp | grep '\[')"
  # convergence: several schemes, fitted orders in the legend, slopes 1-4
  "$L" converge pendulum3d --scheme vi-a --steps 0.04,0.02 --t-end 0.4 --out c2.csv >/dev/null 2>&1
  LIVENS_PLOT_KEEP_SCRIPT=c.gp "$L" plot c.csv c2.csv --out c.png >/dev/null 2>err.txt && [ -s c.png ] &&
    grep -q "title 'rattle (order q 2\.[0-9][0-9], v" c.gp && grep -q "title 'vi-a (order q" c.gp &&
    grep -q "^set xlabel 'step size h \[s\]'" c.gp && grep -q "^set title 'error in q at the end \[m\]'" c.gp &&
    [ "$(grep -o "title 'slope [1-4]'" c.gp | sort -u | wc -l)" -eq 4 ] &&
    ok "convergence overlay: fitted orders in the legend, reference slopes 1-4" || bad "convergence overlay: $(cat err.txt)"
else skip "gnuplot is not installed: figure tests"; fi
expect_usage "plot --out x.bmp" plot alpha_run.csv --out x.bmp
expect_usage "plot --format gif" plot alpha_run.csv --format gif
expect_usage "plot --y nosuch" plot alpha_run.csv --y nosuch
expect_usage "plot of a run and a convergence CSV" plot alpha_run.csv c.csv
expect_usage "plot --format png --out beta_run.csv (an input)" plot alpha_run.csv beta_run.csv --format png --out beta_run.csv
grep -q "is the CSV file 'beta_run.csv' itself" err.txt || bad "plot onto an input: not refused as the input"

# --- run --summary FILE.json: the summary as JSON, for scripts
if [ -x $PY ]; then
  "$L" run pendulum3d --scheme rattle --step 0.02 --t-end 0.4 --param l=2 --summary s.json >out.txt 2>err.txt &&
    $PY -c '
import json, sys
d = json.load(open(sys.argv[1]))
row = [l.split() for l in open(sys.argv[2]) if l.startswith("rattle ") and l.split()[-1] == "ok"][0]
assert d["model"] == "pendulum3d" and d["scheme"] == "rattle" and d["status"] == "ok", d
assert d["params"]["l"] == "2" and d["params"]["m"] == "1", d["params"]
assert d["h"] == 0.02 and d["steps"] == 20 and abs(d["t_final"] - 0.4) < 1e-12, (d["h"], d["steps"], d["t_final"])
# the same figures as the printed table (4 significant digits there)
for i, k in ((1, "max_rel_energy_error"), (4, "max_g"), (5, "max_gv")):
    assert abs(d[k] - float(row[i])) <= 1e-3 * abs(d[k]) + 1e-300, (k, d[k], row[i])
' s.json out.txt 2>err.txt && ok "run --summary: JSON with the model, parameters, status and the printed figures" ||
    bad "run --summary: $(cat err.txt)"
  # a failed run writes its status too (heavy top, genalpha, h = 0.01: Newton fails at t = 0.25)
  "$L" run heavy-top --scheme genalpha --step 0.01 --t-end 1 --summary f.json >/dev/null 2>&1; st=$?
  [ "$st" -eq 1 ] && $PY -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["status"] == "LV_ENEWTON" and d["t_final"] < 1' f.json &&
    ok "a failed run's JSON summary names its status (LV_ENEWTON) and where it stopped" || bad "failed run summary (status $st)"
  expect_usage "--summary onto --out" run pendulum3d --t-end 0.1 --out same.x --summary same.x

  # --- compare --out CSV and JSON
  "$L" compare pendulum3d --schemes rattle,em --step 0.02 --t-end 0.4 --out cmp.csv >out.txt 2>err.txt &&
    [ "$(data cmp.csv | head -n 1 | cut -d, -f1-3)" = "scheme,max_rel_energy_error,energy_drift_rate" ] &&
    [ "$(data cmp.csv | sed 1d | cut -d, -f1 | tr '\n' ' ')" = "rattle em " ] && grep -qx '# kind = compare' cmp.csv &&
    grep -qx '# schemes = rattle,em' cmp.csv && ok "compare --out CSV: metadata, one row per scheme" || bad "compare CSV: $(cat err.txt)"
  "$L" compare pendulum3d --schemes rattle,em --step 0.02 --t-end 0.4 --out cmp.json >out.txt 2>err.txt &&
    $PY -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [r["scheme"] for r in d["runs"]] == ["rattle", "em"] and all(r["status"] == "ok" for r in d["runs"])
# EM conserves energy to the Newton tolerance, RATTLE does not
assert d["runs"][1]["max_rel_energy_error"] < 1e-9 < d["runs"][0]["max_rel_energy_error"], d
' cmp.json 2>err.txt && ok "compare --out JSON: one summary per scheme (EM conserves energy, RATTLE not)" ||
    bad "compare JSON: $(cat err.txt)"
  expect_usage "compare --out x.txt" compare pendulum3d --schemes rattle --out x.txt
  if command -v gnuplot >/dev/null 2>&1; then
    LIVENS_PLOT_KEEP_SCRIPT=cmp.gp "$L" compare pendulum3d --schemes rattle,vi-a,em --step 0.02 --t-end 0.4 --plot cmp.svg \
      >out.txt 2>err.txt && grep -q '<svg' cmp.svg && grep -q "title 'pendulum3d, h = 0.02, T = 0.4'" cmp.gp &&
      [ "$(grep -c "title 'rattle'\|title 'vi-a'\|title 'em'" cmp.gp)" -ge 1 ] && grep -q "^wrote cmp.svg" out.txt &&
      ok "compare --plot: one overlay figure of the schemes" || bad "compare --plot: $(cat err.txt)"
  fi
  expect_usage "compare --plot x.gif" compare pendulum3d --schemes rattle --plot x.gif

  # --- converge with several schemes: fitted orders in stdout, CSV metadata and JSON
  "$L" converge pendulum3d --schemes rattle,em --steps 0.04,0.02,0.01 --t-end 0.4 --out cv.csv >out.txt 2>err.txt &&
    data cv.csv | head -n 1 | grep -qx 'h,err_q.rattle,err_v.rattle,err_lambda.rattle,err_q.em,err_v.em,err_lambda.em' &&
    ok "converge --schemes: one column per scheme and component" || bad "converge --schemes CSV: $(cat err.txt)"
  for s in rattle em; do
    p=$(sed -n "s/^fitted order of $s: q \([0-9.]*\).*/\1/p" out.txt)
    m=$(sed -n "s/^# order.$s.q = //p" cv.csv)
    awk -v p="$p" -v m="$m" 'BEGIN { exit !(p > 1.9 && p < 2.1 && (m - p) < 5e-4 && (p - m) < 5e-4) }' &&
      ok "converge: $s order in q $p (printed), $m (CSV metadata)" || bad "converge $s order '$p' / '$m'"
  done
  "$L" converge pendulum3d --schemes rattle,em --steps 0.04,0.02,0.01 --t-end 0.4 --out cv.json >/dev/null 2>&1 &&
    $PY -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["h"] == [0.04, 0.02, 0.01] and [s["scheme"] for s in d["schemes"]] == ["rattle", "em"]
for s in d["schemes"]:
    assert 1.9 < s["order"]["q"] < 2.1 and len(s["err_q"]) == 3, s
' cv.json 2>err.txt && ok "converge --out JSON: errors and fitted orders per scheme" || bad "converge JSON: $(cat err.txt)"
  if command -v gnuplot >/dev/null 2>&1; then
    LIVENS_PLOT_KEEP_SCRIPT=cv.gp "$L" plot cv.csv --out cv.pdf >/dev/null 2>err.txt && grep -q "title 'rattle (order q 2" cv.gp &&
      grep -q "title 'em (order q 2" cv.gp && ok "plot of a several-scheme convergence CSV: one line per scheme" ||
      bad "plot cv.csv: $(cat err.txt)"
  fi
else skip "no /usr/bin/python3: JSON checks"; fi
# an independent reference: RATTLE and VI-A against EM at a 20 times finer step
"$L" converge pendulum3d --schemes rattle,vi-a --ref-scheme em --ref-step 0.0005 --steps 0.04,0.02,0.01 --t-end 0.4 \
  --out rs.csv >out.txt 2>err.txt && grep -qx '# ref_scheme = em' rs.csv &&
  p=$(sed -n 's/^fitted order of rattle: q \([0-9.]*\).*/\1/p' out.txt) &&
  awk -v p="$p" 'BEGIN { exit !(p > 1.9 && p < 2.1) }' && grep -q 'against em with h = 0.0005' out.txt &&
  ok "converge --ref-scheme em: RATTLE's order in q against EM is $p" || bad "--ref-scheme: $(cat out.txt err.txt)"
# errors as the maximum over each run's steps: never below the error at the end, same order
"$L" converge pendulum3d --scheme rattle --steps 0.04,0.02,0.01 --t-end 1 --out ce.csv >end.txt 2>&1
"$L" converge pendulum3d --scheme rattle --steps 0.04,0.02,0.01 --t-end 1 --error max --out cm2.csv >out.txt 2>err.txt &&
  p=$(sed -n 's/^fitted order: q \([0-9.]*\).*/\1/p' out.txt) && awk -v p="$p" 'BEGIN { exit !(p > 1.9 && p < 2.1) }' &&
  paste -d, ce.csv cm2.csv | grep -v '^#' | sed 1d | awk -F, '{ for (i = 2; i <= 4; i++) if ($(i + 4) < $i) exit 1 }' &&
  grep -q '^# error = max over' cm2.csv &&
  ok "converge --error max: errors >= those at t_end in q, v, lambda; RATTLE order $p" || bad "--error max: $(cat out.txt err.txt)"
if command -v gnuplot >/dev/null 2>&1; then
  LIVENS_PLOT_KEEP_SCRIPT=cm2.gp "$L" plot cm2.csv --out cm2.png >/dev/null 2>&1 &&
    grep -q "^set title 'maximum error in q over the run \[m\]'" cm2.gp && ! grep -q 'at the end' cm2.gp &&
    ok "the plot of a --error max table says 'maximum error ... over the run'" || bad "--error max plot titles: $(grep title cm2.gp)"
fi
expect_usage "--error max with steps that are not multiples of the reference step" converge pendulum3d --scheme rattle \
  --steps 0.03,0.02 --t-end 0.42 --error max --ref-step 0.007
expect_usage "--error sometimes" converge pendulum3d --scheme rattle --steps 0.04,0.02 --error sometimes
expect_usage "converge --ref-scheme unknown" converge pendulum3d --scheme rattle --ref-scheme nope --steps 0.04,0.02
expect_usage "converge --scheme and --schemes" converge pendulum3d --scheme rattle --schemes em --steps 0.04,0.02
expect_usage "converge --schemes with a repeated scheme" converge pendulum3d --schemes em,em --steps 0.04,0.02

# --- converge --reference FILE.csv: the reference from a CSV (a livens run
# CSV of the same model, or any CSV with t and the state columns)
"$L" run pendulum3d --scheme genalpha --step 0.000625 --t-end 0.4 --param l=2 --out gref.csv >/dev/null 2>&1
"$L" converge pendulum3d --param l=2 --scheme genalpha --steps 0.04,0.02,0.01 --t-end 0.4 --reference gref.csv \
  --out cref.csv >out.txt 2>err.txt &&
  "$L" converge pendulum3d --param l=2 --scheme genalpha --steps 0.04,0.02,0.01 --t-end 0.4 --out cown.csv >/dev/null 2>&1 &&
  [ "$(data cref.csv)" = "$(data cown.csv)" ] && grep -qx '# reference = gref.csv' cref.csv &&
  grep -qx '# ref_scheme = genalpha' cref.csv && grep -q '^# ref_step = 0.00062500' cref.csv &&
  grep -q 'against the reference gref.csv (genalpha, h = 0.000625)' out.txt &&
  ok "converge --reference: a CSV of the fine run gives the built-in reference's errors bit for bit" ||
  bad "--reference against the built-in reference: $(cat out.txt err.txt)"
p=$(sed -n 's/^fitted order: q \([0-9.-]*\), v \([0-9.-]*\).*/\1 \2/p' out.txt)
echo "$p" | awk '{ exit !($1 > 1.95 && $1 < 2.05 && $2 > 1.95 && $2 < 2.05) }' &&
  ok "converge genalpha against a reference CSV: fitted orders q, v = $p" || bad "genalpha orders against the CSV: '$p'"
[ -x $PY ] && "$L" converge pendulum3d --param l=2 --scheme genalpha --steps 0.04,0.02,0.01 --t-end 0.4 --reference gref.csv \
  --out cref.json >/dev/null 2>&1 && $PY -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["reference"] == "gref.csv" and d["ref_scheme"] == "genalpha" and d["ref_step"] == 0.000625, d
assert 1.95 < d["schemes"][0]["order"]["q"] < 2.05, d
' cref.json 2>err.txt && ok "converge --reference --out JSON: the reference file, its scheme and step" ||
  { [ -x $PY ] && bad "reference JSON: $(cat err.txt)"; }
# a user's CSV: no metadata, columns in another order, spaces, an extra
# column, no lambda; only every 16th row (--error max over the common times)
"$L" run pendulum3d --scheme vi-a --step 0.000625 --t-end 0.4 --param l=2 --out vref.csv >/dev/null 2>&1
data vref.csv | awk -F, 'NR == 1 { print "t, v1, v2, v3, q1, q2, q3, note"; next }
  (NR - 2) % 16 == 0 { printf "%s, %s, %s, %s, %s, %s, %s, x\n", $1, $5, $6, $7, $2, $3, $4 }' >user.csv
"$L" converge pendulum3d --param l=2 --scheme vi-a --steps 0.04,0.02,0.01 --t-end 0.4 --reference user.csv --error max \
  --out cu.csv >out.txt 2>err.txt && [ "$(data cu.csv | head -n 1)" = "h,err_q,err_v" ] &&
  grep -qx '# ref_scheme = unknown' cu.csv && grep -q 'no lambda columns' out.txt &&
  p=$(sed -n 's/^fitted order: q \([0-9.-]*\).*/\1/p' out.txt) && awk -v p="$p" 'BEGIN { exit !(p > 1.9 && p < 2.1) }' &&
  ok "converge vi-a --error max against a user CSV (no metadata, reordered, thinned, no lambda): order in q $p" ||
  bad "--reference user CSV: $(cat out.txt err.txt)"
# the thinned reference: the maximum over the shared times, at most the
# maximum over every step against the full reference (and here equal to it)
"$L" converge pendulum3d --param l=2 --scheme vi-a --steps 0.04,0.02,0.01 --t-end 0.4 --reference vref.csv --error max \
  --out cf.csv >/dev/null 2>&1 && data cu.csv >cu.txt && data cf.csv >cf.txt &&
  paste -d, cu.txt cf.txt | sed 1d | awk -F, '{ if ($2 > $5 || $3 > $6 || $2 < 0.5 * $5) exit 1 }' &&
  ok "the thinned reference's maximum: at most, and close to, the full reference's" || bad "thinned max: $(paste cu.txt cf.txt)"
# wrong references: one sentence each, exit status 2
"$L" converge pendulum3d --scheme rattle --steps 0.04,0.02 --t-end 0.4 --out cv2.csv >/dev/null 2>&1
data user.csv | sed '1s/, q3//; s/, [^,]*, x$/, x/' >noq3.csv
{ data gref.csv | head -n 1 | sed 's/^t,/t,q4,/'; data gref.csv | sed 1d | sed 's/^\([^,]*\),/\1,0,/'; } >q4.csv
sed 's/^0.2,/0.2,abc,/' user.csv | awk -F, 'NR == 5 { $2 = " nan" } 1' OFS=, >nan.csv
expect_usage "--reference of another model" converge chain --scheme rattle --steps 0.04,0.02 --t-end 0.4 --reference gref.csv
expect_usage "--reference with another parameter" converge pendulum3d --scheme rattle --steps 0.04,0.02 --t-end 0.4 --reference gref.csv
grep -q 'computed with l = 2, this study uses l = 1' err.txt || bad "the parameter sentence: $(cat err.txt)"
expect_usage "--reference of a convergence CSV" converge pendulum3d --scheme rattle --steps 0.04,0.02 --t-end 0.4 --reference cv2.csv
expect_usage "--reference without q3" converge pendulum3d --param l=2 --scheme rattle --steps 0.04,0.02 --t-end 0.4 --reference noq3.csv
expect_usage "--reference with a column q4 (another model's)" converge pendulum3d --param l=2 --scheme rattle --steps 0.04,0.02 \
  --t-end 0.4 --reference q4.csv
expect_usage "--reference with a field 'nan'" converge pendulum3d --param l=2 --scheme rattle --steps 0.04,0.02 --t-end 0.4 \
  --reference nan.csv
expect_usage "--reference without a row at t_end" converge pendulum3d --param l=2 --scheme rattle --steps 0.04,0.02 \
  --t-end 0.5 --reference gref.csv
expect_usage "a step not larger than the reference's" converge pendulum3d --param l=2 --scheme rattle --steps 0.04,0.000625 \
  --t-end 0.4 --reference gref.csv
expect_usage "--reference and --ref-step" converge pendulum3d --param l=2 --scheme rattle --steps 0.04,0.02 --t-end 0.4 \
  --reference gref.csv --ref-step 0.001
expect_usage "--reference that does not exist" converge pendulum3d --scheme rattle --steps 0.04,0.02 --reference nosuch.csv
expect_usage "--reference in run" run pendulum3d --reference gref.csv
# on a Lie group (R^3 x SO(3)): the configuration error through the logarithm of the CSV's rotation matrices
"$L" run heavy-top --scheme genalpha --step 0.000125 --t-end 0.1 --out htref.csv >/dev/null 2>&1
"$L" converge heavy-top --scheme genalpha --steps 0.004,0.002 --t-end 0.1 --ref-step 0.000125 --out ht1.csv >/dev/null 2>&1 &&
  "$L" converge heavy-top --scheme genalpha --steps 0.004,0.002 --t-end 0.1 --reference htref.csv --out ht2.csv >/dev/null 2>&1 &&
  [ "$(data ht1.csv)" = "$(data ht2.csv)" ] && ok "heavy top (R^3 x SO(3)) against its reference CSV: the built-in errors bit for bit" ||
  bad "heavy-top --reference: $(data ht1.csv) / $(data ht2.csv)"

# --- output at chosen times; the final state always written
"$L" run pendulum3d --scheme rattle --step 0.01 --t-end 1 --output-dt 0.25 --out od.csv >od.txt 2>err.txt &&
  [ "$(data od.csv | sed 1d | cut -d, -f1 | tr '\n' ' ')" = "0 0.25 0.5 0.75 1 " ] && grep -qx '# output_dt = 0.25' od.csv &&
  ok "--output-dt 0.25: rows at t = 0, 0.25, 0.5, 0.75, 1 and the metadata says so" ||
  bad "--output-dt: $(data od.csv | cut -d, -f1 | tr '\n' ' ') $(cat err.txt)"
"$L" run pendulum3d --scheme rattle --step 0.01 --t-end 1 >all.txt 2>&1
[ "$(grep '^rattle ' od.txt | awk '{ print $2, $5, $6 }')" = "$(grep '^rattle ' all.txt | awk '{ print $2, $5, $6 }')" ] &&
  ok "--output-dt thins the CSV, not the summary (same max|dE|/E0, |g|, |Gv| as every step)" || bad "summary with --output-dt"
# h = 0.03: the step nearest each time, then the final state at 0.99
"$L" run pendulum3d --scheme rattle --step 0.03 --t-end 1 --output-times 0.1,0.5 --out ot.csv >/dev/null 2>err.txt &&
  numeq "$(data ot.csv | sed 1d | cut -d, -f1 | tr '\n' ' ')" "0 0.09 0.51 0.99" &&
  ok "--output-times 0.1,0.5 with h = 0.03: t = 0, 0.09, 0.51 (nearest steps) and the final 0.99" ||
  bad "--output-times: $(data ot.csv | cut -d, -f1 | tr '\n' ' ') $(cat err.txt)"
printf '[run]\nmodel = pendulum3d\nscheme = rattle\nt-end = 1\noutput-dt = 0.5\nout = odf.csv\nsummary = odf.json\n' >od.ini
"$L" run od.ini >/dev/null 2>err.txt && [ "$(data odf.csv | sed 1d | wc -l)" -eq 3 ] && [ -s odf.json ] &&
  ok "run file: output-dt and summary keys" || bad "run file output-dt/summary: $(cat err.txt)"
expect_usage "--output-times decreasing" run pendulum3d --output-times 0.5,0.2 --out x.csv
expect_usage "--output-times after t-end" run pendulum3d --t-end 1 --output-times 2 --out x.csv
expect_usage "--output-times not a number" run pendulum3d --output-times 0.1,soon --out x.csv
expect_usage "--output-dt 0" run pendulum3d --output-dt 0 --out x.csv

# --- run files in compare, converge and check (the command line overrides them)
printf '[run]\nmodel = pendulum3d\nstep = 0.02\nt-end = 0.4\nout = rf.csv\n[param]\nl = 2\n' >rf.ini
"$L" compare rf.ini --schemes rattle,em >out.txt 2>err.txt && head -n 1 out.txt | grep -q '^pendulum3d, h = 0.02, t = \[0, 0.4\]' &&
  grep -qx '# param.l = 2' rf.csv && [ "$(data rf.csv | sed 1d | cut -d, -f1 | tr '\n' ' ')" = "rattle em " ] &&
  ok "compare FILE.ini: model, parameters, h, T and the table's file from the run file" || bad "compare run file: $(cat err.txt)"
"$L" converge rf.ini --scheme rattle --steps 0.04,0.02 --out rfc.csv >out.txt 2>err.txt && grep -qx '# param.l = 2' rfc.csv &&
  grep -q 'errors at t = 0.4 ' out.txt && ok "converge FILE.ini (--out overrides the file's)" || bad "converge run file: $(cat err.txt)"
"$L" check rf.ini >out.txt 2>err.txt && grep -q 'agree with finite differences' out.txt && ok "check FILE.ini" ||
  bad "check run file: $(cat err.txt)"
expect_usage "compare with a run file whose out is itself" compare rf.ini --schemes rattle --out rf.ini

# --- per-model defaults: the issue's case, and every model under every
# scheme that accepts it, with neither --step nor --t-end
"$L" run heavy-top --scheme genalpha >out.txt 2>err.txt && head -n 1 out.txt | grep -q 'h = 0.001, t = \[0, 1\]' &&
  ok "livens run heavy-top --scheme genalpha: runs with the model's defaults (h = 0.001, T = 1)" ||
  bad "heavy-top genalpha defaults: $(head -n 1 out.txt) $(cat err.txt)"
"$L" list | grep -A1 '^  heavy-top ' | grep -q 'default: --step 0.001 --t-end 1$' && ok "list shows the defaults" ||
  bad "list defaults"
# documented exceptions (src/cli/common.c): these stop, with a sentence
# (none since heavy-top-ep has exact derivatives: BLieDF's start-up no
# longer fails on it)
known_bad=" "
models=$("$L" list | sed -n '/^Models/,/^Schemes/p' | awk '/^  [a-z]/ { print $1 }')
schemes=$("$L" list | sed -n '/^Schemes/,$p' | awk '/^  [a-z]/ { print $1 }')
nrun=0; nbad=0
for m in $models; do for s in $schemes; do
  timeout 120 "$L" run "$m" --scheme "$s" >out.txt 2>err.txt; st=$?
  [ "$st" -eq 2 ] && grep -q "cannot run model" err.txt && continue
  nrun=$((nrun + 1))
  case "$known_bad" in
    *" $m:$s "*) [ "$st" -eq 1 ] || { bad "$m/$s at the defaults: status $st, documented as failing"; nbad=$((nbad + 1)); } ;;
    *) [ "$st" -eq 0 ] || { bad "$m/$s at the defaults: status $st, $(cat err.txt)"; nbad=$((nbad + 1)); } ;;
  esac
done; done
[ "$nbad" -eq 0 ] && [ "$nrun" -gt 50 ] && ok "defaults: $nrun model/scheme pairs run to their end (4 documented exceptions stop)" ||
  bad "defaults: $nbad of $nrun pairs wrong"

# --- a compiled model plugin (examples/plugin_model.c, built by make check)
P="$(dirname "$L")/examples/.libs/libplugin_model.so"
if [ -f "$P" ]; then
  "$L" run paraboloid --model-lib "$P" --scheme em --param g=3.7 --step 0.01 --t-end 5 --out pl.csv >out.txt 2>err.txt &&
    awk '$1 == "em" && $NF == "ok" { e = $2 + 0 } END { exit !(e > 0 && e < 1e-9) }' out.txt &&
    grep -qx '# model = paraboloid' pl.csv && grep -qx '# param.g = 3.7' pl.csv && grep -qx '# param.vy0 = 2' pl.csv &&
    ok "plugin model: EM conserves its energy (max|dE|/E0 $(awk '$1 == "em" && $NF == "ok" { print $2 }' out.txt)), metadata with its parameters" ||
    bad "plugin run: $(cat out.txt err.txt)"
  "$L" run paraboloid --model-lib "$P" --scheme rattle --param g=3.7 --step 0.01 --t-end 5 --out pl2.csv >/dev/null 2>&1
  expect_usage "plugin parameter refused by the plugin" run paraboloid --model-lib "$P" --param g=-1
  grep -q "refuses g = -1 (g: gravity (m/s^2), >= 0)" err.txt && ok "the plugin's refusal names the parameter with its documentation" ||
    bad "plugin refusal: $(cat err.txt)"
  expect_usage "unknown plugin parameter" run paraboloid --model-lib "$P" --param k=1
  "$L" check paraboloid --model-lib "$P" >out.txt 2>&1 && grep -q 'agree with finite differences' out.txt &&
    grep -q '^not supplied, formed by finite differences: Hessian of V, constraint Jacobian G, ' out.txt &&
    grep -q 'Exact conservation needs exact derivatives' out.txt &&
    ok "check on the plugin model names what it leaves to finite differences" || bad "plugin check: $(cat out.txt)"
  "$L" check pendulum3d >out.txt 2>&1 && ! grep -q 'not supplied' out.txt && ok "check: pendulum3d supplies every derivative" ||
    bad "check pendulum3d: $(cat out.txt)"
  "$L" converge paraboloid --model-lib "$P" --schemes rattle,em --steps 0.04,0.02,0.01 --t-end 1 >out.txt 2>err.txt &&
    p=$(sed -n 's/^fitted order of rattle: q \([0-9.]*\).*/\1/p' out.txt) &&
    awk -v p="$p" 'BEGIN { exit !(p > 1.9 && p < 2.1) }' && ok "converge on the plugin model: RATTLE order $p" ||
    bad "plugin converge: $(cat out.txt err.txt)"
  "$L" compare paraboloid --model-lib "$P" --schemes rattle,em --t-end 1 --out plc.json >/dev/null 2>err.txt &&
    ok "compare on the plugin model" || bad "plugin compare: $(cat err.txt)"
  if command -v gnuplot >/dev/null 2>&1; then
    LIVENS_PLOT_KEEP_SCRIPT=pl.gp "$L" plot pl.csv pl2.csv --model-lib "$P" --out pl.png >/dev/null 2>err.txt &&
      grep -q "title 'paraboloid, g = 3.7, h = 0.01, T = 5'" pl.gp &&
      ok "plot with the plugin's defaults: only the changed parameter in the title" || bad "plugin plot: $(grep multiplot pl.gp) $(cat err.txt)"
  fi
  # a hostile free-text parameter end to end: run (CSV metadata, JSON), plot
  evil="x'; system('touch PWNED_P'); a='\"q\" \\ \`touch PWNED_Q\` @m _{x} </text>
set output '|touch PWNED_R'"
  "$L" run paraboloid --model-lib "$P" --scheme rattle --param "label=$evil" --t-end 0.5 --out ev.csv --summary ev.json \
    >/dev/null 2>err.txt; st=$?
  "$L" run paraboloid --model-lib "$P" --scheme em --param "label=$evil" --t-end 0.5 --out ev2.csv >/dev/null 2>&1
  n=$(grep -c '^# param.label = ' ev.csv); rows=$(data ev.csv | awk -F, 'NF != 13' | wc -l)
  [ "$st" -eq 0 ] && [ "$n" -eq 1 ] && [ "$rows" -eq 0 ] && grep -qF '\\ `touch PWNED_Q` @m _{x} </text>\nset output' ev.csv &&
    ok "a label with quotes, a backslash and a newline: one escaped metadata line, every data row intact" ||
    bad "hostile label in the CSV: status $st, $n label lines, $rows bad rows, $(cat err.txt)"
  $PY -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["params"]["label"] == sys.argv[2], d["params"]["label"]' \
    ev.json "$evil" 2>err.txt && ok "the JSON summary gives the label back exactly" || bad "hostile label in JSON: $(cat err.txt)"
  if command -v gnuplot >/dev/null 2>&1; then
    for fmt in png svg tex; do
      LIVENS_PLOT_KEEP_SCRIPT=ev.gp "$L" plot ev.csv ev2.csv --model-lib "$P" --out "ev.$fmt" >/dev/null 2>err.txt; st=$?
      [ "$st" -eq 0 ] && [ -s "ev.$fmt" ] && ! ls PWNED_* >/dev/null 2>&1 && [ "$(grep -cvE "^(cd|set|unset|plot) " ev.gp)" -eq 0 ] &&
        grep -q "system(''touch PWNED" ev.gp && ok "the label in a $fmt figure title: drawn as text, no command ran" ||
        bad "hostile label plot $fmt: status $st, $(ls PWNED_* 2>/dev/null), $(cat err.txt)"
    done
  fi
  printf '[run]\nmodel = paraboloid\nmodel-lib = %s\nscheme = rattle\nt-end = 0.5\n' "$P" >pl.ini
  "$L" run pl.ini >out.txt 2>err.txt && grep -q '^rattle .* ok$' out.txt && ok "run file with model-lib" || bad "run file model-lib: $(cat err.txt)"
  expect_usage "--model-lib of a file that is no library" run paraboloid --model-lib ./pl.csv
  grep -q "cannot load model library './pl.csv'" err.txt || bad "non-library: $(cat err.txt)"
  lib=$(ls "$(dirname "$L")"/.libs/liblivens.so 2>/dev/null | head -n 1)
  if [ -n "$lib" ]; then
    expect_usage "--model-lib without livens_model_plugin" run paraboloid --model-lib "$lib"
    grep -q "does not export livens_model_plugin" err.txt || bad "library without the symbol: $(cat err.txt)"
  fi
else skip "the example plugin is not built ('make check' builds examples/libplugin_model.la)"; fi

[ "$fails" -eq 0 ] || { echo "$fails study check(s) failed"; exit 1; }
