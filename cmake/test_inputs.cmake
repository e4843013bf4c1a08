# What the tests need from outside the repository, in one place.
#
# PTEC_SHARED_DIR, the shared/ folder (spec, upstream sample programs): the
# PTEC_SHARED environment variable when set (the Makefile exports it), else
# -DPTEC_SHARED_DIR, else ../shared next to the source tree.
#
# PTEC_STRICT (environment, set by `make test` and so by CI): a test group
# that cannot be registered because a tool or data folder is missing is a
# configuration error. Otherwise it is registered as one test that reports
# itself skipped and names what is missing, so ctest's summary counts it:
# never a silent drop.
set(ptec_shared_doc "The shared/ folder (spec, upstream models); $ENV{PTEC_SHARED} overrides it")
if(NOT "$ENV{PTEC_SHARED}" STREQUAL "")
  set(PTEC_SHARED_DIR "$ENV{PTEC_SHARED}" CACHE PATH "${ptec_shared_doc}" FORCE)
else()
  set(PTEC_SHARED_DIR "${PROJECT_SOURCE_DIR}/../shared" CACHE PATH "${ptec_shared_doc}")
endif()
get_filename_component(PTEC_SHARED_DIR "${PTEC_SHARED_DIR}" ABSOLUTE)

set(PTEC_STRICT OFF)
if("$ENV{PTEC_STRICT}" STREQUAL "1")
  set(PTEC_STRICT ON)
endif()

# ptec_tests_unavailable(<group> <what is missing>)
function(ptec_tests_unavailable group missing)
  if(PTEC_STRICT)
    message(FATAL_ERROR "${group} tests cannot run: ${missing}. Under PTEC_STRICT=1 (make test, CI) "
                        "that is a configuration error: run scripts/setup.sh, or set PTEC_SHARED.")
  endif()
  message(WARNING "${group} tests cannot run: ${missing}; registered as the skipped test skipped.${group}")
  add_test(NAME skipped.${group} COMMAND sh -c "echo 'skipped: ${missing}'; exit 77")
  set_tests_properties(skipped.${group} PROPERTIES SKIP_RETURN_CODE 77)
endfunction()

if(PTEC_BUILD_HOST_TOOLS AND NOT EXISTS ${PTEC_SHARED_DIR}/models/upstream/add.pte)
  ptec_tests_unavailable(shared_data "no upstream sample programs in ${PTEC_SHARED_DIR}/models/upstream")
endif()

# The bare-metal presets of CMakePresets.json (those naming a TARGET_CPU),
# whose firmware the target tests build and run in QEMU, one core each on
# its default board; and those of them on Armv8-M, whose stack limit
# register turns a stack overflow into a fault (Armv7-M has none:
# docs/targets.md).
set(PTEC_CORTEX_M_PRESETS)
file(READ ${PROJECT_SOURCE_DIR}/CMakePresets.json ptec_presets_json)
string(JSON ptec_preset_count LENGTH "${ptec_presets_json}" configurePresets)
math(EXPR ptec_preset_last "${ptec_preset_count} - 1")
foreach(i RANGE ${ptec_preset_last})
  string(JSON ptec_preset_cpu ERROR_VARIABLE ptec_no_cpu GET "${ptec_presets_json}"
         configurePresets ${i} cacheVariables TARGET_CPU)
  if(NOT ptec_no_cpu)
    string(JSON ptec_preset_name GET "${ptec_presets_json}" configurePresets ${i} name)
    list(APPEND PTEC_CORTEX_M_PRESETS ${ptec_preset_name})
  endif()
endforeach()
set(PTEC_CORTEX_M_STACK_LIMIT_PRESETS cortex-m55 cortex-m33)
