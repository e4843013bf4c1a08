# `cmake --install`: the headers, the libraries as ptec:: targets with their
# usage requirements (include path, the core's flags, the link cycle
# between the runtime and its kernel and backend tables), the board (its
# objects, headers and linker scripts), ptecConfig.cmake for
# find_package(ptec) and ptec.pc for pkg-config. docs/integration.md.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(ptec_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/ptec)

set(ptec_export ptec_runtime ptec_kernels ptec_kernels_cortex_m ptec_kernels_portable ptec_backends ptec_delegates
    ptec ptec_board)
set_target_properties(ptec_runtime PROPERTIES EXPORT_NAME runtime)
set_target_properties(ptec_kernels PROPERTIES EXPORT_NAME kernels)
set_target_properties(ptec_kernels_cortex_m PROPERTIES EXPORT_NAME kernels_cortex_m)
set_target_properties(ptec_kernels_portable PROPERTIES EXPORT_NAME kernels_portable)
set_target_properties(ptec_backends PROPERTIES EXPORT_NAME backends)
set_target_properties(ptec_delegates PROPERTIES EXPORT_NAME delegates)
set_target_properties(ptec PROPERTIES EXPORT_NAME ptec)
set_target_properties(ptec_board PROPERTIES EXPORT_NAME board)
if(PTEC_ETHOSU)
  set_target_properties(ptec_ethos_u PROPERTIES EXPORT_NAME backend_ethos_u)
  list(APPEND ptec_export ptec_ethos_u)
  # What provides Arm's driver API to it, when this build provides it.
  get_target_property(ptec_npu_links ptec_ethos_u LINK_LIBRARIES)
  foreach(lib ptec_npu_driver_direct ptec_npu_driver_regs ptec_npu_model)
    if(TARGET ${lib} AND (lib IN_LIST ptec_npu_links OR lib STREQUAL "ptec_npu_model"))
      list(APPEND ptec_export ${lib})
    endif()
  endforeach()
endif()
foreach(lib ${ptec_export})
  get_target_property(type ${lib} TYPE)
  if(NOT type STREQUAL "INTERFACE_LIBRARY" AND NOT type STREQUAL "OBJECT_LIBRARY")
    target_include_directories(${lib} PUBLIC $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  endif()
endforeach()
target_include_directories(ptec_board INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
                                                $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/ptec_board>)
# ptec_board.h and the board's own headers (board_config.h, ...).

install(TARGETS ${ptec_export} EXPORT ptecTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        OBJECTS DESTINATION ${CMAKE_INSTALL_LIBDIR}/ptec_board)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ptec DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The board's headers and linker scripts: boards/CMakeLists.txt (where the
# board's variables live).
install(EXPORT ptecTargets NAMESPACE ptec:: DESTINATION ${ptec_cmake_dir})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/ptecConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/ptecConfig.cmake INSTALL_DESTINATION ${ptec_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ptecConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ptecConfig.cmake ${PROJECT_BINARY_DIR}/ptecConfigVersion.cmake
        DESTINATION ${ptec_cmake_dir})

set(ptec_pc_cflags "")
if(CMAKE_SYSTEM_NAME STREQUAL "Generic" AND PTEC_CPU_FLAGS)
  set(ptec_pc_cflags "${PTEC_CPU_FLAGS}")
endif()
# For pkg-config and hand-written Makefiles: every library above in one
# archive, libptec.a, which the linker rescans by itself, so that -lptec
# needs no link order and no --start-group (pkg-config would also drop
# the repeated -l flags a cycle of archives needs).
set(ptec_combined_objects "")
foreach(lib ${ptec_export})
  get_target_property(type ${lib} TYPE)
  if(type STREQUAL "STATIC_LIBRARY")
    list(APPEND ptec_combined_objects $<TARGET_OBJECTS:${lib}>)
  endif()
endforeach()
add_library(ptec_combined STATIC ${ptec_combined_objects})
set_target_properties(ptec_combined PROPERTIES OUTPUT_NAME ptec LINKER_LANGUAGE C)
install(TARGETS ptec_combined ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
set(ptec_pc_libs "-lptec")
configure_file(${CMAKE_CURRENT_LIST_DIR}/ptec.pc.in ${PROJECT_BINARY_DIR}/ptec.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/ptec.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
