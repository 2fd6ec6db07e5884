# The doctest suites (included by CMakeLists.txt with TURBANET_TESTS): turbanet_tests, every
# test that runs without a GPU, and, in a build with the CUDA backend, turbanet_cuda_tests, the
# tests that call CudaBackend itself (tests/cuda/). Only that second executable links the CUDA
# module: loading cuBLAS costs a process ~0.06 s and ~200 MB of mappings, and ctest starts one
# process per test case (~500 of them).
find_package(doctest CONFIG REQUIRED)
enable_testing()
include(${doctest_DIR}/doctest.cmake)

# The op table (tests/op_cases.*, tests/op_table.cpp), compiled once for both suites.
add_library(turbanet_op_cases OBJECT tests/op_cases.cpp tests/op_table.cpp)

# How every test executable compiles and is found by ctest. The tests' own code computes
# little (training and the kernels run in turbanet_core, built as the build type says), so it
# compiles at -Og, about half the time of the Release build's -O3 (tests/test_config.cpp: 4.7
# -> 2.2 s), and the standard and library headers that most tests include are parsed once, as
# one precompiled header. Only those: a project header in it would put its names in every test.
set(TURBANET_TEST_PCH <doctest/doctest.h> <algorithm> <chrono> <cmath> <cstdint> <cstring>
  <filesystem> <fstream> <functional> <map> <memory> <optional> <set> <sstream> <string> <utility>
  <vector> <fmt/format.h> <nlohmann/json.hpp> <spdlog/spdlog.h>)
# tests/main.cpp defines doctest's main, which must come before doctest's header.
set_source_files_properties(tests/main.cpp PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
# The header is built once, with the op table, and reused by both executables.
function(turbanet_test_target target)
  target_link_libraries(${target} PRIVATE turbanet_core doctest::doctest)
  target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:-Og>")
  if(target STREQUAL "turbanet_op_cases")
    target_precompile_headers(${target} PRIVATE ${TURBANET_TEST_PCH})
  else()
    target_precompile_headers(${target} REUSE_FROM turbanet_op_cases)
  endif()
  # tests/test_interrupt.cpp and the CLI tests run the binary itself in child processes.
  target_compile_definitions(${target} PRIVATE
    TURBANET_SOURCE_DIR="${CMAKE_SOURCE_DIR}" TURBANET_BINARY="$<TARGET_FILE:turbanet>")
endfunction()

turbanet_test_target(turbanet_op_cases)
file(GLOB TURBANET_TEST_SOURCES CONFIGURE_DEPENDS tests/*.cpp)
list(REMOVE_ITEM TURBANET_TEST_SOURCES ${CMAKE_SOURCE_DIR}/tests/op_cases.cpp ${CMAKE_SOURCE_DIR}/tests/op_table.cpp)
# The fuzz harnesses too: tests/test_fuzz_replay.cpp replays the fuzz corpus and every
# recorded crash through them.
add_executable(turbanet_tests ${TURBANET_TEST_SOURCES} tests/fuzz/harnesses.cpp $<TARGET_OBJECTS:turbanet_op_cases>)
turbanet_test_target(turbanet_tests)
add_dependencies(turbanet_tests turbanet)
doctest_discover_tests(turbanet_tests WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})

if(TURBANET_HAVE_CUDA)
  # Every test case here starts with "cuda" and says SKIPPED without a GPU (tests/cuda_test_util.h).
  file(GLOB TURBANET_CUDA_TEST_SOURCES CONFIGURE_DEPENDS tests/cuda/*.cpp)
  add_executable(turbanet_cuda_tests tests/main.cpp ${TURBANET_CUDA_TEST_SOURCES} $<TARGET_OBJECTS:turbanet_op_cases>)
  turbanet_test_target(turbanet_cuda_tests)
  # The module is the same file the binary's loader opens (src/backend/cuda_module.cpp).
  target_link_libraries(turbanet_cuda_tests PRIVATE turbanet_cuda)
  target_include_directories(turbanet_cuda_tests PRIVATE tests)
  doctest_discover_tests(turbanet_cuda_tests WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
endif()

# The .deb packages made from this build and checked as a user meets them (~20 s); not in
# the sanitizer and fuzz builds, which make no completions or man pages (cmake/install.cmake).
if(NOT TURBANET_SANITIZE AND NOT TURBANET_FUZZ)
  add_test(NAME package.deb COMMAND ${CMAKE_SOURCE_DIR}/scripts/test-package.sh ${CMAKE_BINARY_DIR})
  set_tests_properties(package.deb PROPERTIES LABELS package)
endif()
