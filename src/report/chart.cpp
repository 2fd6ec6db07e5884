// The report's charts drawn as SVG (report/chart.h).
#include "report/chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report/markup.h"
#include "report/ticks.h"

namespace tn::report {
namespace {

constexpr double kLeft = 64, kRight = 16, kTop = 44, kBottom = 46;

// One axis mapped onto [p0, p1] pixels.
struct Scale {
  double lo = 0, hi = 1, p0 = 0, p1 = 1;
  bool log = false;
  bool usable(double v) const { return std::isfinite(v) && (!log || v > 0); }
  double operator()(double v) const {
    const double t = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
    return p0 + t * (p1 - p0);
  }
};

// The finite range of everything drawn along one axis.
struct Range {
  double lo = INFINITY, hi = -INFINITY;
  bool log = false;
  void add(double v) {
    if (!std::isfinite(v) || (log && v <= 0)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
  // Widens the range by 4 % of its span on each side (on a log axis, of its decades).
  void widen() {
    if (empty()) return;
    if (log) {
      const double f = std::pow(10.0, 0.04 * std::max(std::log10(hi / lo), 0.5));
      lo /= f, hi *= f;
    } else {
      const double d = 0.04 * (hi > lo ? hi - lo : std::max(std::fabs(hi), 1.0));
      lo -= d, hi += d;
    }
  }
};

// Ticks and the scale spanning them for one axis.
std::vector<double> axis_ticks(const Axis& a, Range r, Scale& s) {
  s.log = a.log;
  std::vector<double> t;
  if (!a.categories.empty()) {
    for (std::size_t i = 0; i < a.categories.size(); ++i) t.push_back(static_cast<double>(i));
    s.lo = -0.5;
    s.hi = static_cast<double>(a.categories.size()) - 0.5;
    return t;
  }
  t = a.log ? log_ticks(r.lo, r.hi) : nice_ticks(r.lo, r.hi, 6, a.integer);
  s.lo = t.front();
  s.hi = t.back();
  if (a.log && r.hi > r.lo) {
    // The data's own range, with the ticks inside it, rather than whole decades around it.
    std::vector<double> inside;
    for (const double v : t)
      if (v >= r.lo * (1 - 1e-9) && v <= r.hi * (1 + 1e-9)) inside.push_back(v);
    if (inside.size() >= 2) s.lo = r.lo, s.hi = r.hi, t = inside;
  }
  return t;
}

std::string tick_label(const Axis& a, double v) {
  if (a.categories.empty()) return tick_text(v);
  const auto i = static_cast<std::size_t>(v);
  return i < a.categories.size() ? a.categories[i] : "";
}

std::string text_at(double x, double y, const std::string& text, const std::string& extra = "") {
  return "<text x=\"" + fixed(x) + "\" y=\"" + fixed(y) + "\"" + extra + ">" + escape(text) + "</text>";
}

std::string dash(bool dashed) { return dashed ? " stroke-dasharray=\"5 3\"" : ""; }

// Appends one path command ('M' or 'L') to (x, y).
void path_to(std::string& d, char command, double x, double y) {
  d += command;
  d += fixed(x);
  d += ' ';
  d += fixed(y);
}

// "M x y L x y ..." of the drawable points, a new M after each gap.
std::string path_data(const std::vector<double>& x, const std::vector<double>& y, const Scale& sx, const Scale& sy) {
  std::string d;
  bool pen = false;
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (!sx.usable(x[i]) || !sy.usable(y[i])) {
      pen = false;
      continue;
    }
    path_to(d, pen ? 'L' : 'M', sx(x[i]), sy(y[i]));
    pen = true;
  }
  return d;
}

void legend_entry(std::string& out, double& x, double y, const std::string& label, const std::string& colour) {
  out += "<rect x=\"" + fixed(x) + "\" y=\"" + fixed(y - 9) + "\" width=\"12\" height=\"10\" fill=\"" + colour + "\"/>";
  out += text_at(x + 16, y, label, " class=\"tn-legend\"");
  x += 24 + 6.5 * static_cast<double>(label.size());
}

// "#rrggbb" of channels in [0, 255].
std::string hex_colour(int r, int g, int b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", r, g, b);
  return buf;
}

}  // namespace

std::string darker(const std::string& hex) {
  const unsigned long rgb = std::stoul(hex.substr(1), nullptr, 16);
  const auto part = [&](int shift) { return static_cast<int>(((rgb >> shift) & 0xff) * 55 / 100); };
  return hex_colour(part(16), part(8), part(0));
}

std::string ramp(double t) {
  // Five stops of a perceptually ordered palette (viridis).
  static const double stops[5][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * 4;
  const int i = std::min(3, static_cast<int>(t));
  const double f = t - i;
  return hex_colour(static_cast<int>(stops[i][0] + f * (stops[i + 1][0] - stops[i][0])),
                    static_cast<int>(stops[i][1] + f * (stops[i + 1][1] - stops[i][1])),
                    static_cast<int>(stops[i][2] + f * (stops[i + 1][2] - stops[i][2])));
}

std::vector<Bar> histogram(const std::vector<double>& values, int bins, const std::string& colour) {
  Range r;
  for (const double v : values) r.add(v);
  if (r.empty()) return {};
  if (r.hi == r.lo) return {{r.lo - 0.5, r.lo + 0.5, static_cast<double>(values.size()), colour, ""}};
  const double w = (r.hi - r.lo) / bins;
  std::vector<double> count(static_cast<std::size_t>(bins), 0);
  for (const double v : values)
    if (std::isfinite(v)) count[static_cast<std::size_t>(std::min(bins - 1, static_cast<int>((v - r.lo) / w)))] += 1;
  std::vector<Bar> bars;
  for (int b = 0; b < bins; ++b) {
    const double x0 = r.lo + b * w, x1 = x0 + w;
    bars.push_back({x0, x1, count[static_cast<std::size_t>(b)], colour,
                    value_text(x0) + " to " + value_text(x1) + ": " + fixed(count[static_cast<std::size_t>(b)], 0)});
  }
  return bars;
}

std::string render(const Chart& c) {
  Range rx, ry;
  rx.log = c.x.log;
  ry.log = c.y.log;
  for (const Line& l : c.lines)
    for (std::size_t i = 0; i < l.x.size() && i < l.y.size(); ++i)
      if (std::isfinite(l.y[i]) && (!ry.log || l.y[i] > 0)) rx.add(l.x[i]), ry.add(l.y[i]);
  for (const Band& b : c.bands)
    for (std::size_t i = 0; i < b.x.size(); ++i) rx.add(b.x[i]), ry.add(b.lo[i]), ry.add(b.hi[i]);
  for (const Point& p : c.points)
    if (std::isfinite(p.y) && (!ry.log || p.y > 0)) rx.add(p.x), ry.add(p.y);
  for (const Bar& b : c.bars) rx.add(b.x0), rx.add(b.x1), ry.add(b.y), ry.add(0);
  for (const Rule& r : c.rules) (r.vertical ? rx : ry).add(r.at);
  if (c.diagonal) {
    const double lo = std::min(rx.lo, ry.lo), hi = std::max(rx.hi, ry.hi);
    rx.add(lo), rx.add(hi), ry.add(lo), ry.add(hi);
  }
  if (c.pad) rx.widen(), ry.widen();
  const std::string head = "<svg class=\"tn-chart\" viewBox=\"0 0 " +
                           std::to_string(c.width) + " " + std::to_string(c.height) + "\" width=\"" +
                           std::to_string(c.width) + "\" height=\"" + std::to_string(c.height) + "\" role=\"img\">" +
                           "<title>" + escape(c.title) + "</title>";
  std::string out = head + text_at(kLeft, 16, c.title, " class=\"tn-title\"");
  if ((rx.empty() && c.x.categories.empty()) || ry.empty())
    return out + text_at(kLeft, c.height / 2.0, "nothing finite to draw") + "</svg>";
  Scale sx, sy;
  sx.p0 = kLeft;
  sx.p1 = c.width - kRight;
  sy.p0 = c.height - kBottom;
  sy.p1 = kTop;
  const std::vector<double> xt = axis_ticks(c.x, rx, sx), yt = axis_ticks(c.y, ry, sy);

  // Grid, ticks and axis labels.
  out += "<g class=\"tn-axes\">";
  const bool slant = c.x.categories.size() > 8;
  for (const double t : xt) {
    const double px = sx(t);
    out += "<line x1=\"" + fixed(px) + "\" y1=\"" + fixed(sy.p1) + "\" x2=\"" + fixed(px) + "\" y2=\"" + fixed(sy.p0) +
           "\" class=\"tn-grid\"/>";
    out += slant ? text_at(px, sy.p0 + 12, tick_label(c.x, t),
                           " text-anchor=\"end\" transform=\"rotate(-35 " + fixed(px) + " " + fixed(sy.p0 + 12) + ")\"")
                 : text_at(px, sy.p0 + 14, tick_label(c.x, t), " text-anchor=\"middle\"");
  }
  for (const double t : yt) {
    const double py = sy(t);
    out += "<line x1=\"" + fixed(sx.p0) + "\" y1=\"" + fixed(py) + "\" x2=\"" + fixed(sx.p1) + "\" y2=\"" + fixed(py) +
           "\" class=\"tn-grid\"/>";
    out += text_at(sx.p0 - 4, py + 4, tick_label(c.y, t), " text-anchor=\"end\"");
  }
  out += "<rect x=\"" + fixed(sx.p0) + "\" y=\"" + fixed(sy.p1) + "\" width=\"" + fixed(sx.p1 - sx.p0) + "\" height=\"" +
         fixed(sy.p0 - sy.p1) + "\" class=\"tn-frame\"/>";
  out += text_at((sx.p0 + sx.p1) / 2, c.height - 6, c.x.label + (c.x.log ? " (log)" : ""), " text-anchor=\"middle\"");
  const double ym = (sy.p0 + sy.p1) / 2;
  out += text_at(14, ym, c.y.label + (c.y.log ? " (log)" : ""),
                 " text-anchor=\"middle\" transform=\"rotate(-90 14 " + fixed(ym) + ")\"");
  out += "</g>";

  for (const Band& b : c.bands) {
    std::string d;
    std::vector<std::size_t> kept;
    for (std::size_t i = 0; i < b.x.size(); ++i)
      if (sx.usable(b.x[i]) && sy.usable(b.lo[i]) && sy.usable(b.hi[i])) kept.push_back(i);
    for (std::size_t j = 0; j < kept.size(); ++j) path_to(d, j ? 'L' : 'M', sx(b.x[kept[j]]), sy(b.hi[kept[j]]));
    for (std::size_t j = kept.size(); j-- > 0;) path_to(d, 'L', sx(b.x[kept[j]]), sy(b.lo[kept[j]]));
    if (!d.empty()) out += "<path d=\"" + d + "Z\" fill=\"" + b.colour + "\" fill-opacity=\"0.18\" stroke=\"none\"/>";
  }
  for (const Bar& b : c.bars) {
    if (!sy.usable(b.y)) continue;
    double x0 = sx(b.x0), x1 = sx(b.x1);
    if (!c.x.categories.empty()) x0 -= 0.35 * (sx(1) - sx(0)), x1 += 0.35 * (sx(1) - sx(0));
    const double y0 = sy(std::max(sy.lo, 0.0)), y1 = sy(b.y);
    out += "<rect x=\"" + fixed(std::min(x0, x1)) + "\" y=\"" + fixed(std::min(y0, y1)) + "\" width=\"" +
           fixed(std::max(0.5, std::fabs(x1 - x0) - 1)) + "\" height=\"" + fixed(std::fabs(y0 - y1)) + "\" fill=\"" +
           b.colour + "\" fill-opacity=\"0.75\">" + (b.title.empty() ? "" : "<title>" + escape(b.title) + "</title>") +
           "</rect>";
  }
  if (c.diagonal) {
    const double lo = std::max(sx.lo, sy.lo), hi = std::min(sx.hi, sy.hi);
    out += "<line x1=\"" + fixed(sx(lo)) + "\" y1=\"" + fixed(sy(lo)) + "\" x2=\"" + fixed(sx(hi)) + "\" y2=\"" +
           fixed(sy(hi)) + "\" stroke=\"#555\"" + dash(true) + "/>";
  }
  for (const Line& l : c.lines) {
    const std::string d = path_data(l.x, l.y, sx, sy);
    if (d.empty()) continue;
    out += "<path d=\"" + d + "\" fill=\"none\" stroke=\"" + l.colour + "\" stroke-width=\"" + fixed(l.width, 2) + "\"" +
           (l.opacity < 1 ? " stroke-opacity=\"" + fixed(l.opacity, 3) + "\"" : "") + dash(l.dashed) + "/>";
  }
  for (const Point& p : c.points) {
    if (!sx.usable(p.x) || !sy.usable(p.y)) continue;
    const double px = sx(p.x), py = sy(p.y);
    const std::string tip = p.title.empty() ? "" : "<title>" + escape(p.title) + "</title>";
    if (p.cross)
      out += "<path d=\"M" + fixed(px - 4) + " " + fixed(py - 4) + "L" + fixed(px + 4) + " " + fixed(py + 4) + "M" +
             fixed(px - 4) + " " + fixed(py + 4) + "L" + fixed(px + 4) + " " + fixed(py - 4) + "\" stroke=\"" + p.colour +
             "\" stroke-width=\"2\">" + tip + "</path>";
    else
      out += "<circle cx=\"" + fixed(px) + "\" cy=\"" + fixed(py) + "\" r=\"2.6\" fill=\"" + p.colour +
             "\" fill-opacity=\"" + fixed(c.point_opacity, 2) + "\">" + tip + "</circle>";
  }
  for (const Rule& r : c.rules) {
    if (!(r.vertical ? sx : sy).usable(r.at)) continue;
    const double at = r.vertical ? sx(r.at) : sy(r.at);
    out += r.vertical ? "<line x1=\"" + fixed(at) + "\" y1=\"" + fixed(sy.p1) + "\" x2=\"" + fixed(at) + "\" y2=\"" + fixed(sy.p0)
                      : "<line x1=\"" + fixed(sx.p0) + "\" y1=\"" + fixed(at) + "\" x2=\"" + fixed(sx.p1) + "\" y2=\"" + fixed(at);
    out += "\" stroke=\"" + r.colour + "\" stroke-width=\"2\"" + dash(r.dashed) + "/>";
  }

  // Legend: one row under the title.
  double lx = kLeft;
  for (const Band& b : c.bands)
    if (!b.label.empty()) legend_entry(out, lx, 34, b.label, b.colour);
  for (const Line& l : c.lines)
    if (!l.label.empty()) legend_entry(out, lx, 34, l.label, l.colour);
  for (const Rule& r : c.rules)
    if (!r.label.empty()) legend_entry(out, lx, 34, r.label, r.colour);
  for (const Key& k : c.keys) legend_entry(out, lx, 34, k.label, k.colour);
  return out + "</svg>";
}

std::string render(const HeatMap& h) {
  const std::size_t R = h.rows.size(), C = h.cols.size();
  double lo = INFINITY, hi = -INFINITY;
  for (const double v : h.values)
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  const double cell = std::clamp(480.0 / std::max<std::size_t>(C, 1), 14.0, 64.0);
  const double cell_h = std::clamp(320.0 / std::max<std::size_t>(R, 1), 14.0, 40.0);
  const double left = 96, top = 44, bottom = 70;
  const double width = std::max(left + cell * static_cast<double>(C) + 20, 16 + 7.5 * static_cast<double>(h.title.size())),
               height = top + cell_h * static_cast<double>(R) + bottom;
  std::string out = "<svg class=\"tn-chart tn-heatmap\" viewBox=\"0 0 " + fixed(width) +
                    " " + fixed(height) + "\" width=\"" + fixed(width) + "\" height=\"" + fixed(height) + "\" role=\"img\">" +
                    "<title>" + escape(h.title) + "</title>" + text_at(8, 16, h.title, " class=\"tn-title\"");
  const bool write_values = R * C <= 400 && cell >= 30;
  char fmt[8];
  std::snprintf(fmt, sizeof fmt, "%%.%dg", h.digits);
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t c = 0; c < C; ++c) {
      const double v = r * C + c < h.values.size() ? h.values[r * C + c] : NAN;
      const double x = left + cell * static_cast<double>(c), y = top + cell_h * static_cast<double>(r);
      double t = hi > lo ? (v - lo) / (hi - lo) : 1;
      if (!h.high_is_good) t = 1 - t;
      out += "<rect x=\"" + fixed(x) + "\" y=\"" + fixed(y) + "\" width=\"" + fixed(cell - 1) + "\" height=\"" +
             fixed(cell_h - 1) + "\" fill=\"" + (std::isfinite(v) ? ramp(t) : "#eee") + "\"><title>" +
             escape(h.rows[r] + ", " + h.cols[c] + ": " + value_text(v)) + "</title></rect>";
      if (write_values && std::isfinite(v)) {
        char buf[32];
        std::snprintf(buf, sizeof buf, fmt, v);
        out += text_at(x + cell / 2, y + cell_h / 2 + 4, buf,
                       std::string(" text-anchor=\"middle\" class=\"tn-cell\" style=\"fill:") + (t > 0.6 ? "#000" : "#fff") + "\"");
      }
    }
  for (std::size_t r = 0; r < R; ++r)
    out += text_at(left - 4, top + cell_h * (static_cast<double>(r) + 0.5) + 4, h.rows[r], " text-anchor=\"end\"");
  for (std::size_t c = 0; c < C; ++c) {
    const double x = left + cell * (static_cast<double>(c) + 0.5), y = top + cell_h * static_cast<double>(R) + 12;
    out += text_at(x, y, h.cols[c], " text-anchor=\"end\" transform=\"rotate(-35 " + fixed(x) + " " + fixed(y) + ")\"");
  }
  out += text_at(left + cell * static_cast<double>(C) / 2, height - 6, h.x_label, " text-anchor=\"middle\"");
  out += text_at(8, 32, h.y_label + " (rows)");
  return out + "</svg>";
}

}  // namespace tn::report
