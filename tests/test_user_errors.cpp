// User errors: every error a person can fix is one UserError carrying its exit code (2 bad
// input, 1 an output not written), reported by one catch that every command returns through.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "backend/backend.h"
#include "cli/commands/cli_util.h"
#include "cli/commands/commands.h"
#include "cli_test_util.h"
#include "config/config.h"
#include "data/dataset.h"
#include "io/run_file_error.h"
#include "run/errors.h"
#include "util/error_report.h"
#include "util/user_error.h"

using namespace tn;
using tn::test::logged;

namespace {

// The exit code with_user_errors gives when fn throws `e`, and what it logged.
template <class E>
std::pair<int, std::string> reported(const E& e) {
  int code = -1;
  const std::string log = logged([&] { code = with_user_errors([&]() -> int { throw e; }); });
  return {code, log};
}

}  // namespace

TEST_CASE("every user-facing error is a UserError that exits 2 with its own message") {
  for (const auto& [code, log] :
       {reported(ConfigError("cfg.yaml:3:5: train.epochs: must be >= 1")), reported(DataError("data.csv:7: ragged row")),
        reported(BackendError("device: cuda but no GPU")), reported(RunFileError("'r.h5' is not an HDF5 file")),
        reported(UsageError("--split: the run has no val split")),
        reported(DataFileNotFound("data file 'x.csv' not found", "data.source.path", "x.csv"))}) {
    CHECK(code == kExitUsage);
    CHECK(log.find("error") != std::string::npos);
  }
  const auto [code, log] = reported(DataError("data.csv:7: ragged row"));
  CHECK(log.find("data.csv:7: ragged row") != std::string::npos);
}

TEST_CASE("a run file error while writing an output exits 1, the same error while reading exits 2") {
  const auto fail = [](const std::string& why) -> int { throw RunFileError(why); };
  CHECK(with_user_errors([&] { return fail("'in.h5' is damaged"); }) == kExitUsage);
  int code = -1;
  const std::string log = logged([&] {
    code = with_user_errors([&] { return writing_output([&] { return fail("cannot write run file 'out.h5': disk full"); }); });
  });
  CHECK(code == kExitIo);
  CHECK(log.find("cannot write run file 'out.h5': disk full") != std::string::npos);
}

TEST_CASE("writing_output passes its value through and leaves errors other than run file errors as they are") {
  CHECK(writing_output([] { return 7; }) == 7);
  try {
    writing_output([]() -> int { throw ConfigError("bad"); });
    FAIL("no error");
  } catch (const UserError& e) {
    CHECK(e.exit_code() == kExitBadInput);
    CHECK(std::string(e.what()) == "bad");
  }
  try {
    writing_output([]() -> int { throw RunFileError("cannot write 'a'", kExitIoFailure); });
    FAIL("no error");
  } catch (const RunFileError& e) {
    CHECK(e.exit_code() == kExitIoFailure);
  }
}

TEST_CASE("an internal error is not a user error: it goes on past with_user_errors and reports exit 1") {
  CHECK_THROWS_AS(with_user_errors([]() -> int { throw std::logic_error("bug"); }), std::logic_error);
  int code = -1;
  const std::string log = logged([&] { code = report_failure(std::logic_error("bug"), "merging the shards failed"); });
  CHECK(code == kExitIo);
  CHECK(log.find("merging the shards failed: bug") != std::string::npos);
  CHECK(exit_code_of(std::runtime_error("x")) == kExitIoFailure);
  CHECK(exit_code_of(RunFileError("x", kExitIoFailure)) == kExitIoFailure);
}
