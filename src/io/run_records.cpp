// The run file's in-memory form: array sizes, lookups by split and by tensor name.
#include "io/run_records.h"

#include <algorithm>
#include <utility>

#include "io/run_file_error.h"

namespace tn {

std::uint64_t Array::size() const {
  if (shape.empty()) return 0;  // an Array without a shape holds nothing (no scalars here)
  std::uint64_t n = 1;
  for (std::uint64_t d : shape) n *= d;
  return n;
}


namespace {

template <class T>
void put_by_split(std::vector<T>& items, T item) {
  const auto same = [&](const T& x) { return x.split == item.split; };
  const auto it = std::find_if(items.begin(), items.end(), same);
  if (it != items.end()) *it = std::move(item);
  else items.push_back(std::move(item));
}

}  // namespace

const Predictions* RunFile::find_predictions(const std::string& split) const {
  for (const Predictions& p : predictions)
    if (p.split == split) return &p;
  return nullptr;
}

Predictions* RunFile::find_predictions(const std::string& split) {
  return const_cast<Predictions*>(std::as_const(*this).find_predictions(split));
}

void RunFile::put(Predictions p) { put_by_split(predictions, std::move(p)); }
void RunFile::put(EvalRecord e) { put_by_split(evals, std::move(e)); }

const std::vector<std::string>& layer_tensor_order() {
  static const std::vector<std::string> order = {"W", "Wx", "Wh", "b", "bx", "bh"};
  return order;
}

const Array& LayerParams::operator[](const std::string& name) const {
  for (const auto& [n, a] : tensors)
    if (n == name) return a;
  throw RunFileError("layer has no tensor '" + name + "'");
}

Array& LayerParams::operator[](const std::string& name) {
  return const_cast<Array&>(static_cast<const LayerParams&>(*this)[name]);
}

}  // namespace tn
