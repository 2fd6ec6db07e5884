// The data sources behind load_dataset (dataset.h): built-in generators and file readers.
// Each returns a whole Dataset or throws DataError naming the file, the place and the fix.
#pragma once
#include <string>

#include "data/arrays.h"
#include "data/dataset.h"

namespace tn {

// Two interleaving half circles (scikit-learn's make_moons): floor(n/2) points
// (cos t, sin t) of class 0 and the rest (1 − cos t, 1 − sin t − 0.5) of class 1, t evenly
// spaced in [0, π] within each class, plus N(0, noise²) per coordinate; deterministic in
// source.seed.
Dataset make_moons(const SourceConfig& source);

// Regression: x uniform in [−π, π], y = sin(x) + noise·N(0, 1); one feature, one target.
Dataset make_sine(const SourceConfig& source);

// Price series for sequence models (data.sequence), a long-format table of series·length
// rows, series after series: columns date (business days Monday to Friday from 2020-01-01,
// no holidays; time), ticker (S000, S001, ... zero-padded to at least 3 digits, so sorting by
// name keeps the series order; group) and close (X [n, 1]). Series s draws, uniformly from
// the configured ranges, a drift μ, a volatility σ, a seasonal amplitude A, a phase φ in
// [0, 2π) and a log start price ℓ (log-uniform start price); its log price is
// x_0 = ℓ, x_t = x_{t−1} + μ + σ·z_t with z_t ~ N(0, 1), and close_t = exp(x_t + A·sin(2π·t/P + φ))
// with P = season_period. Random words: (seed, member = s, purpose Data, counter t) for z_t.
Dataset make_random_walk(const SourceConfig& source);

// True for the built-in generators (spirals, moons, sine, random_walk).
bool is_generator(const std::string& type);
// The whole table a generator makes (random_walk with its date and ticker columns). Throws
// DataError for a source that is not a generator.
Dataset generate_source(const SourceConfig& source);
// `d` as CSV text with a header: the time and group columns when the dataset has them
// (random_walk: date, ticker), the feature columns, then the target column named
// `target_column` (omitted when empty or the dataset has no target). Floats are written with
// 9 significant digits, so reading the file back gives exactly the same values.
std::string dataset_to_csv(const Dataset& d, const std::string& target_column);

// MNIST-style IDX files (source.images/labels, optional test_images/test_labels), plain or
// gzip-compressed: images scaled to [0, 1] and flattened into features "pixel1".."pixelN"
// (row-major), labels as classes "0".."K-1" (K = largest label + 1); test rows follow.
Dataset load_idx(const SourceConfig& source);

// One .npy file (NumPy format 1.0-3.0; little-endian f4, f8, i1, i2, i4, i8, u1, u2, u4, u8,
// b1; C order), converted to float32. `key` is the config key naming the file.
NumericArray read_npy(const std::string& path, const std::string& key);

// NumPy arrays: source.x_path, y_path and the optional test pair (see dataset_from_arrays).
Dataset load_npy(const SourceConfig& source, bool classification);

// The `arrays` source: arrays handed over in memory (the Python package's train(config, X, y),
// python/), checked and joined as a file source's (see dataset_from_arrays); they are moved
// into the dataset, not copied. `arrays` null (a
// config with `type: arrays` read anywhere else, e.g. the command line) throws DataError saying
// to use npy or hdf5 files there. Sequence data cannot come from arrays (DataError).
Dataset load_memory_arrays(const DataConfig& data, bool classification, SourceArrays* arrays);

// Datasets source.x_dataset, y_dataset (and the optional test pair) of the HDF5 file
// source.path (see dataset_from_arrays).
Dataset load_hdf5(const SourceConfig& source, bool classification);

}  // namespace tn
