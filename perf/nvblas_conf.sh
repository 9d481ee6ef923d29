#!/bin/sh
# nvblas_conf.sh FILE OPENBLAS LOGFILE: writes the NVBLAS configuration the benchmarks compare
# against (its best settings on these machines: tile 2048, autopin, CPU side OpenBLAS, GPU 0).
cat > "$1" <<CONF
NVBLAS_LOGFILE $3
NVBLAS_CPU_BLAS_LIB $2
NVBLAS_GPU_LIST 0
NVBLAS_TILE_DIM 2048
NVBLAS_AUTOPIN_MEM_ENABLED
CONF
