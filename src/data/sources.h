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

// MNIST-style IDX files (source.images/labels, optional test_images/test_labels), plain or
// gzip-compressed: images scaled to [0, 1] and flattened into features "pixel1".."pixelN"
// (row-major), labels as classes "0".."K-1" (K = largest label + 1); test rows follow.
Dataset load_idx(const SourceConfig& source);

// One .npy file (NumPy format 1.0-3.0; little-endian f4, f8, i1, i2, i4, i8, u1, u2, u4, u8,
// b1; C order), converted to float32. `key` is the config key naming the file.
NumericArray read_npy(const std::string& path, const std::string& key);

// NumPy arrays: source.x_path, y_path and the optional test pair (see dataset_from_arrays).
Dataset load_npy(const SourceConfig& source, bool classification);

// Datasets source.x_dataset, y_dataset (and the optional test pair) of the HDF5 file
// source.path (see dataset_from_arrays).
Dataset load_hdf5(const SourceConfig& source, bool classification);

}  // namespace tn
