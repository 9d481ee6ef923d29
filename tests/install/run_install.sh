#!/bin/sh
# run_install.sh BUILD_DIR SOURCE_DIR: installs the build into a scratch prefix, then builds and
# runs a consumer through find_package(fastgemm) (shared and static) and through pkg-config.
set -eu
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
for f in include/fastgemm.h lib/libfastgemm.a lib/cmake/fastgemm/fastgemmConfig.cmake lib/pkgconfig/fastgemm.pc; do
  [ -f "$work/prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
so=$(ls "$work/prefix/lib/"libfastgemm.so.*.*.*)
echo "installed: $(cd "$work/prefix" && find . -type f -o -type l | sort | tr '\n' ' ')"
cmake -S "$src/tests/install" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure.log" 2>&1 \
  || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/consumer" > "$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
"$work/consumer/consumer_shared"
"$work/consumer/consumer_static"
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
cc "$src/tests/install/consumer.c" $(pkg-config --cflags --libs fastgemm) -Wl,-rpath,"$work/prefix/lib" -o "$work/consumer_pc"
"$work/consumer_pc"
echo "install: ok ($(basename "$so"))"
