// Malformed and unsupported ONNX models: each must be refused with a convscope::Error whose message
// names the source and the problem, and none may crash the loader or the engine. Most models are
// built here with the ONNX protobuf classes, so every test shows exactly what is wrong.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include "app/core/engine/engine.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/error.h"
#include "app/core/util/tensor.h"
#include "tests/core/model_builder.h"

namespace fs = std::filesystem;
using convscope::Shape;
using convscope::Tensor;

namespace {

const fs::path kShippedModel = fs::path(CONVSCOPE_TEST_DATA_DIR) / ".." / ".." / "data" / "models" / "course-high.onnx";
constexpr const char* kSource = "built.onnx";  // the source name given for models built in memory

// ---------------------------------------------------------------------------------------------
// Building models in code.

using convscope::testing::ModelBuilder;
using convscope::testing::setFloat;
using convscope::testing::setInt;
using convscope::testing::setInts;

// The valid model the error cases are variations of: x (N x 1 x 8 x 8) -> Conv 3x3, 4 filters,
// bias -> Relu -> y (N x 4 x 6 x 6).
ModelBuilder convRelu() {
  ModelBuilder b;
  b.input("x", {-1, 1, 8, 8}).output("y", {-1, 4, 6, 6});
  b.weights("W", {4, 1, 3, 3});
  b.floats("B", {4}, {0.1f, -0.2f, 0.0f, 0.3f});
  setInts(b.node("Conv", {"x", "W", "B"}, {"h"}, "conv"), "kernel_shape", {3, 3});
  b.node("Relu", {"h"}, {"y"}, "relu");
  return b;
}

// A classifier head: x (N x 10) -> Gemm with B (k x 5), bias 5 -> y (N x 5).
ModelBuilder gemmModel(int64_t k) {
  ModelBuilder b;
  b.input("x", {-1, 10}).output("y", {-1, 5});
  b.weights("B", {k, 5});
  b.weights("C", {5});
  b.node("Gemm", {"x", "B", "C"}, {"y"}, "fc");
  return b;
}

// ---------------------------------------------------------------------------------------------
// Checking refusals.

// The message of the convscope::Error that loading `bytes` throws; fails the test (and returns "")
// when loading succeeds or throws something else.
std::string refusal(const std::string& bytes, const std::string& source = kSource) {
  try {
    convscope::loadOnnxModelFromBytes(bytes, source);
  } catch (const convscope::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a " << typeid(e).name() << " instead of convscope::Error: " << e.what();
    return "";
  }
  ADD_FAILURE() << "the model loaded but should have been refused";
  return "";
}

std::string refusalOfFile(const fs::path& path) {
  try {
    convscope::loadOnnxModel(path);
  } catch (const convscope::Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a " << typeid(e).name() << " instead of convscope::Error: " << e.what();
    return "";
  }
  ADD_FAILURE() << path << " loaded but should have been refused";
  return "";
}

// The message starts with the source and contains every one of `words`.
::testing::AssertionResult names(const std::string& message, const std::string& source,
                                 std::initializer_list<std::string> words) {
  if (message.rfind(source + ": ", 0) != 0)
    return ::testing::AssertionFailure() << "the message does not start with the source '" << source
                                         << "': " << message;
  for (const std::string& w : words)
    if (message.find(w) == std::string::npos)
      return ::testing::AssertionFailure() << "'" << w << "' is missing from the message: " << message;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult names(const std::string& message, std::initializer_list<std::string> words) {
  return names(message, kSource, words);
}

// Bytes that are not ONNX are refused either by protobuf or, when they happen to parse as a
// (nearly empty) ModelProto, because they import no operator set.
::testing::AssertionResult saysNotOnnx(const std::string& message, const std::string& source) {
  const bool unparsable = message.find("not a valid ONNX model") != std::string::npos;
  const bool noOpset = message.find("no ONNX operator set is imported") != std::string::npos;
  const bool empty = message.find("the file is empty") != std::string::npos;
  if (!unparsable && !noOpset && !empty)
    return ::testing::AssertionFailure() << "the message does not say the data is not ONNX: " << message;
  return names(message, source, {});
}

// A private folder for files written by one test.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() / ("convscope-onnx-errors-" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path write(const std::string& name, const std::string& bytes) const {
    const fs::path file = path_ / name;
    std::ofstream out(file, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return file;
  }

 private:
  fs::path path_;
};

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// ---------------------------------------------------------------------------------------------
// The valid model: the error cases below are meaningful only if this one works.

TEST(OnnxErrors, ValidConvReluModelLoadsAndRuns) {
  const auto model = convRelu().load();
  ASSERT_EQ(model->inputs.size(), 1u);
  EXPECT_EQ(model->inputs[0].shape, (Shape{-1, 1, 8, 8}));
  ASSERT_EQ(model->nodes.size(), 2u);
  EXPECT_EQ(model->opset, 17);

  // Two images; compare with a direct computation of Conv + bias + Relu.
  Tensor x({2, 1, 8, 8});
  for (int64_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 17) / 8.0f - 1.0f;
  const Tensor& w = model->weights.at("W");
  const Tensor& bias = model->weights.at("B");
  for (const char* variant : {"cpu-reference", "cpu-im2col-gemm"}) {
    convscope::Engine engine(model, variant);
    const std::map<std::string, Tensor> out = engine.evaluate({{"x", x}});
    ASSERT_EQ(out.count("y"), 1u);
    const Tensor& y = out.at("y");
    ASSERT_EQ(y.shape(), (Shape{2, 4, 6, 6}));
    for (int n = 0; n < 2; ++n)
      for (int m = 0; m < 4; ++m)
        for (int r = 0; r < 6; ++r)
          for (int c = 0; c < 6; ++c) {
            double sum = bias[m];
            for (int p = 0; p < 3; ++p)
              for (int q = 0; q < 3; ++q) sum += double{x[(n * 8 + r + p) * 8 + c + q]} * w[(m * 3 + p) * 3 + q];
            const float expected = static_cast<float>(std::max(sum, 0.0));
            ASSERT_NEAR(y[((n * 4 + m) * 6 + r) * 6 + c], expected, 1e-5f) << variant << " at " << n << m << r << c;
          }
  }
}

TEST(OnnxErrors, ShippedModelLoads) {
  ASSERT_TRUE(fs::is_regular_file(kShippedModel)) << kShippedModel;
  const auto model = convscope::loadOnnxModel(kShippedModel);
  EXPECT_EQ(model->name, "course-high");
  EXPECT_FALSE(model->nodes.empty());
}

// ---------------------------------------------------------------------------------------------
// Files that are not ONNX models.

TEST(OnnxErrors, EmptyFile) {
  EXPECT_TRUE(names(refusal(""), {"the file is empty"}));
  TempDir dir;
  const fs::path file = dir.write("empty.onnx", "");
  EXPECT_TRUE(names(refusalOfFile(file), file.string(), {"the file is empty"}));
}

TEST(OnnxErrors, RandomGarbage) {
  std::mt19937 rng(20240611);
  for (size_t size : {1u, 2u, 3u, 7u, 16u, 100u, 1000u, 4096u, 65536u}) {
    for (int trial = 0; trial < 4; ++trial) {
      std::string bytes(size, '\0');
      for (char& c : bytes) c = static_cast<char>(rng() & 0xff);
      SCOPED_TRACE("size " + std::to_string(size) + ", trial " + std::to_string(trial));
      EXPECT_TRUE(saysNotOnnx(refusal(bytes, "garbage.onnx"), "garbage.onnx"));
    }
  }
}

TEST(OnnxErrors, TextFile) {
  TempDir dir;
  const fs::path file = dir.write("notes.onnx",
                                  "This is a plain text file, not a neural network.\n"
                                  "ConvScope must say so instead of crashing.\n");
  EXPECT_TRUE(saysNotOnnx(refusalOfFile(file), file.string()));
}

TEST(OnnxErrors, PngHeader) {
  std::string png("\x89PNG\r\n\x1a\n", 8);
  png += std::string("\0\0\0\x0dIHDR\0\0\0\x1c\0\0\0\x1c\x08\x00\0\0\0", 21);
  png += std::string(64, '\x5a');
  TempDir dir;
  const fs::path file = dir.write("digit.onnx", png);
  EXPECT_TRUE(saysNotOnnx(refusalOfFile(file), file.string()));
}

TEST(OnnxErrors, TruncatedShippedModel) {
  const std::string full = readFile(kShippedModel);
  ASSERT_GT(full.size(), 10000u) << kShippedModel;
  // Cuts near the start (headers), spread over the file (weights), and just before the end.
  std::vector<size_t> lengths = {1, 2, 5, 10, 20, 50, 100, 300, 1000};
  for (int i = 1; i <= 8; ++i) lengths.push_back(full.size() * static_cast<size_t>(i) / 9);
  for (size_t cut : {1000u, 100u, 10u, 1u}) lengths.push_back(full.size() - cut);

  int refused = 0;
  for (size_t length : lengths) {
    SCOPED_TRACE("truncated to " + std::to_string(length) + " of " + std::to_string(full.size()) + " bytes");
    try {
      const auto model = convscope::loadOnnxModelFromBytes(full.substr(0, length), "course-high.onnx");
      // Protobuf accepted a prefix that ends on a field boundary: the loader must then have built
      // a consistent model.
      EXPECT_FALSE(model->nodes.empty());
    } catch (const convscope::Error& e) {
      ++refused;
      EXPECT_TRUE(names(e.what(), "course-high.onnx", {"truncated"}));
    }
  }
  EXPECT_GE(refused, static_cast<int>(lengths.size()) * 3 / 4)
      << "only " << refused << " of " << lengths.size() << " truncated files were refused";
}

TEST(OnnxErrors, MissingFile) {
  TempDir dir;
  const fs::path file = dir.path() / "no-such-model.onnx";
  EXPECT_TRUE(names(refusalOfFile(file), file.string(), {"file not found"}));
}

TEST(OnnxErrors, FolderInsteadOfFile) {
  TempDir dir;
  EXPECT_TRUE(names(refusalOfFile(dir.path()), dir.path().string(), {"is a directory", "not a regular file"}));
}

// ---------------------------------------------------------------------------------------------
// Operators and attributes ConvScope does not implement.

TEST(OnnxErrors, UnknownOperator) {
  for (const char* op : {"Selu", "Foo"}) {
    ModelBuilder b;
    b.input("x", {-1, 1, 8, 8}).output("y");
    b.node(op, {"x"}, {"y"}, "mystery");
    EXPECT_TRUE(names(refusal(b.bytes()), {"node 'mystery'", std::string("operator ") + op, "not supported"}));
  }
}

TEST(OnnxErrors, UnnamedNodeIsNamedByOperatorAndIndex) {
  ModelBuilder b;
  b.input("x", {-1, 4}).output("y");
  b.node("Relu", {"x"}, {"h"});
  b.node("Selu", {"h"}, {"y"});
  EXPECT_TRUE(names(refusal(b.bytes()), {"node 'Selu_1' (Selu)", "not supported"}));
}

TEST(OnnxErrors, ConvDilationsAndGroupsLoadWithTheirShapes) {
  // Dilation 2 of a 3x3 kernel spans 5 pixels: 8 - 5 + 1 = 4.
  ModelBuilder dilated = convRelu();
  setInts(*dilated.graph().mutable_node(0), "dilations", {2, 2});
  dilated.graph().mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  const auto model = convscope::loadOnnxModelFromBytes(dilated.bytes(), kSource);
  EXPECT_EQ(model->inferShapes({{"x", {1, 1, 8, 8}}}).at("y"), (Shape{1, 4, 4, 4}));
  // 2 channels in 2 groups, 4 filters of 1 channel each.
  ModelBuilder grouped;
  grouped.input("x", {-1, 2, 8, 8}).output("y");
  grouped.weights("W", {4, 1, 3, 3});
  setInt(grouped.node("Conv", {"x", "W"}, {"y"}, "grouped"), "group", 2);
  const auto groupedModel = convscope::loadOnnxModelFromBytes(grouped.bytes(), kSource);
  EXPECT_EQ(groupedModel->inferShapes({{"x", {1, 2, 8, 8}}}).at("y"), (Shape{1, 4, 6, 6}));
}

void setString(onnx::NodeProto& node, const std::string& name, const std::string& value) {
  onnx::AttributeProto& a = *node.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(value);
}

// One node of a new operator with a malformed attribute or input: refused when the model loads,
// naming the node and the problem.
struct MalformedCase {
  const char* what;
  std::function<void(ModelBuilder&)> build;  // x: N x 4 x 8 x 8 in, y out
  std::vector<std::string> words;
};

TEST(OnnxErrors, MalformedAttributesOfTheNewOperatorsAreRefusedNamingTheNode) {
  const auto conv = [](ModelBuilder& b, const convscope::Shape& w) -> onnx::NodeProto& {
    b.weights("W", w);
    return b.node("Conv", {"x", "W"}, {"y"}, "bad");
  };
  const std::vector<MalformedCase> cases = {
      {"Conv group 0",
       [&](ModelBuilder& b) {
         setInt(conv(b, {4, 4, 3, 3}), "group", 0);
       },
       {"group=0", "invalid"}},
      {"Conv group that does not divide the channels",
       [&](ModelBuilder& b) {
         setInt(conv(b, {6, 1, 3, 3}), "group", 3);
       },
       {"group 3 does not divide"}},
      {"Conv weights of the wrong group width",
       [&](ModelBuilder& b) {
         setInt(conv(b, {4, 1, 3, 3}), "group", 2);
       },
       {"expect 2 input channels", "per group"}},
      {"Conv dilation 0",
       [&](ModelBuilder& b) {
         setInts(conv(b, {4, 4, 3, 3}), "dilations", {0, 1});
       },
       {"dilations [0,1]", "between 1 and"}},
      {"Conv dilations of 3 values",
       [&](ModelBuilder& b) {
         setInts(conv(b, {4, 4, 3, 3}), "dilations", {1, 1, 1});
       },
       {"dilations [1,1,1] must have 2 values"}},
      {"Conv dilated kernel larger than the input",
       [&](ModelBuilder& b) {
         setInts(conv(b, {4, 4, 3, 3}), "dilations", {4, 4});
       },
       {"kernel 9 is larger than the padded input 8"}},
      {"LeakyRelu alpha inf",
       [](ModelBuilder& b) { setFloat(b.node("LeakyRelu", {"x"}, {"y"}, "bad"), "alpha", INFINITY); },
       {"alpha must be a finite number"}},
      {"Elu alpha as a string",
       [](ModelBuilder& b) { setString(b.node("Elu", {"x"}, {"y"}, "bad"), "alpha", "1"); },
       {"attribute 'alpha' has an unexpected type"}},
      {"Gelu approximate fast",
       [](ModelBuilder& b) { setString(b.node("Gelu", {"x"}, {"y"}, "bad"), "approximate", "fast"); },
       {"approximate 'fast' is not valid"}},
      {"BatchNormalization training mode",
       [](ModelBuilder& b) {
         for (const char* name : {"s", "B", "m", "v"}) b.floats(name, {4}, {1.0f, 1.0f, 1.0f, 1.0f});
         setInt(b.node("BatchNormalization", {"x", "s", "B", "m", "v"}, {"y"}, "bad"), "training_mode", 1);
       },
       {"training_mode=1 is not supported"}},
      {"BatchNormalization negative epsilon",
       [](ModelBuilder& b) {
         for (const char* name : {"s", "B", "m", "v"}) b.floats(name, {4}, {1.0f, 1.0f, 1.0f, 1.0f});
         setFloat(b.node("BatchNormalization", {"x", "s", "B", "m", "v"}, {"y"}, "bad"), "epsilon", -1.0f);
       },
       {"epsilon must be a finite number, at least 0"}},
      {"BatchNormalization statistics of the wrong length",
       [](ModelBuilder& b) {
         for (const char* name : {"s", "B", "m"}) b.floats(name, {4}, {1.0f, 1.0f, 1.0f, 1.0f});
         b.floats("v", {3}, {1.0f, 1.0f, 1.0f});
         b.node("BatchNormalization", {"x", "s", "B", "m", "v"}, {"y"}, "bad");
       },
       {"var [3] does not match the input's 4 channels"}},
      {"ReduceMean keepdims 2",
       [](ModelBuilder& b) { setInt(b.node("ReduceMean", {"x"}, {"y"}, "bad"), "keepdims", 2); },
       {"keepdims must be 0 or 1"}},
      {"ReduceMean axis out of range",
       [](ModelBuilder& b) { setInts(b.node("ReduceMean", {"x"}, {"y"}, "bad"), "axes", {5}); },
       {"axis 5 is out of range for rank 4"}},
      {"ReduceMean axis twice",
       [](ModelBuilder& b) {
         setInts(b.node("ReduceMean", {"x"}, {"y"}, "bad"), "axes", {2, -2});
       },
       {"axis -2 is given twice"}},
      {"Concat without axis",
       [](ModelBuilder& b) {
         b.node("Concat", {"x", "x"}, {"y"}, "bad");
       },
       {"attribute axis is required"}},
      {"Concat axis out of range",
       [](ModelBuilder& b) {
         setInt(b.node("Concat", {"x", "x"}, {"y"}, "bad"), "axis", 4);
       },
       {"axis 4 is out of range for rank 4"}},
      {"Concat of shapes that differ off the axis",
       [](ModelBuilder& b) {
         b.weights("z", {1, 4, 7, 8});
         setInt(b.node("Concat", {"x", "z"}, {"y"}, "bad"), "axis", 1);
       },
       {"differ outside the concatenation axis 1"}},
      {"Resize cubic",
       [](ModelBuilder& b) {
         b.floats("scales", {4}, {1, 1, 2, 2});
         setString(b.node("Resize", {"x", "", "scales"}, {"y"}, "bad"), "mode", "cubic");
       },
       {"mode cubic is not supported"}},
      {"Resize crop and resize",
       [](ModelBuilder& b) {
         b.floats("scales", {4}, {1, 1, 2, 2});
         setString(b.node("Resize", {"x", "", "scales"}, {"y"}, "bad"), "coordinate_transformation_mode",
                   "tf_crop_and_resize");
       },
       {"coordinate_transformation_mode 'tf_crop_and_resize' is not supported"}},
      {"Resize nearest_mode up",
       [](ModelBuilder& b) {
         b.floats("scales", {4}, {1, 1, 2, 2});
         setString(b.node("Resize", {"x", "", "scales"}, {"y"}, "bad"), "nearest_mode", "up");
       },
       {"nearest_mode 'up' is not valid"}},
      {"Resize antialias",
       [](ModelBuilder& b) {
         b.floats("scales", {4}, {1, 1, 0.5f, 0.5f});
         setInt(b.node("Resize", {"x", "", "scales"}, {"y"}, "bad"), "antialias", 1);
       },
       {"antialias=1 is not supported"}},
      {"Resize negative scale",
       [](ModelBuilder& b) {
         b.floats("scales", {4}, {1, 1, -2, 2});
         b.node("Resize", {"x", "", "scales"}, {"y"}, "bad");
       },
       {"scales 'scales' must be positive and finite"}},
      {"Resize of the channels",
       [](ModelBuilder& b) {
         b.floats("scales", {4}, {1, 2, 2, 2});
         b.node("Resize", {"x", "", "scales"}, {"y"}, "bad");
       },
       {"only the spatial axes may be resized"}},
      {"Resize scales computed at run time",
       [](ModelBuilder& b) {
         b.floats("two", {4}, {1, 1, 2, 2});
         b.node("Relu", {"two"}, {"scales"}, "relu");
         b.node("Resize", {"x", "", "scales"}, {"y"}, "bad");
       },
       {"computed at run time; only constant scales"}},
      {"Resize to a size of 0",
       [](ModelBuilder& b) {
         b.int64s("sizes", {1, 4, 0, 8});
         b.node("Resize", {"x", "", "", "sizes"}, {"y"}, "bad");
       },
       {"the sizes 'sizes' hold 0; sizes are at least 1"}},
      {"Resize with neither scales nor sizes",
       [](ModelBuilder& b) { b.node("Resize", {"x"}, {"y"}, "bad"); },
       {"exactly one of scales and sizes must be given"}},
      {"Dropout in training mode",
       [](ModelBuilder& b) {
         b.floats("r", {}, {0.5f});
         onnx::TensorProto& training = *b.graph().add_initializer();
         training.set_name("t");
         training.set_data_type(onnx::TensorProto::BOOL);
         training.add_int32_data(1);
         b.node("Dropout", {"x", "r", "t"}, {"y"}, "bad");
       },
       {"input 't' has element type BOOL"}},
  };
  for (const MalformedCase& c : cases) {
    SCOPED_TRACE(c.what);
    ModelBuilder b;
    b.input("x", {-1, 4, 8, 8}).output("y");
    c.build(b);
    const std::string message = refusal(b.bytes());
    EXPECT_NE(message.find("node 'bad' ("), std::string::npos) << message;
    for (const std::string& word : c.words) EXPECT_NE(message.find(word), std::string::npos) << message;
  }
}

// More malformed attributes of the same operators, at their edges (issue 23): every one refused
// at load, naming the node and the problem, never a crash or an internal error at inference.
TEST(OnnxErrors, EdgeCasesOfTheNewOperatorsAttributesAreRefusedNamingTheNode) {
  const auto conv = [](ModelBuilder& b, const convscope::Shape& w) -> onnx::NodeProto& {
    b.weights("W", w);
    return b.node("Conv", {"x", "W"}, {"y"}, "bad");
  };
  const auto statistics = [](ModelBuilder& b) {
    for (const char* name : {"s", "B", "m", "v"}) b.floats(name, {4}, {1.0f, 1.0f, 1.0f, 1.0f});
  };
  const std::vector<MalformedCase> cases = {
      {"Conv negative group",
       [&](ModelBuilder& b) {
         setInt(conv(b, {4, 4, 3, 3}), "group", -2);
       },
       {"attribute group=-2 is invalid"}},
      {"Conv more groups than channels",
       [&](ModelBuilder& b) {
         setInt(conv(b, {8, 1, 3, 3}), "group", 8);
       },
       {"group 8 does not divide the input's 4 channels"}},
      {"Conv filters that do not split into the groups",
       [&](ModelBuilder& b) {
         setInt(conv(b, {3, 2, 3, 3}), "group", 2);
       },
       {"group 2 does not divide the input's 4 channels and the weights' 3 filters"}},
      {"Conv group beyond int",
       [&](ModelBuilder& b) {
         setInt(conv(b, {4, 4, 3, 3}), "group", int64_t{1} << 40);
       },
       {"attribute group=1099511627776 is invalid"}},
      {"BatchNormalization scale of rank 2",
       [](ModelBuilder& b) {
         b.floats("s", {2, 2}, {1.0f, 1.0f, 1.0f, 1.0f});
         for (const char* name : {"B", "m", "v"}) b.floats(name, {4}, {1.0f, 1.0f, 1.0f, 1.0f});
         b.node("BatchNormalization", {"x", "s", "B", "m", "v"}, {"y"}, "bad");
       },
       {"scale [2x2] does not match the input's 4 channels"}},
      {"BatchNormalization NaN epsilon",
       [&](ModelBuilder& b) {
         statistics(b);
         setFloat(b.node("BatchNormalization", {"x", "s", "B", "m", "v"}, {"y"}, "bad"), "epsilon", NAN);
       },
       {"epsilon must be a finite number"}},
      {"BatchNormalization with four inputs",
       [&](ModelBuilder& b) {
         statistics(b);
         b.node("BatchNormalization", {"x", "s", "B", "m"}, {"y"}, "bad");
       },
       {"takes 5 inputs, got 4"}},
      {"ReduceMean axis -5",
       [](ModelBuilder& b) { setInts(b.node("ReduceMean", {"x"}, {"y"}, "bad"), "axes", {-5}); },
       {"axis -5 is out of range for rank 4"}},
      {"ReduceMean axis beyond int64's range after wrapping",
       [](ModelBuilder& b) { setInts(b.node("ReduceMean", {"x"}, {"y"}, "bad"), "axes", {INT64_MIN}); },
       {"out of range for rank 4"}},
      {"Concat axis -5",
       [](ModelBuilder& b) {
         setInt(b.node("Concat", {"x", "x"}, {"y"}, "bad"), "axis", -5);
       },
       {"axis -5 is out of range for rank 4"}},
      {"Concat axis INT64_MIN",
       [](ModelBuilder& b) {
         setInt(b.node("Concat", {"x", "x"}, {"y"}, "bad"), "axis", INT64_MIN);
       },
       {"out of range for rank 4"}},
      {"Concat of different ranks",
       [](ModelBuilder& b) {
         b.weights("z", {4, 8});
         setInt(b.node("Concat", {"x", "z"}, {"y"}, "bad"), "axis", 1);
       },
       {"inputs [1x4x8x8] and [4x8] differ outside the concatenation axis 1"}},
      {"Resize scales and sizes both given",
       [](ModelBuilder& b) {
         b.floats("scales", {4}, {1, 1, 2, 2});
         b.int64s("sizes", {1, 4, 16, 16});
         b.node("Resize", {"x", "", "scales", "sizes"}, {"y"}, "bad");
       },
       {"exactly one of scales and sizes must be given"}},
      {"Resize scales of 3 values",
       [](ModelBuilder& b) {
         b.floats("scales", {3}, {1, 2, 2});
         b.node("Resize", {"x", "", "scales"}, {"y"}, "bad");
       },
       {"scales hold 3 values for an input of rank 4"}},
      {"Resize sizes of 5 values",
       [](ModelBuilder& b) {
         b.int64s("sizes", {1, 4, 16, 16, 1});
         b.node("Resize", {"x", "", "", "sizes"}, {"y"}, "bad");
       },
       {"sizes hold 5 values for an input of rank 4"}},
      {"Resize NaN scale",
       [](ModelBuilder& b) {
         b.floats("scales", {4}, {1, 1, NAN, 2});
         b.node("Resize", {"x", "", "scales"}, {"y"}, "bad");
       },
       {"must be positive and finite"}},
      {"Resize scale that shrinks the picture to nothing",
       [](ModelBuilder& b) {
         b.floats("scales", {4}, {1, 1, 0.01f, 0.01f});
         b.node("Resize", {"x", "", "scales"}, {"y"}, "bad");
       },
       {"the resized shape of [1x4x8x8] has an invalid dimension 0"}},
      {"Resize scale beyond any picture",
       [](ModelBuilder& b) {
         b.floats("scales", {4}, {1, 1, 1e30f, 1e30f});
         b.node("Resize", {"x", "", "scales"}, {"y"}, "bad");
       },
       {"the resized shape is absurdly large"}},
      {"Resize negative size",
       [](ModelBuilder& b) {
         b.int64s("sizes", {1, 4, -16, 16});
         b.node("Resize", {"x", "", "", "sizes"}, {"y"}, "bad");
       },
       {"the sizes 'sizes' hold -16; sizes are at least 1"}},
      {"Resize size of the channels",
       [](ModelBuilder& b) {
         b.int64s("sizes", {1, 8, 16, 16});
         b.node("Resize", {"x", "", "", "sizes"}, {"y"}, "bad");
       },
       {"only the spatial axes may be resized"}},
  };
  for (const MalformedCase& c : cases) {
    SCOPED_TRACE(c.what);
    ModelBuilder b;
    b.input("x", {-1, 4, 8, 8}).output("y");
    c.build(b);
    const std::string message = refusal(b.bytes());
    EXPECT_NE(message.find("node 'bad' ("), std::string::npos) << message;
    for (const std::string& word : c.words) EXPECT_NE(message.find(word), std::string::npos) << message;
  }
}

TEST(OnnxErrors, MaxPoolStorageOrder) {
  ModelBuilder b;
  b.input("x", {-1, 1, 8, 8}).output("y");
  onnx::NodeProto& pool = b.node("MaxPool", {"x"}, {"y"}, "pool");
  setInts(pool, "kernel_shape", {2, 2});
  setInt(pool, "storage_order", 1);
  EXPECT_TRUE(names(refusal(b.bytes()), {"node 'pool' (MaxPool)", "storage_order", "not supported"}));
}

TEST(OnnxErrors, UnknownAttributeName) {
  ModelBuilder b = convRelu();
  setFloat(*b.graph().mutable_node(0), "sharpness", 0.5f);
  EXPECT_TRUE(names(refusal(b.bytes()), {"node 'conv' (Conv)", "attribute 'sharpness' is not supported"}));

  ModelBuilder r = convRelu();
  setInt(*r.graph().mutable_node(1), "inplace", 1);
  EXPECT_TRUE(names(refusal(r.bytes()), {"node 'relu' (Relu)", "attribute 'inplace' is not supported"}));
}

TEST(OnnxErrors, AttributeOfWrongKind) {
  // kernel_shape as a single INT instead of INTS.
  ModelBuilder b;
  b.input("x", {-1, 1, 8, 8}).output("y");
  setInt(b.node("MaxPool", {"x"}, {"y"}, "pool"), "kernel_shape", 2);
  EXPECT_TRUE(names(refusal(b.bytes()), {"node 'pool' (MaxPool)", "kernel_shape"}));

  // A TENSOR attribute where none is expected.
  ModelBuilder t = convRelu();
  onnx::AttributeProto& a = *t.graph().mutable_node(1)->add_attribute();
  a.set_name("table");
  a.set_type(onnx::AttributeProto::TENSOR);
  a.mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  EXPECT_TRUE(names(refusal(t.bytes()), {"node 'relu' (Relu)", "attribute 'table'", "TENSOR"}));
}

TEST(OnnxErrors, CustomOperatorDomain) {
  ModelBuilder b = convRelu();
  b.graph().mutable_node(1)->set_domain("com.example.custom");
  b.proto().add_opset_import()->set_domain("com.example.custom");
  EXPECT_TRUE(names(refusal(b.bytes()), {"node 'relu' (Relu)", "domain 'com.example.custom'", "not supported"}));

  ModelBuilder m;
  m.input("x", {-1, 1, 8, 8}).output("y");
  m.node("FusedConv", {"x"}, {"y"}, "fused").set_domain("com.microsoft");
  EXPECT_TRUE(names(refusal(m.bytes()), {"node 'fused' (FusedConv)", "domain 'com.microsoft'", "not supported"}));
}

TEST(OnnxErrors, SecondOutputOfAnOperator) {
  ModelBuilder b;
  b.input("x", {-1, 1, 8, 8}).output("y");
  setInts(b.node("MaxPool", {"x"}, {"y", "indices"}, "pool"), "kernel_shape", {2, 2});
  EXPECT_TRUE(names(refusal(b.bytes()), {"node 'pool' (MaxPool)", "2 outputs"}));
}

// ---------------------------------------------------------------------------------------------
// Tensors that cannot be read.

TEST(OnnxErrors, ExternalData) {
  ModelBuilder b = convRelu();
  onnx::TensorProto& w = *b.graph().mutable_initializer(0);
  w.clear_raw_data();
  w.set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* location = w.add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  EXPECT_TRUE(names(refusal(b.bytes()), {"initializer 'W'", "external data"}));

  // The external_data entries alone (data_location left DEFAULT) mean the same.
  ModelBuilder e = convRelu();
  onnx::TensorProto& w2 = *e.graph().mutable_initializer(0);
  w2.clear_raw_data();
  onnx::StringStringEntryProto* loc2 = w2.add_external_data();
  loc2->set_key("location");
  loc2->set_value("weights.bin");
  EXPECT_TRUE(names(refusal(e.bytes()), {"initializer 'W'", "external data"}));
}

TEST(OnnxErrors, MissingInitializer) {
  ModelBuilder b;
  b.input("x", {-1, 1, 8, 8}).output("y");
  b.node("Conv", {"x", "conv1.weight"}, {"y"}, "conv1");
  EXPECT_TRUE(names(refusal(b.bytes()), {"node 'conv1' (Conv)", "input 'conv1.weight'", "missing initializer"}));
}

TEST(OnnxErrors, NodesOutOfOrder) {
  ModelBuilder b;
  b.input("x", {-1, 4}).output("y");
  b.node("Relu", {"h"}, {"y"}, "second");
  b.node("Relu", {"x"}, {"h"}, "first");
  EXPECT_TRUE(names(refusal(b.bytes()), {"node 'second' (Relu)", "input 'h'", "out of order"}));
}

TEST(OnnxErrors, GraphOutputNotProduced) {
  ModelBuilder b = convRelu();
  b.output("logits");
  EXPECT_TRUE(names(refusal(b.bytes()), {"graph output 'logits'", "not produced"}));
}

TEST(OnnxErrors, InitializerLengthDoesNotMatchDims) {
  ModelBuilder b = convRelu();
  onnx::TensorProto& w = *b.graph().mutable_initializer(0);
  w.set_raw_data(w.raw_data().substr(0, 35 * 4));  // 35 floats for a 4x1x3x3 (36) tensor
  EXPECT_TRUE(names(refusal(b.bytes()), {"initializer 'W'", "[4x1x3x3]", "140 bytes instead of 144"}));

  ModelBuilder f = convRelu();
  onnx::TensorProto& w2 = *f.graph().mutable_initializer(0);
  w2.clear_raw_data();
  for (int i = 0; i < 37; ++i) w2.add_float_data(0.5f);
  EXPECT_TRUE(names(refusal(f.bytes()), {"initializer 'W'", "37 values instead of 36"}));

  // An int64 shape constant with the wrong length.
  ModelBuilder r;
  r.input("x", {-1, 1, 8, 8}).output("y");
  r.int64s("target", {-1, 64}).add_dims(7);  // dims [2, 7] for 2 values
  r.node("Reshape", {"x", "target"}, {"y"}, "flat");
  EXPECT_TRUE(names(refusal(r.bytes()), {"initializer 'target'", "2 values instead of 14"}));
}

TEST(OnnxErrors, AbsurdDims) {
  // 2^80 elements: the count overflows; nothing may be allocated.
  ModelBuilder b = convRelu();
  onnx::TensorProto& w = *b.graph().mutable_initializer(0);
  w.clear_dims();
  w.add_dims(int64_t{1} << 40);
  w.add_dims(int64_t{1} << 40);
  EXPECT_TRUE(names(refusal(b.bytes()), {"initializer 'W'", "too large"}));

  // 2^40 elements: representable, but far beyond any weight tensor (and the data holds 36 values);
  // refused before allocating 4 TiB.
  ModelBuilder big = convRelu();
  onnx::TensorProto& w2 = *big.graph().mutable_initializer(0);
  w2.clear_dims();
  w2.add_dims(int64_t{1} << 40);
  EXPECT_TRUE(names(refusal(big.bytes()), {"initializer 'W'", "[1099511627776]"}));

  // A negative dimension.
  ModelBuilder neg = convRelu();
  onnx::TensorProto& w3 = *neg.graph().mutable_initializer(0);
  w3.set_dims(0, -4);
  EXPECT_TRUE(names(refusal(neg.bytes()), {"initializer 'W'", "negative dimension"}));
}

// ---------------------------------------------------------------------------------------------
// Types and operator sets.

TEST(OnnxErrors, NonFloatInput) {
  for (int type :
       {onnx::TensorProto::INT32, onnx::TensorProto::UINT8, onnx::TensorProto::DOUBLE, onnx::TensorProto::FLOAT16}) {
    ModelBuilder b = convRelu();
    b.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(type);
    const std::string typeName = onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(type));
    EXPECT_TRUE(names(refusal(b.bytes()), {"input 'x'", "element type " + typeName, "float32"}));
  }
}

TEST(OnnxErrors, NonFloatInitializer) {
  ModelBuilder b = convRelu();
  onnx::TensorProto& w = *b.graph().mutable_initializer(0);
  w.set_data_type(onnx::TensorProto::DOUBLE);
  w.set_raw_data(std::string(36 * 8, '\0'));
  EXPECT_TRUE(names(refusal(b.bytes()), {"node 'conv' (Conv)", "input 'W'", "element type DOUBLE", "float32"}));
}

TEST(OnnxErrors, Int64ConstantUsedAsData) {
  ModelBuilder b;
  b.input("x", {-1, 2}).output("y");
  b.int64s("offset", {1, 2});
  b.node("Add", {"x", "offset"}, {"y"}, "shift");
  EXPECT_TRUE(names(refusal(b.bytes()), {"node 'shift' (Add)", "int64 input 'offset'", "float32"}));
}

TEST(OnnxErrors, UnnamedInitializer) {
  ModelBuilder b = convRelu();
  b.weights("", {4});
  EXPECT_TRUE(names(refusal(b.bytes()), {"an initializer has no name"}));
}

TEST(OnnxErrors, ConstantWithUnsupportedValue) {
  ModelBuilder b;
  b.input("x", {-1, 2}).output("y");
  onnx::AttributeProto& a = *b.node("Constant", {}, {"c"}, "label").add_attribute();
  a.set_name("value_string");
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s("seven");
  b.node("Add", {"x", "c"}, {"y"}, "add");
  EXPECT_TRUE(names(refusal(b.bytes()), {"node 'label' (Constant)", "attribute 'value_string' is not supported"}));
}

TEST(OnnxErrors, OpsetOutsideSupportedRange) {
  for (int version : {3, 6, 23, 99}) {
    ModelBuilder b = convRelu();
    b.proto().mutable_opset_import(0)->set_version(version);
    EXPECT_TRUE(names(refusal(b.bytes()), {"opset " + std::to_string(version) + " is not supported", "7 to 22"}));
  }
  // The edges of the range load.
  for (int version : {7, 22}) {
    ModelBuilder b = convRelu();
    b.proto().mutable_opset_import(0)->set_version(version);
    EXPECT_NO_THROW(b.load()) << "opset " << version;
  }
}

TEST(OnnxErrors, NoOpsetImport) {
  ModelBuilder b = convRelu();
  b.proto().clear_opset_import();
  EXPECT_TRUE(names(refusal(b.bytes()), {"no ONNX operator set is imported"}));

  // Only a custom domain imported: no standard opset either.
  ModelBuilder c = convRelu();
  c.proto().mutable_opset_import(0)->set_domain("com.example");
  EXPECT_TRUE(names(refusal(c.bytes()), {"no ONNX operator set is imported"}));
}

TEST(OnnxErrors, NoGraph) {
  ModelBuilder b;
  b.proto().clear_graph();
  EXPECT_TRUE(names(refusal(b.bytes()), {"holds no graph"}));
}

// ---------------------------------------------------------------------------------------------
// Shapes that do not fit together: refused when the model loads, naming the node.

TEST(OnnxErrors, ConvWeightsChannelsMismatch) {
  ModelBuilder b = convRelu();
  onnx::TensorProto& w = *b.graph().mutable_initializer(0);
  std::vector<float> values(4 * 3 * 3 * 3, 0.1f);
  w.set_dims(1, 3);
  w.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  EXPECT_TRUE(names(refusal(b.bytes()), {"node 'conv' (Conv)", "3 input channels", "has 1"}));
}

TEST(OnnxErrors, ConvBiasMismatch) {
  ModelBuilder b = convRelu();
  b.graph().mutable_initializer(1)->set_dims(0, 2);
  b.graph().mutable_initializer(1)->set_raw_data(std::string(8, '\0'));
  EXPECT_TRUE(names(refusal(b.bytes()), {"node 'conv' (Conv)", "bias [2]", "4 output channels"}));
}

TEST(OnnxErrors, ConvKernelLargerThanInput) {
  ModelBuilder b;
  b.input("x", {-1, 1, 8, 8}).output("y");
  b.weights("W", {2, 1, 9, 9});
  b.node("Conv", {"x", "W"}, {"y"}, "huge");
  EXPECT_TRUE(names(refusal(b.bytes()), {"node 'huge' (Conv)", "larger than the padded input"}));
}

TEST(OnnxErrors, ConvOnNon4dInput) {
  ModelBuilder b;
  b.input("x", {-1, 1, 8}).output("y");
  b.weights("W", {2, 1, 3});
  b.node("Conv", {"x", "W"}, {"y"}, "conv1d");
  EXPECT_TRUE(names(refusal(b.bytes()), {"node 'conv1d' (Conv)", "only 2-D convolution"}));
}

TEST(OnnxErrors, GemmInnerDimensionsMismatch) {
  EXPECT_NO_THROW(gemmModel(10).load());
  EXPECT_TRUE(names(refusal(gemmModel(12).bytes()), {"node 'fc' (Gemm)", "inner dimensions 10 and 12"}));
}

TEST(OnnxErrors, MatMulInnerDimensionsMismatch) {
  ModelBuilder b;
  b.input("x", {-1, 10}).output("y");
  b.weights("W", {9, 5});
  b.node("MatMul", {"x", "W"}, {"y"}, "mm");
  EXPECT_TRUE(names(refusal(b.bytes()), {"node 'mm' (MatMul)", "inner dimensions 10 and 9"}));
}

TEST(OnnxErrors, AddShapesDoNotBroadcast) {
  ModelBuilder b;
  b.input("x", {-1, 10}).output("y");
  b.weights("bias", {7});
  b.node("Add", {"x", "bias"}, {"y"}, "add");
  EXPECT_TRUE(names(refusal(b.bytes()), {"node 'add' (Add)", "cannot be broadcast"}));
}

TEST(OnnxErrors, ReshapeToIncompatibleConstantShape) {
  ModelBuilder b;
  b.input("x", {-1, 1, 8, 8}).output("y");
  b.int64s("target", {3, 5});
  b.node("Reshape", {"x", "target"}, {"y"}, "reshape");
  EXPECT_TRUE(names(refusal(b.bytes()), {"node 'reshape' (Reshape)", "64 elements", "(3,5)"}));

  ModelBuilder twice;
  twice.input("x", {-1, 1, 8, 8}).output("y");
  twice.int64s("target", {-1, -1});
  twice.node("Reshape", {"x", "target"}, {"y"}, "reshape");
  EXPECT_TRUE(names(refusal(twice.bytes()), {"node 'reshape' (Reshape)", "more than one -1"}));
}

TEST(OnnxErrors, ReshapeToRuntimeShape) {
  ModelBuilder b;
  b.input("x", {-1, 1, 8, 8}).input("shape", {2}, onnx::TensorProto::INT64).output("y");
  b.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  // The shape arrives as a runtime int64 tensor: refused as a non-float input.
  EXPECT_TRUE(names(refusal(b.bytes()), {"input 'shape'", "element type INT64", "float32"}));
}

TEST(OnnxErrors, AxisOutOfRange) {
  ModelBuilder s;
  s.input("x", {-1, 10}).output("y");
  setInt(s.node("Softmax", {"x"}, {"y"}, "softmax"), "axis", 2);
  EXPECT_TRUE(names(refusal(s.bytes()), {"node 'softmax' (Softmax)", "axis 2 is out of range for rank 2"}));

  ModelBuilder f;
  f.input("x", {-1, 1, 8, 8}).output("y");
  setInt(f.node("Flatten", {"x"}, {"y"}, "flatten"), "axis", -5);
  EXPECT_TRUE(names(refusal(f.bytes()), {"node 'flatten' (Flatten)", "axis -5 is out of range for rank 4"}));
}

TEST(OnnxErrors, WrongInputCount) {
  ModelBuilder b;
  b.input("x", {-1, 4}).output("y");
  b.node("Relu", {"x", "x"}, {"y"}, "relu2");
  EXPECT_TRUE(names(refusal(b.bytes()), {"node 'relu2' (Relu)", "takes 1 inputs, got 2"}));
}

// ---------------------------------------------------------------------------------------------
// Window attributes whose values do not fit the engine's int geometry (ONNX stores them as
// int64). Each must be refused naming the attribute -- not narrowed to another value, and not
// crash. They run in a child process (a death test) so that a crash fails only this test.

struct WindowCase {
  const char* op;
  const char* attribute;
  std::vector<int64_t> values;
};

std::string windowModel(const WindowCase& c) {
  ModelBuilder b;
  b.input("x", {-1, 1, 8, 8}).output("y");
  onnx::NodeProto& node = b.node(c.op, {"x"}, {"y"}, "window");
  if (std::string(c.op) == "Conv") {
    b.weights("W", {2, 1, 2, 2});
    node.add_input("W");
  } else if (std::string(c.attribute) != "kernel_shape") {
    setInts(node, "kernel_shape", {2, 2});
  }
  setInts(node, c.attribute, c.values);
  return b.bytes();
}

// Loads and exits 0 on convscope::Error (printing its message), 1 if the model loads, 2 on any
// other exception, 3 when the message contains `forbidden`; a crash ends the child with a signal.
[[noreturn]] void loadAndExit(const std::string& bytes, const std::string& forbidden = "") {
  try {
    convscope::loadOnnxModelFromBytes(bytes, kSource);
  } catch (const convscope::Error& e) {
    std::fprintf(stderr, "refused: %s\n", e.what());
    std::_Exit(!forbidden.empty() && std::string(e.what()).find(forbidden) != std::string::npos ? 3 : 0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "threw %s: %s\n", typeid(e).name(), e.what());
    std::_Exit(2);
  }
  std::fprintf(stderr, "the model loaded\n");
  std::_Exit(1);
}

void expectRefusedNamingAttribute(const std::vector<WindowCase>& cases) {
  for (const WindowCase& c : cases) {
    std::string values;
    for (int64_t v : c.values) {
      if (!values.empty()) values += ',';
      values += std::to_string(v);
    }
    SCOPED_TRACE(std::string(c.op) + " " + c.attribute + " [" + values + "]");
    const std::string bytes = windowModel(c);
    EXPECT_EXIT(loadAndExit(bytes), ::testing::ExitedWithCode(0),
                std::string("refused: built\\.onnx: node 'window' \\(") + c.op + "\\): .*" + c.attribute);
  }
}

TEST(OnnxErrorsDeathTest, StridesThatNarrowToZero) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const int64_t two32 = int64_t{1} << 32;
  // 2^32 is a positive int64 but 0 as an int: the window geometry must not divide by it.
  expectRefusedNamingAttribute({
      {"MaxPool", "strides", {two32, two32}},
      {"AveragePool", "strides", {1, two32}},
      {"Conv", "strides", {two32, 1}},
  });
}

TEST(OnnxErrorsDeathTest, WindowValuesBeyondIntRange) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const int64_t two32 = int64_t{1} << 32;
  expectRefusedNamingAttribute({
      {"MaxPool", "strides", {two32 + 1, 1}},               // narrows to stride 1
      {"MaxPool", "kernel_shape", {two32 + 2, 2}},          // narrows to a 2x2 window
      {"MaxPool", "kernel_shape", {int64_t{1} << 31, 2}},   // narrows to a negative size
      {"MaxPool", "pads", {two32, 0, 0, 0}},                // narrows to pad 0
      {"Conv", "pads", {two32 - 1, 0, 0, 0}},               // narrows to pad -1
      {"MaxPool", "pads", {2000000000, 0, 2000000000, 0}},  // the padded height overflows int
  });
}

// Dims whose byte count overflows int64: the length check must not wrap around, and no vector of
// 2^62 values may be requested.
TEST(OnnxErrorsDeathTest, InitializerByteCountOverflow) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const int64_t wrapping = (int64_t{1} << 62) + 1;

  // FLOAT: (2^62 + 1) * 4 bytes wraps around to 4, the length of the data given.
  ModelBuilder f = convRelu();
  onnx::TensorProto& w = *f.graph().mutable_initializer(0);
  w.clear_dims();
  w.add_dims(wrapping);
  w.set_raw_data(std::string(4, '\0'));
  const std::string floatBytes = f.bytes();
  EXPECT_EXIT(loadAndExit(floatBytes), ::testing::ExitedWithCode(0), "refused: built\\.onnx: initializer 'W'");

  // INT64 (a Reshape target): (2^62 + 1) * 8 bytes wraps around to 8.
  ModelBuilder r;
  r.input("x", {-1, 1, 8, 8}).output("y");
  onnx::TensorProto& target = r.int64s("target", {});
  target.clear_dims();
  target.add_dims(wrapping);
  target.set_raw_data(std::string(8, '\0'));
  r.node("Reshape", {"x", "target"}, {"y"}, "reshape");
  const std::string intBytes = r.bytes();
  EXPECT_EXIT(loadAndExit(intBytes), ::testing::ExitedWithCode(0), "refused: built\\.onnx: initializer 'target'");

  // 2^61 floats: 2^63 bytes is not representable; the message must not give a negative count.
  ModelBuilder e = convRelu();
  onnx::TensorProto& w2 = *e.graph().mutable_initializer(0);
  w2.clear_dims();
  w2.add_dims(int64_t{1} << 61);
  w2.set_raw_data(std::string(8, '\0'));
  const std::string edgeBytes = e.bytes();
  EXPECT_EXIT(loadAndExit(edgeBytes, "instead of -"), ::testing::ExitedWithCode(0),
              "refused: built\\.onnx: initializer 'W'");
}

// A constant Reshape target whose product overflows int64 must be refused for what it is, not
// compared with the input's size after wrapping around.
TEST(OnnxErrorsDeathTest, ReshapeTargetProductOverflows) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const int64_t two32 = int64_t{1} << 32;
  for (const std::vector<int64_t>& target : {std::vector<int64_t>{2 * two32, two32 / 2}, {-1, two32, two32}}) {
    ModelBuilder b;
    b.input("x", {-1, 1, 8, 8}).output("y");
    b.int64s("target", target);
    b.node("Reshape", {"x", "target"}, {"y"}, "reshape");
    const std::string bytes = b.bytes();
    SCOPED_TRACE("target " + std::to_string(target[0]) + ", " + std::to_string(target[1]));
    EXPECT_EXIT(loadAndExit(bytes, "holds 0"), ::testing::ExitedWithCode(0),
                "refused: built\\.onnx: node 'reshape' \\(Reshape\\)");
  }
}

// ---------------------------------------------------------------------------------------------
// Running with inputs of the wrong shape.

TEST(OnnxErrors, EvaluateWithWrongInputShape) {
  const auto model = convRelu().load();
  convscope::Engine engine(model, "cpu-reference");
  for (const Shape& shape : {Shape{2, 1, 7, 8}, Shape{2, 3, 8, 8}, Shape{1, 8, 8}, Shape{1, 1, 8, 8, 1}}) {
    SCOPED_TRACE(convscope::shapeToString(shape));
    try {
      engine.evaluate({{"x", Tensor(shape)}});
      ADD_FAILURE() << "an input of shape " << convscope::shapeToString(shape) << " was accepted";
    } catch (const convscope::Error& e) {
      EXPECT_TRUE(names(e.what(), {"input 'x' must have shape [-1x1x8x8]", convscope::shapeToString(shape)}));
    }
  }
  try {
    engine.evaluate({{"image", Tensor({1, 1, 8, 8})}});
    ADD_FAILURE() << "evaluate without the input 'x' succeeded";
  } catch (const convscope::Error& e) {
    EXPECT_TRUE(names(e.what(), {"no value given for input 'x'"}));
  }
  // The engine still works after the errors.
  EXPECT_EQ(engine.evaluate({{"x", Tensor({3, 1, 8, 8})}}).at("y").shape(), (Shape{3, 4, 6, 6}));
}

TEST(OnnxErrors, EvaluateWithBatchBakedIntoReshape) {
  // Loads (the free batch is 1 when the model loads) but cannot reshape two images to [1, 64].
  ModelBuilder b;
  b.input("x", {-1, 1, 8, 8}).output("y");
  b.int64s("target", {1, 64});
  b.node("Reshape", {"x", "target"}, {"y"}, "reshape");
  convscope::Engine engine(b.load(), "cpu-reference");
  try {
    engine.evaluate({{"x", Tensor({2, 1, 8, 8})}});
    ADD_FAILURE() << "two images were reshaped to [1, 64]";
  } catch (const convscope::Error& e) {
    EXPECT_TRUE(names(e.what(), {"node 'reshape' (Reshape)", "128 elements", "(1,64)"}));
  }
  EXPECT_EQ(engine.evaluate({{"x", Tensor({1, 1, 8, 8})}}).at("y").shape(), (Shape{1, 64}));
}

TEST(OnnxErrors, InferWithWrongImageSize) {
  const auto model = convscope::loadOnnxModel(kShippedModel);
  const int height = model->inputHeight();
  const int width = model->inputWidth();
  convscope::Engine engine(model, "cpu-reference");
  for (const Shape& shape : {Shape{1, 1, height + 1, width}, Shape{1, 1, height, width - 1}, Shape{2, 3, height, width},
                             Shape{1, height, width}}) {
    SCOPED_TRACE(convscope::shapeToString(shape));
    try {
      engine.infer(Tensor(shape));
      ADD_FAILURE() << "images of shape " << convscope::shapeToString(shape) << " were accepted";
    } catch (const convscope::Error& e) {
      EXPECT_TRUE(names(e.what(), kShippedModel.string(), {"must have shape", convscope::shapeToString(shape)}));
    }
  }
  const convscope::InferenceResult ok = engine.infer(Tensor({2, 1, height, width}, 0.5f));
  EXPECT_EQ(ok.probabilities.dim(0), 2);
}

TEST(OnnxErrors, InferOnModelThatIsNoClassifier) {
  // Conv + Relu gives N x 4 x 6 x 6, not one row of class scores per image.
  convscope::Engine engine(convRelu().load(), "cpu-reference");
  try {
    engine.infer(Tensor({1, 1, 8, 8}));
    ADD_FAILURE() << "infer on a model without class scores succeeded";
  } catch (const convscope::Error& e) {
    EXPECT_TRUE(names(e.what(), {"one row of class scores per image"}));
  }
}

}  // namespace
