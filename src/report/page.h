// The report page: one self-contained HTML file (inline CSS and SVG, no script and no
// reference to any other file or address) made of sections. Every section is
// <section class="tn-section" id="sec-NAME"> with an <h2>; what a section lacks is a visible
// <p class="tn-missing"> note (docs/commands.md, "Reports").
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace tn::report {

struct Section {
  std::string id;     // "run" → id "sec-run"
  std::string title;  // the <h2>
  std::string body;   // HTML: charts (report/chart.h), tables, notes
};

// A note saying what is missing and why, e.g. "no validation split: the run trained without one".
std::string missing_note(const std::string& text);

// A paragraph of plain text.
std::string paragraph(const std::string& text);

// A table with a header row; cells are plain text.
std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

// Two-column table of (name, value) pairs.
std::string facts(const std::vector<std::pair<std::string, std::string>>& rows);

// Text shown folded (<details>) as preformatted, e.g. the config.
std::string folded(const std::string& summary, const std::string& text);

// Charts side by side, wrapping on narrow windows.
std::string figures(const std::vector<std::string>& svgs);

// The whole page: title, a table of contents, the sections in order.
std::string html_page(const std::string& title, const std::string& subtitle, const std::vector<Section>& sections);

}  // namespace tn::report
