// The table of backend op cases (tests/op_table.cpp) and what runs them (tests/op_cases.cpp).
// A case is one call of one Backend op: its arrays with their initial contents (every
// element, padding included, from fixed seeds), the call on a backend, and a reference that
// computes the expected arrays with plain double-precision loops written from the op's
// contract. tests/test_ops.cpp runs every case on the reference itself and the CPU backend,
// tests/cuda/test_cuda_ops.cpp on the CUDA backend, and both compare (run_row). A new op, shape or mode is one entry in the
// table.
//
// Comparison of an output array, element by element:
//   - where the reference leaves the initial value (padding, members that take no step,
//     rows that are not part of the op), the backend must leave it bit for bit (NaN stays NaN);
//   - elsewhere |got − expected| ≤ atol + rtol·s, s = |expected| unless the reference gives
//     a scale for the element (a sum's magnitude Σ|terms|, for sums that cancel).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.h"

namespace tn::op_test {

struct Tol {
  double atol = 0.0, rtol = 0.0;
};

// How an array is stored on the backend.
enum class Elem { F32, F64, I32, U32, Bytes };

// One array a case passes to its op.
struct Array {
  std::string name;
  Elem elem = Elem::F32;
  std::vector<double> values;        // initial contents (F32/F64/I32/U32), every element
  std::vector<unsigned char> bytes;  // initial contents of an Elem::Bytes array (structs)
  bool output = false;               // the op writes it: compared after the call
  std::optional<Tol> tol;            // against the reference (default: the case's)
  std::optional<Tol> parity;         // CUDA against CPU (default: tol)

  Array&& with_tol(Tol t) && { tol = t; return std::move(*this); }
  Array&& with_parity(Tol t) && { parity = t; return std::move(*this); }
  std::size_t count() const;
  std::size_t elem_bytes() const;
};

// An input array (read by the op) and an output array (written, usually read first too).
Array input(std::string name, std::vector<double> values, Elem elem = Elem::F32);
Array output(std::string name, std::vector<double> values, Elem elem = Elem::F32);
// A struct array (OptStep) the op reads from device memory.
template <class T>
Array input_structs(std::string name, const std::vector<T>& v) {
  Array a;
  a.name = std::move(name);
  a.elem = Elem::Bytes;
  a.bytes.resize(v.size() * sizeof(T));
  std::memcpy(a.bytes.data(), v.data(), a.bytes.size());
  return a;
}

// A case's arrays on one backend, allocated and filled with their initial contents.
class DeviceArrays {
 public:
  DeviceArrays(Backend& be, const std::vector<Array>& arrays);
  ~DeviceArrays();
  DeviceArrays(const DeviceArrays&) = delete;
  DeviceArrays& operator=(const DeviceArrays&) = delete;

  float* f32(std::string_view name) const { return static_cast<float*>(get(name, Elem::F32)); }
  double* f64(std::string_view name) const { return static_cast<double*>(get(name, Elem::F64)); }
  int* i32(std::string_view name) const { return static_cast<int*>(get(name, Elem::I32)); }
  std::uint32_t* u32(std::string_view name) const {
    return static_cast<std::uint32_t*>(get(name, Elem::U32));
  }
  template <class T>
  T* structs(std::string_view name) const { return static_cast<T*>(get(name, Elem::Bytes)); }
  // The array's contents now (synchronizes with the backend), as doubles.
  std::vector<double> fetch(std::string_view name) const;

 private:
  void* get(std::string_view name, Elem elem) const;
  Backend& be_;
  const std::vector<Array>& arrays_;
  std::vector<void*> ptrs_;
};

// A case's arrays on the host in double: initial contents, then what an op or the reference
// left in them. The reference reads and writes them in place, like the op.
class HostArrays {
 public:
  explicit HostArrays(const std::vector<Array>& arrays);
  std::vector<double>& operator[](std::string_view name);
  const std::vector<double>& operator[](std::string_view name) const;
  // Per-element magnitudes for the tolerance of an output (empty: |expected|).
  std::vector<double>& scale(std::string_view name);
  const std::vector<double>& scale(std::string_view name) const;
  template <class T>
  std::vector<T> structs(std::string_view name) const {
    const std::vector<unsigned char>& b = bytes_[index(name)];
    std::vector<T> v(b.size() / sizeof(T));
    std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
    return v;
  }

 private:
  std::size_t index(std::string_view name) const;
  std::vector<std::string> names_;
  std::vector<std::vector<double>> values_, scales_;
  std::vector<std::vector<unsigned char>> bytes_;
};

struct OpCase {
  std::string op;    // the Backend member it calls
  std::string name;  // op and parameters; unique in the table
  std::vector<Array> arrays;
  Tol tol;                    // default tolerance of its outputs against the reference
  std::optional<Tol> parity;  // default tolerance of CUDA against CPU (else tol)
  std::function<void(Backend&, const DeviceArrays&)> run;
  std::function<void(HostArrays&)> reference;
  // A property every result must have beyond matching the reference (rows of a softmax sum
  // to 1, bootstrap members draw different rows): "" when it holds, else what is wrong.
  std::function<std::string(const HostArrays&)> property;
};

// Every case, built once.
const std::vector<OpCase>& op_cases();

// The case's op on `be`: its arrays after the call.
HostArrays run_case(const OpCase& c, Backend& be);
// The reference's arrays after the call.
HostArrays reference_case(const OpCase& c);

struct Diff {
  double max_err = 0.0;  // largest |got − expected| (infinite for a non-finite result)
  double worst = 0.0;    // largest |got − expected| / tolerance
  std::size_t values = 0, bad = 0;
  std::string first_bad;  // the first few elements outside tolerance
};
// `got` against `expected` over the case's outputs. `ref` is the reference's result: it
// decides which elements must be untouched and the scale of the tolerance. parity: use the
// arrays' parity tolerances (CUDA against CPU) with scale |ref|.
Diff compare(const OpCase& c, const HostArrays& got, const HostArrays& expected, const HostArrays& ref,
             bool parity);

// A backend row, checked with doctest: every case on `be` against the reference; with `cpu`,
// also against the CPU backend's result (parity tolerances). Each case prints its largest error.
void run_row(const std::string& row, Backend& be, Backend* cpu);

}  // namespace tn::op_test
