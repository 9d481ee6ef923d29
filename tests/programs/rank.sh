#!/bin/sh
# rank.sh DIR LIB PROGRAM: one MPI process of the ScaLAPACK test (run_scalapack.sh starts it
# under mpirun): PROGRAM with LIB preloaded, tracing into a file of its own, DIR/trace.<rank>.
export FASTGEMM_TRACE="$1/trace.${OMPI_COMM_WORLD_RANK:?not started by Open MPI}"
LD_PRELOAD=$2 exec "$3"
