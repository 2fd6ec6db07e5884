# TURBANET_KERNELS_ONLY (included by CMakeLists.txt): the CPU kernels (src/backend/cpu/) with
# what they call, and their unit tests as one doctest executable, turbanet_kernel_tests. It
# needs only spdlog, OpenMP, OpenBLAS, Highway and doctest, so it cross-compiles against a few
# multiarch packages (scripts/test-aarch64.sh: aarch64 under qemu-user). The config, data,
# training and file layers, and their tests, are left out.
find_package(doctest CONFIG REQUIRED)

file(GLOB TURBANET_KERNEL_SOURCES CONFIGURE_DEPENDS
  src/backend/cpu/*.cpp src/backend/cpu/ops/*.cpp src/backend/cuda_module.cpp
  src/math/*.cpp src/model/*.cpp src/swarm/*.cpp)
add_library(turbanet_kernels STATIC ${TURBANET_KERNEL_SOURCES})
include(cmake/version_header.cmake)  # cuda_module.cpp reads generated/turbanet_version.h
target_include_directories(turbanet_kernels PUBLIC src ${CMAKE_BINARY_DIR}/generated ${OPENBLAS_INCLUDE_DIR})
target_compile_definitions(turbanet_kernels PUBLIC ${TURBANET_HWY_DEFINITIONS})
target_link_libraries(turbanet_kernels PUBLIC spdlog::spdlog OpenMP::OpenMP_CXX ${OPENBLAS_LIBRARY}
  PkgConfig::HWY ${CMAKE_DL_LIBS})

# The kernel tests: each runs on every SIMD target this CPU supports (tests/target_test_util.h).
add_executable(turbanet_kernel_tests tests/main.cpp
  tests/test_lanes.cpp tests/test_ops.cpp tests/op_cases.cpp tests/op_table.cpp tests/test_gemm.cpp
  tests/test_cpu_target.cpp tests/test_math.cpp tests/test_dense_grad.cpp tests/test_recurrent_grad.cpp
  tests/test_for_each_block.cpp)
target_link_libraries(turbanet_kernel_tests PRIVATE turbanet_kernels doctest::doctest)
target_compile_definitions(turbanet_kernel_tests PRIVATE TURBANET_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
