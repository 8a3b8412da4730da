// Building ONNX models in code with the ONNX protobuf classes, for tests that need a model with
// exactly one thing wrong (or one unusual property) and show it in a few lines.
#pragma once

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "app/core/model/onnx_loader.h"
#include "app/core/util/tensor.h"

namespace convscope::testing {

// A ModelProto of IR version 8 importing the standard operator set 17; dimensions given as -1
// become the symbolic dimension "N".
class ModelBuilder {
 public:
  ModelBuilder() {
    proto_.set_ir_version(8);
    proto_.set_producer_name("convscope-tests");
    onnx::OperatorSetIdProto* opset = proto_.add_opset_import();
    opset->set_domain("");
    opset->set_version(17);
    proto_.mutable_graph()->set_name("test");
  }

  onnx::ModelProto& proto() { return proto_; }
  onnx::GraphProto& graph() { return *proto_.mutable_graph(); }

  ModelBuilder& input(const std::string& name, const convscope::Shape& dims, int elemType = onnx::TensorProto::FLOAT) {
    valueInfo(graph().add_input(), name, dims, elemType);
    return *this;
  }

  ModelBuilder& output(const std::string& name, const convscope::Shape& dims = {},
                       int elemType = onnx::TensorProto::FLOAT) {
    valueInfo(graph().add_output(), name, dims, elemType);
    return *this;
  }

  // A float initializer with deterministic values (stored as raw little-endian bytes).
  onnx::TensorProto& weights(const std::string& name, const convscope::Shape& dims) {
    std::vector<float> values(static_cast<size_t>(convscope::elementCount(dims)));
    for (size_t i = 0; i < values.size(); ++i) values[i] = 0.05f * static_cast<float>(static_cast<int>(i % 13) - 6);
    return floats(name, dims, values);
  }

  onnx::TensorProto& floats(const std::string& name, const convscope::Shape& dims, const std::vector<float>& values) {
    onnx::TensorProto& t = *graph().add_initializer();
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t.add_dims(d);
    t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
    return t;
  }

  onnx::TensorProto& int64s(const std::string& name, const std::vector<int64_t>& values) {
    onnx::TensorProto& t = *graph().add_initializer();
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t.add_int64_data(v);
    return t;
  }

  onnx::NodeProto& node(const std::string& opType, std::initializer_list<std::string> inputs,
                        std::initializer_list<std::string> outputs, const std::string& name = "") {
    onnx::NodeProto& n = *graph().add_node();
    n.set_op_type(opType);
    n.set_name(name);
    for (const std::string& i : inputs) n.add_input(i);
    for (const std::string& o : outputs) n.add_output(o);
    return n;
  }

  std::string bytes() const {
    std::string out;
    EXPECT_TRUE(proto_.SerializeToString(&out));
    return out;
  }

  // Writes the model to `path` (for the file loader and the CLI).
  void save(const std::string& path) const {
    const std::string data = bytes();
    FILE* file = std::fopen(path.c_str(), "wb");
    ASSERT_NE(file, nullptr) << path;
    std::fwrite(data.data(), 1, data.size(), file);
    std::fclose(file);
  }

  std::shared_ptr<const convscope::Model> load(const std::string& source = "built.onnx") const {
    return convscope::loadOnnxModelFromBytes(bytes(), source);
  }

 private:
  static void valueInfo(onnx::ValueInfoProto* info, const std::string& name, const convscope::Shape& dims,
                        int elemType) {
    info->set_name(name);
    onnx::TypeProto_Tensor* tensor = info->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(elemType);
    if (dims.empty()) return;
    onnx::TensorShapeProto* shape = tensor->mutable_shape();
    for (int64_t d : dims) {
      if (d < 0)
        shape->add_dim()->set_dim_param("N");
      else
        shape->add_dim()->set_dim_value(d);
    }
  }

  onnx::ModelProto proto_;
};

// A node of a fusable activation's operator type (app/core/util/activations.h), `input` to
// `output`. The row Clip is ReLU6, so a Clip node gets its bounds 0 and 6, constant inputs as
// opset 11 on gives them.
inline onnx::NodeProto& activationNode(ModelBuilder& b, const std::string& opType, const std::string& input,
                                       const std::string& output, const std::string& name) {
  if (opType != "Clip") return b.node(opType, {input}, {output}, name);
  b.floats(name + "_min", {}, {0.0f});
  b.floats(name + "_max", {}, {6.0f});
  return b.node(opType, {input, name + "_min", name + "_max"}, {output}, name);
}

inline void setInt(onnx::NodeProto& node, const std::string& name, int64_t value) {
  onnx::AttributeProto& a = *node.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
}

inline void setInts(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto& a = *node.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a.add_ints(v);
}

inline void setFloat(onnx::NodeProto& node, const std::string& name, float value) {
  onnx::AttributeProto& a = *node.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(value);
}

}  // namespace convscope::testing
