# check_exports.cmake -DLIB=libfastgemm.so: the library exports the BLAS names (pip wheels' too),
# their error handlers and fastgemm_* and nothing else (an LD_PRELOADed library must not leak its helpers,
# or the static CUDA runtime's symbols, into someone else's process).
cmake_policy(SET CMP0057 NEW) # if(IN_LIST)
execute_process(COMMAND nm -D --defined-only ${LIB} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${LIB}")
endif()
set(gemm_names sgemm_ dgemm_ sgemm_64_ dgemm_64_ cblas_sgemm cblas_dgemm cblas_sgemm64_
    cblas_dgemm64_ scipy_sgemm_ scipy_dgemm_ scipy_sgemm_64_ scipy_dgemm_64_ scipy_cblas_sgemm
    scipy_cblas_dgemm scipy_cblas_sgemm64_ scipy_cblas_dgemm64_)
set(required ${gemm_names} xerbla_ xerbla_64_ cblas_xerbla fastgemm_sgemm fastgemm_dgemm
    fastgemm_version fastgemm_last_backend fastgemm_set_mode)
string(REGEX MATCHALL "[^\n]+" lines "${out}")
set(bad "")
foreach(line IN LISTS lines)
  string(REGEX REPLACE "^.* " "" sym "${line}")
  list(REMOVE_ITEM required ${sym})
  if(NOT sym IN_LIST gemm_names AND NOT sym MATCHES "^(xerbla_|xerbla_64_|cblas_xerbla|fastgemm_.*)$")
    list(APPEND bad ${sym})
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "exported but should be hidden: ${bad}")
endif()
if(required)
  message(FATAL_ERROR "not exported: ${required}")
endif()
# The CUDA runtime is inside (static); cuBLAS is never a dependency of the library.
execute_process(COMMAND objdump -p ${LIB} OUTPUT_VARIABLE deps)
string(REGEX MATCHALL "NEEDED +[^\n]+" needed "${deps}")
if(needed MATCHES "cudart|cublas|libcuda")
  message(FATAL_ERROR "depends on CUDA libraries: ${needed}")
endif()
list(LENGTH lines count)
message(STATUS "exports: ok, ${count} symbols, all public; ${needed}")
