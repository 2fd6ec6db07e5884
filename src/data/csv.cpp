// load_csv: reads a CSV file with a header row into a Dataset, streaming it through libcsv.
#include <csv.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "data/csv_cells.h"
#include "data/dataset.h"
#include "util/suggest.h"
#include "util/utf8.h"

namespace tn {
namespace {

using namespace csv;  // the cells' helpers (data/csv_cells.h)

constexpr int kRowNotBegun = 0;                 // libcsv's pstate between rows (libcsv.c)
constexpr size_t kNoColumn = static_cast<size_t>(-1);
constexpr unsigned long long kMaxIntegerClasses = 65536;
constexpr size_t kBlockSize = 1 << 16;
constexpr const char* kStrayQuote =
    "; a double quote may only enclose a whole field, and one inside a quoted field must be "
    "doubled (\"\")";
constexpr const char* kUnclosedQuote =
    "; a quoted field in the row starting here is never closed: add the closing double quote";

class CsvLoader {
 public:
  CsvLoader(const SourceConfig& source, bool classification, std::string group_column,
            std::string time_column = "", std::vector<std::string> feature_keys = {},
            std::vector<std::string> id_columns = {}, CsvColumns columns = {})
      : src_(source), path_(source.path), classification_(classification),
        group_(std::move(group_column)), time_(std::move(time_column)),
        feature_keys_(std::move(feature_keys)), id_names_(std::move(id_columns)), columns_(std::move(columns)) {
    csv_init(&parser_, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL);
    csv_set_quote(&parser_, static_cast<unsigned char>(src_.quote));
  }
  ~CsvLoader() { csv_free(&parser_); }
  CsvLoader(const CsvLoader&) = delete;
  CsvLoader& operator=(const CsvLoader&) = delete;

  Dataset run();

 private:
  static void on_field(void* data, size_t len, void* self);
  static void on_row(int term, void* self);
  void read_file();
  void set_delimiter(std::string_view first_block);
  void feed(std::string_view block);
  std::string header_at() const;
  void check(bool parsed, long line, const char* hint);
  std::string at_line(long line) const { return path_ + ":" + std::to_string(line) + ": "; }
  void take_header();
  void check_text(size_t column, std::string_view cell) const;
  float number(size_t column, std::string_view cell, const std::string& at) const;
  size_t find_column(const std::string& name, const char* key) const;
  void add_feature_range();
  void check_group_column() const;
  void check_used_columns() const;
  void take_row();
  bool drop_row() const;
  bool columns_has(const std::string& column) const;
  void add_feature(size_t k, std::string_view cell, const std::string& at);
  void add_label(std::string_view label, const std::string& at);
  void add_group(std::string_view group, const std::string& at);
  void add_time(std::string_view time, const std::string& at);
  void finish();
  void finish_classes();
  void finish_groups();
  // No target but listed features (prediction inputs): the features' columns only.
  bool unlabeled() const { return src_.target.empty() && !src_.features.empty(); }

  const SourceConfig& src_;
  std::string path_;
  bool classification_;
  std::string group_;  // group_by column, or ""
  std::string time_;   // sequence time column (kept as text), or ""
  std::vector<std::string> feature_keys_;  // config key naming each of src_.features, or empty
  std::vector<std::string> id_names_;      // columns carried through as text (predict --id)
  std::vector<size_t> id_cols_;
  CsvColumns columns_;
  std::vector<Encoding> kind_;  // per feature column; auto until its first value is seen
  std::vector<std::unordered_map<std::string, int>> level_ids_;  // per categorical column
  long dropped_ = 0;            // rows dropped for missing values (data.missing: drop_rows)
  csv_parser parser_{};
  bool comment_open_ = false;       // a comment line continues into the next block
  std::exception_ptr error_;        // thrown inside a callback, rethrown after csv_parse
  std::vector<std::string> fields_;  // the row being assembled
  std::string row_text_;             // its raw text, for the position of a bad byte
  long line_ = 1;                    // physical line being fed
  long row_line_ = 1;                // physical line where the current row started
  bool have_header_ = false;
  long header_line_ = 1;  // the header's line (data.source.columns: none)
  char delimiter_ = ',';
  std::vector<std::string> header_;
  std::unordered_map<std::string_view, size_t> column_of_;  // header name -> its first column
  std::unordered_map<std::string_view, size_t> name_count_;  // header name -> how many columns have it
  std::vector<size_t> feature_cols_;
  size_t target_col_ = 0;
  size_t group_col_ = kNoColumn;
  size_t time_col_ = kNoColumn;
  std::unordered_map<std::string, int> class_ids_;  // label text -> first-seen id
  std::vector<std::string> class_seen_;
  std::vector<int> labels_;  // first-seen ids, one per row
  std::unordered_map<std::string, int> group_ids_;  // group text -> first-seen id
  std::vector<std::string> group_seen_;
  Dataset ds_;
};

void CsvLoader::on_field(void* data, size_t len, void* self) {
  auto* me = static_cast<CsvLoader*>(self);
  if (me->error_) return;
  try {
    me->fields_.emplace_back(data ? static_cast<const char*>(data) : "", data ? len : 0);
  } catch (...) {
    me->error_ = std::current_exception();
  }
}

void CsvLoader::on_row(int, void* self) {
  auto* me = static_cast<CsvLoader*>(self);
  if (!me->error_) {
    try {
      if (me->have_header_) me->take_row(); else me->take_header();
    } catch (...) {
      me->error_ = std::current_exception();
    }
  }
  me->fields_.clear();
}

Dataset CsvLoader::run() {
  if (path_.empty()) throw DataError("data.source.path is not set; name the CSV file to read");
  if (!src_.columns.empty()) {  // no header row: the names come from the config
    fields_ = src_.columns;
    take_header();
    fields_.clear();
  }
  read_file();
  const int rc = csv_fini(&parser_, on_field, on_row, this);
  check(rc == 0, row_line_, kUnclosedQuote);
  finish();
  return std::move(ds_);
}

void CsvLoader::read_file() {
  struct Closer { void operator()(std::FILE* f) const { std::fclose(f); } };
  std::unique_ptr<std::FILE, Closer> file(std::fopen(path_.c_str(), "rb"));
  auto fail = [&] {
    throw DataError("cannot read CSV file " + quoted(path_) + ": " + std::strerror(errno) +
                    " (check data.source.path; relative paths start at the working directory)");
  };
  if (!file) fail();
  std::vector<char> buf(kBlockSize);
  bool first = true;
  size_t got = 0;
  while ((got = std::fread(buf.data(), 1, buf.size(), file.get())) > 0) {
    std::string_view block(buf.data(), got);
    if (first && block.starts_with("\xEF\xBB\xBF")) block.remove_prefix(3);  // UTF-8 BOM
    if (first) set_delimiter(block);
    first = false;
    feed(block);
  }
  if (std::ferror(file.get())) fail();
}

// The configured delimiter, or the one detected from the first line that is not a comment
// (logged, since a wrong guess shows up only as odd columns).
void CsvLoader::set_delimiter(std::string_view block) {
  delimiter_ = src_.delimiter;
  if (delimiter_ == '\0') {
    std::string_view line = block;
    while (src_.comment != '\0' && line.starts_with(src_.comment) && line.find('\n') != std::string_view::npos)
      line.remove_prefix(line.find('\n') + 1);
    line = line.substr(0, line.find('\n'));
    delimiter_ = detect_delimiter(line, src_.quote);
    if (delimiter_ == ',')
      spdlog::debug("{}: fields separated by ',' (detected)", path_);
    else
      spdlog::info("{}: fields separated by {} (detected from the first line; set data.source.delimiter to "
                   "choose another)", path_, char_name(delimiter_));
  }
  csv_set_delim(&parser_, static_cast<unsigned char>(delimiter_));
}

// Feeds one physical line at a time, so row_line_ is the line where each row starts. Lines
// starting with the comment character between rows are skipped.
void CsvLoader::feed(std::string_view block) {
  while (!block.empty()) {
    const size_t nl = block.find('\n');
    const size_t len = nl == std::string_view::npos ? block.size() : nl + 1;
    // (comment_open_: the rest of a comment line begun in the previous block)
    if (comment_open_ ||
        (parser_.pstate == kRowNotBegun && src_.comment != '\0' && block[0] == src_.comment)) {
      comment_open_ = nl == std::string_view::npos;
      if (nl != std::string_view::npos) ++line_;
      block.remove_prefix(len);
      continue;
    }
    if (parser_.pstate == kRowNotBegun) row_line_ = line_, row_text_.clear();
    row_text_.append(block.data(), len);
    const size_t used = csv_parse(&parser_, block.data(), len, on_field, on_row, this);
    check(used == len, line_, kStrayQuote);
    if (nl != std::string_view::npos) ++line_;
    block.remove_prefix(len);
  }
}

// Rethrows an error from a callback, then reports a libcsv error (`parsed` false) at `line`.
void CsvLoader::check(bool parsed, long line, const char* hint) {
  if (error_) std::rethrow_exception(error_);
  if (!parsed)
    throw DataError(at_line(line) + "malformed CSV: " + csv_strerror(csv_error(&parser_)) + hint);
}

// Where header problems are reported: the header line, or the config key naming the columns.
std::string CsvLoader::header_at() const {
  return src_.columns.empty() ? at_line(header_line_) : path_ + ": data.source.columns: ";
}

void CsvLoader::take_header() {
  have_header_ = true;
  header_line_ = row_line_;
  for (size_t c = 0; c < fields_.size(); ++c) {
    if (src_.columns.empty()) check_text(c, fields_[c]);
    header_.emplace_back(trim(fields_[c]));
  }
  for (size_t c = 0; c < header_.size(); ++c) {  // (header_ is complete: its strings stay put)
    column_of_.try_emplace(header_[c], c);
    ++name_count_[header_[c]];
  }
  if (src_.target.empty() && !unlabeled())
    throw DataError(path_ + ": data.source.target is not set; name the label column, one of: " +
                    column_list(header_));
  if (!unlabeled()) target_col_ = find_column(src_.target, "data.source.target");
  if (!group_.empty()) group_col_ = find_column(group_, "data.per_member.group_by");
  if (!time_.empty()) time_col_ = find_column(time_, "data.sequence.time");
  for (const std::string& name : id_names_) id_cols_.push_back(find_column(name, "--id"));
  ds_.ids.resize(id_cols_.size());
  for (size_t i = 0; i < src_.features.size(); ++i)
    feature_cols_.push_back(find_column(
        src_.features[i], feature_keys_.empty() ? "data.source.features" : feature_keys_[i].c_str()));
  if (!src_.features_from.empty())
    add_feature_range();
  else if (src_.features.empty())  // (then there is a target)
    for (size_t c = 0; c < header_.size(); ++c)
      if (c != target_col_ && c != group_col_) feature_cols_.push_back(c);
  for (const std::string& name : columns_.drop) std::erase(feature_cols_, find_column(name, "data.drop"));
  if (feature_cols_.empty() && !columns_.drop.empty())
    throw DataError(header_at() + "data.drop leaves no feature column; keep at least one");
  if (feature_cols_.empty())
    throw DataError(header_at() + "the header has only the target column " + quoted(src_.target) +
                    "; add feature columns");
  check_group_column();
  check_used_columns();
  kind_.assign(feature_cols_.size(), Encoding::Auto);
  for (const FeatureSetting& f : columns_.settings) {
    const size_t c = find_column(f.column, "data.features");
    const auto it = std::find(feature_cols_.begin(), feature_cols_.end(), c);
    if (it == feature_cols_.end())
      throw DataError(header_at() + "data.features: column " + quoted(f.column) +
                      " is not a feature (the target, the group_by column, in data.drop or outside "
                      "data.source.features)");
    kind_[static_cast<size_t>(it - feature_cols_.begin())] = f.encoding;
  }
  level_ids_.resize(feature_cols_.size());
  ds_.levels.resize(feature_cols_.size());
}

// Throws DataError at the file, line and column of the first byte of the current row's
// `column` that is not UTF-8, naming the column (its number when the header's name is at fault).
void CsvLoader::check_text(size_t column, std::string_view cell) const {
  if (invalid_utf8(cell) == std::string_view::npos) return;
  const size_t at = invalid_utf8_in_field(row_text_, column, delimiter_, src_.quote);
  std::string where = path_ + ":" + std::to_string(row_line_) + ": ";
  if (at != std::string_view::npos) {
    const TextPosition p = text_position(row_text_, at);
    where = path_ + ":" + std::to_string(row_line_ + static_cast<long>(p.line) - 1) + ":" + std::to_string(p.column) + ": ";
  }
  const std::string name = column < header_.size() ? "column " + quoted(header_[column])  // (header_: being read)
                                                   : "the name of column " + std::to_string(column + 1) + " in the header";
  throw DataError(where + name + ": " + utf8_problem(cell, invalid_utf8(cell)));
}

// A cell read as a number (to_float); a cell that is not UTF-8 is refused as such, so that its
// bytes never reach a message.
float CsvLoader::number(size_t column, std::string_view cell, const std::string& at) const {
  try {
    return to_float(cell, at, header_[column]);
  } catch (const DataError&) {
    check_text(column, cell);
    throw;
  }
}

size_t CsvLoader::find_column(const std::string& name, const char* key) const {
  if (const auto it = column_of_.find(name); it != column_of_.end()) return it->second;
  spdlog::debug("{}: the header's {}: {}", path_, plural(header_.size(), "column"), column_list(header_, true));
  throw DataError(header_at() + key + ": column " + quoted(name) +
                  " is not in the header; available columns: " + column_list(header_) +
                  did_you_mean(name, header_));
}

// features: {from: a, to: d}: the header's columns a..d, which must not include the target
// or group column.
void CsvLoader::add_feature_range() {
  const size_t from = find_column(src_.features_from, "data.source.features.from");
  const size_t to = find_column(src_.features_to, "data.source.features.to");
  const std::string range = quoted(header_[from]) + " to " + quoted(header_[to]);
  if (from > to)
    throw DataError(header_at() + "data.source.features: the range " + range + " is reversed: " +
                    quoted(header_[to]) + " comes first in the header; swap from and to");
  for (size_t c = from; c <= to; ++c) {
    if (c == target_col_ || c == group_col_)
      throw DataError(header_at() + "data.source.features: the range " + range + " includes the " +
                      (c == target_col_ ? "target" : "group_by") + " column " +
                      quoted(header_[c]) + "; narrow the range or list the features");
    feature_cols_.push_back(c);
  }
}

// The group_by column must be neither the target nor a feature.
void CsvLoader::check_group_column() const {
  if (group_col_ == kNoColumn) return;
  if (group_col_ == target_col_ && !unlabeled())
    throw DataError(header_at() + "data.per_member.group_by: " + quoted(group_) +
                    " is the target column; group by another column");
  if (std::count(feature_cols_.begin(), feature_cols_.end(), group_col_) > 0)
    throw DataError(header_at() + "data.per_member.group_by: " + quoted(group_) +
                    " is also a feature; remove it from data.source.features");
}

// Every used column must have a unique, non-empty name and be used once.
void CsvLoader::check_used_columns() const {
  std::vector<size_t> used = feature_cols_;
  if (!unlabeled()) used.push_back(target_col_);
  if (group_col_ != kNoColumn) used.push_back(group_col_);
  if (time_col_ != kNoColumn) used.push_back(time_col_);
  std::vector<bool> seen(header_.size(), false);
  for (size_t k = 0; k < used.size(); ++k) {
    const size_t c = used[k];
    const std::string& name = header_[c];
    if (name.empty())
      throw DataError(header_at() + "column " + std::to_string(c + 1) +
                      " has no name in the header; give it one");
    if (seen[c])
      throw DataError(header_at() + "column " + quoted(name) + " is used twice (" +
                      (c == target_col_ ? "as the target and as a feature" : "in features") +
                      "); list each column once in data.source.features");
    seen[c] = true;
    if (name_count_.at(name) > 1)
      throw DataError(header_at() + "column name " + quoted(name) +
                      " appears more than once in the header; rename the duplicates");
  }
}

void CsvLoader::take_row() {
  const std::string at = at_line(row_line_);
  if (fields_.size() != header_.size())
    throw DataError(at + "row has " + plural(fields_.size(), "field") +
                    (src_.columns.empty() ? ", the header has " : ", data.source.columns names ") +
                    std::to_string(header_.size()) + "; check for a missing or extra " +
                    (delimiter_ == ',' ? std::string("comma") : "delimiter " + char_name(delimiter_)) +
                    ", and quote values that contain it" +
                    (src_.delimiter == '\0' ? " (the delimiter " + char_name(delimiter_) +
                                                   " was detected from the first line; set data.source.delimiter "
                                                   "if it is wrong)" : ""));
  if (drop_row()) {
    ++dropped_;
    return;
  }
  for (size_t k = 0; k < feature_cols_.size(); ++k) add_feature(k, fields_[feature_cols_[k]], at);
  if (unlabeled()) {
    // prediction inputs: no target column
  } else if (classification_) {
    add_label(trim(fields_[target_col_]), at);
  } else {
    ds_.y.push_back(number(target_col_, fields_[target_col_], at));
  }
  if (group_col_ != kNoColumn) add_group(trim(fields_[group_col_]), at);
  if (time_col_ != kNoColumn) add_time(trim(fields_[time_col_]), at);
  for (size_t k = 0; k < id_cols_.size(); ++k) {
    check_text(id_cols_[k], fields_[id_cols_[k]]);
    ds_.ids[k].emplace_back(trim(fields_[id_cols_[k]]));
  }
  ds_.lines.push_back(row_line_);
  ++ds_.n;
}

// Whether data.features names `column` (its encoding is then as given).
bool CsvLoader::columns_has(const std::string& column) const {
  return std::any_of(columns_.settings.begin(), columns_.settings.end(),
                     [&](const FeatureSetting& f) { return f.column == column; });
}

// data.missing: drop_rows: whether a feature or the target of the current row is missing.
bool CsvLoader::drop_row() const {
  if (columns_.missing != Missing::DropRows) return false;
  for (size_t c : feature_cols_)
    if (is_missing(trim(fields_[c]))) return true;
  return !unlabeled() && is_missing(trim(fields_[target_col_]));
}

// Feature k's cell: a number, a category (its first-seen index), or NaN when missing values are
// filled. An auto column becomes numeric or onehot by its first value that is not missing.
void CsvLoader::add_feature(size_t k, std::string_view cell, const std::string& at) {
  const std::string& name = header_[feature_cols_[k]];
  const std::string_view s = trim(cell);
  const bool fill = columns_.missing == Missing::Mean || columns_.missing == Missing::Median;
  if (fill && is_missing(s)) {
    ds_.X.push_back(std::numeric_limits<float>::quiet_NaN());
    return;
  }
  Encoding& kind = kind_[k];
  if (kind == Encoding::Auto && !is_missing(s)) kind = is_text(s) ? Encoding::OneHot : Encoding::Numeric;
  if (kind == Encoding::OneHot || kind == Encoding::Ordinal) {
    if (s.empty())
      throw DataError(at + "column " + quoted(name) + ": the category is empty; fill it in or remove the row "
                      "(or set data.missing: drop_rows, mean or median)");
    auto [it, fresh] = level_ids_[k].try_emplace(std::string(s), static_cast<int>(ds_.levels[k].size()));
    if (fresh) check_text(feature_cols_[k], s), ds_.levels[k].emplace_back(s);
    ds_.X.push_back(static_cast<float>(it->second));
    return;
  }
  try {
    ds_.X.push_back(number(feature_cols_[k], s, at));
  } catch (const DataError& e) {
    if (is_missing(s) || !is_text(s) || columns_has(name) || invalid_utf8(s) != std::string_view::npos) throw;
    throw DataError(std::string(e.what()) + " (if column " + quoted(name) +
                    " holds categories, set data.features: {" + name + ": {encoding: onehot}})");
  }
}

void CsvLoader::add_time(std::string_view time, const std::string& at) {
  if (time.empty())
    throw DataError(at + "column " + quoted(time_) +
                    ": the time (data.sequence.time) is empty; fill it in or remove the row");
  check_text(time_col_, time);
  ds_.time.emplace_back(time);
}

void CsvLoader::add_group(std::string_view group, const std::string& at) {
  if (group.empty())
    throw DataError(at + "column " + quoted(group_) +
                    ": the group (data.per_member.group_by) is empty; fill it in or remove the row");
  const auto [it, fresh] = group_ids_.try_emplace(std::string(group), (int)group_seen_.size());
  if (fresh) check_text(group_col_, group), group_seen_.emplace_back(group);
  ds_.group.push_back(it->second);
}

void CsvLoader::add_label(std::string_view label, const std::string& at) {
  if (label.empty())
    throw DataError(at + "column " + quoted(src_.target) +
                    ": the class label is empty; fill it in or remove the row");
  const auto [it, fresh] = class_ids_.try_emplace(std::string(label), (int)class_seen_.size());
  if (fresh) check_text(target_col_, label), class_seen_.emplace_back(label);
  labels_.push_back(it->second);
}

void CsvLoader::finish() {
  if (!have_header_)
    throw DataError(path_ + ": the file is empty; the first line must be a header naming the "
                            "columns, e.g. x1,x2,label");
  const int needed = unlabeled() ? 1 : 2;
  if (ds_.n < needed)
    throw DataError(path_ + ": found " + plural(ds_.n, "data row") + " after the header; at least " +
                    std::to_string(needed) + (needed == 1 ? " is" : " are") + " needed");
  ds_.features = static_cast<int>(feature_cols_.size());
  ds_.targets = unlabeled() ? 0 : 1;
  ds_.origin = path_;
  for (size_t c : feature_cols_) ds_.feature_names.push_back(header_[c]);
  for (Encoding& k : kind_)
    if (k == Encoding::Auto) k = Encoding::Numeric;  // (every value missing)
  ds_.encodings = kind_;
  if (dropped_ > 0)
    spdlog::info("{}: dropped {} with missing values (data.missing: drop_rows)", path_, plural(dropped_, "row"));
  if (classification_ && !unlabeled()) finish_classes();
  if (group_col_ != kNoColumn) finish_groups();
  if (group_col_ != kNoColumn) ds_.group_column = group_;
  ds_.time_column = time_;
  ds_.id_columns = id_names_;
}

// Groups are numbered in increasing order of their values: numeric when every value is a
// number, else by text.
void CsvLoader::finish_groups() {
  std::vector<double> value(group_seen_.size());
  bool numeric = true;
  for (size_t i = 0; i < group_seen_.size() && numeric; ++i) {
    const std::string& s = group_seen_[i];
    numeric = std::from_chars(s.data(), s.data() + s.size(), value[i]).ptr == s.data() + s.size();
  }
  std::vector<int> order(group_seen_.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    if (numeric && value[a] != value[b]) return value[a] < value[b];
    return group_seen_[a] < group_seen_[b];
  });
  std::vector<int> rank(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    rank[order[k]] = static_cast<int>(k);
    ds_.group_names.push_back(group_seen_[order[k]]);
  }
  for (int& g : ds_.group) g = rank[g];
}

// Integer labels 0..K-1 are kept; any other labels are numbered in sorted order.
void CsvLoader::finish_classes() {
  const std::string col = "column " + quoted(src_.target);
  if (class_seen_.size() < 2)
    throw DataError(path_ + ": " + col + " has only one class (" + quoted(class_seen_[0]) +
                    "); classification needs at least 2 distinct labels");
  std::vector<int> index(class_seen_.size());
  if (std::all_of(class_seen_.begin(), class_seen_.end(),
                  [](const std::string& s) { return is_integer_label(s); })) {
    unsigned long long max = 0;
    for (size_t i = 0; i < class_seen_.size(); ++i) {
      unsigned long long v = 0;
      const std::string& s = class_seen_[i];
      if (std::from_chars(s.data(), s.data() + s.size(), v).ec != std::errc() ||
          v >= kMaxIntegerClasses)
        throw DataError(path_ + ": " + col + ": integer class label " + s +
                        " is too large (labels are kept as class indices 0..K-1, K <= " +
                        std::to_string(kMaxIntegerClasses) + "); renumber the classes");
      index[i] = static_cast<int>(v);
      max = std::max(max, v);
    }
    for (unsigned long long k = 0; k <= max; ++k) ds_.class_names.push_back(std::to_string(k));
  } else {
    ds_.class_names = class_seen_;
    std::sort(ds_.class_names.begin(), ds_.class_names.end());
    for (size_t i = 0; i < class_seen_.size(); ++i)
      index[i] = static_cast<int>(
          std::lower_bound(ds_.class_names.begin(), ds_.class_names.end(), class_seen_[i]) -
          ds_.class_names.begin());
  }
  ds_.num_classes = static_cast<int>(ds_.class_names.size());
  ds_.y.reserve(labels_.size());
  for (int id : labels_) ds_.y.push_back(static_cast<float>(index[id]));
}

}  // namespace

Dataset load_csv(const SourceConfig& source, bool classification, const std::string& group_column,
                 const CsvColumns& columns, const std::vector<std::string>& id_columns) {
  CsvLoader loader(source, classification, group_column, "", {}, id_columns, columns);
  return loader.run();
}

Dataset load_csv_table(const SourceConfig& source, const std::vector<std::string>& columns,
                       const std::vector<std::string>& keys, const std::string& group_column,
                       const std::string& time_column, const std::vector<std::string>& id_columns) {
  SourceConfig src = source;  // its path and dialect
  src.target.clear();
  src.features_from.clear();
  src.features_to.clear();
  src.features = columns;  // no target: every column is read as a number
  CsvLoader loader(src, false, group_column, time_column, keys, id_columns);
  return loader.run();
}

}  // namespace tn
