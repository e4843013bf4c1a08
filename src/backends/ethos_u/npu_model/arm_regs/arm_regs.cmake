# Mode (b) of ptec_npu_model (docs/ethos-u.md, "Register-level mode"): Arm's
# ethos-u-core-driver, unmodified, built from the shared folder, over a
# register file in RAM that driver_regs.c serves with the model.
#   ptec_add_arm_ethosu_driver(<name> u55|u65)   Arm's driver for one product
#   ptec_add_npu_driver_regs(<name> u55|u65)     driver_regs.c + that driver + the model
# Arm's sources are third-party: compiled without our warnings and with the
# driver's logging off (no stdio calls survive), never copied here.
set(ptec_arm_driver_default "${PROJECT_SOURCE_DIR}/../shared/third_party/ethos-u-core-driver")
if(DEFINED ENV{PTEC_SHARED} AND NOT "$ENV{PTEC_SHARED}" STREQUAL "")
  set(ptec_arm_driver_default "$ENV{PTEC_SHARED}/third_party/ethos-u-core-driver")
endif()
set(PTEC_ETHOSU_ARM_DRIVER_DIR "${ptec_arm_driver_default}" CACHE PATH
    "Arm's ethos-u-core-driver sources (PTEC_SHARED/third_party/ethos-u-core-driver)")

function(ptec_add_arm_ethosu_driver name arch)
  set(d ${PTEC_ETHOSU_ARM_DRIVER_DIR})
  if(NOT EXISTS ${d}/src/ethosu_driver.c)
    message(FATAL_ERROR "Arm's ethos-u-core-driver not found in ${d} (PTEC_ETHOSU_ARM_DRIVER_DIR)")
  endif()
  string(TOUPPER ${arch} ARCH)
  add_library(${name} STATIC ${d}/src/ethosu_driver.c ${d}/src/ethosu_device_u55_u65.c)
  # cmsis_compiler.h: ours (two intrinsics) unless the board brings CMSIS
  target_include_directories(${name} SYSTEM PUBLIC ${d}/include
                             PRIVATE ${d}/src ${CMAKE_CURRENT_FUNCTION_LIST_DIR})
  target_compile_definitions(${name} PUBLIC ETHOSU_ARCH=${arch} ETHOS${ARCH} ETHOSU
                             PRIVATE ETHOSU_LOG_ENABLE=0 ETHOSU_LOG_SEVERITY=0)
  target_compile_options(${name} PRIVATE -w)
  set_target_properties(${name} PROPERTIES C_EXTENSIONS ON)
endfunction()

function(ptec_add_npu_driver_regs name arch)
  ptec_add_arm_ethosu_driver(${name}_arm ${arch})
  add_library(${name} STATIC ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../driver_regs.c)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(${name} PUBLIC ${name}_arm ptec_npu_model)
endfunction()

# ptec_add_ethos_u_arm_regs(<name> u55|u65 <accelerator>): the EthosUBackend's
# sources, with the model report, over Arm's driver in register-level mode
# simulating <accelerator>: for tests and firmware that run mode (b) beside
# the build's own driver choice.
function(ptec_add_ethos_u_arm_regs name arch accelerator)
  file(GLOB sources ${PROJECT_SOURCE_DIR}/src/backends/ethos_u/*.c)
  ptec_add_npu_driver_regs(${name}_driver ${arch})
  target_compile_definitions(${name}_driver PRIVATE PTEC_NPU_MODEL_DEFAULT_CONFIG="${accelerator}")
  add_library(${name} STATIC ${sources})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/include PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_definitions(${name} PRIVATE PTEC_ETHOSU_TARGET="${accelerator}" PTEC_ETHOSU_FAST_SCRATCH_BYTES=0u
                             PTEC_ETHOSU_MODEL_REPORT=1)
  target_link_libraries(${name} PUBLIC ${name}_driver ptec_runtime)
endfunction()
