// Running an op case on a backend or through its reference, and comparing results
// (tests/op_cases.h).
#include "op_cases.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <iomanip>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace tn::op_test {

std::size_t Array::elem_bytes() const {
  switch (elem) {
    case Elem::F32: return sizeof(float);
    case Elem::F64: return sizeof(double);
    case Elem::I32: return sizeof(int);
    case Elem::U32: return sizeof(std::uint32_t);
    case Elem::Bytes: return 1;
  }
  return 1;
}

std::size_t Array::count() const { return elem == Elem::Bytes ? bytes.size() : values.size(); }

Array input(std::string name, std::vector<double> values, Elem elem) {
  Array a;
  a.name = std::move(name);
  a.elem = elem;
  a.values = std::move(values);
  return a;
}

Array output(std::string name, std::vector<double> values, Elem elem) {
  Array a = input(std::move(name), std::move(values), elem);
  a.output = true;
  return a;
}

namespace {

std::vector<unsigned char> encode(const Array& a) {
  if (a.elem == Elem::Bytes) return a.bytes;
  std::vector<unsigned char> b(a.values.size() * a.elem_bytes());
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    unsigned char* p = b.data() + i * a.elem_bytes();
    const double v = a.values[i];
    if (a.elem == Elem::F32) { const float x = static_cast<float>(v); std::memcpy(p, &x, sizeof x); }
    if (a.elem == Elem::F64) std::memcpy(p, &v, sizeof v);
    if (a.elem == Elem::I32) { const int x = static_cast<int>(v); std::memcpy(p, &x, sizeof x); }
    if (a.elem == Elem::U32) { const auto x = static_cast<std::uint32_t>(v); std::memcpy(p, &x, sizeof x); }
  }
  return b;
}

std::vector<double> decode(const Array& a, const std::vector<unsigned char>& b) {
  std::vector<double> v(a.values.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const unsigned char* p = b.data() + i * a.elem_bytes();
    if (a.elem == Elem::F32) { float x; std::memcpy(&x, p, sizeof x); v[i] = x; }
    if (a.elem == Elem::F64) std::memcpy(&v[i], p, sizeof(double));
    if (a.elem == Elem::I32) { int x; std::memcpy(&x, p, sizeof x); v[i] = x; }
    if (a.elem == Elem::U32) { std::uint32_t x; std::memcpy(&x, p, sizeof x); v[i] = x; }
  }
  return v;
}

const char* elem_name(Elem e) {
  switch (e) {
    case Elem::F32: return "f32";
    case Elem::F64: return "f64";
    case Elem::I32: return "i32";
    case Elem::U32: return "u32";
    case Elem::Bytes: return "bytes";
  }
  return "?";
}

// Bit for bit the same value, NaN matching NaN.
bool same(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

}  // namespace

DeviceArrays::DeviceArrays(Backend& be, const std::vector<Array>& arrays) : be_(be), arrays_(arrays) {
  for (const Array& a : arrays_) {
    const std::vector<unsigned char> b = encode(a);
    void* p = be_.alloc_bytes(std::max<std::size_t>(b.size(), 1));
    ptrs_.push_back(p);
    if (!b.empty()) be_.to_device(p, b.data(), b.size());
  }
}

DeviceArrays::~DeviceArrays() {
  for (void* p : ptrs_) be_.release(p);
}

void* DeviceArrays::get(std::string_view name, Elem elem) const {
  for (std::size_t i = 0; i < arrays_.size(); ++i)
    if (arrays_[i].name == name) {
      if (arrays_[i].elem != elem)
        throw std::logic_error("op case array " + std::string(name) + " is " + elem_name(arrays_[i].elem) +
                               ", asked for " + elem_name(elem));
      return ptrs_[i];
    }
  throw std::logic_error("op case has no array " + std::string(name));
}

std::vector<double> DeviceArrays::fetch(std::string_view name) const {
  for (std::size_t i = 0; i < arrays_.size(); ++i)
    if (arrays_[i].name == name) {
      const Array& a = arrays_[i];
      std::vector<unsigned char> b(a.count() * a.elem_bytes());
      if (!b.empty()) be_.to_host(b.data(), ptrs_[i], b.size());
      return decode(a, b);
    }
  throw std::logic_error("op case has no array " + std::string(name));
}

HostArrays::HostArrays(const std::vector<Array>& arrays) {
  for (const Array& a : arrays) {
    names_.push_back(a.name);
    values_.push_back(a.values);
    scales_.emplace_back();
    bytes_.push_back(a.bytes);
  }
}

std::size_t HostArrays::index(std::string_view name) const {
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return i;
  throw std::logic_error("op case has no array " + std::string(name));
}

std::vector<double>& HostArrays::operator[](std::string_view name) { return values_[index(name)]; }
const std::vector<double>& HostArrays::operator[](std::string_view name) const { return values_[index(name)]; }
std::vector<double>& HostArrays::scale(std::string_view name) { return scales_[index(name)]; }
const std::vector<double>& HostArrays::scale(std::string_view name) const { return scales_[index(name)]; }

HostArrays run_case(const OpCase& c, Backend& be) {
  HostArrays result(c.arrays);
  DeviceArrays dev(be, c.arrays);
  c.run(be, dev);
  for (const Array& a : c.arrays)
    if (a.output) result[a.name] = dev.fetch(a.name);
  return result;
}

HostArrays reference_case(const OpCase& c) {
  HostArrays result(c.arrays);
  c.reference(result);
  return result;
}

Diff compare(const OpCase& c, const HostArrays& got, const HostArrays& expected, const HostArrays& ref,
             bool parity) {
  Diff d;
  std::ostringstream bad;
  bad << std::setprecision(9);
  for (const Array& a : c.arrays) {
    if (!a.output) continue;
    const Tol tol = parity ? a.parity.value_or(a.tol.value_or(c.parity.value_or(c.tol))) : a.tol.value_or(c.tol);
    const std::vector<double>& g = got[a.name];
    const std::vector<double>& e = expected[a.name];
    const std::vector<double>& r = ref[a.name];
    const std::vector<double>& scale = ref.scale(a.name);
    if (g.size() != a.values.size() || e.size() != a.values.size() || r.size() != a.values.size())
      throw std::logic_error(c.name + ": array " + a.name + " changed size");
    for (std::size_t i = 0; i < g.size(); ++i) {
      ++d.values;
      bool ok;
      double err, allowed;
      if (same(r[i], a.values[i])) {  // untouched: bit for bit
        ok = same(g[i], a.values[i]);
        err = ok ? 0.0 : std::numeric_limits<double>::infinity();
        allowed = 0.0;
      } else {
        const double s = !parity && !scale.empty() ? scale[i] : std::fabs(r[i]);
        allowed = tol.atol + tol.rtol * s;
        err = std::isfinite(g[i]) ? std::fabs(g[i] - e[i]) : std::numeric_limits<double>::infinity();
        ok = err <= allowed;
      }
      d.max_err = std::max(d.max_err, err);
      if (err > 0.0) d.worst = std::max(d.worst, allowed > 0.0 ? err / allowed : std::numeric_limits<double>::infinity());
      if (!ok && d.bad++ < 4)
        bad << " " << a.name << "[" << i << "]: got " << g[i] << ", expected " << e[i]
            << (same(r[i], a.values[i]) ? " (untouched)" : "") << ", allowed " << allowed << ";";
    }
  }
  d.first_bad = bad.str();
  return d;
}

void run_row(const std::string& row, Backend& be, Backend* cpu) {
  for (const OpCase& c : op_cases()) {
    const HostArrays ref = reference_case(c);
    try {
      const HostArrays got = run_case(c, be);
      const Diff d = compare(c, got, ref, ref, false);
      std::ostringstream line;
      line << std::setprecision(3) << row << " " << c.name << ": max |got - ref| " << d.max_err << " ("
           << d.worst << " of the tolerance) over " << d.values << " values";
      CHECK_MESSAGE(d.bad == 0, row << " " << c.name << ": " << d.bad << " values off the reference:" << d.first_bad);
      if (c.property) {
        const std::string p = c.property(got);
        CHECK_MESSAGE(p.empty(), row << " " << c.name << ": " << p);
      }
      if (cpu) {
        const HostArrays base = run_case(c, *cpu);
        const Diff pd = compare(c, got, base, ref, true);
        line << "; max |got - cpu| " << pd.max_err << " (" << pd.worst << " of the tolerance)";
        CHECK_MESSAGE(pd.bad == 0, row << " " << c.name << ": " << pd.bad << " values off the CPU backend:" << pd.first_bad);
      }
      MESSAGE(line.str());
    } catch (const std::exception& e) {
      CHECK_MESSAGE(false, row << " " << c.name << " threw: " << e.what());
    }
  }
}

}  // namespace tn::op_test
