// Text for the report's HTML and SVG: escaping and numbers written compactly.
#pragma once
#include <string>

namespace tn::report {

// `text` safe inside an element or a quoted attribute: & < > " ' replaced by entities.
std::string escape(const std::string& text);

// `v` with `digits` decimals, trailing zeros and a bare "-0" removed ("12.5", "3", "-0.25"):
// SVG coordinates and values in tables.
std::string fixed(double v, int digits = 1);

// A metric value for a table or a tooltip: 4 significant digits, "n/a" when not finite.
std::string value_text(double v);

}  // namespace tn::report
