// Chain networks built in code for the whole-network tests: odd sizes, padding, strides, every
// activation, both poolings, random weights with negatives -- and graphs that are not chains.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "tests/core/model_builder.h"

namespace convscope::testing {

inline std::vector<float> randomValues(size_t count, unsigned seed, float scale) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> value(-scale, scale);
  std::vector<float> values(count);
  for (float& v : values) v = value(random);
  return values;
}

// x (N x 1 x 13 x 17) -> Conv 5@3x3 pads 1 stride 1 -> Relu -> MaxPool 2x2 s2 -> (5 x 6 x 8)
//   -> Conv 7@3x2 stride 2x1, no pads, no bias -> Sigmoid -> AveragePool 2x2 s1 -> (7 x 1 x 6)
//   -> Flatten -> Gemm 42->9 -> Tanh -> Gemm 9->3 (no bias) -> Softmax.
inline std::shared_ptr<const Model> oddChainModel(unsigned seed = 11) {
  ModelBuilder b;
  b.input("x", {-1, 1, 13, 17}).output("p", {-1, 3});
  b.floats("W1", {5, 1, 3, 3}, randomValues(45, seed, 0.8f));
  b.floats("B1", {5}, randomValues(5, seed + 1, 0.3f));
  b.floats("W2", {7, 5, 3, 2}, randomValues(210, seed + 2, 0.5f));
  b.floats("D1", {9, 42}, randomValues(378, seed + 3, 0.4f));
  b.floats("E1", {9}, randomValues(9, seed + 4, 0.2f));
  b.floats("D2", {3, 9}, randomValues(27, seed + 5, 0.9f));
  setInts(b.node("Conv", {"x", "W1", "B1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c1"}, {"r1"}, "relu1");
  onnx::NodeProto& pool1 = b.node("MaxPool", {"r1"}, {"p1"}, "pool1");
  setInts(pool1, "kernel_shape", {2, 2});
  setInts(pool1, "strides", {2, 2});
  setInts(b.node("Conv", {"p1", "W2"}, {"c2"}, "conv2"), "strides", {2, 1});
  b.node("Sigmoid", {"c2"}, {"s2"}, "sigmoid2");
  onnx::NodeProto& pool2 = b.node("AveragePool", {"s2"}, {"p2"}, "pool2");
  setInts(pool2, "kernel_shape", {2, 2});
  setInts(pool2, "strides", {1, 1});
  b.node("Flatten", {"p2"}, {"f"}, "flatten");
  onnx::NodeProto& dense1 = b.node("Gemm", {"f", "D1", "E1"}, {"d1"}, "dense1");
  setInt(dense1, "transB", 1);
  b.node("Tanh", {"d1"}, {"t1"}, "tanh1");
  onnx::NodeProto& dense2 = b.node("Gemm", {"t1", "D2"}, {"d2"}, "dense2");
  setInt(dense2, "transB", 1);
  b.node("Softmax", {"d2"}, {"p"}, "softmax");
  return b.load("odd-chain.onnx");
}

// The other shapes the whole-network kernels must take, so that with oddChainModel every template
// and branch runs: x (N x 1 x 11 x 9) -> Conv 4@3x3 pads 1, no activation -> MaxPool 2x1 s2x1
//   -> (4 x 5 x 9) -> Conv 6@2x3 stride 1x2, no bias -> Relu -> AveragePool 1x2 s1x2 -> (6 x 4 x 2)
//   -> Conv 3@1x1 -> Tanh, no pooling -> (3 x 4 x 2) -> Flatten -> Gemm 24->5 with weights
//   [inputs][outputs] (transB 0) -> Relu -> Gemm 5->40; no softmax: three conv layers, the scores
//   out as they are, and more classes than a warp has lanes.
inline std::shared_ptr<const Model> otherChainModel(unsigned seed = 31) {
  ModelBuilder b;
  b.input("x", {-1, 1, 11, 9}).output("y", {-1, 40});
  b.floats("W1", {4, 1, 3, 3}, randomValues(36, seed, 0.8f));
  b.floats("B1", {4}, randomValues(4, seed + 1, 0.3f));
  b.floats("W2", {6, 4, 2, 3}, randomValues(144, seed + 2, 0.5f));
  b.floats("W3", {3, 6, 1, 1}, randomValues(18, seed + 3, 0.7f));
  b.floats("B3", {3}, randomValues(3, seed + 4, 0.3f));
  b.floats("D1", {24, 5}, randomValues(120, seed + 5, 0.4f));
  b.floats("E1", {5}, randomValues(5, seed + 6, 0.2f));
  b.floats("D2", {40, 5}, randomValues(200, seed + 7, 0.9f));
  b.floats("E2", {40}, randomValues(40, seed + 8, 0.2f));
  setInts(b.node("Conv", {"x", "W1", "B1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  onnx::NodeProto& pool1 = b.node("MaxPool", {"c1"}, {"p1"}, "pool1");
  setInts(pool1, "kernel_shape", {2, 1});
  setInts(pool1, "strides", {2, 1});
  setInts(b.node("Conv", {"p1", "W2"}, {"c2"}, "conv2"), "strides", {1, 2});
  b.node("Relu", {"c2"}, {"r2"}, "relu2");
  onnx::NodeProto& pool2 = b.node("AveragePool", {"r2"}, {"p2"}, "pool2");
  setInts(pool2, "kernel_shape", {1, 2});
  setInts(pool2, "strides", {1, 2});
  b.node("Conv", {"p2", "W3", "B3"}, {"c3"}, "conv3");
  b.node("Tanh", {"c3"}, {"t3"}, "tanh3");
  b.node("Flatten", {"t3"}, {"f"}, "flatten");
  b.node("Gemm", {"f", "D1", "E1"}, {"d1"}, "dense1");
  b.node("Relu", {"d1"}, {"r4"}, "relu4");
  setInt(b.node("Gemm", {"r4", "D2", "E2"}, {"y"}, "dense2"), "transB", 1);
  return b.load("other-chain.onnx");
}

// A residual connection: the Add reads the conv's output and the Relu's, so the graph branches.
inline std::shared_ptr<const Model> branchingModel() {
  ModelBuilder b;
  b.input("x", {-1, 1, 6, 6}).output("y", {-1, 2});
  b.weights("W", {1, 1, 3, 3});
  b.weights("D", {2, 36});
  setInts(b.node("Conv", {"x", "W"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"}, "relu");
  b.node("Add", {"c", "r"}, {"a"}, "residual");
  b.node("Flatten", {"a"}, {"f"}, "flatten");
  setInt(b.node("Gemm", {"f", "D"}, {"y"}, "dense"), "transB", 1);
  return b.load("branching.onnx");
}

}  // namespace convscope::testing
