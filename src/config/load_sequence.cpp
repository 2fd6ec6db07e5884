// Reader of `data.sequence` (sliding windows over series) and its checks against the source,
// split and per-member mode of the same data section.
#include <algorithm>

#include "config/load_data.h"

namespace tn::cfg {
namespace {

constexpr long long kIntMax = 2147483647;

std::string column(const Field& f) {
  std::string v = f.string();
  if (v.empty()) f.fail("must not be empty");
  return v;
}

// random_walk's table has the columns date, ticker and close only.
void check_random_walk_columns(const Field& f, const DataConfig& d) {
  const SequenceConfig& q = d.sequence;
  const auto numeric = [&](const Field& k, const std::string& name) {
    if (name != "close")
      k.fail("random_walk has one numeric column, 'close' (the others are date and ticker); got '" +
             name + "'");
  };
  numeric(f["target"], q.target);
  const std::vector<Field> items = f["features"].present() ? f["features"].items() : std::vector<Field>{};
  for (std::size_t i = 0; i < items.size(); ++i) numeric(items[i], q.features[i]);
  if (!q.time.empty() && q.time != "date")
    f["time"].fail("random_walk's time column is 'date'; write time: date or leave it out");
  if (d.per_member != PerMember::GroupBy && d.source.walk.series > 1)
    f.fail("random_walk makes " + std::to_string(d.source.walk.series) +
           " series, and without data.per_member: {group_by: ticker} the whole table would be one "
           "series (windows would run across tickers); set per_member: {group_by: ticker} or "
           "data.source.series: 1");
}

}  // namespace

void read_sequence(const Field& f, const Field& data, DataConfig& d) {
  if (!f.is_map()) f.fail_type("a map like {window: 20, target: close}");
  f.check_keys(section_keys("data.sequence"));
  SequenceConfig& q = d.sequence;
  q.window = static_cast<int>(f.required("window").integer(1, kIntMax));
  f.get("horizon", q.horizon, 1);
  f.get("stride", q.stride, 1);
  q.target = column(f.required("target"));
  if (Field features = f["features"]; features.present()) {
    if (!features.node().IsSequence()) features.fail_type("a list of column names like [close, volume]");
    const std::vector<Field> items = features.items();
    if (items.empty()) features.fail("must name at least one column (default: [target])");
    for (const Field& item : items) {
      const std::string name = column(item);
      if (std::find(q.features.begin(), q.features.end(), name) != q.features.end())
        item.fail("column '" + name + "' is listed twice");
      q.features.push_back(name);
    }
  } else {
    q.features = {q.target};
  }
  if (Field t = f["time"]; t.present()) {
    q.time = column(t);
    if (q.time == q.target || std::find(q.features.begin(), q.features.end(), q.time) != q.features.end())
      t.fail("'" + q.time + "' is also the target or a feature; the time column only orders each "
             "series (it may hold dates)");
  }

  f.get("transform", q.transform,
        {SeriesTransform::None, SeriesTransform::Diff, SeriesTransform::LogDiff, SeriesTransform::PctChange});
  f.get("scale", q.scale, {SeriesScale::Series, SeriesScale::Window});
  if (q.scale == SeriesScale::Window && d.normalize != Normalize::None)
    f["scale"].fail(std::string("window scales each window by its own inputs' mean and std, so data.normalize ('") +
                    to_string(d.normalize) + "') would do nothing; remove data.normalize (and "
                    "normalize_per_member) or use scale: series");
  if (Field season = f["season"]; season.present()) q.season = static_cast<int>(season.integer(1, kIntMax));

  const SourceConfig& s = d.source;
  if (s.type != "csv" && s.type != "random_walk")
    data["source"].fail("sequence data need a long-format table (one row per time point): "
                        "data.source.type csv or random_walk; the source is '" + s.type + "'");
  if (d.per_member == PerMember::GroupBy) {
    const Field g = data["per_member"]["group_by"];
    if (d.group_by == q.target || d.group_by == q.time ||
        std::find(q.features.begin(), q.features.end(), d.group_by) != q.features.end())
      g.fail("'" + d.group_by + "' is also a column of data.sequence; the group_by column names "
             "the series (e.g. ticker)");
  }
  if (d.per_member == PerMember::Shards)
    data["per_member"].fail("shards cannot split sequence data: windows overlap in time, so the "
                            "parts would share time points; use group_by (one member per series), "
                            "bootstrap or subsample");
  if (Field seed = data["split"]["seed"]; seed.present())
    seed.fail("sequence splits are chronological (each series: train, then val, then test) and "
              "never shuffled, so the seed has no effect; remove it");
  if (Field st = data["split"]["stratify"]; st.present() && d.split.stratify)
    st.fail("sequence targets are numbers and sequence splits are chronological, so there is "
            "nothing to stratify; remove it");
  if (s.type == "random_walk") check_random_walk_columns(f, d);
}

}  // namespace tn::cfg
