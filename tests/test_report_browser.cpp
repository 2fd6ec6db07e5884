// The HTML report in a real browser (scripts/check_report.py: headless Chromium through
// Selenium): the checker passes a self-contained page and fails each fault it is there to find
// (tests/data/report/), and the report of every shipped config's run passes it. Without
// chromium, chromium-driver, python3-selenium or python3-pil each case says SKIPPED.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cli_test_util.h"
#include "eval_test_util.h"
#include "python_test_util.h"

namespace {

namespace fs = std::filesystem;

constexpr int kBrowserUnavailable = 3;  // scripts/check_report.py's exit code without a browser

// scripts/check_report.py run by /usr/bin/python3 (Debian's selenium) over `pages`: its exit
// code and what it printed; {kBrowserUnavailable, why} prints SKIPPED first.
std::pair<int, std::string> check_report(const std::vector<fs::path>& pages, const std::string& extra = "") {
  std::string cmd = "/usr/bin/python3 " + std::string(TURBANET_SOURCE_DIR) + "/scripts/check_report.py" + extra;
  for (const fs::path& p : pages) cmd += " '" + p.string() + "'";
  const std::string out = tn::test::run_command(cmd + " 2>&1; echo \"exit $?\"");
  const std::size_t at = out.rfind("exit ");
  REQUIRE_MESSAGE(at != std::string::npos, out);
  const int rc = std::stoi(out.substr(at + 5));
  const std::string printed = out.substr(0, at);
  if (rc == kBrowserUnavailable)
    MESSAGE("SKIPPED: " << printed.substr(0, printed.find('\n')) << "; scripts/install-deps.sh installs them");
  return {rc, printed};
}

fs::path fixture(const std::string& name) { return fs::path(TURBANET_SOURCE_DIR) / "tests/data/report" / name; }

bool has(const std::string& out, const std::string& line) { return out.find(line) != std::string::npos; }

// Checks that the checker fails fixture `name` (exit 1) printing each of `lines`; returns what it
// printed ("" when there is no browser here).
std::string check_fails(const std::string& name, const std::vector<std::string>& lines) {
  const auto [rc, out] = check_report({fixture(name)});
  if (rc == kBrowserUnavailable) return "";
  CHECK_MESSAGE(rc == 1, out);
  for (const std::string& line : lines) CHECK_MESSAGE(has(out, line), "expected \"" << line << "\" in:\n" << out);
  return out;
}

}  // namespace

TEST_CASE("the browser check passes a self-contained report page, one ok line per section") {
  const auto [rc, out] = check_report({fixture("good.html")});
  if (rc == kBrowserUnavailable) return;
  CHECK_MESSAGE(rc == 0, out);
  CHECK(out == "good.html: sec-learning-curve: ok\ngood.html: sec-members: ok\n");
}

TEST_CASE("the browser check writes each section's screenshot, PAGE-sec-NAME.png, as wide as the window lays it out") {
  const fs::path shots = evaltest::scratch("browser-shots");
  fs::remove_all(shots);
  const auto [rc, out] = check_report({fixture("good.html")}, " --width 600 --screenshots " + shots.string());
  if (rc == kBrowserUnavailable) return;
  CHECK_MESSAGE(rc == 0, out);
  // The PNG's width, from its IHDR chunk (big-endian at byte 16): 600 px less the body's margins.
  for (const char* name : {"good-sec-learning-curve.png", "good-sec-members.png"}) {
    const std::string png = evaltest::slurp(shots / name);
    REQUIRE_MESSAGE(png.size() > 24, name);
    const auto byte = [&](int i) { return static_cast<unsigned>(static_cast<unsigned char>(png[i])); };
    CHECK_MESSAGE((byte(16) << 24 | byte(17) << 16 | byte(18) << 8 | byte(19)) == 568, name);
  }
}

TEST_CASE("the browser check captures whole each section of a page longer than its window") {
  const auto [rc, out] = check_report({fixture("long-page.html")});
  if (rc == kBrowserUnavailable) return;
  CHECK_MESSAGE(rc == 0, out);
  CHECK(out == "long-page.html: sec-one: ok\nlong-page.html: sec-two: ok\nlong-page.html: sec-three: ok\n"
               "long-page.html: sec-four: ok\n");
}

TEST_CASE("the browser check fails a page whose script throws, quoting the console error") {
  check_fails("console-error.html", {"console-error.html: FAIL: console error: console-error.html 11:0 Uncaught "
                                     "ReferenceError: drawLegend is not defined\n"});
}

TEST_CASE("the browser check fails a page whose CSS overrides an SVG fill attribute") {
  check_fails("css-overrides-fill.html",
              {"css-overrides-fill.html: FAIL: the page's CSS overrides fill=\"#fff\" of an <text> class=\"tn-cell\" "
               "(drawn rgb(51, 51, 51)); set it by style or class\n"});
}

TEST_CASE("the browser check fails a section whose chart drew nothing and names the blank svg") {
  check_fails("empty-section.html",
              {"empty-section.html: sec-summary: ok\n",
               "empty-section.html: sec-learning-curve: FAIL: nothing is drawn below its <h2> (one single colour); "
               "an <svg> of 400x200 px is blank (one single colour)\n"});
}

TEST_CASE("the browser check fails each section without a shown heading, shown box or sec-NAME id, and a page without sections") {
  const auto [rc, out] = check_report({fixture("bad-sections.html"), fixture("no-sections.html")});
  if (rc == kBrowserUnavailable) return;
  CHECK(rc == 1);
  CHECK(out == "bad-sections.html: sec-summary: FAIL: no visible <h2>\n"
               "bad-sections.html: sec-hidden: FAIL: no visible <h2>; zero-sized (0x0 px)\n"
               "bad-sections.html: Metrics: FAIL: id \"Metrics\" is not sec-NAME\n"
               "bad-sections.html: sec-empty-heading: FAIL: its <h2> is empty\n"
               "bad-sections.html: sec-fine: ok\n"
               "no-sections.html: FAIL: no <section class=\"tn-section\"> in the page\n");
}

TEST_CASE("the browser check fails references outside the page, each with its source line, and blocks their loads") {
  const std::string outside = "external-reference.html: FAIL: references something outside the page, ";
  check_fails("external-reference.html",
              {outside + "line 8: <link href=\"report.css\">", outside + "line 9: @import in <style>",
               outside + "line 9: url(https://fonts.example.com/css?family=Inter) in <style>",
               outside + "line 14: <img src=\"https://example.com/logo.png\">",
               // Opened alone: the style sheet beside it is not found, and the network is not reached.
               "console error: report.css - Failed to load resource: net::ERR_FILE_NOT_FOUND",
               "console error: https://example.com/logo.png - Failed to load resource: net::ERR_PROXY_CONNECTION_FAILED"});
}

TEST_CASE("the browser check fails a page whose script requests a URL, with no reference in its source") {
  const std::string out = check_fails("script-request.html", {"script-request.html: FAIL: requested something outside "
                                                              "the page: https://telemetry.example.com/pixel.gif\n"});
  CHECK_MESSAGE(!has(out, "references something outside the page"), out);
}

TEST_CASE("the browser check fails a page that never finishes loading and goes on with the next page") {
  const auto [rc, out] = check_report({fixture("never-loads.html"), fixture("good.html")}, " --load-seconds 2");
  if (rc == kBrowserUnavailable) return;
  CHECK(rc == 1);
  CHECK_MESSAGE(has(out, "never-loads.html: FAIL: the page did not load in 2 s (TimeoutException)\n"), out);
  CHECK_MESSAGE(has(out, "good.html: sec-members: ok\n"), out);
}

TEST_CASE("the report of every shipped config's run opens in a browser with no console error and every section drawn") {
  // No browser here: say so before training anything.
  if (check_report({fixture("good.html")}).first == kBrowserUnavailable) return;
  // Fewer epochs and members: seconds each, and still a curve of several epochs to draw.
  const std::map<std::string, std::vector<std::string>> reduced = {
      {"fashion-mnist-ensemble", {"swarm.size=2", "train.epochs=2", "train.batch_size=256"}},
      {"fashion-mnist-quick", {"swarm.size=2", "train.epochs=2", "train.batch_size=256"}},
      {"iris", {"train.epochs=5"}},
      {"random-walk", {"swarm.size=4", "data.source.series=4", "train.epochs=3"}},
      {"spirals", {"train.epochs=5"}},
      {"spirals-large", {"swarm.size=4", "train.epochs=2"}},
      {"spirals-small", {"swarm.size=8", "train.epochs=5"}},
      {"spirals-halving", {"swarm.size=8", "optimizer.lr.num=2", "train.epochs=5", "search.rungs=[2, 3]"}},
      {"spirals-pbt", {"swarm.size=8", "train.epochs=5", "search.every_epochs=2"}},
      {"spirals-widths", {"swarm.size=21", "train.epochs=3"}},
      {"stocks-lstm", {"swarm.size=4", "data.source.series=4", "train.epochs=3"}}};
  std::vector<fs::path> pages;
  for (const auto& [name, path] : tn::test::shipped_configs(reduced)) {
    const fs::path run = tn::test::train_quietly(name, path, reduced.at(name), evaltest::scratch("report-" + name + ".h5"));
    pages.push_back(evaltest::scratch(name + ".html"));
    const auto [rc, out] =
        tn::test::run_binary_in(fs::current_path(), {"report", run.string(), "--out", pages.back().string(), "--force"});
    REQUIRE_MESSAGE(rc == 0, name << ": " << out);
  }
  const auto [rc, out] = check_report(pages);
  MESSAGE(out);
  CHECK_MESSAGE(rc == 0, out);
  for (const fs::path& page : pages)
    CHECK_MESSAGE(has(out, page.filename().string() + ": sec-"), page.filename() << " has no section:\n" << out);
}
