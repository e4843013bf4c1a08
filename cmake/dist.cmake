# `make dist` (target ptec_dist): a self-contained source drop of this
# build's libraries and board for vendor IDEs and plain Makefiles, written by
# scripts/dist.py from the manifest below: the exact sources, include paths,
# definitions and flags of this build's targets (docs/integration.md).
set(ptec_dist_libs ptec_runtime ptec_kernels_portable ptec_kernels_cortex_m ptec_kernels ptec_backends ptec_delegates)
set(ptec_dist_ethos_u ptec_ethos_u ptec_npu_driver_direct ptec_npu_model)
set(ptec_dist_manifest ${PROJECT_BINARY_DIR}/ptec_dist_manifest.txt)
get_property(PTEC_NN_VARIANT_SOURCES GLOBAL PROPERTY PTEC_NN_VARIANT_SOURCES)
get_property(ptec_dist_scripts GLOBAL PROPERTY PTEC_BOARD_LINKER_SCRIPTS)
set(sep "$<SEMICOLON>")
macro(ptec_dist_list out tgts prop)
  set(${out} "")
  foreach(t ${tgts})
    string(APPEND ${out} "$<JOIN:$<TARGET_PROPERTY:${t},${prop}>,${sep}>${sep}")
  endforeach()
endmacro()
ptec_dist_list(lib_sources "${ptec_dist_libs}" SOURCES)
ptec_dist_list(ethos_sources "${ptec_dist_ethos_u}" SOURCES)
# One "key=value" a line; lists joined with ';'. Values are raw (board
# definitions hold quotes).
file(GENERATE OUTPUT ${ptec_dist_manifest} CONTENT "version=${PROJECT_VERSION}
board=${PTEC_BOARD}
cpu=${TARGET_CPU}
cpu_flags=${PTEC_CPU_FLAGS}
source_dir=${PROJECT_SOURCE_DIR}
lib_sources=${lib_sources}
ethos_u_sources=${ethos_sources}
o2_sources=${PTEC_NN_VARIANT_SOURCES}
board_sources=$<JOIN:$<TARGET_PROPERTY:ptec_board,SOURCES>,${sep}>
board_includes=$<JOIN:$<TARGET_PROPERTY:ptec_board,INCLUDE_DIRECTORIES>,${sep}>
board_definitions=$<JOIN:$<TARGET_PROPERTY:ptec_board,COMPILE_DEFINITIONS>,${sep}>
board_compile_options=$<JOIN:$<TARGET_PROPERTY:ptec_board,INTERFACE_COMPILE_OPTIONS>,${sep}>
board_linker_scripts=${ptec_dist_scripts}
npu_target=${PTEC_ETHOSU_TARGET}
")
set(PTEC_DIST_DIR ${PROJECT_SOURCE_DIR}/build/dist CACHE PATH "Where `make dist` writes the source drops")
add_custom_target(ptec_dist
  COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/scripts/dist.py ${ptec_dist_manifest} ${PTEC_DIST_DIR}
  COMMENT "source drop for board ${PTEC_BOARD} in ${PTEC_DIST_DIR}" VERBATIM)
