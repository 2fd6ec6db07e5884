// Tests of the data sources: moons and sine generators, IDX files (plain, gzip, malformed,
// and the real Fashion-MNIST when installed), CSV feature ranges and group_by columns, and
// load_dataset's dispatch.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "data/sources.h"
#include "source_test_util.h"

using namespace tn;
using namespace tn::test;

namespace {

Bytes be32(std::uint32_t v) {
  return {static_cast<unsigned char>(v >> 24), static_cast<unsigned char>(v >> 16),
          static_cast<unsigned char>(v >> 8), static_cast<unsigned char>(v)};
}

Bytes cat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Bytes idx_images(std::uint32_t n, std::uint32_t rows, std::uint32_t cols, const Bytes& pixels) {
  return cat(cat(cat(cat({0, 0, 8, 3}, be32(n)), be32(rows)), be32(cols)), pixels);
}

Bytes idx_labels(const Bytes& labels) {
  return cat(cat({0, 0, 8, 1}, be32(static_cast<std::uint32_t>(labels.size()))), labels);
}

// Three 2x3 training images with labels 2, 0, 5.
const Bytes kPixels = {0, 255, 51, 1, 2, 3, 10, 20, 30, 40, 50, 60, 100, 101, 102, 103, 104, 105};
const Bytes kImages = idx_images(3, 2, 3, kPixels);
const Bytes kLabels = idx_labels({2, 0, 5});

SourceConfig idx_source(const std::string& images, const std::string& labels) {
  return source_of("idx", {{&SourceConfig::images, images}, {&SourceConfig::labels, labels}});
}

std::string idx_error(const Bytes& images, const Bytes& labels) {
  return data_error([&] {
    load_idx(idx_source(write_bytes("e-img", images), write_bytes("e-lab", labels)));
  });
}

DataConfig data_of(const SourceConfig& s) {
  DataConfig d;
  d.source = s;
  return d;
}

}  // namespace

TEST_CASE("sources: moons follow scikit-learn's make_moons") {
  SourceConfig s;
  s.type = "moons";
  s.n = 7;  // 3 outer (class 0), 4 inner (class 1)
  s.noise = 0;
  const Dataset d = make_moons(s);
  REQUIRE(d.n == 7);
  CHECK(d.features == 2);
  CHECK(d.num_classes == 2);
  const double h = std::sqrt(3.0) / 2;  // sin(π/3)
  const std::vector<double> want = {1, 0, 0, 1, -1, 0,                 // outer: t = 0, π/2, π
                                    0, 0.5, 0.5, 0.5 - h, 1.5, 0.5 - h, 2, 0.5};  // inner: 0, π/3, 2π/3, π
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(d.X[i] == doctest::Approx(want[i]).epsilon(1e-6));
  CHECK(d.y == std::vector<float>{0, 0, 0, 1, 1, 1, 1});
  // Noise: N(0, noise²) per coordinate, a pure function of the seed.
  s.n = 4000;
  s.noise = 0.1;
  s.seed = 3;
  const Dataset a = make_moons(s), b = make_moons(s);
  CHECK(a.X == b.X);
  s.noise = 0;
  const Dataset clean = make_moons(s);
  double sq = 0;
  for (std::size_t i = 0; i < a.X.size(); ++i) sq += std::pow(a.X[i] - clean.X[i], 2);
  CHECK(std::sqrt(sq / a.X.size()) == doctest::Approx(0.1).epsilon(0.05));
  s.noise = 0.1;
  s.seed = 4;
  CHECK(make_moons(s).X != a.X);
}

TEST_CASE("sources: sine is y = sin(x) + noise, x uniform in [-pi, pi]") {
  SourceConfig s;
  s.type = "sine";
  s.n = 5000;
  s.noise = 0;
  const Dataset d = make_sine(s);
  CHECK(d.features == 1);
  CHECK(d.targets == 1);
  CHECK(d.num_classes == 0);
  double sum = 0;
  for (int i = 0; i < d.n; ++i) {
    CHECK(std::abs(d.X[i]) <= 3.1416f);
    CHECK(d.y[i] == doctest::Approx(std::sin(d.X[i])).epsilon(1e-6));
    sum += d.X[i];
  }
  CHECK(std::abs(sum / d.n) < 0.1);
  CHECK(*std::min_element(d.X.begin(), d.X.end()) < -3.1f);
  CHECK(*std::max_element(d.X.begin(), d.X.end()) > 3.1f);
  s.noise = 0.2;
  const Dataset noisy = make_sine(s);
  CHECK(noisy.X == d.X);
  double sq = 0;
  for (int i = 0; i < d.n; ++i) sq += std::pow(noisy.y[i] - d.y[i], 2);
  CHECK(std::sqrt(sq / d.n) == doctest::Approx(0.2).epsilon(0.05));
}

TEST_CASE("sources: load_dataset checks the loss kind of generated and IDX data") {
  SourceConfig s;
  s.type = "sine";
  CHECK(data_error([&] { load_dataset(data_of(s), true); }) ==
        "data.source: sine has real-valued targets; use a regression loss (mse, mae or huber)");
  s.type = "moons";
  CHECK_HAS(data_error([&] { load_dataset(data_of(s), false); }),
            "data.source: moons has class labels; use loss cross_entropy");
  CHECK(load_dataset(data_of(s), true).n == 128);
  const SourceConfig idx = idx_source(write_bytes("k-img", kImages), write_bytes("k-lab", kLabels));
  CHECK_HAS(data_error([&] { load_dataset(data_of(idx), false); }), "idx has class labels");
  CHECK(load_dataset(data_of(idx), true).n == 3);
}

TEST_CASE("sources: IDX images are scaled to [0, 1] and flattened, labels are classes") {
  for (bool gz : {false, true}) {
    CAPTURE(gz);
    const auto write = gz ? write_gz : write_bytes;
    const std::string images = write(gz ? "img.gz" : "img", kImages);
    const Dataset d = load_idx(idx_source(images, write(gz ? "lab.gz" : "lab", kLabels)));
    CHECK(d.n == 3);
    CHECK(d.features == 6);
    CHECK(d.predefined_test == 0);
    REQUIRE(d.X.size() == kPixels.size());
    for (std::size_t i = 0; i < kPixels.size(); ++i) CHECK(d.X[i] == kPixels[i] / 255.0f);
    CHECK(d.X[1] == 1.0f);
    CHECK(d.y == std::vector<float>{2, 0, 5});
    CHECK(d.num_classes == 6);
    CHECK(d.class_names == std::vector<std::string>{"0", "1", "2", "3", "4", "5"});
    CHECK(d.feature_names.front() == "pixel1");
    CHECK(d.feature_names.back() == "pixel6");
    CHECK(d.origin == images);
  }
}

TEST_CASE("sources: IDX test files follow the training rows") {
  SourceConfig s = idx_source(write_gz("tr-img.gz", kImages), write_bytes("tr-lab", kLabels));
  s.test_images = write_bytes("te-img", idx_images(2, 2, 3, Bytes(12, 7)));
  s.test_labels = write_gz("te-lab.gz", idx_labels({1, 7}));
  const Dataset d = load_idx(s);
  CHECK(d.n == 5);
  CHECK(d.predefined_test == 2);
  CHECK(d.y == std::vector<float>{2, 0, 5, 1, 7});
  CHECK(d.num_classes == 8);
  CHECK(d.X[18] == 7 / 255.0f);
  s.test_images = write_bytes("te-img-small", idx_images(2, 3, 2, Bytes(12, 7)));
  CHECK_HAS(data_error([&] { load_idx(s); }),
            "te-img-small (data.source.test_images): the test images are 3x2 pixels, the "
            "training images (" + s.images + ") 2x3");
}

TEST_CASE("sources: malformed IDX files are rejected with the reason") {
  Bytes cut(kImages.begin(), kImages.end() - 5);
  CHECK_HAS(idx_error(cut, kLabels),
            "e-img (data.source.images): truncated: the header declares 3 images of 2x3 pixels "
            "(18 bytes) but only 13 bytes follow; download or write the file again");
  // A gzip stream cut short (of noise-like pixels, so that half the stream is half the data).
  Bytes noise(5000);
  for (std::size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<unsigned char>((i * 2654435761u) >> 13);
  const Bytes gz = read_bytes(write_gz("full.gz", idx_images(50, 10, 10, noise)));
  const std::string cut_gz = write_bytes("cut.gz", Bytes(gz.begin(), gz.begin() + gz.size() / 2));
  CHECK_HAS(data_error([&] { load_idx(idx_source(cut_gz, cut_gz)); }), "truncated: the header declares 50 images");
  CHECK_HAS(data_error([&] { load_idx(idx_source(cut_gz, cut_gz)); }), "(the gzip stream is cut off)");
  CHECK_HAS(idx_error({'P', 'K', 3, 4, 0, 0}, kLabels),
            "e-img (data.source.images): not an IDX file: it starts with 0x504B0304 instead of "
            "the magic number 0x00000803 (images); give the MNIST-style file, plain or .gz");
  CHECK_HAS(idx_error(kLabels, kImages),
            "e-img (data.source.images): this is an IDX label file (magic 0x00000801), expected "
            "images (magic 0x00000803); are data.source.images and labels swapped?");
  CHECK_HAS(idx_error(kImages, idx_labels({1, 2})),
            "e-lab (data.source.labels): holds 2 labels but " + (fixture_dir() / "e-img").string() +
                " holds 3 images; give the matching pair of files");
  CHECK_HAS(idx_error(cat(kImages, {0}), kLabels), "has more data than the header declares");
  CHECK_HAS(idx_error({}, kLabels), "the file is empty or too short to be an IDX file");
  CHECK_HAS(idx_error({0, 0, 0x0D, 3, 0, 0, 0, 1}, kLabels),
            "holds IDX element type 0x0D; only unsigned bytes (type 0x08, magic 0x00000803)");
  CHECK_HAS(idx_error({0, 0, 8, 2, 0, 0, 0, 1}, kLabels),
            "has 2 dimensions (magic 0x00000802), expected 3 (magic 0x00000803, images)");
  CHECK_HAS(idx_error({0, 0, 8, 3, 0, 0}, kLabels), "truncated: the file ends inside its header");
  CHECK_HAS(idx_error(kImages, idx_labels({4, 4, 4})),
            "y has only one class (4); classification needs at least 2 distinct labels");
  CHECK_HAS(data_error([&] { load_idx(idx_source("/nonexistent/img.gz", "x")); }),
            "/nonexistent/img.gz (data.source.images): cannot open the file: No such file or directory");
}

TEST_CASE("sources: Fashion-MNIST from Debian's dataset-fashion-mnist package") {
  const fs::path dir = "/usr/share/datasets/fashion-mnist";
  SourceConfig s = idx_source((dir / "train-images-idx3-ubyte.gz").string(),
                              (dir / "train-labels-idx1-ubyte.gz").string());
  s.test_images = (dir / "t10k-images-idx3-ubyte.gz").string();
  s.test_labels = (dir / "t10k-labels-idx1-ubyte.gz").string();
  for (const std::string& p : {s.images, s.labels, s.test_images, s.test_labels}) {
    if (!fs::exists(p)) {
      MESSAGE("skipped: " << p << " is missing (apt-get install dataset-fashion-mnist)");
      return;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const Dataset d = load_dataset(data_of(s), true);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("Fashion-MNIST (70000 x 784) loaded in " << seconds << " s");
  CHECK(seconds < 10);
  CHECK(d.n == 70000);
  CHECK(d.predefined_test == 10000);
  CHECK(d.features == 784);
  CHECK(d.num_classes == 10);
  const auto [lo, hi] = std::minmax_element(d.X.begin(), d.X.end());
  CHECK(*lo == 0.0f);
  CHECK(*hi == 1.0f);
  std::vector<int> train(10), test(10);
  for (int i = 0; i < d.n; ++i) ++(i < 60000 ? train : test)[static_cast<int>(d.y[i])];
  CHECK(train == std::vector<int>(10, 6000));
  CHECK(test == std::vector<int>(10, 1000));
}

TEST_CASE("sources: CSV feature ranges follow the header order") {
  const std::string path = write_text("range.csv", "id,a,b,c,label,store\n1,10,11,12,x,s1\n2,20,21,22,y,s2\n");
  SourceConfig s = source_of("csv", {{&SourceConfig::path, path}, {&SourceConfig::target, "label"},
                                     {&SourceConfig::features_from, "a"},
                                     {&SourceConfig::features_to, "c"}});
  Dataset d = load_csv(s, true);
  CHECK(d.feature_names == std::vector<std::string>{"a", "b", "c"});
  CHECK(d.X == std::vector<float>{10, 11, 12, 20, 21, 22});
  s.features_from = s.features_to = "b";
  CHECK(load_csv(s, true).feature_names == std::vector<std::string>{"b"});
  s.features_from = "c";
  s.features_to = "a";
  CHECK_HAS(data_error([&] { load_csv(s, true); }),
            path + ":1: data.source.features: the range 'c' to 'a' is reversed: 'a' comes first "
                   "in the header; swap from and to");
  s.features_to = "store";
  CHECK_HAS(data_error([&] { load_csv(s, true); }),
            "data.source.features: the range 'c' to 'store' includes the target column 'label'; "
            "narrow the range or list the features");
  s.features_from = "id";
  s.features_to = "a";
  CHECK_HAS(data_error([&] { load_csv(s, true, "id"); }),
            "includes the group_by column 'id'");
  s.features_from = "b2";
  CHECK_HAS(data_error([&] { load_csv(s, true); }),
            "data.source.features.from: column 'b2' is not in the header");
}

TEST_CASE("sources: CSV group_by columns number groups in value order") {
  const std::string path = write_text(
      "groups.csv", "x,store,city,y\n1,10,oslo,0\n2,9,bergen,1\n3,10,oslo,0\n4,2,Ålesund,1\n");
  SourceConfig s = source_of("csv", {{&SourceConfig::path, path}, {&SourceConfig::target, "y"}});
  s.features = {"x"};
  Dataset d = load_csv(s, true, "store");  // numeric order: 2 < 9 < 10
  CHECK(d.group_names == std::vector<std::string>{"2", "9", "10"});
  CHECK(d.group == std::vector<int>{2, 1, 2, 0});
  d = load_csv(s, true, "city");  // text order
  CHECK(d.group_names == std::vector<std::string>{"bergen", "oslo", "Ålesund"});
  CHECK(d.group == std::vector<int>{1, 0, 1, 2});
  CHECK(load_csv(s, true).group.empty());
  // Without listed features, every column except the target and the group column.
  const std::string nums = write_text("groups2.csv", "a,g,b,y\n1,7,2,0\n3,8,4,1\n");
  s.path = nums;
  s.features.clear();
  d = load_csv(s, true, "g");
  CHECK(d.feature_names == std::vector<std::string>{"a", "b"});
  CHECK(d.X == std::vector<float>{1, 2, 3, 4});
  CHECK(d.group == std::vector<int>{0, 1});
  // Through load_dataset: per_member group_by passes the column.
  DataConfig dc = data_of(s);
  dc.per_member = PerMember::GroupBy;
  dc.group_by = "g";
  CHECK(load_dataset(dc, true).group_names == std::vector<std::string>{"7", "8"});
  // Errors.
  s.features = {"a", "g"};
  CHECK_HAS(data_error([&] { load_csv(s, true, "g"); }),
            nums + ":1: data.per_member.group_by: 'g' is also a feature; remove it from "
                   "data.source.features");
  s.features.clear();
  CHECK_HAS(data_error([&] { load_csv(s, true, "y"); }), "'y' is the target column");
  CHECK_HAS(data_error([&] { load_csv(s, true, "gg"); }),
            "data.per_member.group_by: column 'gg' is not in the header; available columns: 'a', "
            "'g', 'b', 'y'; did you mean 'g'?");
  s.path = write_text("groups3.csv", "a,g,y\n1,7,0\n3, ,1\n");
  CHECK_HAS(data_error([&] { load_csv(s, true, "g"); }),
            ":3: column 'g': the group (data.per_member.group_by) is empty; fill it in or remove "
            "the row");
}
