// A small builder of ONNX graphs on the ONNX project's protobuf classes (onnx/onnx_pb.h,
// Debian's libonnx-dev): named float inputs and outputs, float/int64 constants (initializers)
// and nodes of the default domain at one opset, serialized to the bytes of a .onnx file.
// Only src/export/ includes the ONNX headers.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace tn::onnx_export {

// A node attribute: an int, a float or a list of ints (the only kinds the exporter needs).
struct Attr {
  std::string name;
  std::variant<std::int64_t, float, std::vector<std::int64_t>> value;
};

// One dimension of an input or output: a fixed size, or a symbolic name such as "N".
struct Dim {
  std::int64_t size = 0;
  std::string symbol;
  Dim(std::int64_t n) : size(n) {}
  Dim(const char* s) : symbol(s) {}
};

enum class Elem { Float, Int64 };

class Graph {
 public:
  // opset: the default domain's version the nodes follow (ONNX 1.12 knows up to 17).
  Graph(const std::string& name, int opset);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // A graph input of `dims` (float); returns its name.
  std::string input(const std::string& name, const std::vector<Dim>& dims);
  // Declares `value` (an existing node output) a graph output named `name` (an Identity node
  // renames it when needed).
  void output(const std::string& name, const std::string& value, Elem elem, const std::vector<Dim>& dims);
  // A float constant of `dims` holding `data` (row-major); returns its (unique) name.
  std::string constant(const std::string& hint, const std::vector<std::int64_t>& dims, const std::vector<float>& data);
  std::string constant_i64(const std::string& hint, const std::vector<std::int64_t>& dims,
                           const std::vector<std::int64_t>& data);
  // A node `op` on `inputs` ("" for an omitted optional input) with `outputs` outputs; returns
  // their (unique) names, made from `hint`.
  std::vector<std::string> node(const std::string& op, const std::vector<std::string>& inputs,
                                const std::vector<Attr>& attrs, const std::string& hint, int outputs);
  // The same with one output.
  std::string op(const std::string& op, const std::vector<std::string>& inputs, const std::vector<Attr>& attrs = {},
                 const std::string& hint = "");
  // Model metadata (ModelProto.metadata_props), e.g. the members a graph holds.
  void metadata(const std::string& key, const std::string& value);
  void doc(const std::string& text);
  // The serialized ModelProto (IR version 8). Throws std::length_error above protobuf's 2 GiB.
  std::string serialize() const;

 private:
  std::string unique(const std::string& hint);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tn::onnx_export
