# Writes the source tree's git commit into a header (cmake -P, run at every build by the
# turbanet_commit target, so `turbanet --version` names the commit built without a reconfigure).
# The header is rewritten only when the commit changed, so only src/cli/commands/version.cpp
# recompiles then. "unknown" outside a git checkout (a source tarball); "-dirty" when tracked
# files differ from the commit.
#   cmake -DSOURCE_DIR=<repo> -DOUT=<build>/generated/turbanet_commit.h -P cmake/git_commit.cmake
set(commit unknown)
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse --show-toplevel --short=12 HEAD
    OUTPUT_VARIABLE lines RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  string(REPLACE "\n" ";" lines "${lines}")
  list(LENGTH lines n)
  if(rc EQUAL 0 AND n EQUAL 2)
    list(GET lines 0 top)
    list(GET lines 1 hash)
    file(REAL_PATH "${SOURCE_DIR}" source_real)
    file(REAL_PATH "${top}" top_real)
    # A tarball unpacked inside another repository is not that repository's commit.
    if(top_real STREQUAL source_real)
      set(commit ${hash})
      execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} status --porcelain --untracked-files=no
        OUTPUT_VARIABLE changes ERROR_QUIET)
      if(NOT changes STREQUAL "")
        string(APPEND commit "-dirty")
      endif()
    endif()
  endif()
endif()
set(text "// The git commit this binary was built from (cmake/git_commit.cmake, at every build).\n#pragma once\n#define TURBANET_GIT_COMMIT \"${commit}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
else()
  set(old "")
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
