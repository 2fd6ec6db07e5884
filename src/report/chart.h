// The report's charts as plain data, drawn as inline SVG (no script, no external file): lines
// (many faint member curves under a bold mean), shaded bands, points, bars (histograms) and
// reference rules on linear, logarithmic or categorical axes, and heat maps. Callers pass
// what is drawn, already down-sampled (report/ticks.h downsample); nothing here reads files.
#pragma once
#include <string>
#include <vector>

namespace tn::report {

// A chart axis: linear, logarithmic (values <= 0 are not drawn), or categorical (value i is
// categories[i], drawn at equal spacing).
struct Axis {
  std::string label;
  bool log = false;
  bool integer = false;  // counts, rounds, epochs: ticks on whole numbers only (steps of at least 1)
  std::vector<std::string> categories;
};

// A polyline; non-finite points break it (a member's curve ends where it diverged or stopped).
struct Line {
  std::vector<double> x, y;
  std::string colour = "#1f77b4";
  double width = 1.5;
  double opacity = 1;
  std::string label;  // shown in the legend when not empty
  bool dashed = false;
};

// The area between lo and hi over x (e.g. the 5-95 % range of the members).
struct Band {
  std::vector<double> x, lo, hi;
  std::string colour = "#1f77b4";
  std::string label;
};

struct Point {
  double x = 0, y = 0;
  std::string colour = "#1f77b4";
  bool cross = false;  // an x mark instead of a dot
  std::string title;   // tooltip
};

// A bar over [x0, x1] from 0 to y (histograms), or a categorical bar (x0 = x1 = category).
struct Bar {
  double x0 = 0, x1 = 0, y = 0;
  std::string colour = "#1f77b4";
  std::string title;
};

// A reference line across the plot at x = at (vertical) or y = at.
struct Rule {
  bool vertical = true;
  double at = 0;
  std::string colour = "#333";
  std::string label;
  bool dashed = true;
};

// A legend entry for points or bars (lines and bands with labels have their own).
struct Key {
  std::string label, colour;
};

struct Chart {
  std::string title;
  Axis x, y;
  std::vector<Band> bands;
  std::vector<Bar> bars;
  std::vector<Line> lines;
  std::vector<Point> points;
  std::vector<Rule> rules;
  std::vector<Key> keys;
  bool diagonal = false;  // the line y = x (predicted against actual)
  bool pad = false;       // leave a margin around the data (scatter plots: no point on the frame)
  double point_opacity = 0.7;
  int width = 610, height = 340;  // two side by side in a 1280 px window (1248 px of content, 8 px gap)
};

// The chart as an <svg> element; a chart with nothing finite to draw says so in its place.
std::string render(const Chart& c);

// A grid of values (rows × cols, row-major; NaN: empty cell) coloured from low to high.
struct HeatMap {
  std::string title;
  std::string x_label, y_label;
  std::vector<std::string> cols, rows;
  std::vector<double> values;
  bool high_is_good = true;  // the colour of the best cells is the brightest
  int digits = 3;            // significant digits of the values written in the cells
};

std::string render(const HeatMap& h);

// Bars of a histogram of the finite `values` in `bins` equal bins (one bar for a single value).
std::vector<Bar> histogram(const std::vector<double>& values, int bins, const std::string& colour);

// Colour `t` in [0, 1] of the sequential palette (dark blue to yellow) of heat maps.
std::string ramp(double t);
// `hex` ("#rrggbb") darkened to 55 % of each channel (a median's line against its band's fill).
std::string darker(const std::string& hex);

}  // namespace tn::report
