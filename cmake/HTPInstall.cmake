# Install rules and the HTP CMake package: headers, host library, htp-host, plugins and
# HTPConfig.cmake, so that out-of-tree plugins build with find_package(HTP) + htp_add_plugin().
include(CMakePackageConfigHelpers)

set(HTP_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/HTP)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/sdk/include/htp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/host/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/htp/host
        FILES_MATCHING PATTERN "*.hpp" PATTERN "python" EXCLUDE PATTERN "cli" EXCLUDE)
install(TARGETS htp_sdk EXPORT HTPTargets)
install(TARGETS htp_host EXPORT HTPTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS htp-host EXPORT HTPTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT HTPTargets NAMESPACE HTP:: DESTINATION ${HTP_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/HTPConfig.cmake.in
  ${PROJECT_BINARY_DIR}/HTPConfig.cmake
  INSTALL_DESTINATION ${HTP_INSTALL_CMAKEDIR}
  PATH_VARS HTP_INSTALL_PLUGIN_DIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/HTPConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/HTPConfig.cmake
  ${PROJECT_BINARY_DIR}/HTPConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/HTPPlugin.cmake
  ${PROJECT_SOURCE_DIR}/cmake/htp_plugin.map
  DESTINATION ${HTP_INSTALL_CMAKEDIR})
