// The readable layer titles of the shipped models, exactly as a student reads them above the
// feature maps. The expected strings are written from the networks the models were trained as
// (the nn.Sequential of scripts/train_models.py): filters, kernels and each layer's output for
// one image, worked out by hand below.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>
#include <utility>
#include <vector>

#include "app/core/engine/conv_pixel.h"
#include "app/core/model/layer_titles.h"
#include "app/core/model/onnx_loader.h"

namespace convscope {
namespace {

std::vector<std::string> titlesOf(const std::string& name) {
  return layerTitles(*loadOnnxModel(std::string(CONVSCOPE_MODELS_DIR) + "/" + name + ".onnx"));
}

// course-high and course-low: 1x48x48, conv 12@7x7, tanh, max-pool 2, conv 24@7x7, tanh,
// max-pool 2, flatten, dense 128, tanh, dense 10, softmax.
// 48 - 7 + 1 = 42, 42 / 2 = 21, 21 - 7 + 1 = 15, 15 / 2 = 7 (floor), 24 * 7 * 7 = 1176.
const std::vector<std::string> kCourseTitles = {
    "conv 1 · 12 filters 7×7 → 12×42×42",
    "tanh 1 → 12×42×42",
    "max-pool 1 · 12×42×42 → 12×21×21",
    "conv 2 · 24 filters 7×7 → 24×15×15",
    "tanh 2 → 24×15×15",
    "max-pool 2 · 24×15×15 → 24×7×7",
    "flatten 1 · 24×7×7 → 1176",
    "dense 1 · 1176 → 128",
    "tanh 3 → 128",
    "dense 2 · 128 → 10",
    "softmax 1 → 10",
};

TEST(LayerTitles, CourseModelsReadAsTheirArchitecture) {
  EXPECT_EQ(titlesOf("course-high"), kCourseTitles);
  EXPECT_EQ(titlesOf("course-low"), kCourseTitles);
}

// LeNet-5: 1x28x28, conv 6@5x5 padded to keep 28x28, ReLU, average pool 2, conv 16@5x5 (28/2 = 14,
// 14 - 5 + 1 = 10), ReLU, average pool 2, dense 400 -> 120 -> 84 -> 10 with ReLU between, softmax.
TEST(LayerTitles, LeNet5ReadsAsItsArchitecture) {
  const std::vector<std::string> expected = {
      "conv 1 · 6 filters 5×5 → 6×28×28",
      "relu 1 → 6×28×28",
      "avg-pool 1 · 6×28×28 → 6×14×14",
      "conv 2 · 16 filters 5×5 → 16×10×10",
      "relu 2 → 16×10×10",
      "avg-pool 2 · 16×10×10 → 16×5×5",
      "flatten 1 · 16×5×5 → 400",
      "dense 1 · 400 → 120",
      "relu 3 → 120",
      "dense 2 · 120 → 84",
      "relu 4 → 84",
      "dense 3 · 84 → 10",
      "softmax 1 → 10",
  };
  EXPECT_EQ(titlesOf("lenet5"), expected);
}

// A graph of one Gemm (or MatMul): input x of `inputDims` (-1: the batch), weights W of
// `weightDims`. The loader leaves only the first dimension free, so the transposed input's batch
// of 1 is fixed.
std::vector<std::string> titlesOfOneDenseLayer(const std::string& opType, const std::vector<int64_t>& inputDims,
                                               const std::vector<int64_t>& weightDims, bool transA = false,
                                               bool transB = false) {
  onnx::ModelProto proto;
  proto.set_ir_version(8);
  onnx::OperatorSetIdProto* opset = proto.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  onnx::GraphProto& graph = *proto.mutable_graph();
  graph.set_name("gemm");
  onnx::ValueInfoProto& x = *graph.add_input();
  x.set_name("x");
  x.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (const int64_t d : inputDims) {
    onnx::TensorShapeProto_Dimension* dim = x.mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();
    if (d < 0)
      dim->set_dim_param("N");
    else
      dim->set_dim_value(d);
  }
  onnx::TensorProto& w = *graph.add_initializer();
  w.set_name("W");
  w.set_data_type(onnx::TensorProto::FLOAT);
  for (const int64_t d : weightDims) w.add_dims(d);
  for (int64_t i = 0; i < weightDims[0] * weightDims[1]; ++i) w.add_float_data(0.01f);
  onnx::NodeProto& gemm = *graph.add_node();
  gemm.set_op_type(opType);
  gemm.add_input("x");
  gemm.add_input("W");
  gemm.add_output("y");
  for (const auto& [name, on] : {std::pair{"transA", transA}, std::pair{"transB", transB}}) {
    if (opType != "Gemm") break;
    onnx::AttributeProto& a = *gemm.add_attribute();
    a.set_name(name);
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(on ? 1 : 0);
  }
  graph.add_output()->set_name("y");
  std::string bytes;
  EXPECT_TRUE(proto.SerializeToString(&bytes));
  return layerTitles(*loadOnnxModelFromBytes(bytes, "gemm.onnx"));
}

TEST(LayerTitles, ADenseLayerCountsItsInputsWhicheverWayItsInputIsStored) {
  // 16 inputs, 10 outputs per image: A is 1 x 16, or 16 x 1 with transA (K x M).
  EXPECT_EQ(titlesOfOneDenseLayer("Gemm", {-1, 16}, {16, 10}, false, false),
            std::vector<std::string>{"dense 1 · 16 → 10"});
  EXPECT_EQ(titlesOfOneDenseLayer("Gemm", {-1, 16}, {10, 16}, false, true),
            std::vector<std::string>{"dense 1 · 16 → 10"});
  EXPECT_EQ(titlesOfOneDenseLayer("Gemm", {16, 1}, {16, 10}, true, false),
            std::vector<std::string>{"dense 1 · 16 → 10"});
}

TEST(LayerTitles, AMatMulIsADenseLayerOfTheValuesOfOneImage) {
  // 2-D: 16 inputs, 10 outputs per image. 3-D: 4 rows of 16 per image, so 4 x 16 = 64 values in
  // and 4 x 10 = 40 out.
  EXPECT_EQ(titlesOfOneDenseLayer("MatMul", {-1, 16}, {16, 10}), std::vector<std::string>{"dense 1 · 16 → 10"});
  EXPECT_EQ(titlesOfOneDenseLayer("MatMul", {-1, 4, 16}, {16, 10}), std::vector<std::string>{"dense 1 · 64 → 40"});
}

// The titles ask each node's operator what it is; the factory gives it the description of its ONNX
// type. Checked against the node's type, which the loader keeps.
TEST(LayerTitles, EveryNodeOfTheShippedModelsIsDescribedAsItsType) {
  for (const std::string name : {"course-high", "course-low", "lenet5"}) {
    const auto model = loadOnnxModel(std::string(CONVSCOPE_MODELS_DIR) + "/" + name + ".onnx");
    std::vector<int> convs;
    for (size_t i = 0; i < model->nodes.size(); ++i) {
      const Node& node = model->nodes[i];
      const LayerDescription& description = node.op->description();
      EXPECT_EQ(description.kind, layerKind(node.opType)) << name << ": " << node.name;
      EXPECT_EQ(description.role == LayerRole::Convolution, node.opType == "Conv") << name << ": " << node.name;
      EXPECT_EQ(description.role == LayerRole::Softmax, node.opType == "Softmax") << name << ": " << node.name;
      EXPECT_EQ(description.role == LayerRole::Dense, node.opType == "Gemm" || node.opType == "MatMul")
          << name << ": " << node.name;
      if (node.opType == "Conv") convs.push_back(static_cast<int>(i));
    }
    EXPECT_EQ(convNodeIndices(*model), convs) << name;
    EXPECT_EQ(convs.size(), 2u) << name;  // every shipped network has two conv layers
    EXPECT_TRUE(model->endsWithSoftmax()) << name;
  }
}

TEST(LayerTitles, KindsAreNamedForStudentsAndUnknownOnesLowercased) {
  EXPECT_EQ(layerKind("Conv"), "conv");
  EXPECT_EQ(layerKind("Gemm"), "dense");
  EXPECT_EQ(layerKind("MatMul"), "dense");
  EXPECT_EQ(layerKind("MaxPool"), "max-pool");
  EXPECT_EQ(layerKind("AveragePool"), "avg-pool");
  EXPECT_EQ(layerKind("LeakyRelu"), "leaky-relu");
  EXPECT_EQ(layerKind("BatchNormalization"), "batch-norm");
  EXPECT_EQ(layerKind("GlobalAveragePool"), "global-avg-pool");
  EXPECT_EQ(layerKind("HardSwish"), "hardswish");  // not one ConvScope runs: lowercased
}

// A real network's layers say what kind of conv they are: depthwise (a filter per channel) and
// pointwise (1x1, channels mixed at one position), counted here from the weights' shapes.
TEST(LayerTitles, EfficientNetLite0sDepthwiseAndPointwiseConvsAreNamedSo) {
  const auto model = loadOnnxModel(std::string(CONVSCOPE_MODELS_DIR) + "/efficientnet-lite0.onnx");
  const std::vector<std::string> titles = layerTitles(*model);
  int depthwise = 0, pointwise = 0, namedDepthwise = 0, namedPointwise = 0;
  for (size_t i = 0; i < model->nodes.size(); ++i) {
    const Node& node = model->nodes[i];
    if (node.opType != "Conv") continue;
    const Shape& w = model->weights.at(node.inputs[1]).shape();  // filters x channels per group x kh x kw
    const bool isDepthwise = w[1] == 1 && w[0] > 1;
    const bool isPointwise = !isDepthwise && w[2] == 1 && w[3] == 1;
    depthwise += isDepthwise;
    pointwise += isPointwise;
    const bool saysDepthwise = titles[i].find(", depthwise") != std::string::npos;
    const bool saysPointwise = titles[i].find(", pointwise") != std::string::npos;
    EXPECT_EQ(saysDepthwise, isDepthwise) << titles[i];
    EXPECT_EQ(saysPointwise, isPointwise) << titles[i];
    namedDepthwise += saysDepthwise;
    namedPointwise += saysPointwise;
  }
  EXPECT_EQ(depthwise, 16);  // one per MBConv block
  EXPECT_EQ(namedDepthwise, depthwise);
  EXPECT_EQ(namedPointwise, pointwise);
  EXPECT_GT(pointwise, 16);
}

}  // namespace
}  // namespace convscope
