#!/bin/sh
# prebuild_omp.sh BUILD DEST: for a GPU machine without an OpenMP offload compiler, copies what
# the omp tests need from a build made where there is one (Debian: gcc-12-offload-nvptx) into
# DEST (FASTGEMM_PREBUILT_TESTS there): test_omp_interop, libfastgemm_omp.so, and the OpenMP
# runtime they were linked with (libgomp.so.1 and its nvptx plugin), which must match the
# compiler that built them.
set -eu
build=$1 dest=$2
mkdir -p "$dest"
cp "$build/tests/test_omp_interop" "$build/fastgemm/libfastgemm_omp.so" "$dest/"
gomp=$(ldd "$build/fastgemm/libfastgemm_omp.so" | sed -n 's/.*libgomp.so.1 => \([^ ]*\).*/\1/p')
[ -n "$gomp" ] || { echo "prebuild_omp.sh: libfastgemm_omp.so links no libgomp.so.1" >&2; exit 1; }
cp -L "$gomp" "$dest/libgomp.so.1"
cp -L "$(dirname "$gomp")/libgomp-plugin-nvptx.so.1" "$dest/"
ls "$dest"
