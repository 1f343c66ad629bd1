#!/bin/sh
# The livens program, as a user meets it: every subcommand on a small case,
# wrong input (exit 2, one sentence on stderr), plots, run files, Ctrl-C.
set -u
. "${srcdir:-.}/tests/cli_lib.sh"

# --- run: CSV columns and a parsable summary
if "$L" run pendulum3d --scheme rattle --step 0.01 --t-end 1 --out run.csv >out.txt 2>err.txt; then
  data run.csv | head -n 1 | grep -q '^t,q1,q2,q3,v1,v2,v3,lambda1,energy,momentum1,g_norm,gv_norm,newton_iters$' &&
    [ "$(data run.csv | wc -l)" -eq 102 ] && head -n 1 run.csv | grep -q '^# livens = ' && ok "run writes header + 101 rows" || bad "run CSV shape"
  data run.csv | awk -F, 'NR > 1 && NF != 13 { exit 1 }' && ok "every CSV row complete" || bad "CSV row width"
  # the summary row: every numeric field parses as a number
  awk '$1 == "rattle" && $NF == "ok" { for (i = 2; i <= 9; i++) if ($i + 0 != $i + 0 || $i !~ /^[-+0-9.eE]+$/) exit 1; found = 1 }
       END { exit !found }' out.txt && ok "run summary numbers parse" || bad "run summary: $(cat out.txt)"
else bad "run exits non-zero: $(cat err.txt)"; fi

# --- sparse back-ends by name
"$L" run chain --param N=20 --scheme rattle --linsol klu --t-end 0.1 >out.txt 2>err.txt &&
  grep -q '^rattle ' out.txt && ok "run with --linsol klu" || bad "--linsol klu: $(cat err.txt)"
expect_usage "unknown linear solver" run pendulum3d --linsol superlu
grep -q "auto, dense, umfpack, klu or sparse" err.txt && ok "the --linsol refusal lists sparse" || bad "refusal: $(cat err.txt)"
# the automatic path on a large chain: the sparse choice is named with its figure
"$L" run chain --param N=100 --scheme rattle --t-end 0.05 >out.txt 2>err.txt &&
  grep -q '^linear solver klu, chosen for [0-9.]* predicted flops per factor entry' out.txt &&
  ok "auto picks KLU on the chain and says why" || bad "auto on chain N=100: $(cat out.txt err.txt)"
expect_usage "unknown Newton kind" run pendulum3d --newton quasi
"$L" run heavy-top --scheme genalpha --step 1e-3 --t-end 0.05 --newton full --opt guess=constant >out.txt 2>err.txt &&
  grep -q 'factorizations 100,' out.txt && ok "--newton full: 2 factorisations per step from the constant start" ||
  bad "--newton full: $(cat out.txt err.txt)"
# from the default (auto: extrapolated) start one iteration per step once the
# start-up oscillation of v' has decayed (about 45 steps; 1043 in 1000 steps)
"$L" run heavy-top --scheme genalpha --step 1e-3 --t-end 1 >out.txt 2>err.txt &&
  n=$(sed -n 's/^steps 1000, Newton iterations \([0-9]*\),.*/\1/p' out.txt) && [ -n "$n" ] && [ "$n" -le 1100 ] &&
  ok "genalpha default guess: $n Newton iterations in 1000 steps" || bad "genalpha default guess: $(cat out.txt err.txt)"
"$L" run heavy-top --scheme genalpha --opt guess=extrapolate --opt sigma=1 >out.txt 2>err.txt
[ $? -eq 2 ] && grep -q "guess" err.txt && ok "guess=extrapolate with sigma is refused" || bad "guess with sigma: $(cat err.txt)"
"$L" run heavy-top --scheme genalpha --step 1e-3 --t-end 0.05 >out.txt 2>err.txt &&
  grep -q 'factorizations 50,' out.txt && ok "genalpha default: simplified Newton, 1 factorisation per step" ||
  bad "genalpha default Newton: $(cat out.txt err.txt)"

# --- list
"$L" list >out.txt 2>&1 && grep -q '^  pendulum3d' out.txt && grep -q '^  rattle' out.txt &&
  ok "list names models and schemes" || bad "list"

# --- compare
"$L" compare pendulum3d --schemes rattle --t-end 0.5 >out.txt 2>err.txt &&
  grep -q '^rattle ' out.txt && ok "compare prints a row per scheme" || bad "compare: $(cat err.txt)"

# --- converge: fitted order of RATTLE in q is 2
if "$L" converge pendulum3d --scheme rattle --steps 0.04,0.02,0.01,0.005 --t-end 1 --out conv.csv >out.txt 2>err.txt; then
  p=$(sed -n 's/^fitted order: q \([0-9.]*\).*/\1/p' out.txt)
  awk -v p="$p" 'BEGIN { exit !(p > 1.9 && p < 2.1) }' && ok "converge: RATTLE order in q = $p" || bad "converge order '$p'"
  data conv.csv | head -n 1 | grep -q '^h,err_q,err_v,err_lambda$' && ok "converge CSV header" || bad "converge CSV"
else bad "converge exits non-zero: $(cat err.txt)"; fi

# --- check
"$L" check pendulum3d >out.txt 2>&1 && grep -q 'agree with finite differences' out.txt &&
  ok "check passes the pendulum's derivatives" || bad "check: $(cat out.txt)"

# --- run file (inih), with a command-line override
cat >study.ini <<'INI'
; a saved study
[run]
model = pendulum3d
scheme = rattle
step = 0.02
t-end = 0.4
out = study.csv
[param]
l = 2
x0 = 2
INI
"$L" run study.ini >out.txt 2>err.txt && [ "$(data study.csv | wc -l)" -eq 22 ] && ok "run file" || bad "run file: $(cat err.txt)"
"$L" run study.ini --t-end 0.2 >out.txt 2>err.txt && [ "$(data study.csv | wc -l)" -eq 12 ] &&
  ok "command line overrides run file" || bad "override: $(cat err.txt)"
printf '[run]\nmodel = pendulum3d\nstpe = 0.1\n' >typo.ini
expect_usage "run file with a typo" run typo.ini
printf '[run]\nstep = -1\n' >neg.ini
expect_usage "run file with a bad value" run neg.ini

# --- plot: a valid PNG when gnuplot is there
if command -v gnuplot >/dev/null 2>&1; then
  "$L" plot run.csv --png run.png >out.txt 2>err.txt &&
    [ "$(head -c 8 run.png | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] &&
    [ "$(wc -c <run.png)" -gt 10000 ] && ok "plot writes a PNG" || bad "plot: $(cat err.txt)"
  "$L" plot conv.csv --png conv.png >/dev/null 2>&1 &&
    [ "$(head -c 4 conv.png | od -An -tx1 | tr -d ' \n')" = "89504e47" ] && ok "plot of a convergence CSV" || bad "plot conv"
else
  echo "skip plot tests: gnuplot is not installed"
fi

# --- multibody layer (issue 15): the directors heavy top runs under EM; a
# scheme/formulation mismatch says why and the way out
if "$L" run heavy-top --param formulation=directors --scheme em --step 0.001 --t-end 0.05 >out.txt 2>err.txt &&
   grep -q '^em .* ok$' out.txt; then ok "heavy-top formulation=directors under em"
else bad "heavy-top formulation=directors under em ($(cat out.txt err.txt))"; fi
expect_usage "em on the Lie group heavy top" run heavy-top --scheme em
if grep -q 'needs a constant mass matrix.*use --param formulation=directors\.$' err.txt; then ok "mismatch names the way out"
else bad "mismatch sentence: $(cat err.txt)"; fi
# euler-parameters and cardan (issue 15): `check` passes their exact
# derivatives, EM refuses their q-dependent mass matrix with the same way out
for form in euler-parameters cardan cardan-zxy; do
  "$L" check heavy-top --param formulation=$form >out.txt 2>&1 && grep -q 'agree with finite differences' out.txt &&
    ok "check passes heavy-top formulation=$form" || bad "check heavy-top formulation=$form: $(cat out.txt)"
  expect_usage "em on heavy-top formulation=$form" run heavy-top --param formulation=$form --scheme em
  grep -q 'needs a constant mass matrix: use --param formulation=directors\.$' err.txt &&
    ok "em refuses formulation=$form, naming the way out" || bad "em on formulation=$form: $(cat err.txt)"
done

# --- wrong input
expect_usage "unknown command" frobnicate
expect_usage "unknown model" run no-such-model
expect_usage "unknown scheme" run pendulum3d --scheme no-such-scheme
expect_usage "unknown parameter" run pendulum3d --param lenght=2
expect_usage "bad parameter value" run pendulum3d --param l=two
expect_usage "unknown scheme option" run pendulum3d --scheme rattle --opt theta=0.5
expect_usage "negative step" run pendulum3d --step -0.1
expect_usage "non-numeric t-end" run pendulum3d --t-end soon
expect_usage "unknown option" run pendulum3d --colour
# every scheme's refused option value names the key, the value and what is accepted (issue 14)
expect_option() {
  d=$1; pat=$2; shift 2
  expect_usage "$d" "$@"
  grep -Eq "$pat" err.txt && ok "$d names key, value, accepted" || bad "$d sentence: $(cat err.txt)"
}
expect_option "vi-s guess" "vi-s: guess = bogus is not accepted: 'simple' or 'advanced'" run four-particle --scheme vi-s --opt guess=bogus
expect_option "em retry" "em: retry = maybe is not accepted: 'off' or 'on'" run four-particle --scheme em --opt retry=maybe
expect_option "em-g guess" "em-g: guess = x is not accepted" run four-particle --scheme em-g --opt guess=x
expect_option "vi-a theta not a number" "vi-a: theta = abc is not accepted: a number" run four-particle --scheme vi-a --opt theta=abc
expect_option "bliedf3 index" "bliedf3: index = 5 is not accepted: 3 .* or 2" run heavy-top --scheme bliedf3 --opt index=5
expect_option "bliedf2 start-tol" "bliedf2: start-tol = 2 is not accepted: a number in \\(0, 1\\)" run heavy-top --scheme bliedf2 --opt start-tol=2
expect_option "bliedf4 predictor" "bliedf4: predictor = x is not accepted: 'last' or 'extrapolate'" run heavy-top --scheme bliedf4 --opt predictor=x
expect_option "bliedf1 lambda-fix" "bliedf1: lambda-fix = 1 is not accepted: 'off' or 'on'" run heavy-top --scheme bliedf1 --opt lambda-fix=1
# range refusals and the last schemes with their own parsers, in the same sentence (issue 19)
expect_option "vi-a theta out of range" "vi-a: theta = 7 is not accepted: a number in \\(0, 1\\)" run four-particle --scheme vi-a --opt theta=7
expect_option "vi-b vartheta out of range" "vi-b: vartheta = 1 is not accepted: a number in \\(0, 1\\)" run four-particle --scheme vi-b --opt vartheta=1
expect_option "genalpha projection" "genalpha: projection = maybe is not accepted: 'off' or 'on'" run heavy-top --scheme genalpha --opt projection=maybe
expect_option "genalpha rho-inf out of range" "genalpha: rho-inf = 2 is not accepted: a number in \\[0, 1\\]" run heavy-top --scheme genalpha --opt rho-inf=2
expect_option "genalpha beta out of range" "genalpha: beta = 0 is not accepted: a number > 0" run heavy-top --scheme genalpha --opt beta=0
expect_option "rattlie multipliers" "rattlie: multipliers = x is not accepted: 'node' or 'rattle'" run heavy-top --scheme rattlie --opt multipliers=x
expect_usage "param without =" run pendulum3d --param l
expect_usage "converge without steps" converge pendulum3d
expect_usage "compare with unknown scheme" compare pendulum3d --schemes rattle,nope
expect_usage "plot of a missing file" plot missing.csv
expect_usage "check of an unknown model" check nope

# --- livens theory genalpha (issue 20): the papers' numbers, refused input
"$L" theory genalpha >th.txt 2>&1
if grep -q 'max_n ||(T+^-1 T0)^n||_2 = 34.2653 at n = 14' th.txt && grep -q 'c_inf = .* = 28.518 at n = 19' th.txt &&
   grep -q 'Algorithm 1 (sigma 1) .* 0.250942' th.txt; then ok "theory genalpha: 34.3 at n = 14, c_inf 28.5, mu_impl 0.2509"
else bad "theory genalpha: $(head -c 300 th.txt)"; fi
"$L" theory genalpha --index 2 >th2.txt 2>&1
if grep -q 'spectral radius rho(T) = 0.9$' th2.txt && grep -q '= 0.919935 at n = 1' th2.txt; then ok "theory genalpha --index 2"
else bad "theory genalpha --index 2: $(head -c 300 th2.txt)"; fi
expect_usage "theory with rho-inf out of range" theory genalpha --rho-inf 1.5
expect_usage "theory with a bad index" theory genalpha --index 4
expect_usage "theory of an unknown method" theory bdf

# --- Ctrl-C: the run stops cleanly with every accepted step in the CSV
"$L" run pendulum3d --scheme rattle --step 0.0001 --t-end 100000 --out long.csv >out.txt 2>err.txt &
pid=$!
sleep 1
kill -INT $pid
wait $pid; st=$?
rows=$(($(data long.csv | wc -l) - 1))
if [ "$st" -eq 1 ] && [ "$rows" -gt 10 ] && data long.csv | awk -F, 'NR > 1 && NF != 13 { exit 1 }' &&
   grep -q 'interrupted at t = ' err.txt; then ok "Ctrl-C after $rows steps: CSV complete, exit 1"
else bad "Ctrl-C (status $st, $rows rows, $(cat err.txt))"; fi

[ "$fails" -eq 0 ] || { echo "$fails CLI check(s) failed"; exit 1; }
