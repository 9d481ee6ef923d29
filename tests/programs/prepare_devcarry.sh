#!/bin/bash
# prepare_devcarry.sh [--scipy-wheel] [BUILD]: on a Debian 12 machine (root, apt-get), fills
# .devcarry/programs/ with what the real-program suite's ScaLAPACK tests need on a machine
# without MPI (the GPU machine: FASTGEMM_PROGRAMS_CARRY=.devcarry/programs, which
# tests/run_device.sh passes):
#   pdgemm_check  the test program (tests/programs/pdgemm_check.f90), built here
#   runtime.tar.xz  root/, from Debian's packages (apt-get download, dpkg-deb -x), the files a
#                 run uses: Open MPI 4.1 (mpirun, its libraries and the components that load
#                 without InfiniBand, UCX or libfabric), PMIx, ScaLAPACK, the reference BLAS and
#                 LAPACK (the program's own BLAS, which libfastgemm's CPU path calls), libgfortran;
#                 7 MB (27 unpacked). CMake unpacks it into the build tree when it configures.
#   env.sh        sourced by run_scalapack.sh: PATH, LD_LIBRARY_PATH, and the relocation of Open
#                 MPI (OPAL_PREFIX, OPAL_SYSCONFDIR) and PMIx (PMIX_INSTALL_PREFIX) to root/
# With --scipy-wheel, also SciPy's wheel for CPython 3.12 in .whl/ (35 MB of the 64 MiB a
# device call carries; the GPU image has a SciPy, so only where it lacks one).
# Then it checks the copy: the ScaLAPACK test (through libfastgemm, BUILD/libfastgemm.so, default
# build/) with the runtime unpacked elsewhere, in a mount namespace where every file that the
# system's copies of those packages (and OpenBLAS) installed is hidden.
set -euo pipefail
cd "$(dirname "$0")/../.."
scipy_wheel=0
if [ "${1:-}" = --scipy-wheel ]; then scipy_wheel=1; shift; fi
build=${1:-build}
out=.devcarry/programs
packages="openmpi-bin openmpi-common libopenmpi3 libpmix2 libmunge2 libhwloc15 libudev1
          libevent-core-2.1-7 libevent-pthreads-2.1-7 libscalapack-openmpi2.2 libblas3 liblapack3
          libgfortran5 libquadmath0"
# Libraries every Linux machine has: not carried.
base="libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1 libutil.so.1 libgcc_s.so.1 \
libstdc++.so.6 libz.so.1 ld-linux-x86-64.so.2"
lib=usr/lib/x86_64-linux-gnu

rm -rf "$out"
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
r=$work/root
mkdir -p "$work/debs" "$r"
# shellcheck disable=SC2086
(cd "$work/debs" && apt-get download -qq $packages 2> /dev/null)
for d in "$work"/debs/*.deb; do dpkg-deb -x "$d" "$r"; done

# What a run does not use: documentation, compiler wrappers, the Fortran, C++, Java and OpenSHMEM
# bindings, the components' common parts for fabrics this copy leaves out.
rm -rf "$r/usr/share/doc" "$r/usr/share/man" "$r/usr/share/lintian" "$r/$lib/openmpi/include"
find "$r/usr/bin" -mindepth 1 ! -name orterun ! -name orted -delete
ln -s orterun "$r/usr/bin/mpirun"
rm -f "$r/$lib"/libmpi_{cxx,java,mpifh,usempi}* "$r/$lib"/liboshmem* "$r/$lib"/libompitrace* \
      "$r/$lib"/libmca_common_{ofi,ucx,verbs}* "$r/$lib/openmpi/lib"/*.jar

# Components whose libraries this copy lacks would fail to load: removed until every ELF file
# left finds each library it needs in root/ or among the base ones.
needs() { readelf -d "$1" 2> /dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
while :; do
  have=" $base $(find "$r" \( -type f -o -type l \) -name '*.so*' -printf '%f ') "
  removed=0
  while IFS= read -r f; do
    for n in $(needs "$f"); do
      case $have in *" $n "*) ;; *)
        case $f in
          */openmpi3/*|*/pmix/*) rm -f "$f"; removed=1; break ;;
          *) echo "prepare_devcarry: $f needs $n, which nothing carries" >&2; exit 1 ;;
        esac ;;
      esac
    done
  done < <(find "$r" -type f \( -name '*.so*' -o -path '*/usr/bin/*' \))
  [ $removed -eq 1 ] || break
done

tar -cJf "$out/runtime.tar.xz" -C "$work" root
gfortran -O2 -o "$out/pdgemm_check" tests/programs/pdgemm_check.f90 -lscalapack-openmpi
cat > "$out/env.sh" << 'EOF'
# env.sh: sourced by tests/programs/run_scalapack.sh with FASTGEMM_PROGRAMS_CARRY set to this
# folder (made by tests/programs/prepare_devcarry.sh) and FASTGEMM_PROGRAMS_ROOT to where its
# runtime.tar.xz was unpacked: that Open MPI, PMIx, ScaLAPACK and BLAS first, and Open MPI and
# PMIx told where they now live (they were built for /usr).
c=${FASTGEMM_PROGRAMS_ROOT:?the folder runtime.tar.xz was unpacked into}/root
l=$c/usr/lib/x86_64-linux-gnu
export PATH=$c/usr/bin:$PATH
export LD_LIBRARY_PATH=$l:$l/blas:$l/lapack:$l/pmix2/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OPAL_PREFIX=$c/usr OPAL_SYSCONFDIR=$c/etc/openmpi PMIX_INSTALL_PREFIX=$l/pmix2
# The components of fabrics this copy leaves out are not there: no warning about them.
export OMPI_MCA_mca_base_component_show_load_errors=0
EOF
if [ $scipy_wheel -eq 1 ]; then
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d .whl scipy==1.17.1
fi
echo "prepare_devcarry: $out holds $(du -sh "$out" | cut -f1)"

# The check: the system's copies hidden (each of their files replaced by an empty one), hwloc's
# plugins too (found in a folder built into libhwloc, which the GPU machine lacks).
hidden=$(dpkg -L $packages libopenblas0-pthread libhwloc-plugins 2> /dev/null | sort -u |
         while IFS= read -r f; do [ -f "$f" ] && [ ! -L "$f" ] && echo "$f"; done)
[ -x "$build/libfastgemm.so" ] || { echo "prepare_devcarry: no $build/libfastgemm.so to check the copy with" >&2; exit 1; }
rm -rf "$r"
tar -xJf "$out/runtime.tar.xz" -C "$work"
export FASTGEMM_PROGRAMS_CARRY=$PWD/$out FASTGEMM_PROGRAMS_ROOT=$work FASTGEMM_MODE=cpu
# First mpirun and the program alone, with the loader listing every library each process loads:
# each must come from the copy, libfastgemm or the base ones. Then the suite's test.
unshare -m sh -c 'for f in $1; do mount --bind /dev/null "$f"; done
  . "$FASTGEMM_PROGRAMS_CARRY/env.sh"
  LD_DEBUG=files LD_DEBUG_OUTPUT=$FASTGEMM_PROGRAMS_ROOT/ld OMPI_MCA_btl_vader_single_copy_mechanism=none \
    mpirun --allow-run-as-root --oversubscribe -np 4 env LD_PRELOAD="$3" "$2" > /dev/null || exit 1
  cat "$FASTGEMM_PROGRAMS_ROOT"/ld.* | sed -n "s/.*calling init: //p" | sort -u > "$FASTGEMM_PROGRAMS_ROOT/loaded"
  outside=$(grep -v -e "^$FASTGEMM_PROGRAMS_ROOT/root/" -e "^$3\$" "$FASTGEMM_PROGRAMS_ROOT/loaded" |
            while read -r f; do case " $4 " in *" ${f##*/} "*) ;; *) echo "$f" ;; esac; done)
  echo "prepare_devcarry: $(wc -l < "$FASTGEMM_PROGRAMS_ROOT/loaded") libraries loaded, none of the system'"'"'s but: $4"
  [ -z "$outside" ] || { echo "prepare_devcarry: loaded from outside the copy: $outside"; exit 1; }
  exec sh tests/programs/run_scalapack.sh "$2" "$3" cpu' \
  sh "$hidden" "$PWD/$out/pdgemm_check" "$PWD/$build/libfastgemm.so" "$base"
