#!/bin/sh
# `make install prefix=DIR` after a configure with another prefix (issue 17):
# the installed livens.pc must name DIR, a program built with it must link and
# run (once with an rpath from pkg-config's libdir, once with
# LD_LIBRARY_PATH), the examples must be under DIR's documentation directory,
# and the installed program and Python package must run from DIR.
set -eu
builddir=$(pwd)
dir="$builddir/_prefix"
# test_install.sh and test_prefix.sh both run make install in this build
# tree; under make -j check they would race (doxygen's doc/api, the
# installed files), so they take turns
if command -v flock >/dev/null 2>&1; then exec 9>"$builddir/.install-test.lock" && flock 9; fi
rm -rf "$dir"
trap 'rm -rf "$dir" "$dir.log"' EXIT
# (libtool's "remember to run libtool --finish" chatter goes to the log)
make -s install prefix="$dir" >"$dir.log" 2>&1 ||
  { cat "$dir.log"; echo "FAIL: make install prefix=$dir"; exit 1; }
pc=$(find "$dir" -name livens.pc | head -n 1)
test -n "$pc" || { echo "FAIL: make install prefix=$dir installed no livens.pc"; exit 1; }
export PKG_CONFIG_PATH="$(dirname "$pc")"
unset PKG_CONFIG_SYSROOT_DIR || true
got=$(pkg-config --variable=prefix livens)
[ "$got" = "$dir" ] || { echo "FAIL: livens.pc says prefix=$got, installed under $dir"; exit 1; }
libdir=$(pkg-config --variable=libdir livens)
case "$libdir" in "$dir"/*) ;; *) echo "FAIL: livens.pc says libdir=$libdir, outside $dir"; exit 1 ;; esac
test -f "$(pkg-config --variable=includedir livens)/livens/livens.h" || { echo "FAIL: includedir has no livens/livens.h"; exit 1; }
cflags=$(pkg-config --cflags livens)
if [ -e "$libdir/liblivens.so" ]; then libs=$(pkg-config --libs livens); else libs=$(pkg-config --static --libs livens); fi
src="${srcdir:-.}/examples/pendulum.c"
# CFLAGS/LDFLAGS are the build's own (e.g. the sanitizer flags of build-san)
${CC:-cc} -std=c11 ${CFLAGS:-} $cflags "$src" -o "$dir/pendulum_rpath" ${LDFLAGS:-} $libs -Wl,-rpath,"$libdir" -lm
env -u LD_LIBRARY_PATH "$dir/pendulum_rpath" | grep -q '^max rel. energy error' ||
  { echo "FAIL: the example linked with -Wl,-rpath,$libdir did not run"; exit 1; }
${CC:-cc} -std=c11 ${CFLAGS:-} $cflags "$src" -o "$dir/pendulum_ldpath" ${LDFLAGS:-} $libs -lm
LD_LIBRARY_PATH="$libdir" "$dir/pendulum_ldpath" | grep -q '^max rel. energy error' ||
  { echo "FAIL: the example run with LD_LIBRARY_PATH=$libdir did not run"; exit 1; }
echo "ok: livens.pc names $dir; examples/pendulum.c builds and runs with an rpath and with LD_LIBRARY_PATH"
# the static library with pkg-config --static: Libs.private must name every
# library liblivens.a needs (the system-file reader pulls in libyaml)
if [ -e "$libdir/liblivens.a" ]; then
  cat >"$dir/load.c" <<'EOC'
#include <stdio.h>
#include <livens/livens.h>
int main(int argc, char **argv) {
  lv_model *m = NULL;
  char why[256] = "";
  int rc = argc > 1 ? lv_mbs_load(argv[1], NULL, &m, why, sizeof why) : LV_EINPUT;
  printf("%s\n", rc ? why : "loaded");
  lv_model_free(m);
  return rc && rc != LV_EINPUT;
}
EOC
  slibs=$(pkg-config --static --libs livens | sed 's/-llivens/-Wl,-Bstatic -llivens -Wl,-Bdynamic/')
  ${CC:-cc} -std=c11 ${CFLAGS:-} $cflags "$dir/load.c" -o "$dir/load_static" ${LDFLAGS:-} $slibs ||
    { echo "FAIL: a program using lv_mbs_load does not link against liblivens.a with pkg-config --static --libs"; exit 1; }
  out=$("$dir/load_static" "${srcdir:-.}/examples/systems/heavy_top.yaml") ||
    { echo "FAIL: the statically linked program failed: $out"; exit 1; }
  case "$out" in loaded | *"no YAML reader"*) ;; *) echo "FAIL: lv_mbs_load said: $out"; exit 1 ;; esac
  echo "ok: linked statically with pkg-config --static --libs, lv_mbs_load: $out"
fi
# README's C fragment ("A first system of your own"), with the declarations
# its comments give, against the installed library: an exact pendulum under EM
readme="${srcdir:-.}/README.md"
{
  printf '#include <stdio.h>\n#include <livens/livens.h>\nint main(void) {\n'
  printf '  lv_mbs *s; lv_model *model; lv_integrator *it; int bob;\n'
  printf '  double x0[3] = {1, 0, 0}, v0[3] = {0, 1, 0}, o[3] = {0, 0, 0}, g[3] = {0, 0, -9.81};\n'
  sed -n '/^## A first system of your own/,/^## /p' "$readme" | sed -n '/^```c$/,/^```$/p' | sed '1d;$d'
  printf '  lv_mbs_free(s);\n  int rc = lv_integrator_new(&it, model, "em", 0.01);\n'
  printf '  if (!rc) rc = lv_integrator_init(it, 0.0, NULL, NULL);\n  if (!rc) rc = lv_integrator_run_until(it, 10.0);\n'
  printf '  printf("%%s\\n", rc ? lv_strerror(rc) : "readme ok");\n'
  printf '  lv_integrator_free(it);\n  lv_model_free(model);\n  return rc != 0;\n}\n'
} >"$dir/readme.c"
[ "$(sed -n '/^## A first system of your own/,/^## /p' "$readme" | sed -n '/^```c$/,/^```$/p' | wc -l)" -eq 7 ] ||
  { echo "FAIL: README's C fragment is not the five lines this test expects"; exit 1; }
${CC:-cc} -std=c11 ${CFLAGS:-} $cflags "$dir/readme.c" -o "$dir/readme" ${LDFLAGS:-} $libs -Wl,-rpath,"$libdir" -lm ||
  { echo "FAIL: README's C fragment does not compile"; exit 1; }
out=$(OPENBLAS_NUM_THREADS=1 "$dir/readme") && [ "$out" = "readme ok" ] ||
  { echo "FAIL: README's C fragment: $out"; exit 1; }
echo "ok: README's C fragment builds and runs against $dir"
# the examples, under the documentation directory
for f in pendulum.c own_model.c compare.c plugin_model.c systems/four_bar.yaml sweeps/ggl_vi_stability.ini; do
  test -f "$dir/share/doc/livens/examples/$f" || { echo "FAIL: $dir/share/doc/livens/examples/$f not installed"; exit 1; }
done
test -f "$dir/share/doc/livens/references.md" || { echo "FAIL: doc/references.md not installed"; exit 1; }
echo "ok: examples and documentation in $dir/share/doc/livens"
# the installed program, when built (it needs inih)
if [ -x "$builddir/livens" ]; then
  OPENBLAS_NUM_THREADS=1 "$dir/bin/livens" run pendulum3d --scheme rattle --t-end 0.1 | grep -q '^rattle .* ok$' ||
    { echo "FAIL: $dir/bin/livens did not run"; exit 1; }
fi
# the installed Python package, when built: importable from DIR, no LD_LIBRARY_PATH
pymod=$(find "$dir" -name '_livens.so' | head -n 1)
if [ -n "${LIVENS_PYTHON:-}" ] && [ -n "$pymod" ]; then
  env -u LD_LIBRARY_PATH PYTHONPATH="$(dirname "$(dirname "$pymod")")" PYTHONDONTWRITEBYTECODE=1 OPENBLAS_NUM_THREADS=1 \
    "$LIVENS_PYTHON" -c 'import livens; r = livens.simulate("pendulum3d", "rattle", 0.01, 1.0); assert r.status == "ok"' ||
    { echo "FAIL: the Python package installed under $dir did not import and run"; exit 1; }
  echo "ok: the Python package runs from $dir"
fi
