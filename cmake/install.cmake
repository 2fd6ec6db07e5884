# What `cmake --install build [--prefix P]` puts where, and the .deb packages cpack makes from it
# (docs/install.md). Included by CMakeLists.txt after the turbanet targets.
#
#   bin/turbanet                                    the program
#   lib/turbanet/libturbanet_cuda.so                its CUDA backend module, when built (found
#                                                   relative to the binary: TURBANET_MODULE_DIR_FROM_BIN)
#   share/man/man1/turbanet.1, turbanet-<cmd>.1     from the --help texts (help2man)
#   share/bash-completion/completions/turbanet      from `turbanet completion bash|zsh|fish`
#   share/zsh/vendor-completions/_turbanet
#   share/fish/vendor_completions.d/turbanet.fish

# The installed binary keeps the library directories it was linked from outside the system ones
# (Debian's OpenMP OpenBLAS, /usr/lib/<arch>/openblas-openmp): without them the loader would take
# whichever libopenblas.so.0 the alternatives system picks, possibly the serial build that is not
# safe for our concurrent sgemm calls (CMakeLists.txt, OpenBLAS).
set_target_properties(turbanet PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)
install(TARGETS turbanet RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT turbanet)
if(TURBANET_HAVE_CUDA)
  install(TARGETS turbanet_cuda LIBRARY DESTINATION ${TURBANET_MODULE_INSTALL_DIR} COMPONENT cuda)
endif()

# Completion scripts and man pages are made by running the binary just built: not in the
# sanitizer and fuzz builds (an instrumented binary, never installed) or a cross build.
if(NOT TURBANET_SANITIZE AND NOT TURBANET_FUZZ AND NOT CMAKE_CROSSCOMPILING)
  # Completion scripts, printed by the binary just built: they list its commands and flags and
  # the config keys, so they cannot disagree with it.
  set(TURBANET_COMPLETION_DIR ${CMAKE_BINARY_DIR}/completions)
  file(MAKE_DIRECTORY ${TURBANET_COMPLETION_DIR})
  add_custom_command(OUTPUT ${TURBANET_COMPLETION_DIR}/turbanet ${TURBANET_COMPLETION_DIR}/_turbanet
                            ${TURBANET_COMPLETION_DIR}/turbanet.fish
    COMMAND sh -c "\"$1\" completion bash > turbanet && \"$1\" completion zsh > _turbanet && \"$1\" completion fish > turbanet.fish"
            sh $<TARGET_FILE:turbanet>
    WORKING_DIRECTORY ${TURBANET_COMPLETION_DIR}
    DEPENDS turbanet
    COMMENT "Shell completion scripts" VERBATIM)
  add_custom_target(turbanet_completions ALL DEPENDS ${TURBANET_COMPLETION_DIR}/turbanet)
  install(FILES ${TURBANET_COMPLETION_DIR}/turbanet
    DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT turbanet)
  install(FILES ${TURBANET_COMPLETION_DIR}/_turbanet
    DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions COMPONENT turbanet)
  install(FILES ${TURBANET_COMPLETION_DIR}/turbanet.fish
    DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d COMPONENT turbanet)

  # Man pages from the --help texts (cmake/man_pages.cmake): turbanet.1 and one per command. Without
  # help2man (scripts/install-deps.sh installs it) the build says so and has none.
  find_program(HELP2MAN help2man)
  if(HELP2MAN)
    set(TURBANET_MAN_DIR ${CMAKE_BINARY_DIR}/man)
    add_custom_command(OUTPUT ${TURBANET_MAN_DIR}/turbanet.1
      COMMAND ${CMAKE_COMMAND} -DTURBANET=$<TARGET_FILE:turbanet> -DHELP2MAN=${HELP2MAN}
              -DVERSION=${PROJECT_VERSION} -DOUT=${TURBANET_MAN_DIR} -P ${CMAKE_SOURCE_DIR}/cmake/man_pages.cmake
      DEPENDS turbanet ${CMAKE_SOURCE_DIR}/cmake/man_pages.cmake
      COMMENT "Man pages (help2man)" VERBATIM)
    add_custom_target(turbanet_man ALL DEPENDS ${TURBANET_MAN_DIR}/turbanet.1)
    install(DIRECTORY ${TURBANET_MAN_DIR}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT turbanet
      FILES_MATCHING PATTERN "*.1")
  else()
    message(STATUS "turbanet man pages: skipped, help2man not found (apt-get install help2man)")
  endif()
endif()

# cpack (in the build directory) makes turbanet_<version>_<arch>.deb and, in a CUDA build,
# turbanet-cuda_<version>_<arch>.deb with the CUDA module. dpkg-shlibdeps names the first one's
# runtime libraries by their Debian packages. The second declares no CUDA libraries: the
# toolkit comes from NVIDIA (a /usr/local/cuda install or NVIDIA's apt repository, whose package
# names carry the toolkit version), not from Debian's main archive, and a machine without a GPU
# must be able to install turbanet; without the CUDA libraries the module does not load and
# `turbanet --version` and `turbanet devices` say why, while training runs on the CPU.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME turbanet)
set(CPACK_PACKAGE_VENDOR turbanet)
set(CPACK_PACKAGE_CONTACT "turbanet maintainers <turbanet@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "train swarms of small neural networks, vectorized over members")
string(CONCAT CPACK_PACKAGE_DESCRIPTION "turbanet trains many small neural networks at once (a swarm: seeds, hyperparameter\n"
  "grids, bootstrap ensembles) from one YAML config and writes one HDF5 run file; it\n"
  "evaluates, predicts with uncertainty and exports members to ONNX.")
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL turbanet)
if(TURBANET_HAVE_CUDA)
  list(APPEND CPACK_COMPONENTS_ALL cuda)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_TURBANET_PACKAGE_NAME turbanet)
set(CPACK_DEBIAN_TURBANET_PACKAGE_SHLIBDEPS ON)
# dpkg-shlibdeps names libopenblas.so.0's virtual package libopenblas0, which apt satisfies with
# the pthread build; the binary looks in openblas-openmp/ first (its RUNPATH), so ask for that one.
set(CPACK_DEBIAN_TURBANET_PACKAGE_DEPENDS "libopenblas0-openmp")
set(CPACK_COMPONENT_TURBANET_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_DEBIAN_CUDA_PACKAGE_NAME turbanet-cuda)
set(CPACK_DEBIAN_CUDA_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_CUDA_PACKAGE_DEPENDS "turbanet (= ${PROJECT_VERSION})")
string(CONCAT CPACK_COMPONENT_CUDA_DESCRIPTION "CUDA backend module of turbanet\n"
  "Trains turbanet swarms on NVIDIA GPUs (device: cuda). Needs the CUDA runtime and cuBLAS\n"
  "of the toolkit it was built with (${CUDAToolkit_VERSION}), installed from NVIDIA.")
include(CPack)
