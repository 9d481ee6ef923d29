#!/bin/sh
# run_install.sh BUILD_DIR SOURCE_DIR LIBDIR OMP: installs the build into a scratch prefix, then
# builds and runs a consumer through find_package(fastgemm) (shared and static) and through
# pkg-config. LIBDIR: CMAKE_INSTALL_LIBDIR. OMP=ON: the build made the OpenMP-target module,
# which must be installed in LIBDIR/fastgemm and found there by the installed libfastgemm.
set -eu
build=$1 src=$2 libdir=$3 omp=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# The installed libfastgemm (beside which the program was linked) finds the module in its
# fastgemm/ folder: OpenMP without a device runs it on the host, as the omp_backend_host tests do.
finds_omp_module() {
  FASTGEMM_BACKEND=omp FASTGEMM_MODE=gpu OMP_TARGET_OFFLOAD=DISABLED OMP_WAIT_POLICY=PASSIVE \
    FASTGEMM_TRACE=1 "$1" 2> "$work/omp.log" || { cat "$work/omp.log"; fail "$1 with FASTGEMM_BACKEND=omp"; }
  grep -q 'backend=omp ' "$work/omp.log" || { cat "$work/omp.log"; fail "$1 did not run on the omp backend"; }
  echo "omp module found: $(grep -o 'backend=omp ' "$work/omp.log")"
}

prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
for f in include/fastgemm.h "$libdir/libfastgemm.a" "$libdir/cmake/fastgemm/fastgemmConfig.cmake" \
         "$libdir/pkgconfig/fastgemm.pc" bin/fastgemm-calibrate share/doc/fastgemm/LICENSE; do
  [ -f "$prefix/$f" ] || fail "$f not installed"
done
if [ "$omp" = ON ]; then
  [ -f "$prefix/$libdir/fastgemm/libfastgemm_omp.so" ] || fail "$libdir/fastgemm/libfastgemm_omp.so not installed"
fi
so=$(ls "$prefix/$libdir/"libfastgemm.so.*.*.*)
echo "installed: $(cd "$prefix" && find . -type f -o -type l | sort | tr '\n' ' ')"
cmake -S "$src/tests/install" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure.log" 2>&1 \
  || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/consumer" > "$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
"$work/consumer/consumer_shared"
"$work/consumer/consumer_static"
[ "$omp" != ON ] || finds_omp_module "$work/consumer/consumer_shared"
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
cc "$src/tests/install/consumer.c" $(pkg-config --cflags --libs fastgemm) -Wl,-rpath,"$prefix/$libdir" -o "$work/consumer_pc"
"$work/consumer_pc"
echo "install: ok ($(basename "$so"))"
