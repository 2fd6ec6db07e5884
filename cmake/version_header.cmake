# generated/turbanet_version.h (src/util/turbanet_version.h.in): the version, the CUDA toolkit,
# and where an installation puts the CUDA module relative to the binary (GNUInstallDirs:
# lib/<multiarch>/turbanet under /usr), which src/backend/cuda_module.cpp looks in. Included by
# CMakeLists.txt and by the kernels-only build (cmake/kernel_tests.cmake), which compiles
# cuda_module.cpp too.
include(GNUInstallDirs)
set(TURBANET_MODULE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/turbanet)
file(RELATIVE_PATH TURBANET_MODULE_DIR_FROM_BIN ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}
  ${CMAKE_INSTALL_PREFIX}/${TURBANET_MODULE_INSTALL_DIR})
configure_file(${CMAKE_SOURCE_DIR}/src/util/turbanet_version.h.in ${CMAKE_BINARY_DIR}/generated/turbanet_version.h @ONLY)
