#!/bin/sh
# run_install.sh BUILD_DIR SOURCE_DIR LIBDIR OMP: installs the build into a scratch prefix and
# uses it as a program would: a consumer through find_package(fastgemm) (shared and static) and
# through pkg-config (shared; static where only libfastgemm.a is installed, with no flag but
# pkg-config's), then from the installed tree moved elsewhere (pkg-config --define-prefix, and
# the CMake package). LIBDIR: CMAKE_INSTALL_LIBDIR. OMP=ON: the build made the OpenMP-target
# module, which must be installed in LIBDIR/fastgemm and found there by the installed libfastgemm.
set -eu
build=$1 src=$2 libdir=$3 omp=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# The program does not load libfastgemm.so: it was linked with libfastgemm.a.
linked_static() { ! readelf -d "$1" | grep -q 'NEEDED.*libfastgemm'; }
# The installed libfastgemm (beside which the program was linked) finds the module in its
# fastgemm/ folder: OpenMP without a device runs it on the host, as the omp_backend_host tests do.
finds_omp_module() {
  FASTGEMM_BACKEND=omp FASTGEMM_MODE=gpu OMP_TARGET_OFFLOAD=DISABLED OMP_WAIT_POLICY=PASSIVE \
    FASTGEMM_TRACE=1 "$1" 2> "$work/omp.log" || { cat "$work/omp.log"; fail "$1 with FASTGEMM_BACKEND=omp"; }
  grep -q 'backend=omp ' "$work/omp.log" || { cat "$work/omp.log"; fail "$1 did not run on the omp backend"; }
  echo "omp module found: $(grep -o 'backend=omp ' "$work/omp.log")"
}
# pkg-config's flags for the fastgemm.pc under PREFIX (more options after it).
pc_flags() {
  dir=$1
  shift
  PKG_CONFIG_PATH="$dir/$libdir/pkgconfig" pkg-config "$@" --cflags --libs fastgemm
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

# The CMake package: fastgemm::fastgemm and fastgemm::fastgemm_static from its files alone.
cmake -S "$src/tests/install" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" > "$work/configure.log" 2>&1 \
  || { cat "$work/configure.log"; fail "configuring the consumer"; }
cmake --build "$work/consumer" > "$work/build.log" 2>&1 || { cat "$work/build.log"; fail "building the consumer"; }
"$work/consumer/consumer_shared"
"$work/consumer/consumer_static"
linked_static "$work/consumer/consumer_static" || fail "fastgemm::fastgemm_static linked libfastgemm.so"
[ "$omp" != ON ] || finds_omp_module "$work/consumer/consumer_shared"

# pkg-config: the prefix in full, normalised.
flags=$(pc_flags "$prefix")
echo "pkg-config: $flags"
case "$flags" in *..*) fail "pkg-config's flags are not normalised" ;; esac
case "$flags" in *"-I$prefix/include "*"-L$prefix/$libdir "*) ;; *) fail "pkg-config's flags do not name $prefix" ;; esac
cc "$src/tests/install/consumer.c" $flags -Wl,-rpath,"$prefix/$libdir" -o "$work/consumer_pc"
"$work/consumer_pc"

# pkg-config --static where only the static library is installed: its flags alone link it,
# the CUDA runtime from the toolkit's folder that Libs.private names (-Wl,-t lists the files
# the linker took).
static=$work/static
cmake --install "$build" --prefix "$static" > "$work/install_static.log"
rm -f "$static/$libdir/"libfastgemm.so*
flags=$(pc_flags "$static" --static)
echo "pkg-config --static: $flags"
cc "$src/tests/install/consumer.c" $flags -Wl,-t -o "$work/consumer_pc_static" > "$work/link.log"
cudart=$(PKG_CONFIG_PATH="$static/$libdir/pkgconfig" pkg-config --variable=cudalibdir fastgemm)/libcudart_static.a
grep -qF "$cudart" "$work/link.log" || { cat "$work/link.log"; fail "the static link did not take $cudart"; }
"$work/consumer_pc_static"
linked_static "$work/consumer_pc_static" || fail "pkg-config --static linked libfastgemm.so"

# The installed tree moved: pkg-config --define-prefix takes the prefix from where fastgemm.pc
# lies, two folders up (a LIBDIR of more folders takes --define-variable=prefix=).
moved=$work/moved
mv "$prefix" "$moved"
case $libdir in */*) relocate=--define-variable=prefix=$moved ;; *) relocate=--define-prefix ;; esac
flags=$(pc_flags "$moved" "$relocate")
echo "pkg-config $relocate, moved: $flags"
case "$flags" in *..*|*"$prefix"*) fail "pkg-config's flags are not normalised or name the old prefix" ;; esac
case "$flags" in *"-I$moved/include "*"-L$moved/$libdir "*) ;; *) fail "pkg-config's flags do not name $moved" ;; esac
cc "$src/tests/install/consumer.c" $flags -Wl,-rpath,"$moved/$libdir" -o "$work/consumer_moved"
"$work/consumer_moved"
[ "$omp" != ON ] || finds_omp_module "$work/consumer_moved"
# The CMake package finds itself where it lies.
cmake -S "$src/tests/install" -B "$work/consumer2" -DCMAKE_PREFIX_PATH="$moved" > "$work/configure2.log" 2>&1 \
  || { cat "$work/configure2.log"; fail "configuring the consumer from the moved tree"; }
cmake --build "$work/consumer2" > "$work/build2.log" 2>&1 || { cat "$work/build2.log"; fail "building the consumer from the moved tree"; }
"$work/consumer2/consumer_shared"
"$work/consumer2/consumer_static"
echo "install: ok ($(basename "$so"))"
