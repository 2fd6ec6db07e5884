// The report page as one self-contained HTML file (report/page.h).
#include "report/page.h"

#include "report/markup.h"

namespace tn::report {

std::string missing_note(const std::string& text) { return "<p class=\"tn-missing\">" + escape(text) + "</p>\n"; }

std::string paragraph(const std::string& text) { return "<p>" + escape(text) + "</p>\n"; }

std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::string t = "<table class=\"tn-table\"><thead><tr>";
  for (const std::string& h : header) t += "<th>" + escape(h) + "</th>";
  t += "</tr></thead><tbody>";
  for (const auto& row : rows) {
    t += "<tr>";
    for (const std::string& c : row) t += "<td>" + escape(c) + "</td>";
    t += "</tr>";
  }
  return t + "</tbody></table>\n";
}

std::string facts(const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string t = "<table class=\"tn-facts\"><tbody>";
  for (const auto& [k, v] : rows) t += "<tr><th>" + escape(k) + "</th><td>" + escape(v) + "</td></tr>";
  return t + "</tbody></table>\n";
}

std::string folded(const std::string& summary, const std::string& text) {
  return "<details><summary>" + escape(summary) + "</summary><pre>" + escape(text) + "</pre></details>\n";
}

std::string figures(const std::vector<std::string>& svgs) {
  std::string f = "<div class=\"tn-figures\">";
  for (const std::string& s : svgs) f += "<figure>" + s + "</figure>";
  return f + "</div>\n";
}

std::string html_page(const std::string& title, const std::string& subtitle, const std::vector<Section>& sections) {
  static const char* const css =
      "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1360px;padding:0 16px;"
      "color:#222;background:#fff}"
      "h1{font-size:1.5em;margin:16px 0 4px}h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-bottom:2px}"
      "nav a{margin-right:12px}.tn-sub{color:#555;margin:0 0 8px}"
      ".tn-missing{background:#fff4e5;border-left:4px solid #e69500;padding:4px 8px}"
      ".tn-table,.tn-facts{border-collapse:collapse;font-size:0.9em;margin:6px 0}"
      ".tn-table td,.tn-table th,.tn-facts td,.tn-facts th{border:1px solid #ddd;padding:2px 8px;text-align:left}"
      ".tn-facts th{background:#f6f6f6;font-weight:normal}"
      ".tn-figures{display:flex;flex-wrap:wrap;gap:8px}figure{margin:0}"
      ".tn-chart{font-size:11px;max-width:100%;height:auto}.tn-chart text{fill:#333}"
      ".tn-chart .tn-title{font-size:13px;font-weight:bold}.tn-grid{stroke:#eee}"
      ".tn-frame{fill:none;stroke:#999}.tn-chart .tn-cell{font-size:10px}"
      "pre{background:#f6f6f6;padding:8px;overflow:auto;font-size:0.85em}";
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
                     escape(title) + "</title>\n<style>" + css + "</style>\n</head>\n<body>\n<h1>" + escape(title) +
                     "</h1>\n<p class=\"tn-sub\">" + escape(subtitle) + "</p>\n<nav>";
  for (const Section& s : sections) page += "<a href=\"#sec-" + escape(s.id) + "\">" + escape(s.title) + "</a>";
  page += "</nav>\n";
  for (const Section& s : sections)
    page += "<section class=\"tn-section\" id=\"sec-" + escape(s.id) + "\">\n<h2>" + escape(s.title) + "</h2>\n" + s.body +
            "</section>\n";
  return page + "</body>\n</html>\n";
}

}  // namespace tn::report
