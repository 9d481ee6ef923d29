# install_pc.cmake: run by cmake --install (install(SCRIPT)), writes fastgemm.pc with the prefix
# being installed to, which cmake --install --prefix P chooses after configuring, in full and
# normalised, so that pkg-config prints plain paths. The install(CODE) before it sets
# FASTGEMM_PC_IN (fastgemm.pc as the configure step filled it in: all but @FASTGEMM_PC_PREFIX@)
# and FASTGEMM_PC_DIR (the file's folder: relative to the prefix, or absolute).
cmake_path(ABSOLUTE_PATH CMAKE_INSTALL_PREFIX NORMALIZE OUTPUT_VARIABLE prefix)
cmake_path(ABSOLUTE_PATH FASTGEMM_PC_DIR BASE_DIRECTORY "${prefix}" NORMALIZE OUTPUT_VARIABLE dir)
# No trailing slash: libdir is ${prefix}/lib.
string(REGEX REPLACE "/+$" "" FASTGEMM_PC_PREFIX "${prefix}")
set(pc "$ENV{DESTDIR}${dir}/fastgemm.pc")
message(STATUS "Installing: ${pc}")
configure_file("${FASTGEMM_PC_IN}" "${pc}" @ONLY)
list(APPEND CMAKE_INSTALL_MANIFEST_FILES "${pc}")
