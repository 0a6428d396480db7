# Install rules for the client library: libiorelay.so, its header, iorelay.pc and the CMake
# package (find_package(iorelay) → iorelay::iorelay). Included from src/client.
include(CMakePackageConfigHelpers)

install(TARGETS iorelay EXPORT iorelayTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/iorelay/iorelay.h
  ${PROJECT_BINARY_DIR}/include/iorelay/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/iorelay)
install(TARGETS iorelay-ctl RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(IORELAY_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/iorelay)
install(EXPORT iorelayTargets NAMESPACE iorelay:: DESTINATION ${IORELAY_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/iorelayConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/iorelayConfig.cmake INSTALL_DESTINATION ${IORELAY_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/iorelayConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/iorelayConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/iorelayConfigVersion.cmake DESTINATION ${IORELAY_CMAKE_DIR})

# pkg-config: prefix found from the .pc file's own place, so `cmake --install --prefix` and
# relocated trees work.
file(RELATIVE_PATH IORELAY_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" IORELAY_PC_TO_PREFIX "${IORELAY_PC_TO_PREFIX}")
set(IORELAY_PC_PREFIX "\${pcfiledir}/${IORELAY_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/iorelay.pc.in ${PROJECT_BINARY_DIR}/cmake/iorelay.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cmake/iorelay.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
