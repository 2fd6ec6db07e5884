// Tests of the data section of configs: source types and their keys, feature ranges,
// per-member modes, normalization, splits with a source's own test set, and round trips.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "config/config.h"
#include "config_test_util.h"

using namespace tn;
using namespace tn::test;

namespace {

const char* const kModel = "model: {layers: [{units: 2}]}\n";

// A config with `data` as the flow map `{...}` text.
std::string data(const std::string& flow) { return std::string(kModel) + "data: " + flow + "\n"; }

// A directory with empty stand-ins for every data file (the config only checks existence).
struct DataFiles {
  fs::path dir = temp_dir("data_files");
  DataFiles() {
    for (const char* name : {"tr-img.gz", "tr-lab.gz", "te-img.gz", "te-lab.gz", "x.npy", "y.npy",
                             "tx.npy", "ty.npy", "d.h5", "t.csv"})
      write_file(dir / name, "");
  }
  ~DataFiles() { fs::remove_all(dir); }
  std::string operator()(const char* name) const { return (dir / name).string(); }
};

}  // namespace

TEST_CASE("config data: generator sources") {
  Config c = parse(data("{source: moons}"));
  CHECK(c.data.source.type == "moons");
  CHECK(c.data.source.n == 128);
  c = parse(data("{source: {type: moons, n: 200, noise: 0.1, seed: 4}}"));
  CHECK(c.data.source.n == 200);
  CHECK(c.data.source.noise == 0.1);
  CHECK(c.data.source.seed == 4);
  check_round_trip(c);
  CHECK(to_yaml(c).find("rotations") == std::string::npos);
  c = parse(data("{source: {type: sine, n: 50, noise: 0}}"));
  CHECK(c.data.source.type == "sine");
  CHECK(c.data.source.noise == 0);
  check_round_trip(c);
  CHECK_HAS(error_of(data("{source: {type: moons, rotations: 2}}")),
            "cfg.yaml:2:30: data.source.rotations: only applies to spirals; type is 'moons'");
  CHECK_HAS(error_of(data("{source: {type: sine, target: y}}")),
            "data.source.target: only applies to csv; type is 'sine'");
  CHECK_HAS(error_of(data("{source: {type: moon}}")),
            "data.source.type: unknown value 'moon'; allowed: spirals, moons, sine, random_walk, csv, "
            "idx, hdf5, npy, arrays; did you mean 'moons'?");
  CHECK_HAS(error_of(data("{source: {type: sine, n: 1}}")),
            "data.source.n: value 1 is out of range; expected an integer >= 2");
}

TEST_CASE("config data: idx, npy and hdf5 sources resolve their files") {
  const DataFiles files;
  // Relative paths not found from the working directory are looked up beside the config.
  write_file(files.dir / "idx.yaml",
             data("{source: {type: idx, images: tr-img.gz, labels: tr-lab.gz, "
                  "test_images: te-img.gz, test_labels: te-lab.gz}, split: {train: 0.9, val: 0.1}}"));
  Config c = load_config((files.dir / "idx.yaml").string());
  CHECK(c.data.source.type == "idx");
  CHECK(c.data.source.images == files("tr-img.gz"));
  CHECK(c.data.source.labels == files("tr-lab.gz"));
  CHECK(c.data.source.test_images == files("te-img.gz"));
  CHECK(c.data.source.test_labels == files("te-lab.gz"));
  CHECK(c.data.split.val == 0.1);
  check_round_trip(c);

  c = parse(data("{source: {type: idx, images: " + files("tr-img.gz") + ", labels: " +
                 files("tr-lab.gz") + "}}"));
  CHECK(c.data.source.test_images.empty());
  CHECK(to_yaml(c).find("test_images") == std::string::npos);
  check_round_trip(c);

  c = parse(data("{source: {type: npy, x_path: " + files("x.npy") + ", y_path: " +
                 files("y.npy") + ", test_x_path: " + files("tx.npy") + ", test_y_path: " +
                 files("ty.npy") + "}}"));
  CHECK(c.data.source.x_path == files("x.npy"));
  CHECK(c.data.source.test_y_path == files("ty.npy"));
  check_round_trip(c);

  c = parse(data("{source: {type: hdf5, path: " + files("d.h5") + "}}"));
  CHECK(c.data.source.path == files("d.h5"));
  CHECK(c.data.source.x_dataset == "X");
  CHECK(c.data.source.y_dataset == "y");
  check_round_trip(c);
  c = parse(data("{source: {type: hdf5, path: " + files("d.h5") + ", x_dataset: /train/X, "
                 "y_dataset: /train/y, test_x_dataset: /test/X, test_y_dataset: /test/y}}"));
  CHECK(c.data.source.x_dataset == "/train/X");
  CHECK(c.data.source.test_y_dataset == "/test/y");
  check_round_trip(c);
}

TEST_CASE("config data: file source errors") {
  const DataFiles files;
  const std::string img = files("tr-img.gz"), lab = files("tr-lab.gz");
  CHECK_HAS(error_of(data("{source: {type: idx, labels: " + lab + "}}")),
            "data.source.images: missing required key");
  CHECK_HAS(error_of(data("{source: {type: idx, images: " + img + ", labels: nope.gz}}")),
            "data.source.labels: file not found: 'nope.gz'; looked in the working directory");
  CHECK_HAS(error_of(data("{source: {type: idx, images: " + img + ", labels: " + lab +
                          ", test_images: " + img + "}}")),
            "data.source.test_images: is given without test_labels; the test set needs both "
            "(or leave out both)");
  CHECK_HAS(error_of(data("{source: {type: npy, x_path: " + files("x.npy") + ", y_path: " +
                          files("y.npy") + ", test_y_path: " + files("ty.npy") + "}}")),
            "data.source.test_y_path: is given without test_x_path");
  CHECK_HAS(error_of(data("{source: {type: hdf5, path: " + files("d.h5") + ", x_dataset: ''}}")),
            "data.source.x_dataset: must not be empty");
  CHECK_HAS(error_of(data("{source: {type: idx, images: " + img + ", labels: " + lab +
                          ", x_path: a}}")),
            "data.source.x_path: only applies to npy; type is 'idx'");
  CHECK_HAS(error_of(data("{source: {type: npy, images: a}}")),
            "data.source.images: only applies to idx; type is 'npy'");
  CHECK_HAS(error_of(data("{source: {type: hdf5, path: " + files("d.h5") + ", x_path: a}}")),
            "data.source.x_path: only applies to npy; type is 'hdf5'");
  CHECK_HAS(error_of(data("{source: {type: hdf5}}")), "data.source.path: missing required key");
}

TEST_CASE("config data: a source's own test set fixes split.test at 0") {
  const DataFiles files;
  const std::string idx = "{type: idx, images: " + files("tr-img.gz") + ", labels: " +
                          files("tr-lab.gz") + ", test_images: " + files("te-img.gz") +
                          ", test_labels: " + files("te-lab.gz") + "}";
  CHECK(parse(data("{source: " + idx + ", split: {train: 0.8, val: 0.2, test: 0}}")).data.split.val ==
        0.2);
  std::string m = error_of(data("{source: " + idx + ", split: {train: 0.8, val: 0.1, test: 0.1}}"));
  CHECK_HAS(m, "data.split.test: must be 0: the test split comes from the test files "
               "(data.source.test_images and test_labels)");
  m = error_of(data("{source: " + idx + ", split: {train: 0.8, val: 0.1}}"));
  CHECK_HAS(m, "data.split: train + val must sum to 1 (the test split comes from the test "
               "files), got 0.9 (0.8 + 0.1)");
  CHECK_HAS(error_of(data("{source: {type: hdf5, path: " + files("d.h5") +
                          ", test_x_dataset: a, test_y_dataset: b}, split: {train: 0.5, test: 0.5}}")),
            "(data.source.test_x_dataset and test_y_dataset)");
  // Without test files the split may carve a test set.
  CHECK(parse(data("{source: {type: npy, x_path: " + files("x.npy") + ", y_path: " +
                   files("y.npy") + "}, split: {train: 0.8, test: 0.2}}"))
            .data.split.test == 0.2);
}

TEST_CASE("config data: csv feature ranges") {
  const DataFiles files;
  const std::string csv = "{type: csv, path: " + files("t.csv") + ", target: label, ";
  Config c = parse(data("{source: " + csv + "features: {from: pixel1, to: pixel784}}}"));
  CHECK(c.data.source.features.empty());
  CHECK(c.data.source.features_from == "pixel1");
  CHECK(c.data.source.features_to == "pixel784");
  CHECK_HAS(to_yaml(c), "features: {from: pixel1, to: pixel784}");
  check_round_trip(c);
  CHECK_HAS(error_of(data("{source: " + csv + "features: {from: a}}}")),
            "data.source.features.to: missing required key");
  CHECK_HAS(error_of(data("{source: " + csv + "features: {from: a, to: b, step: 2}}}")),
            "data.source.features.step: unknown key; allowed: from, to");
  CHECK_HAS(error_of(data("{source: " + csv + "features: a}}")),
            "data.source.features: expected a list of column names or a range like "
            "{from: x1, to: x9}, got 'a'");
  CHECK_HAS(error_of(data("{source: " + csv + "features: [a, label]}}")),
            "data.source.features: contains the target column 'label'");
}

TEST_CASE("config data: per_member modes") {
  const DataFiles files;
  const std::string csv = "{type: csv, path: " + files("t.csv") + ", target: label, features: [a, b]}";
  const auto mode = [&](const std::string& pm) {
    return parse(data("{source: " + csv + ", per_member: " + pm + "}")).data;
  };
  CHECK(mode("shared").per_member == PerMember::Shared);
  CHECK(mode("shards").per_member == PerMember::Shards);
  DataConfig d = mode("subsample");
  CHECK(d.per_member == PerMember::Subsample);
  CHECK(d.member_fraction == 1.0);
  d = mode("{bootstrap: {fraction: 2.5}}");
  CHECK(d.per_member == PerMember::Bootstrap);
  CHECK(d.member_fraction == 2.5);
  d = mode("{subsample: {fraction: 0.25}}");
  CHECK(d.per_member == PerMember::Subsample);
  CHECK(d.member_fraction == 0.25);
  CHECK(mode("{bootstrap: }").member_fraction == 1.0);
  d = mode("{group_by: store}");
  CHECK(d.per_member == PerMember::GroupBy);
  CHECK(d.group_by == "store");

  for (const char* pm : {"shards", "subsample", "{bootstrap: {fraction: 2.5}}",
                         "{subsample: {fraction: 0.25}}", "{group_by: store}"}) {
    CAPTURE(pm);
    check_round_trip(parse(data("{source: " + csv + ", per_member: " + pm + "}")));
  }
  CHECK_HAS(to_yaml(parse(data("{source: " + csv + ", per_member: {bootstrap: {fraction: 2.5}}}"))),
            "per_member: {bootstrap: {fraction: 2.5}}");
  CHECK_HAS(to_yaml(parse(data("{source: " + csv + ", per_member: {subsample: {fraction: 1}}}"))),
            "per_member: subsample\n");
  CHECK_HAS(to_yaml(parse(data("{source: " + csv + ", per_member: {group_by: store}}"))),
            "per_member: {group_by: store}");
}

TEST_CASE("config data: per_member errors") {
  const DataFiles files;
  const std::string csv = "{type: csv, path: " + files("t.csv") + ", target: label, features: [a, b]}";
  const auto error = [&](const std::string& pm) {
    return error_of(data("{source: " + csv + ", per_member: " + pm + "}"));
  };
  CHECK_HAS(error("group_by"),
            "data.per_member: group_by needs the column: write per_member: {group_by: COLUMN}");
  CHECK_HAS(error("bootstap"), "data.per_member: unknown value 'bootstap'; allowed: shared, "
                               "bootstrap, subsample, shards, group_by; did you mean 'bootstrap'?");
  CHECK_HAS(error("[shared]"), "data.per_member: expected a name (shared, bootstrap, subsample, "
                               "shards) or a one-key map");
  CHECK_HAS(error("{subsample: {fraction: 1.5}}"),
            "data.per_member.subsample.fraction: value 1.5 is out of range; expected a number in "
            "(0, 1]");
  CHECK_HAS(error("{bootstrap: {fraction: 0}}"), "expected a number in (0, 10]");
  CHECK_HAS(error("{bootstrap: {fraction: 11}}"), "expected a number in (0, 10]");
  CHECK_HAS(error("{bootstrap: {fractoin: 0.5}}"),
            "data.per_member.bootstrap.fractoin: unknown key; allowed: fraction, stratify; did you mean "
            "'fraction'?");
  CHECK_HAS(error("{bootstrap: 0.5}"),
            "data.per_member.bootstrap: expected a map like {fraction: 0.5}, got '0.5'");
  CHECK_HAS(error("{bootstrap: {fraction: 0.5}, subsample: {fraction: 0.5}}"),
            "data.per_member: give exactly one mode, e.g. {bootstrap: {fraction: 0.5}}; got 2 keys");
  CHECK_HAS(error("{}"), "data.per_member: give exactly one mode");
  CHECK_HAS(error_of(data("{source: " + csv + ", per_member: bootstrap}"),
                     {parse_override("data.per_member.bootstrap.fraction=0.5")}),
            "data.per_member.type: per_member takes a name or a one-key map such as {bootstrap: "
            "{fraction: 0.5}}, not a type key; with --set, replace the whole value: --set "
            "'data.per_member={bootstrap: {fraction: 0.5}}'");
  CHECK(parse(data("{source: " + csv + ", per_member: bootstrap}"),
              {parse_override("data.per_member={subsample: {fraction: 0.5}}")})
            .data.member_fraction == 0.5);
  CHECK_HAS(error("{shards: 4}"), "data.per_member.shards: takes no options; write per_member: shards");
  CHECK_HAS(error("{bagging: 1}"),
            "data.per_member.bagging: unknown key; allowed: bootstrap, subsample, group_by");
  CHECK_HAS(error("{group_by: label}"),
            "data.per_member.group_by: 'label' is the target column; group by another column");
  CHECK_HAS(error("{group_by: a}"), "data.per_member.group_by: 'a' is also listed in "
                                    "data.source.features; a group column cannot be a feature");
  CHECK_HAS(error("{group_by: ''}"), "data.per_member.group_by: must not be empty");
  CHECK_HAS(error_of(data("{source: spirals, per_member: {group_by: a}}")),
            "cfg.yaml:2:48: data.per_member.group_by: groups are the values of a CSV column, so "
            "group_by needs data.source.type: csv (or random_walk); the source is 'spirals'");
}

TEST_CASE("config data: normalization") {
  const DataFiles files;
  const std::string csv = "{type: csv, path: " + files("t.csv") + ", target: label}";
  CHECK(parse(data("{source: spirals, normalize: minmax}")).data.normalize == Normalize::MinMax);
  Config c = parse(data("{source: " + csv + ", per_member: {group_by: store}, normalize: minmax, "
                        "normalize_per_member: true}"));
  CHECK(c.data.normalize_per_member);
  CHECK_HAS(to_yaml(c), "normalize_per_member: true");
  check_round_trip(c);
  c = parse(data("{source: " + csv + ", per_member: {group_by: store}, normalize_per_member: false}"));
  CHECK_FALSE(c.data.normalize_per_member);
  check_round_trip(c);
  CHECK(to_yaml(parse(data("{source: spirals}"))).find("normalize_per_member") == std::string::npos);
  CHECK_HAS(error_of(data("{source: spirals, normalize: standard, normalize_per_member: true}")),
            "data.normalize_per_member: only applies to group_by; per_member is 'shared'");
  CHECK_FALSE(parse(data("{source: spirals, normalize_per_member: false}")).data.normalize_per_member);
  CHECK_HAS(error_of(data("{source: " + csv + ", per_member: {group_by: store}, "
                          "normalize_per_member: true}")),
            "data.normalize_per_member: has no effect with normalize: none; set data.normalize "
            "to standard or minmax");
  CHECK_HAS(error_of(data("{source: spirals, normalise: standard}")),
            "data.normalise: unknown key; allowed: source, split, per_member, normalize, "
            "normalize_per_member, normalize_target, sequence, features, missing, drop; did you mean 'normalize'?");
}

TEST_CASE("config data: normalize_target scales regression targets of non-sequence data only") {
  const DataFiles files;
  const std::string csv = "{type: csv, path: " + files("t.csv") + ", target: label}";
  const std::string mse = "model: {layers: [{units: 1}]}\nloss: mse\ndata: ";
  Config c = parse(mse + "{source: " + csv + ", normalize_target: standard}");
  CHECK(c.data.normalize_target == Normalize::Standard);
  CHECK_HAS(to_yaml(c), "normalize_target: standard");
  check_round_trip(c);
  CHECK(parse(mse + "{source: " + csv + ", normalize_target: minmax}").data.normalize_target == Normalize::MinMax);
  CHECK(parse(mse + "{source: " + csv + ", normalize_target: robust}").data.normalize_target == Normalize::Robust);
  c = parse(mse + "{source: " + csv + ", normalize_target: log1p}");
  CHECK(c.data.normalize_target == Normalize::Log1p);
  check_round_trip(c);
  CHECK_HAS(error_of(mse + "{source: " + csv + ", normalize: robust}"), "data.normalize:");  // targets only
  CHECK_HAS(error_of(mse + "{source: " + csv + ", normalize_target: zscore}"), "data.normalize_target:");
  CHECK_HAS(error_of(data("{source: " + csv + ", normalize_target: standard}")),
            "data.normalize_target: scales regression targets, but the loss is cross_entropy (class labels); "
            "remove data.normalize_target");
  CHECK_HAS(error_of(mse + "{source: {type: csv, path: " + files("t.csv") + "}, normalize_target: standard, "
                           "sequence: {window: 4, target: label}}"),
            "data.normalize_target: applies to non-sequence data; a sequence run scales its target with "
            "data.normalize");
}

TEST_CASE("config data: normalize_target defaults to standard for regression losses, named in the resolved config") {
  const DataFiles files;
  const std::string csv = "{type: csv, path: " + files("t.csv") + ", target: label}";
  for (const std::string loss : {"mse", "mae", "huber"}) {
    const Config c = parse("model: {layers: [{units: 1}]}\nloss: " + loss + "\ndata: {source: " + csv + "}");
    CHECK_MESSAGE(c.data.normalize_target == Normalize::Standard, loss);
    CHECK_HAS(to_yaml(c), "normalize_target: standard");
    check_round_trip(c);
  }
  // Explicit none trains on raw targets, and stays none through the resolved config.
  Config none = parse("model: {layers: [{units: 1}]}\nloss: mse\ndata: {source: " + csv + ", normalize_target: none}");
  CHECK(none.data.normalize_target == Normalize::None);
  CHECK_HAS(to_yaml(none), "normalize_target: none");
  check_round_trip(none);
  // Classification: none, named; sequence data: none, not named (its target scaling is data.normalize).
  const Config labels = parse(data("{source: " + csv + "}"));
  CHECK(labels.data.normalize_target == Normalize::None);
  CHECK_HAS(to_yaml(labels), "normalize_target: none");
  CHECK(parse(data("{source: " + csv + ", normalize_target: none}")).data.normalize_target == Normalize::None);
  const Config seq = parse("model: {layers: [{units: 1}]}\nloss: mse\ndata: {source: {type: csv, path: " +
                           files("t.csv") + "}, sequence: {window: 4, target: label}}");
  CHECK(seq.data.normalize_target == Normalize::None);
  CHECK(to_yaml(seq).find("normalize_target") == std::string::npos);
  // A run file's /config without the key (written before this default) reads as none.
  std::string stored = to_yaml(none);
  stored.erase(stored.find("  normalize_target: none\n"), std::string("  normalize_target: none\n").size());
  CHECK(parse_stored_config(stored, "old.h5:/config").data.normalize_target == Normalize::None);
  CHECK(parse_config(stored, "new.yaml").data.normalize_target == Normalize::Standard);
}
