# cmake --install: the headers, libte and libte_runtime, the CMake package (teConfig.cmake,
# its version file, the te::te and te::runtime targets, te_add_kernels) and te.pc.
#
#   cmake --install build --prefix /opt/te
#   find_package(te 0.1 REQUIRED)      # with CMAKE_PREFIX_PATH=/opt/te
#   target_link_libraries(app PRIVATE te::te)
#   pkg-config --cflags --libs te      # with PKG_CONFIG_PATH=/opt/te/lib/pkgconfig
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Components (the Debian packages of cmake/packaging.cmake): "runtime" is what programs
# need (the shared libraries, bin/te), "dev" everything to build against te.
set(CMAKE_INSTALL_DEFAULT_COMPONENT_NAME dev)

set(TE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/te CACHE STRING
    "Where teConfig.cmake is installed, relative to the prefix")

install(TARGETS te te_runtime te_c_runtime te_c_runtime_shared EXPORT teTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/te DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(EXPORT teTargets NAMESPACE te:: DESTINATION ${TE_INSTALL_CMAKEDIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/teConfig.cmake.in
  ${PROJECT_BINARY_DIR}/teConfig.cmake INSTALL_DESTINATION ${TE_INSTALL_CMAKEDIR})
# 0.x releases break compatibility between minor versions; from 1.0, between majors.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(TE_VERSION_COMPATIBILITY SameMinorVersion)
else()
  set(TE_VERSION_COMPATIBILITY SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/teConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY ${TE_VERSION_COMPATIBILITY})
install(FILES
  ${PROJECT_BINARY_DIR}/teConfig.cmake ${PROJECT_BINARY_DIR}/teConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/teKernels.cmake
  DESTINATION ${TE_INSTALL_CMAKEDIR})

# pkg-config: te (the whole library) and te-runtime (what AOT kernels link). The prefix is
# found from the .pc file's own folder, so `cmake --install --prefix` anywhere works.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(TE_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH TE_PC_UP "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
  string(REGEX REPLACE "/$" "" TE_PC_UP "${TE_PC_UP}")
  set(TE_PC_PREFIX "\${pcfiledir}/${TE_PC_UP}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(TE_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  set(TE_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(TE_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(TE_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/te.pc.in ${PROJECT_BINARY_DIR}/te.pc @ONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/te-runtime.pc.in ${PROJECT_BINARY_DIR}/te-runtime.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/te.pc ${PROJECT_BINARY_DIR}/te-runtime.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The command line, bin/te (tools/te), when built.
if(TARGET te_cli)
  install(TARGETS te_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
endif()
