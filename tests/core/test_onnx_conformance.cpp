// ONNX operator conformance: runs the node test cases that ONNX itself ships (Debian package
// libonnx-testdata) for every operator ConvScope implements, and checks each one either loads
// and reproduces the expected outputs, or is refused at load time for a reason listed below.
//
// A case folder holds model.onnx and test_data_set_0/{input_K,output_K}.pb, serialized
// onnx::TensorProto; input_K is the K-th graph input that is not an initializer, output_K the
// K-th graph output.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "app/core/engine/engine.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/error.h"
#include "app/core/util/tensor.h"

namespace fs = std::filesystem;

namespace {

const fs::path kNodeTestsDir = CONVSCOPE_ONNX_NODE_TESTS_DIR;

// libonnx-testdata 1.12 (Debian bookworm/trixie) holds 161 cases for the operators below; newer
// ONNX releases hold more. The floor only guards against a test that passes on nothing (an empty
// or partial installation).
constexpr size_t kMinimumCases = 150;

// The operators ConvScope runs, as they name the case folders: test_<op> or test_<op>_*.
const std::vector<std::string> kOperatorPrefixes = {
    "conv",
    "basic_conv",
    "maxpool",
    "averagepool",
    "relu",
    "tanh",
    "sigmoid",
    "hardswish",
    "clip",
    "gemm",
    "matmul",
    "softmax",
    "flatten",
    "reshape",
    "identity",
    "constant",
    "add",
    // The operators of students' CNNs (issue 12). Libonnx-testdata 1.12 has no Gelu case (Gelu
    // came with opset 20); test_onnx_ops.cpp checks it against its definition.
    "batchnorm",
    "leakyrelu",
    "elu",
    "erf",
    "globalaveragepool",
    "reduce_mean",
    "concat",
    "resize",
    "upsample",
    "dropout",
    "mul",
    "div",
    "pow",
    "sub",
};

// Folders whose names share a prefix above but test another operator.
bool testsAnotherOperator(const std::string& name) {
  for (const char* other : {"convinteger", "convtranspose", "constantofshape", "constant_pad", "matmulinteger"})
    if (name.find(other) != std::string::npos) return true;
  // HardSwish expanded into HardSigmoid and Mul: HardSigmoid is not an operator ConvScope runs.
  if (name == "test_hardswish_expanded") return true;
  // Softmax expanded into ReduceMax, Exp, ReduceSum, Div: those operators, not Softmax, are tested.
  return name.rfind("test_softmax", 0) == 0 && name.find("_expanded") != std::string::npos;
}

bool isConvCase(const std::string& name) {
  return name.rfind("test_conv", 0) == 0 || name.rfind("test_basic_conv", 0) == 0;
}

// The cases ConvScope refuses by design: each must fail to load with a convscope::Error whose
// message contains `mustContain`. Every case not listed must load and match its outputs.
struct Refusal {
  const char* mustContain;
  const char* reason;
};

const std::map<std::string, Refusal>& refusalTable() {
  static const std::map<std::string, Refusal> table = {
      {"test_maxpool_2d_uint8", {"has element type UINT8", "uint8 inputs: ConvScope runs float32 tensors only"}},
      {"test_averagepool_1d_default",
       {"is not 2-D; only 2-D windows", "1-D pooling: only 2-D windows are implemented"}},
      {"test_maxpool_1d_default", {"is not 2-D; only 2-D windows", "1-D pooling: only 2-D windows are implemented"}},
      {"test_averagepool_3d_default",
       {"is not 2-D; only 2-D windows", "3-D pooling: only 2-D windows are implemented"}},
      {"test_maxpool_3d_default", {"is not 2-D; only 2-D windows", "3-D pooling: only 2-D windows are implemented"}},
      {"test_maxpool_2d_dilations",
       {"attribute dilations [2,2] is not supported", "dilated windows: only dilation 1 is implemented"}},
      {"test_maxpool_with_argmax_2d_precomputed_pads",
       {"only the first output of MaxPool", "MaxPool's second output (argmax indices, int64) is not implemented"}},
      {"test_maxpool_with_argmax_2d_precomputed_strides",
       {"only the first output of MaxPool", "MaxPool's second output (argmax indices, int64) is not implemented"}},
      {"test_add_uint8", {"has element type UINT8", "uint8 inputs: ConvScope runs float32 tensors only"}},
      {"test_sub_uint8", {"has element type UINT8", "uint8 inputs: ConvScope runs float32 tensors only"}},
      {"test_mul_uint8", {"has element type UINT8", "uint8 inputs: ConvScope runs float32 tensors only"}},
      {"test_div_uint8", {"has element type UINT8", "uint8 inputs: ConvScope runs float32 tensors only"}},
      {"test_clip_default_int8_inbounds",
       {"has element type INT8", "int8 inputs: ConvScope runs float32 tensors only"}},
      {"test_clip_default_int8_max", {"has element type INT8", "int8 inputs: ConvScope runs float32 tensors only"}},
      {"test_clip_default_int8_min", {"has element type INT8", "int8 inputs: ConvScope runs float32 tensors only"}},
      {"test_batchnorm_epsilon_training_mode",
       {"only the first output of BatchNormalization", "training mode (running mean and variance outputs)"}},
      {"test_batchnorm_example_training_mode",
       {"only the first output of BatchNormalization", "training mode (running mean and variance outputs)"}},
      {"test_dropout_default_mask", {"only the first output of Dropout", "Dropout's mask output (bool)"}},
      {"test_dropout_default_mask_ratio", {"only the first output of Dropout", "Dropout's mask output (bool)"}},
      {"test_resize_downsample_scales_cubic", {"mode cubic is not supported", "bicubic interpolation"}},
      {"test_resize_downsample_scales_cubic_A_n0p5_exclude_outside",
       {"mode cubic is not supported", "bicubic interpolation"}},
      {"test_resize_downsample_scales_cubic_align_corners", {"mode cubic is not supported", "bicubic interpolation"}},
      {"test_resize_downsample_sizes_cubic", {"mode cubic is not supported", "bicubic interpolation"}},
      {"test_resize_upsample_scales_cubic", {"mode cubic is not supported", "bicubic interpolation"}},
      {"test_resize_upsample_scales_cubic_A_n0p5_exclude_outside",
       {"mode cubic is not supported", "bicubic interpolation"}},
      {"test_resize_upsample_scales_cubic_align_corners", {"mode cubic is not supported", "bicubic interpolation"}},
      {"test_resize_upsample_scales_cubic_asymmetric", {"mode cubic is not supported", "bicubic interpolation"}},
      {"test_resize_upsample_sizes_cubic", {"mode cubic is not supported", "bicubic interpolation"}},
      {"test_resize_tf_crop_and_resize",
       {"coordinate_transformation_mode 'tf_crop_and_resize' is not supported", "crop and resize (TensorFlow's)"}},
      {"test_pow_types_float", {"int64 input 'x'", "int64 operands: ConvScope runs float32 tensors only"}},
      {"test_pow_types_float32_int64", {"int64 input 'y'", "int64 operands: ConvScope runs float32 tensors only"}},
      {"test_pow_types_int", {"int64 input 'y'", "int64 operands: ConvScope runs float32 tensors only"}},
      {"test_pow_types_int64_float32", {"int64 input 'x'", "int64 operands: ConvScope runs float32 tensors only"}},
      {"test_pow_types_int64_int64", {"int64 input 'x'", "int64 operands: ConvScope runs float32 tensors only"}},
      {"test_pow_types_float32_int32",
       {"has element type INT32", "integer operands: ConvScope runs float32 tensors only"}},
      {"test_pow_types_float32_uint32",
       {"has element type UINT32", "integer operands: ConvScope runs float32 tensors only"}},
      {"test_pow_types_float32_uint64",
       {"has element type UINT64", "integer operands: ConvScope runs float32 tensors only"}},
      {"test_pow_types_int32_float32",
       {"has element type INT32", "integer operands: ConvScope runs float32 tensors only"}},
      {"test_pow_types_int32_int32",
       {"has element type INT32", "integer operands: ConvScope runs float32 tensors only"}},
      {"test_identity_opt", {"is not a tensor", "the input is an optional, not a tensor"}},
      {"test_identity_sequence", {"is not a tensor", "the input is a sequence, not a tensor"}},
  };
  return table;
}

std::vector<std::string> discoverCases() {
  std::vector<std::string> cases;
  std::error_code ec;
  if (!fs::is_directory(kNodeTestsDir, ec)) return cases;
  for (const fs::directory_entry& entry : fs::directory_iterator(kNodeTestsDir, ec)) {
    if (!entry.is_directory()) continue;
    const std::string name = entry.path().filename().string();
    if (testsAnotherOperator(name)) continue;
    for (const std::string& op : kOperatorPrefixes) {
      const std::string stem = "test_" + op;
      if (name == stem || name.rfind(stem + "_", 0) == 0) {
        cases.push_back(name);
        break;
      }
    }
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

const std::vector<std::string>& allCases() {
  static const std::vector<std::string> cases = discoverCases();
  return cases;
}

std::vector<std::string> convCases() {
  std::vector<std::string> cases;
  for (const std::string& name : allCases())
    if (isConvCase(name)) cases.push_back(name);
  return cases;
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

onnx::TensorProto readTensorProto(const fs::path& path) {
  onnx::TensorProto tensor;
  if (!tensor.ParseFromString(readFile(path))) throw std::runtime_error("cannot parse " + path.string());
  return tensor;
}

std::string typeName(int type) {
  return onnx::TensorProto_DataType_IsValid(type)
             ? onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(type))
             : "type " + std::to_string(type);
}

// A FLOAT TensorProto as a convscope::Tensor; throws std::runtime_error for anything else.
convscope::Tensor toTensor(const onnx::TensorProto& proto) {
  if (proto.data_type() != onnx::TensorProto::FLOAT)
    throw std::runtime_error("tensor '" + proto.name() + "' has element type " + typeName(proto.data_type()) +
                             ", not FLOAT");
  const convscope::Shape shape(proto.dims().begin(), proto.dims().end());
  const int64_t count = convscope::elementCount(shape);
  std::vector<float> values(static_cast<size_t>(count));
  if (!proto.raw_data().empty()) {
    if (proto.raw_data().size() != values.size() * sizeof(float))
      throw std::runtime_error("tensor '" + proto.name() + "' raw data has the wrong length");
    std::memcpy(values.data(), proto.raw_data().data(), proto.raw_data().size());
  } else {
    if (proto.float_data_size() != count)
      throw std::runtime_error("tensor '" + proto.name() + "' float data has the wrong length");
    std::copy(proto.float_data().begin(), proto.float_data().end(), values.begin());
  }
  return convscope::Tensor(shape, std::move(values));
}

size_t countFiles(const fs::path& dir, const std::string& prefix) {
  size_t n = 0;
  while (fs::exists(dir / (prefix + std::to_string(n) + ".pb"))) ++n;
  return n;
}

// One case, ready to load: the model bytes (with int64 inputs folded in) and the runtime inputs.
struct PreparedCase {
  std::string modelBytes;
  std::map<std::string, convscope::Tensor> inputs;
  std::vector<std::string> inputProblems;  // inputs that cannot be fed to a float32 engine
  std::vector<std::string> outputNames;
  std::vector<onnx::TensorProto> expected;
};

PreparedCase prepare(const std::string& caseName) {
  const fs::path dir = kNodeTestsDir / caseName;
  const fs::path data = dir / "test_data_set_0";
  onnx::ModelProto model;
  if (!model.ParseFromString(readFile(dir / "model.onnx")))
    throw std::runtime_error("cannot parse " + (dir / "model.onnx").string());
  onnx::GraphProto& graph = *model.mutable_graph();

  // Elu (version 6) and GlobalAveragePool (version 1) have not changed since; ONNX ships their
  // cases importing those opsets, older than any ConvScope reads (7 to 22). The import is raised
  // to 13 (PyTorch's oldest): the operator definition that runs is the same one.
  for (onnx::OperatorSetIdProto& id : *model.mutable_opset_import())
    if ((id.domain().empty() || id.domain() == "ai.onnx") && id.version() < 7 &&
        (caseName.rfind("test_elu", 0) == 0 || caseName.rfind("test_globalaveragepool", 0) == 0))
      id.set_version(13);

  // Resize's and Upsample's scales (and roi) are constants in exported models, as ConvScope
  // requires; the cases feed them as runtime inputs, so they are folded like the int64 inputs.
  std::set<std::string> scaleInputs;
  for (const onnx::NodeProto& node : graph.node())
    if (node.op_type() == "Resize" || node.op_type() == "Upsample")
      for (int k = 1; k < node.input_size(); ++k) scaleInputs.insert(node.input(k));

  PreparedCase prepared;
  std::set<std::string> initializers;
  for (const onnx::TensorProto& t : graph.initializer()) initializers.insert(t.name());
  std::vector<const onnx::ValueInfoProto*> runtimeInputs;
  for (const onnx::ValueInfoProto& input : graph.input())
    if (!initializers.count(input.name())) runtimeInputs.push_back(&input);
  for (const onnx::ValueInfoProto& output : graph.output()) prepared.outputNames.push_back(output.name());

  const size_t inputFiles = countFiles(data, "input_");
  if (inputFiles != runtimeInputs.size())
    throw std::runtime_error(std::to_string(inputFiles) + " input files for " + std::to_string(runtimeInputs.size()) +
                             " runtime graph inputs");

  // ConvScope's engine is float32 only and takes Reshape's target shape as a load-time constant,
  // as PyTorch exports it. The ONNX cases feed that shape as a runtime INT64 input, so each INT64
  // input is injected into the model as an initializer of the same name (and removed from the
  // graph's runtime inputs) before the model is serialized and loaded.
  std::set<std::string> folded;
  for (size_t k = 0; k < runtimeInputs.size(); ++k) {
    const onnx::ValueInfoProto& info = *runtimeInputs[k];
    if (!info.type().has_tensor_type()) {
      // Sequences and optionals: no TensorProto to read. The loader must refuse the model.
      prepared.inputProblems.push_back("input '" + info.name() + "' is not a tensor");
      continue;
    }
    onnx::TensorProto tensor = readTensorProto(data / ("input_" + std::to_string(k) + ".pb"));
    if (tensor.data_type() == onnx::TensorProto::INT64 ||
        (tensor.data_type() == onnx::TensorProto::FLOAT && scaleInputs.count(info.name()))) {
      tensor.set_name(info.name());
      *graph.add_initializer() = tensor;
      folded.insert(info.name());
    } else if (tensor.data_type() == onnx::TensorProto::FLOAT) {
      prepared.inputs[info.name()] = toTensor(tensor);
    } else {
      prepared.inputProblems.push_back("input '" + info.name() + "' has element type " + typeName(tensor.data_type()));
    }
  }
  if (!folded.empty()) {
    google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
    for (const onnx::ValueInfoProto& input : graph.input())
      if (!folded.count(input.name())) *kept.Add() = input;
    graph.mutable_input()->Swap(&kept);
  }

  const size_t outputFiles = countFiles(data, "output_");
  if (outputFiles != prepared.outputNames.size())
    throw std::runtime_error(std::to_string(outputFiles) + " output files for " +
                             std::to_string(prepared.outputNames.size()) + " graph outputs");
  for (size_t k = 0; k < outputFiles; ++k)
    prepared.expected.push_back(readTensorProto(data / ("output_" + std::to_string(k) + ".pb")));

  if (!model.SerializeToString(&prepared.modelBytes)) throw std::runtime_error("cannot serialize the model");
  return prepared;
}

// Element-wise |got - expected| <= 1e-5 + 1e-4 |expected|; NaN never passes.
::testing::AssertionResult matches(const std::string& name, const convscope::Tensor& got,
                                   const convscope::Tensor& expected) {
  if (got.shape() != expected.shape())
    return ::testing::AssertionFailure() << "output '" << name << "' has shape "
                                         << convscope::shapeToString(got.shape()) << ", expected "
                                         << convscope::shapeToString(expected.shape());
  if (got.size() != expected.size())
    return ::testing::AssertionFailure() << "output '" << name << "' holds " << got.size() << " values, expected "
                                         << expected.size();
  int64_t bad = 0;
  std::ostringstream first;
  for (int64_t i = 0; i < got.size(); ++i) {
    const float g = got[i];
    const float e = expected[i];
    const bool ok = !std::isnan(g) && !std::isnan(e) &&
                    (g == e || std::fabs(double{g} - double{e}) <= 1e-5 + 1e-4 * std::fabs(double{e}));
    if (!ok && bad++ < 5) first << "\n  [" << i << "] got " << g << ", expected " << e;
  }
  if (bad > 0)
    return ::testing::AssertionFailure() << "output '" << name << "': " << bad << " of " << got.size()
                                         << " values out of tolerance:" << first.str();
  return ::testing::AssertionSuccess();
}

struct CaseParam {
  std::string caseName;
  std::string variant;
};

// How failures show the parameter (instead of its bytes).
void PrintTo(const CaseParam& param, std::ostream* os) {
  *os << param.caseName << " with " << param.variant;
}

std::vector<CaseParam> params(const std::vector<std::string>& cases, const std::string& variant) {
  std::vector<CaseParam> out;
  for (const std::string& name : cases) out.push_back({name, variant});
  return out;
}

std::string paramName(const ::testing::TestParamInfo<CaseParam>& info) {
  return info.param.caseName.substr(std::string("test_").size());
}

class OnnxNodeConformance : public ::testing::TestWithParam<CaseParam> {};

TEST_P(OnnxNodeConformance, LoadsAndMatchesOrIsRefused) {
  const std::string& caseName = GetParam().caseName;
  const std::string& variant = GetParam().variant;
  SCOPED_TRACE(caseName + " with " + variant);

  PreparedCase prepared;
  try {
    prepared = prepare(caseName);
  } catch (const std::exception& e) {
    FAIL() << "cannot read the test case: " << e.what();
  }

  const auto refusal = refusalTable().find(caseName);
  if (refusal != refusalTable().end()) {
    try {
      convscope::loadOnnxModelFromBytes(prepared.modelBytes, caseName);
      FAIL() << "expected the loader to refuse this case (" << refusal->second.reason << "), but it loaded";
    } catch (const convscope::Error& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind(caseName + ": ", 0), 0u) << "the message does not name the source: " << message;
      EXPECT_NE(message.find(refusal->second.mustContain), std::string::npos)
          << "expected '" << refusal->second.mustContain << "' (" << refusal->second.reason
          << ") in the message: " << message;
    }
    return;
  }

  ASSERT_TRUE(prepared.inputProblems.empty())
      << "a case with a non-float input must be in the refusal table: " << prepared.inputProblems.front();

  std::shared_ptr<const convscope::Model> model;
  try {
    model = convscope::loadOnnxModelFromBytes(prepared.modelBytes, caseName);
  } catch (const convscope::Error& e) {
    FAIL() << "the loader refused a case not in the refusal table: " << e.what();
  }
  ASSERT_TRUE(model);

  std::map<std::string, convscope::Tensor> outputs;
  std::vector<convscope::ConvLayerTime> convTimes;
  try {
    convscope::Engine engine(model, variant);
    outputs = engine.evaluate(prepared.inputs, &convTimes);
  } catch (const convscope::Error& e) {
    FAIL() << "evaluation failed: " << e.what();
  }

  ASSERT_EQ(prepared.expected.size(), prepared.outputNames.size());
  for (size_t k = 0; k < prepared.expected.size(); ++k) {
    const std::string& name = prepared.outputNames[k];
    const auto it = outputs.find(name);
    ASSERT_NE(it, outputs.end()) << "output '" << name << "' was not returned";
    convscope::Tensor expected;
    try {
      expected = toTensor(prepared.expected[k]);
    } catch (const std::exception& e) {
      FAIL() << "expected output " << k << ": " << e.what();
    }
    EXPECT_TRUE(matches(name, it->second, expected));
  }

  if (isConvCase(caseName)) {
    // Every Conv node ran on the selected variant, none fell back to cpu-reference.
    ASSERT_FALSE(convTimes.empty()) << "no Conv layer was timed";
    for (const convscope::ConvLayerTime& t : convTimes) {
      EXPECT_EQ(t.variant, variant) << "node " << t.node << " fell back: " << t.fallbackReason;
      EXPECT_TRUE(t.fallbackReason.empty()) << t.fallbackReason;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(CpuReference, OnnxNodeConformance, ::testing::ValuesIn(params(allCases(), "cpu-reference")),
                         paramName);
INSTANTIATE_TEST_SUITE_P(CpuIm2colGemm, OnnxNodeConformance,
                         ::testing::ValuesIn(params(convCases(), "cpu-im2col-gemm")), paramName);
INSTANTIATE_TEST_SUITE_P(CpuOneDnn, OnnxNodeConformance, ::testing::ValuesIn(params(convCases(), "cpu-onednn")),
                         paramName);

TEST(OnnxNodeConformanceSetup, TestDataIsInstalled) {
  ASSERT_TRUE(fs::is_directory(kNodeTestsDir))
      << kNodeTestsDir.string()
      << " does not exist: install the Debian package libonnx-testdata (apt install libonnx-testdata), "
         "which holds ONNX's operator conformance cases";
  EXPECT_GE(allCases().size(), kMinimumCases)
      << "only " << allCases().size() << " conformance cases found in " << kNodeTestsDir.string();
  EXPECT_FALSE(convCases().empty());
}

// The comparison itself: a harness that accepts anything would make every case pass.
TEST(OnnxNodeConformanceSetup, ToleranceIsStrict) {
  const convscope::Tensor expected({2, 2}, std::vector<float>{1.0f, -2.0f, 0.0f, 1000.0f});
  EXPECT_TRUE(matches("y", expected, expected));
  EXPECT_TRUE(
      matches("y", convscope::Tensor({2, 2}, std::vector<float>{1.00005f, -2.0001f, 5e-6f, 1000.09f}), expected));
  EXPECT_FALSE(matches("y", convscope::Tensor({2, 2}, std::vector<float>{1.0003f, -2.0f, 0.0f, 1000.0f}), expected));
  EXPECT_FALSE(matches("y", convscope::Tensor({2, 2}, std::vector<float>{1.0f, -2.0f, 2e-5f, 1000.0f}), expected));
  EXPECT_FALSE(matches("y", convscope::Tensor({2, 2}, std::vector<float>{1.0f, -2.0f, NAN, 1000.0f}), expected));
  EXPECT_FALSE(matches("y", convscope::Tensor({4}, std::vector<float>{1.0f, -2.0f, 0.0f, 1000.0f}), expected));
  const convscope::Tensor nan({1}, std::vector<float>{NAN});
  EXPECT_FALSE(matches("y", nan, nan));
}

// The table cannot go stale or hide a typo: every entry names a case that was discovered.
TEST(OnnxNodeConformanceSetup, RefusalTableNamesDiscoveredCases) {
  ASSERT_FALSE(allCases().empty());
  const std::set<std::string> discovered(allCases().begin(), allCases().end());
  for (const auto& [name, refusal] : refusalTable()) {
    EXPECT_TRUE(discovered.count(name)) << name << " is in the refusal table but not among the cases";
    EXPECT_NE(std::string(refusal.mustContain), "");
    EXPECT_NE(std::string(refusal.reason), "");
  }
  EXPECT_LT(refusalTable().size(), allCases().size() / 4) << "most cases must run, not be refused";
}

}  // namespace
