// The arithmetic of the operators students' CNNs add, against their definitions written here in
// double precision, on data with edges (negatives, zeros, large magnitudes, odd sizes). Gelu has
// no ONNX conformance case in libonnx-testdata 1.12; the others are checked here as well as by
// those cases, on shapes of CNNs (N x C x H x W, batch > 1).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "app/core/engine/engine.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/error.h"
#include "tests/core/epilogue_backend.h"
#include "tests/core/model_builder.h"

namespace {

using convscope::Shape;
using convscope::Tensor;
using convscope::testing::ModelBuilder;
using convscope::testing::setFloat;
using convscope::testing::setInt;
using convscope::testing::setInts;

// Values with edges: negatives, exact zeros, magnitudes to 40 (where exp and erf saturate).
Tensor edgyInput(const Shape& shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  Tensor t(shape);
  for (int64_t i = 0; i < t.size(); ++i) t[i] = normal(rng);
  for (int64_t i = 0; i < t.size(); i += 11) t[i] = 0.0f;
  for (int64_t i = 5; i < t.size(); i += 17) t[i] = (i % 2 ? -40.0f : 40.0f);
  return t;
}

Tensor run(const ModelBuilder& b, const Tensor& x, int opset = 17) {
  ModelBuilder copy = b;
  copy.proto().mutable_opset_import(0)->set_version(opset);
  const auto model = convscope::loadOnnxModelFromBytes(copy.bytes(), "arithmetic.onnx");
  convscope::Engine engine(model, "cpu-reference");
  return engine.evaluate({{"x", x}}).at("y");
}

void expectNear(const Tensor& got, const std::vector<double>& want, double tolerance) {
  ASSERT_EQ(static_cast<size_t>(got.size()), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got[static_cast<int64_t>(i)], want[i], tolerance * (1.0 + std::fabs(want[i]))) << "element " << i;
}

void expectElementwise(const ModelBuilder& b, const std::function<double(double)>& f) {
  const Tensor x = edgyInput({3, 5, 7, 9}, 1);
  const Tensor y = run(b, x);
  std::vector<double> want;
  for (int64_t i = 0; i < x.size(); ++i) want.push_back(f(x[i]));
  expectNear(y, want, 1e-6);
}

ModelBuilder oneNode(const std::string& op) {
  ModelBuilder b;
  b.input("x", {-1, 5, 7, 9}).output("y");
  b.node(op, {"x"}, {"y"}, "node");
  return b;
}

// Every activation a convolution can fuse (app/core/util/activations.h) is an ONNX operator of its
// own too, computing its definition; the fused epilogue tests check the same formulas fused.
TEST(OperatorArithmetic, EveryFusableActivationAgainstItsDefinition) {
  for (convscope::Activation a : convscope::kFusableActivations) {
    SCOPED_TRACE(convscope::onnxTypeOf(a));
    ModelBuilder b;
    b.input("x", {-1, 5, 7, 9}).output("y");
    convscope::testing::activationNode(b, convscope::onnxTypeOf(a), "x", "y", "node");
    expectElementwise(b, [a](double v) { return convscope::testing::referenceActivation(a, v); });
  }
}

// Clip beyond ReLU6: any range, its bounds given as opset 11's constant inputs (either one alone) or
// as the older attributes, a bound above the other (every value becomes the upper one).
TEST(OperatorArithmetic, ClipToAnyRange) {
  auto clipped = [](double lowest, double highest) {
    return [=](double v) { return std::min(highest, std::max(lowest, v)); };
  };
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  struct Case {
    std::string lowest, highest;  // "": not given
    double want_lowest, want_highest;
  };
  const std::vector<Case> cases = {{"-1.5", "2.25", -1.5, 2.25},
                                   {"0", "6", 0, 6},
                                   {"", "3", -kInfinity, 3},
                                   {"-2", "", -2, kInfinity},
                                   {"0", "", 0, kInfinity},
                                   {"", "", -kInfinity, kInfinity},
                                   {"4", "1", 4, 1}};
  for (const Case& c : cases) {
    SCOPED_TRACE("min '" + c.lowest + "', max '" + c.highest + "'");
    ModelBuilder b;
    b.input("x", {-1, 5, 7, 9}).output("y");
    if (!c.lowest.empty()) b.floats("lo", {}, {std::stof(c.lowest)});
    if (!c.highest.empty()) b.floats("hi", {}, {std::stof(c.highest)});
    if (c.highest.empty())
      b.node("Clip", {"x", c.lowest.empty() ? "" : "lo"}, {"y"}, "clip");
    else
      b.node("Clip", {"x", c.lowest.empty() ? "" : "lo", "hi"}, {"y"}, "clip");
    expectElementwise(b, clipped(c.want_lowest, c.want_highest));

    ModelBuilder old;  // opsets 6 to 10: the bounds are attributes
    old.input("x", {-1, 5, 7, 9}).output("y");
    onnx::NodeProto& node = old.node("Clip", {"x"}, {"y"}, "clip");
    if (!c.lowest.empty()) setFloat(node, "min", std::stof(c.lowest));
    if (!c.highest.empty()) setFloat(node, "max", std::stof(c.highest));
    const Tensor x = edgyInput({3, 5, 7, 9}, 1);
    std::vector<double> want;
    for (int64_t i = 0; i < x.size(); ++i) want.push_back(clipped(c.want_lowest, c.want_highest)(x[i]));
    expectNear(run(old, x, 10), want, 0.0);
  }
}

// A bound known only at run time (a second input of the model) is read then; one that is not a
// single value is refused, at load time when it is a constant, at run time otherwise.
TEST(OperatorArithmetic, ClipBoundsAtRunTimeAndBoundsThatAreNotOneValue) {
  ModelBuilder computed;  // the upper bound is the model's second input, of any length
  computed.input("x", {-1, 5, 7, 9}).input("limit", {-1}).output("y");
  computed.floats("lo", {}, {-0.5f});
  computed.node("Clip", {"x", "lo", "limit"}, {"y"}, "clip");
  const auto model = computed.load("clip.onnx");
  convscope::Engine engine(model, "cpu-reference");
  const Tensor x = edgyInput({3, 5, 7, 9}, 1);
  for (const float limit : {2.5f, -3.0f}) {
    SCOPED_TRACE(limit);
    const Tensor y = engine.evaluate({{"x", x}, {"limit", Tensor({1}, std::vector<float>{limit})}}).at("y");
    std::vector<double> want;
    for (int64_t i = 0; i < x.size(); ++i) want.push_back(std::min<double>(limit, std::max<double>(-0.5, x[i])));
    expectNear(y, want, 0.0);
  }
  try {
    engine.evaluate({{"x", x}, {"limit", Tensor({2}, std::vector<float>{1.0f, 2.0f})}});
    ADD_FAILURE() << "a max of two values ran";
  } catch (const convscope::Error& e) {
    EXPECT_NE(std::string(e.what()).find("its max must be one value, got shape [2]"), std::string::npos) << e.what();
  }

  auto refusal = [](ModelBuilder& b) {
    try {
      b.load("clip.onnx");
    } catch (const convscope::Error& e) {
      return std::string(e.what());
    }
    return std::string("(loaded)");
  };
  ModelBuilder two;
  two.input("x", {-1, 5, 7, 9}).output("y");
  two.floats("lo", {2}, {0.0f, 1.0f});
  two.node("Clip", {"x", "lo"}, {"y"}, "clip");
  EXPECT_NE(refusal(two).find("'lo' holds 2 values, not one"), std::string::npos) << refusal(two);

  ModelBuilder nan;
  nan.input("x", {-1, 5, 7, 9}).output("y");
  nan.floats("hi", {}, {std::numeric_limits<float>::quiet_NaN()});
  nan.node("Clip", {"x", "", "hi"}, {"y"}, "clip");
  EXPECT_NE(refusal(nan).find("'hi' is NaN"), std::string::npos) << refusal(nan);
}

// Two operands of one shape (a residual sum), small and large enough to be shared among the cores,
// against the same operands broadcast from a channel vector (the other path).
TEST(OperatorArithmetic, TwoOperandsOfOneShapeEveryKind) {
  const std::vector<std::pair<std::string, std::function<double(double, double)>>> kinds = {
      {"Add", [](double a, double b) { return a + b; }},
      {"Sub", [](double a, double b) { return a - b; }},
      {"Mul", [](double a, double b) { return a * b; }},
      {"Div", [](double a, double b) { return a / b; }},
      {"Pow", [](double a, double b) { return std::pow(a, b); }}};
  for (const Shape& shape : {Shape{3, 5, 7, 9}, Shape{2, 13, 61, 67}}) {
    const Tensor a = edgyInput(shape, 3), b = edgyInput(shape, 4);
    Tensor positive = a;  // Pow of a negative base to a fractional power is NaN: bases |a| + 0.5
    for (int64_t i = 0; i < positive.size(); ++i) positive[i] = std::fabs(a[i]) + 0.5f;
    for (const auto& [op, f] : kinds) {
      SCOPED_TRACE(op + " " + convscope::shapeToString(shape));
      ModelBuilder m;
      m.input("x", {-1, shape[1], shape[2], shape[3]}).input("z", {-1, shape[1], shape[2], shape[3]}).output("y");
      m.node(op, {"x", "z"}, {"y"}, "node");
      const auto model = m.load("arithmetic.onnx");
      convscope::Engine engine(model, "cpu-reference");
      const Tensor& base = op == "Pow" ? positive : a;
      Tensor exponent = b;
      if (op == "Pow")
        for (int64_t i = 0; i < exponent.size(); ++i) exponent[i] = std::clamp(b[i], -3.0f, 3.0f);
      if (op == "Div")
        for (int64_t i = 0; i < exponent.size(); ++i) exponent[i] = b[i] == 0.0f ? 0.25f : b[i];
      const Tensor y = engine.evaluate({{"x", base}, {"z", exponent}}).at("y");
      std::vector<double> want;
      for (int64_t i = 0; i < y.size(); ++i) want.push_back(f(base[i], exponent[i]));
      expectNear(y, want, 1e-6);
    }
  }
}

TEST(OperatorArithmetic, GeluExactAndTanh) {
  ModelBuilder exact = oneNode("Gelu");
  expectElementwise(exact, [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); });
  ModelBuilder tanhForm = oneNode("Gelu");
  onnx::AttributeProto& a = *tanhForm.graph().mutable_node(0)->add_attribute();
  a.set_name("approximate");
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s("tanh");
  expectElementwise(tanhForm, [](double v) {
    return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
  });
}

TEST(OperatorArithmetic, LeakyReluAndElu) {
  ModelBuilder leaky = oneNode("LeakyRelu");
  setFloat(*leaky.graph().mutable_node(0), "alpha", 0.2f);
  expectElementwise(leaky, [](double v) { return v >= 0 ? v : double{0.2f} * v; });
  expectElementwise(oneNode("LeakyRelu"), [](double v) { return v >= 0 ? v : double{0.01f} * v; });
  ModelBuilder elu = oneNode("Elu");
  setFloat(*elu.graph().mutable_node(0), "alpha", 0.7f);
  expectElementwise(elu, [](double v) { return v > 0 ? v : double{0.7f} * (std::exp(v) - 1.0); });
}

TEST(OperatorArithmetic, BatchNormalizationPerChannel) {
  ModelBuilder b;
  b.input("x", {-1, 5, 7, 9}).output("y");
  const std::vector<float> scale{0.5f, -1.0f, 2.0f, 1.0f, 0.0f}, bias{0.1f, 0.0f, -3.0f, 1.0f, 2.0f},
      mean{0.0f, 1.0f, -2.0f, 0.5f, 3.0f}, var{1.0f, 0.25f, 4.0f, 0.0f, 1.0f};
  b.floats("s", {5}, scale);
  b.floats("B", {5}, bias);
  b.floats("m", {5}, mean);
  b.floats("v", {5}, var);
  setFloat(b.node("BatchNormalization", {"x", "s", "B", "m", "v"}, {"y"}, "bn"), "epsilon", 1e-3f);
  const Tensor x = edgyInput({3, 5, 7, 9}, 2);
  std::vector<double> want;
  for (int64_t i = 0; i < x.size(); ++i) {
    const size_t c = static_cast<size_t>(i / 63 % 5);
    want.push_back((x[i] - double{mean[c]}) / std::sqrt(double{var[c]} + double{1e-3f}) * scale[c] + bias[c]);
  }
  expectNear(run(b, x, 15), want, 1e-6);
}

TEST(OperatorArithmetic, GlobalAveragePoolAndReduceMeanOverOddMaps) {
  const Tensor x = edgyInput({3, 5, 7, 9}, 3);
  std::vector<double> want(15, 0.0);
  for (int64_t i = 0; i < x.size(); ++i) want[static_cast<size_t>(i / 63)] += x[i] / 63.0;
  ModelBuilder global = oneNode("GlobalAveragePool");
  const Tensor pooled = run(global, x);
  EXPECT_EQ(pooled.shape(), (Shape{3, 5, 1, 1}));
  expectNear(pooled, want, 1e-6);
  // Opset 13: axes an attribute; opset 18: a constant input. Both as the exporters write them.
  ModelBuilder attribute = oneNode("ReduceMean");
  setInts(*attribute.graph().mutable_node(0), "axes", {-1, 2});
  setInt(*attribute.graph().mutable_node(0), "keepdims", 0);
  const Tensor reduced13 = run(attribute, x, 13);
  EXPECT_EQ(reduced13.shape(), (Shape{3, 5}));
  expectNear(reduced13, want, 1e-6);
  ModelBuilder input;
  input.input("x", {-1, 5, 7, 9}).output("y");
  input.int64s("axes", {2, 3});
  input.node("ReduceMean", {"x", "axes"}, {"y"}, "mean");
  const Tensor reduced18 = run(input, x, 18);
  EXPECT_EQ(reduced18.shape(), (Shape{3, 5, 1, 1}));
  expectNear(reduced18, want, 1e-6);
}

// The means over the last axes are summed per contiguous run (and by several threads for a large
// input); over other axes, by the general walk. Both against the definition, on an input large
// enough to be split (80,845 values) with a batch that no thread count divides.
TEST(OperatorArithmetic, ReduceMeanOverTrailingAndInnerAxesOfALargeInput) {
  const Shape shape{37, 5, 19, 23};
  const Tensor x = edgyInput(shape, 4);
  struct Case {
    std::vector<int64_t> axes;
    Shape want;
  };
  for (const Case& c : {Case{{2, 3}, {37, 5, 1, 1}}, Case{{1, 2, 3}, {37, 1, 1, 1}}, Case{{3}, {37, 5, 19, 1}},
                        Case{{1, 3}, {37, 1, 19, 1}}, Case{{0}, {1, 5, 19, 23}}}) {
    SCOPED_TRACE("axes " + std::to_string(c.axes.size()) + " from " + std::to_string(c.axes.front()));
    ModelBuilder b;
    b.input("x", {-1, 5, 19, 23}).output("y");
    b.int64s("axes", c.axes);
    b.node("ReduceMean", {"x", "axes"}, {"y"}, "mean");
    const Tensor y = run(b, x, 18);
    ASSERT_EQ(y.shape(), c.want);
    std::vector<double> sums(static_cast<size_t>(y.size()), 0.0);
    int64_t perOutput = 1;
    for (const int64_t axis : c.axes) perOutput *= shape[static_cast<size_t>(axis)];
    for (int64_t n = 0, i = 0; n < shape[0]; ++n)
      for (int64_t ch = 0; ch < shape[1]; ++ch)
        for (int64_t h = 0; h < shape[2]; ++h)
          for (int64_t w = 0; w < shape[3]; ++w, ++i) {
            const int64_t coordinates[4] = {n, ch, h, w};
            int64_t o = 0;
            for (size_t d = 0; d < 4; ++d) {
              const bool reduced = std::find(c.axes.begin(), c.axes.end(), int64_t(d)) != c.axes.end();
              o = o * c.want[d] + (reduced ? 0 : coordinates[d]);
            }
            sums[static_cast<size_t>(o)] += x[i];
          }
    for (double& sum : sums) sum /= static_cast<double>(perOutput);
    expectNear(y, sums, 1e-6);
  }
}

TEST(OperatorArithmetic, ConcatAlongChannels) {
  ModelBuilder b;
  b.input("x", {-1, 5, 7, 9}).output("y");
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.node("Tanh", {"x"}, {"t"}, "tanh");
  setInt(b.node("Concat", {"x", "t", "r"}, {"y"}, "cat"), "axis", -3);
  const Tensor x = edgyInput({3, 5, 7, 9}, 4);
  const Tensor y = run(b, x);
  ASSERT_EQ(y.shape(), (Shape{3, 15, 7, 9}));
  for (int64_t n = 0; n < 3; ++n)
    for (int64_t c = 0; c < 15; ++c)
      for (int64_t i = 0; i < 63; ++i) {
        const float got = y[(n * 15 + c) * 63 + i];
        const float source = x[(n * 5 + c % 5) * 63 + i];
        if (c < 5)
          ASSERT_EQ(got, source);
        else if (c < 10)
          ASSERT_NEAR(got, std::tanh(double{source}), 1e-6);
        else
          ASSERT_EQ(got, std::max(0.0f, source));
      }
}

// Bilinear x2 with half-pixel centres, PyTorch's align_corners=False, on a 3x5 map: the output
// (i + 0.5) / 2 - 0.5 in input coordinates, clamped to the edge.
TEST(OperatorArithmetic, ResizeBilinearHalfPixel) {
  ModelBuilder b;
  b.input("x", {-1, 2, 3, 5}).output("y");
  b.floats("scales", {4}, {1, 1, 2, 2});
  onnx::NodeProto& node = b.node("Resize", {"x", "", "scales"}, {"y"}, "up");
  onnx::AttributeProto& mode = *node.add_attribute();
  mode.set_name("mode");
  mode.set_type(onnx::AttributeProto::STRING);
  mode.set_s("linear");
  const Tensor x = edgyInput({2, 2, 3, 5}, 5);
  const Tensor y = run(b, x);
  ASSERT_EQ(y.shape(), (Shape{2, 2, 6, 10}));
  const auto source = [](int64_t i, int64_t in) { return std::clamp((i + 0.5) / 2.0 - 0.5, 0.0, double(in - 1)); };
  std::vector<double> want;
  for (int64_t p = 0; p < 4; ++p)
    for (int64_t h = 0; h < 6; ++h)
      for (int64_t w = 0; w < 10; ++w) {
        const double sy = source(h, 3), sx = source(w, 5);
        const int64_t y0 = static_cast<int64_t>(sy), x0 = static_cast<int64_t>(sx);
        const int64_t y1 = std::min<int64_t>(y0 + 1, 2), x1 = std::min<int64_t>(x0 + 1, 4);
        const auto at = [&](int64_t r, int64_t c) { return double{x[p * 15 + r * 5 + c]}; };
        const double fy = sy - y0, fx = sx - x0;
        want.push_back((1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x1)) +
                       fy * ((1 - fx) * at(y1, x0) + fx * at(y1, x1)));
      }
  expectNear(y, want, 1e-6);
}

}  // namespace
