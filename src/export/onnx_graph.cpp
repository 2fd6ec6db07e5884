// The ONNX graph builder (onnx_graph.h) on onnx::ModelProto.
#include "export/onnx_graph.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <map>
#include <stdexcept>

#include "turbanet_version.h"

namespace tn::onnx_export {
namespace {

void set_shape(onnx::ValueInfoProto* v, Elem elem, const std::vector<Dim>& dims) {
  onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem == Elem::Float ? onnx::TensorProto::FLOAT : onnx::TensorProto::INT64);
  onnx::TensorShapeProto* shape = t->mutable_shape();
  for (const Dim& d : dims) {
    onnx::TensorShapeProto_Dimension* out = shape->add_dim();
    if (d.symbol.empty()) out->set_dim_value(d.size);
    else out->set_dim_param(d.symbol);
  }
}

// Raw data is little-endian, as the values are in memory on the machines turbanet runs on.
template <class T>
void set_tensor(onnx::TensorProto* t, const std::string& name, int type, const std::vector<std::int64_t>& dims,
                const std::vector<T>& data) {
  std::int64_t n = 1;
  for (std::int64_t d : dims) n *= d;
  if (n != static_cast<std::int64_t>(data.size()))
    throw std::logic_error("ONNX constant '" + name + "': " + std::to_string(data.size()) + " values for " +
                           std::to_string(n) + " elements");
  t->set_name(name);
  t->set_data_type(type);
  for (std::int64_t d : dims) t->add_dims(d);
  std::string raw(data.size() * sizeof(T), '\0');
  if (!data.empty()) std::memcpy(raw.data(), data.data(), raw.size());
  t->set_raw_data(std::move(raw));
}

}  // namespace

struct Graph::Impl {
  onnx::ModelProto model;
  std::map<std::string, int> used;  // name hint → times used
};

Graph::Graph(const std::string& name, int opset) : impl_(std::make_unique<Impl>()) {
  onnx::ModelProto& m = impl_->model;
  m.set_ir_version(8);
  m.set_producer_name("turbanet");
  m.set_producer_version(TURBANET_VERSION);
  onnx::OperatorSetIdProto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m.mutable_graph()->set_name(name);
}

Graph::~Graph() = default;

std::string Graph::unique(const std::string& hint) {
  const std::string base = hint.empty() ? "t" : hint;
  const int n = impl_->used[base]++;
  return n == 0 ? base : base + "_" + std::to_string(n);
}

std::string Graph::input(const std::string& name, const std::vector<Dim>& dims) {
  const std::string n = unique(name);
  onnx::ValueInfoProto* v = impl_->model.mutable_graph()->add_input();
  v->set_name(n);
  set_shape(v, Elem::Float, dims);
  return n;
}

void Graph::output(const std::string& name, const std::string& value, Elem elem, const std::vector<Dim>& dims) {
  std::string n = value;
  if (value != name) {
    n = unique(name);
    if (n != name) throw std::logic_error("ONNX output name '" + name + "' is already taken");
    onnx::NodeProto* id = impl_->model.mutable_graph()->add_node();
    id->set_op_type("Identity");
    id->set_name(unique("Identity"));
    id->add_input(value);
    id->add_output(n);
  }
  onnx::ValueInfoProto* v = impl_->model.mutable_graph()->add_output();
  v->set_name(n);
  set_shape(v, elem, dims);
}

std::string Graph::constant(const std::string& hint, const std::vector<std::int64_t>& dims,
                            const std::vector<float>& data) {
  const std::string n = unique(hint);
  set_tensor(impl_->model.mutable_graph()->add_initializer(), n, onnx::TensorProto::FLOAT, dims, data);
  return n;
}

std::string Graph::constant_i64(const std::string& hint, const std::vector<std::int64_t>& dims,
                                const std::vector<std::int64_t>& data) {
  const std::string n = unique(hint);
  set_tensor(impl_->model.mutable_graph()->add_initializer(), n, onnx::TensorProto::INT64, dims, data);
  return n;
}

std::vector<std::string> Graph::node(const std::string& op, const std::vector<std::string>& inputs,
                                     const std::vector<Attr>& attrs, const std::string& hint, int outputs) {
  onnx::NodeProto* node = impl_->model.mutable_graph()->add_node();
  node->set_op_type(op);
  node->set_name(unique(op));
  for (const std::string& in : inputs) node->add_input(in);
  std::vector<std::string> names;
  for (int i = 0; i < outputs; ++i) {
    names.push_back(unique(hint.empty() ? op : hint));
    node->add_output(names.back());
  }
  for (const Attr& a : attrs) {
    onnx::AttributeProto* p = node->add_attribute();
    p->set_name(a.name);
    if (const auto* i = std::get_if<std::int64_t>(&a.value)) {
      p->set_type(onnx::AttributeProto::INT);
      p->set_i(*i);
    } else if (const auto* f = std::get_if<float>(&a.value)) {
      p->set_type(onnx::AttributeProto::FLOAT);
      p->set_f(*f);
    } else {
      p->set_type(onnx::AttributeProto::INTS);
      for (std::int64_t v : std::get<std::vector<std::int64_t>>(a.value)) p->add_ints(v);
    }
  }
  return names;
}

std::string Graph::op(const std::string& op, const std::vector<std::string>& inputs, const std::vector<Attr>& attrs,
                      const std::string& hint) {
  return node(op, inputs, attrs, hint, 1).front();
}

void Graph::metadata(const std::string& key, const std::string& value) {
  onnx::StringStringEntryProto* e = impl_->model.add_metadata_props();
  e->set_key(key);
  e->set_value(value);
}

void Graph::doc(const std::string& text) { impl_->model.mutable_graph()->set_doc_string(text); }

std::string Graph::serialize() const {
  const std::size_t bytes = impl_->model.ByteSizeLong();
  if (bytes > static_cast<std::size_t>(INT32_MAX))
    throw std::length_error("the ONNX model would take " + std::to_string(bytes >> 20) +
                            " MiB, more than protobuf's 2 GiB limit");
  std::string out;
  impl_->model.SerializeToString(&out);
  return out;
}

}  // namespace tn::onnx_export
