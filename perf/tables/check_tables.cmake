# check_tables.cmake [-DPYTHON=python3]: the committed kernel tables (kernels/sgemm_table.gen.h,
# kernels/dgemm_table.gen.h) and cost models (kernels/sgemm_model.gen.h, kernels/dgemm_model.gen.h)
# are what their inputs in perf/tables/ give, so that an edit of a header without its inputs, or
# of an input without the header, fails. make_tables.py --check prints its diff to this
# script's output, fit_model.py --check the header that differs.
if(NOT PYTHON)
  find_program(PYTHON NAMES python3)
endif()
if(NOT PYTHON)
  message(FATAL_ERROR "no python3 to run perf/tables/make_tables.py --check")
endif()
execute_process(COMMAND ${PYTHON} ${CMAKE_CURRENT_LIST_DIR}/make_tables.py --check RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the tables differ from what their inputs give (diff above): "
                      "python3 perf/tables/make_tables.py writes them (perf/tables/README.md)")
endif()
foreach(p s d)
  execute_process(COMMAND ${PYTHON} ${CMAKE_CURRENT_LIST_DIR}/fit_model.py ${CMAKE_CURRENT_LIST_DIR}/${p}gemm_model.spec
                  --check RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the ${p}gemm cost model differs from what its inputs give: "
                        "python3 perf/tables/fit_model.py perf/tables/${p}gemm_model.spec writes it")
  endif()
endforeach()
