// Conversions between Python values and what the C++ core takes: a config dict as YAML text
// (read by the project's one config reader), numpy arrays as NumericArray, float vectors and
// run-file arrays as numpy arrays (handed over, not copied).
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>  // in every file that casts strings: one caster, one instantiation

#include <string>
#include <vector>

#include "io/numeric_array.h"
#include "io/run_records.h"

namespace tn::py {

namespace nb = nanobind;

// Any array of numbers, read in place when it is float32 and C-contiguous (else numpy converts it once).
using FloatArray = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;
using NumpyArray = nb::ndarray<nb::numpy, float>;

// A dict, list, str, bool, int, float or None (nested) as YAML text: block style for the whole
// config, flow style for one --set value. Throws ConfigError naming `where` for any other type.
std::string yaml_text(nb::handle value, const std::string& where, bool flow);

// The array as training data: shape and float32 values; `key` names it in messages ("X", "y").
NumericArray numeric_array(const FloatArray& a, const std::string& key);

// `values` moved into a numpy array of `shape` (owned by the array; no copy).
NumpyArray to_numpy(std::vector<float>&& values, std::vector<std::size_t> shape);
// A run file's array (its stored shape) as a numpy array.
NumpyArray to_numpy(const Array& a);

}  // namespace tn::py
