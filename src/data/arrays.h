// Numeric arrays read from data files (npy, hdf5, idx) and their checked conversion to a
// Dataset: shapes, finite values, class labels.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "io/numeric_array.h"

namespace tn {

// The arrays of a file source: training X and y, and an optional test pair.
struct SourceArrays {
  NumericArray X, y;
  std::optional<NumericArray> test_X, test_y;  // both or neither
};

// Checks and joins the arrays into a Dataset (origin `origin`): X is [n, F] (or [n]: F = 1),
// y is [n] or, for regression, [n, T] ([n, 1] is accepted for class labels too); test arrays
// must have the same F and T. Every value must be finite. Class labels must be whole
// numbers: non-negative ones are kept as class indices (K = max + 1, names "0".."K-1"),
// otherwise the distinct values are numbered in increasing order. Test rows follow the
// training rows (Dataset::predefined_test). Features are named "x0".."x{F-1}".
// Throws DataError naming the file, the element ("X[17, 3]") and the fix.
Dataset dataset_from_arrays(SourceArrays arrays, bool classification, const std::string& origin);

// "(60000, 28, 28)", as NumPy prints shapes.
std::string shape_text(const std::vector<std::uint64_t>& shape);

}  // namespace tn
