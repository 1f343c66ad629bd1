# Set-up shared by the callgrind and cachegrind scripts in benchmarks/,
# sourced after they have set $exe: $exe made absolute, one BLAS thread
# (livens would otherwise execute itself again to set it, which valgrind
# does not follow), a scratch directory $dir removed on exit, and $run,
# which runs valgrind through the build tree's libtool when $exe is one of
# its wrapper scripts (a benchmark linked against the shared library).
case $exe in /*) ;; *) exe=$(pwd)/$exe ;; esac
export OPENBLAS_NUM_THREADS=1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
lt=$(dirname "$exe")/../libtool
run=""
if [ -x "$lt" ]; then run="$lt --mode=execute"; fi
