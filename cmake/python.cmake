# The Python extension module turbaswarm._core (python/src/) over turbanet_core, with nanobind
# (docs/python.md says why nanobind). Included when TURBANET_PYTHON is on: by scikit-build-core
# for `pip install .` (pyproject.toml), or in a build tree for the pytest suite, where the
# module and the package's Python files are laid out in ${CMAKE_BINARY_DIR}/python/turbaswarm.
find_package(Python 3.8 REQUIRED COMPONENTS Interpreter Development.Module)
if(NOT nanobind_DIR)
  execute_process(COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir
    OUTPUT_VARIABLE nanobind_DIR OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE nanobind_found)
  if(NOT nanobind_found EQUAL 0)
    message(FATAL_ERROR "TURBANET_PYTHON=ON needs nanobind for ${Python_EXECUTABLE} "
                        "(pip install nanobind, or scripts/install-test-venv.sh and -DPython_EXECUTABLE=.venv-test/bin/python)")
  endif()
endif()
find_package(nanobind CONFIG REQUIRED)
file(GLOB TURBANET_PYTHON_SOURCES CONFIGURE_DEPENDS python/src/*.cpp)
# NB_STATIC: nanobind's runtime linked into the module (one module, no libnanobind to ship).
nanobind_add_module(_core NB_STATIC ${TURBANET_PYTHON_SOURCES})
# Debian's static libhdf5.a (which the binary links, CMakeLists.txt) is not position-independent:
# the module takes HDF5's shared library, named before the core so that the linker binds every
# H5 symbol to it and extracts nothing from the archive.
find_package(HDF5 REQUIRED COMPONENTS C)
target_link_libraries(_core PRIVATE HDF5::HDF5 turbanet_core)
if(TURBANET_WERROR)
  target_compile_options(_core PRIVATE -Werror)
endif()
if(SKBUILD)
  install(TARGETS _core LIBRARY DESTINATION turbaswarm COMPONENT python)
else()
  # A build tree's importable package: PYTHONPATH=build/python (python/tests/, ctest).
  file(GLOB TURBANET_PYTHON_FILES CONFIGURE_DEPENDS python/turbaswarm/*.py)
  set_target_properties(_core PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/python/turbaswarm)
  add_custom_target(turbaswarm_files
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/python/turbaswarm
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${TURBANET_PYTHON_FILES} ${CMAKE_BINARY_DIR}/python/turbaswarm/)
  add_dependencies(_core turbaswarm_files)
endif()

# The package's pytest suite (python/tests/) as one ctest, with Debian's python3 and its pytest,
# numpy, h5py and scikit-learn, against this build tree's package and binary.
if(TURBANET_TESTS AND NOT SKBUILD)
  find_program(TURBANET_TEST_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH)
  add_test(NAME python_package
    COMMAND ${TURBANET_TEST_PYTHON} -m pytest -q -p no:cacheprovider ${CMAKE_SOURCE_DIR}/python/tests)
  set_tests_properties(python_package PROPERTIES WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
    ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;TURBANET_BINARY=${CMAKE_BINARY_DIR}/turbanet;TURBANET_SOURCE_DIR=${CMAKE_SOURCE_DIR}")
endif()
