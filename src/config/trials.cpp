// Reading ask/tell trials files and turning them into configuration overrides (config/trials.h).
#include "config/trials.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "config/yaml_util.h"
#include "util/suggest.h"
#include "util/utf8.h"

namespace tn {
namespace {

constexpr const char* kIdColumn = "trial";

[[noreturn]] void fail(const std::string& path, const std::string& where, const std::string& problem) {
  throw ConfigError("--trials " + path + (where.empty() ? "" : ": " + where) + ": " + problem);
}

std::string trim(const std::string& s) {
  const std::size_t a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// Checks the header's keys: per-member keys (or `trial`), each once.
void check_keys(const std::string& path, const std::vector<std::string>& keys, const std::string& where) {
  std::set<std::string> seen;
  for (const std::string& k : keys) {
    if (!seen.insert(k).second) fail(path, where, "column '" + k + "' is given twice");
    if (k == kIdColumn) continue;
    const auto& ok = member_value_keys();
    if (std::find(ok.begin(), ok.end(), k) != ok.end()) continue;
    std::string list;
    for (const std::string& o : ok) list += (list.empty() ? "" : ", ") + o;
    fail(path, where, "column '" + k + "' is not a per-member key" + did_you_mean(k, ok) +
                          " (per-member keys: " + list + "; `" + kIdColumn + "` names the trial)");
  }
}

double parse_number(const std::string& path, const std::string& where, const std::string& text) {
  if (text.empty()) fail(path, where, "the cell is empty; every trial needs a value in every column");
  const std::size_t skip = text[0] == '+' ? 1 : 0;  // from_chars takes no plus sign
  double v = 0;
  const char* end = text.data() + text.size();
  const auto r = std::from_chars(text.data() + skip, end, v);
  if (r.ec == std::errc::result_out_of_range && r.ptr == end)
    fail(path, where, "'" + text + "' is outside the range of a double-precision number");
  if (r.ec != std::errc() || r.ptr != end || !std::isfinite(v)) fail(path, where, "'" + text + "' is not a finite number");
  return v;
}

// Adds one trial: its id (or its index) and a value per key, in `keys` order.
void add_trial(Trials& t, const std::string& where, const std::string& id, const std::vector<double>& row) {
  t.rows.push_back(where);
  t.ids.push_back(id.empty() ? std::to_string(t.ids.size()) : id);
  for (std::size_t k = 0; k < row.size(); ++k) t.values[k].push_back(row[k]);
}

Trials read_csv(const std::string& path, std::istream& in) {
  Trials t;
  t.path = path;
  std::vector<std::string> header;
  int id_col = -1;
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    if (lineno == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 byte order mark
    const std::string text = trim(line);
    if (text.empty() || text[0] == '#') continue;  // blank lines and comment lines
    std::vector<std::string> cells;
    std::stringstream ss(text);
    for (std::string cell; std::getline(ss, cell, ',');) {
      cell = trim(cell);
      if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"') cell = trim(cell.substr(1, cell.size() - 2));
      cells.push_back(cell);
    }
    if (text.back() == ',') cells.emplace_back();
    const std::string row = "row " + std::to_string(lineno);
    if (header.empty()) {
      header = cells;
      check_keys(path, header, row + " (the header)");
      for (std::size_t c = 0; c < header.size(); ++c)
        if (header[c] == kIdColumn) id_col = static_cast<int>(c);
        else t.keys.push_back(header[c]);
      t.values.resize(t.keys.size());
      continue;
    }
    if (cells.size() != header.size())
      fail(path, row, "has " + std::to_string(cells.size()) + " cells, the header " + std::to_string(header.size()) + " columns");
    std::vector<double> values;
    std::string id;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      if (static_cast<int>(c) == id_col) id = cells[c];
      else values.push_back(parse_number(path, row + ", column " + header[c], cells[c]));
    }
    if (id_col >= 0 && id.empty()) fail(path, row + ", column " + kIdColumn, "the trial's name is empty");
    add_trial(t, row, id, values);
  }
  if (header.empty()) fail(path, "", "is empty; expected a header of per-member keys, e.g. optimizer.lr, and one row per trial");
  return t;
}

// Where the JSON parser is: the containers open around it, with each array's elements so far
// and each object's last key, so that a value it refuses (a number beyond a double's range)
// is named by its trial and key.
struct JsonPlace {
  struct Open {
    bool array;
    std::size_t elements = 0;
    std::string key{};
    std::set<std::string> keys{};
  };
  std::vector<Open> open;
  void on(nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    const bool element = event == E::value || event == E::object_start || event == E::array_start;
    if (element && !open.empty() && open.back().array) ++open.back().elements;
    if (event == E::object_start || event == E::array_start) open.push_back({.array = event == E::array_start});
    if ((event == E::object_end || event == E::array_end) && !open.empty()) open.pop_back();
    if (event == E::key && !open.empty()) open.back().key = parsed.get<std::string>();
  }
  // "trial 3, key optimizer.lr": the innermost object in an array (of trials), and its key.
  std::string where() const {
    for (std::size_t k = open.size(); k-- > 1;)
      if (!open[k].array && open[k - 1].array)
        return "trial " + std::to_string(open[k - 1].elements) + (open[k].key.empty() ? "" : ", key " + open[k].key);
    return "";
  }
};

Trials read_json(const std::string& path, std::istream& in) {
  nlohmann::json j;
  JsonPlace place;
  // A key given twice in one object would silently keep its last value: refused instead.
  std::string twice;
  const auto unique_keys = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    place.on(event, parsed);
    if (event == nlohmann::json::parse_event_t::key && !place.open.empty() &&
        !place.open.back().keys.insert(parsed.get<std::string>()).second && twice.empty())
      twice = parsed.get<std::string>();
    return true;
  };
  try {
    j = nlohmann::json::parse(in, unique_keys);
  } catch (const nlohmann::json::parse_error& e) {
    fail(path, "", std::string("is not valid JSON: ") + e.what());
  } catch (const nlohmann::json::out_of_range& e) {  // 406: "number overflow parsing '1e999'"
    const std::string what = e.what();
    const std::size_t quote = what.find('\'');
    fail(path, place.where(), (quote == std::string::npos ? std::string("a number") : what.substr(quote)) +
                                  " is outside the range of a double-precision number");
  }
  if (!twice.empty()) fail(path, "", "an object gives the key '" + twice + "' twice; give each key once per trial");
  if (j.is_object() && j.contains("trials")) j = j["trials"];
  if (!j.is_array()) fail(path, "", "expected a list of trials [{\"optimizer.lr\": 0.01, ...}, ...] or {\"trials\": [...]}");
  Trials t;
  t.path = path;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const nlohmann::json& o = j[i];
    const std::string row = "trial " + std::to_string(i + 1);
    if (!o.is_object()) fail(path, row, "expected an object {key: number, ...}");
    std::vector<std::string> keys;
    for (const auto& [k, v] : o.items())
      if (k != kIdColumn) keys.push_back(k);
    if (i == 0) {
      std::vector<std::string> all = keys;
      if (o.contains(kIdColumn)) all.push_back(kIdColumn);
      check_keys(path, all, row);
      t.keys = keys;
      t.values.resize(keys.size());
    }
    std::vector<double> values;
    for (const std::string& k : t.keys) {
      if (!o.contains(k)) fail(path, row, "has no '" + k + "'; every trial needs the keys of the first");
      const nlohmann::json& v = o[k];
      if (!v.is_number() || !std::isfinite(v.get<double>())) fail(path, row + ", key " + k, v.dump() + " is not a finite number");
      values.push_back(v.get<double>());
    }
    for (const std::string& k : keys)
      if (std::find(t.keys.begin(), t.keys.end(), k) == t.keys.end())
        fail(path, row, "has '" + k + "', which the first trial does not; every trial needs the same keys");
    std::string id;
    if (o.contains(kIdColumn)) {
      const nlohmann::json& v = o[kIdColumn];
      if (v.is_number_unsigned()) id = std::to_string(v.get<unsigned long long>());
      else if (v.is_number_integer()) id = std::to_string(v.get<long long>());
      else if (v.is_string() && !v.get<std::string>().empty()) id = v.get<std::string>();
      else fail(path, row + ", key " + kIdColumn, v.dump() + " is not a whole number or text");
    }
    add_trial(t, row, id, values);
  }
  return t;
}

}  // namespace

Trials read_trials(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) fail(path, "", "is not a file (does it exist?)");
  std::ifstream file(path, std::ios::binary);
  std::ostringstream bytes;
  if (!file || !(bytes << file.rdbuf()) || file.bad()) fail(path, "", "cannot be read");
  // Text that is not UTF-8 would reach the messages, the JSON parser's among them, and the
  // trial names in --trials-out.
  const std::string text = bytes.str();
  if (const std::size_t bad = invalid_utf8(text); bad != std::string::npos) {
    const TextPosition at = text_position(text, bad);
    fail(path, "line " + std::to_string(at.line) + ", column " + std::to_string(at.column), utf8_problem(text, bad));
  }
  std::istringstream in(text);
  const std::string ext = path.size() >= 5 ? path.substr(path.rfind('.') == std::string::npos ? 0 : path.rfind('.')) : "";
  Trials t;
  if (ext == ".csv") t = read_csv(path, in);
  else if (ext == ".json") t = read_json(path, in);
  else fail(path, "", "must end in .csv or .json");
  if (t.ids.empty()) fail(path, "", "has no trials; give one row per trial");
  if (t.keys.empty()) fail(path, "", "has no per-member keys; give at least one column such as optimizer.lr");
  std::set<std::string> ids;
  for (std::size_t i = 0; i < t.ids.size(); ++i)
    if (!ids.insert(t.ids[i]).second) fail(path, t.rows[i], "the trial name '" + t.ids[i] + "' is used twice");
  return t;
}

std::vector<Override> trial_overrides(const Trials& t) {
  std::vector<Override> ov = {{"swarm.size", std::to_string(t.size())}};
  for (std::size_t k = 0; k < t.keys.size(); ++k) {
    std::string list;
    for (double v : t.values[k]) list += (list.empty() ? "" : ", ") + cfg::exact_text(v);
    ov.push_back({t.keys[k], "{values: [" + list + "]}"});
  }
  return ov;
}

namespace {
// trial_error of one error's line.
std::string trial_error_line(const Trials& t, const std::string& message) {
  for (std::size_t k = 0; k < t.keys.size(); ++k) {
    const std::string lead = "--set " + t.keys[k] + "=";
    if (message.rfind(lead, 0) != 0) continue;
    const std::string at = t.keys[k] + ".values[";
    const std::size_t p = message.find(at);
    if (p == std::string::npos) break;
    const std::size_t q = message.find("]: ", p);
    if (q == std::string::npos) break;
    const int i = std::stoi(message.substr(p + at.size(), q - p - at.size()));
    const auto at_i = static_cast<std::size_t>(i);
    return "--trials " + t.path + ": " + t.rows[at_i] + " (trial '" + t.ids[at_i] + "'), column " + t.keys[k] + ": " +
           message.substr(q + 3);
  }
  return message;
}
}  // namespace

std::string trial_error(const Trials& t, const std::string& message) {
  std::string out;
  std::size_t begin = 0;
  for (std::size_t end; (end = message.find('\n', begin)) != std::string::npos; begin = end + 1)
    out += trial_error_line(t, message.substr(begin, end - begin)) + "\n";
  return out + trial_error_line(t, message.substr(begin));
}

void check_trials_config(const Trials& t, const Config& cfg) {
  if (!cfg.grid.empty())
    throw ConfigError("--trials " + t.path + ": the configuration has a grid, but with --trials each row is one "
                      "member's combination; remove `grid` (and the per-member values it combines)");
  for (const MemberValues& mv : cfg.member_values)
    if (std::find(t.keys.begin(), t.keys.end(), mv.key) == t.keys.end())
      throw ConfigError("--trials " + t.path + ": the configuration gives " + mv.key + " per member, but the trials "
                        "file has no column for it, so trials would differ in it too; add a column " + mv.key +
                        " or give it one value in the configuration");
  if (cfg.search.type == SearchConfig::Type::Pbt)
    throw ConfigError("--trials " + t.path + ": search pbt replaces members' state and values while training, so a "
                      "member's result would not be its trial's; use search halving (trials cut at a rung are "
                      "reported as pruned) or no search");
  if (cfg.data.per_member == PerMember::GroupBy)
    throw ConfigError("--trials " + t.path + ": data.per_member group_by trains one member per group, not per trial");
}

}  // namespace tn
