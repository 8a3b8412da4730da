#include "app/core/model/onnx_loader.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>

#include "app/core/util/error.h"
#include "app/core/util/input_file.h"

namespace convscope {
namespace {

constexpr int kOldestOpset = 7;
constexpr int kNewestOpset = 22;

std::string dataTypeName(int type) {
  return onnx::TensorProto_DataType_IsValid(type)
             ? onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(type))
             : "type " + std::to_string(type);
}

class Loader {
 public:
  Loader(const onnx::ModelProto& proto, std::string source) : proto_(proto), source_(std::move(source)) {}

  std::shared_ptr<Model> load() {
    auto model = std::make_shared<Model>();
    model->sourcePath = source_;
    model->name = std::filesystem::path(source_).stem().string();
    model->irVersion = proto_.ir_version();
    model->producer =
        proto_.producer_name() + (proto_.producer_version().empty() ? "" : " " + proto_.producer_version());
    model->opset = readOpset();
    if (!proto_.has_graph() || proto_.graph().node_size() == 0) fail("the file holds no graph (is it an ONNX model?)");
    const onnx::GraphProto& graph = proto_.graph();

    for (const onnx::TensorProto& tensor : graph.initializer()) readInitializer(tensor, *model);
    for (const onnx::ValueInfoProto& input : graph.input()) {
      // Before IR version 4 every initializer is listed among the graph inputs too.
      if (model->weights.count(input.name()) || ints_.count(input.name()) || otherTypes_.count(input.name())) continue;
      if (producers_.count(input.name())) fail("graph input '" + input.name() + "' is declared twice");
      model->inputs.push_back(readRuntimeInput(input));
      producers_[input.name()] = "a graph input";
    }
    for (const ValueInfo& input : model->inputs) available_.insert(input.name);
    for (const auto& [name, tensor] : model->weights) available_.insert(name);
    for (const auto& [name, values] : ints_) available_.insert(name);

    for (int i = 0; i < graph.node_size(); ++i) readNode(graph.node(i), i, *model);

    for (const onnx::ValueInfoProto& output : graph.output()) {
      if (!available_.count(output.name())) fail("graph output '" + output.name() + "' is not produced by any node");
      model->outputs.push_back({output.name(), shapeOf(output)});
    }
    if (model->outputs.empty()) fail("the graph declares no output");

    // Propagate shapes once, free dimensions set to 1, so inconsistent models fail here.
    std::map<std::string, Shape> inputShapes;
    for (const ValueInfo& input : model->inputs) {
      Shape s = input.shape;
      for (int64_t& d : s) d = d < 0 ? 1 : d;
      inputShapes[input.name] = s;
    }
    model->inferShapes(inputShapes);
    // The layer table's parameter and FLOP counts, in checked arithmetic: a model whose counts
    // overflow is refused here, naming the node, rather than printing wrapped numbers later.
    model->layers();
    return model;
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const { throw Error(source_ + ": " + problem); }

  int readOpset() const {
    int opset = 0;
    for (const onnx::OperatorSetIdProto& id : proto_.opset_import())
      if (id.domain().empty() || id.domain() == "ai.onnx") opset = static_cast<int>(id.version());
    if (opset == 0) fail("no ONNX operator set is imported (not an ONNX model, or a truncated one)");
    if (opset < kOldestOpset || opset > kNewestOpset)
      fail("opset " + std::to_string(opset) + " is not supported (ConvScope reads opsets " +
           std::to_string(kOldestOpset) + " to " + std::to_string(kNewestOpset) + ")");
    return opset;
  }

  static Shape shapeOf(const onnx::ValueInfoProto& info) {
    Shape shape;
    if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) return shape;
    for (const auto& dim : info.type().tensor_type().shape().dim())
      shape.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
    return shape;
  }

  ValueInfo readRuntimeInput(const onnx::ValueInfoProto& input) const {
    if (!input.type().has_tensor_type()) fail("input '" + input.name() + "' is not a tensor");
    const int type = input.type().tensor_type().elem_type();
    if (type != onnx::TensorProto::FLOAT)
      fail("input '" + input.name() + "' has element type " + dataTypeName(type) + "; ConvScope runs float32 models");
    const Shape shape = shapeOf(input);
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] < 0 && d > 0)
        fail("input '" + input.name() + "' leaves dimension " + std::to_string(d) +
             " free; only the first (batch) dimension may be free");
      if (shape[d] > (int64_t{1} << 24))
        fail("input '" + input.name() + "' has an absurd dimension " + std::to_string(shape[d]));
    }
    return {input.name(), shape};
  }

  Shape checkedDims(const onnx::TensorProto& tensor, const std::string& what) const {
    Shape dims(tensor.dims().begin(), tensor.dims().end());
    try {
      elementCount(dims);
    } catch (const Error& e) {
      fail(what + " '" + tensor.name() + "': " + e.what());
    }
    return dims;
  }

  // Decodes a float32 or int64 TensorProto; other types are remembered and refused when used.
  void readTensor(const onnx::TensorProto& tensor, const std::string& name, const std::string& what, Model& model) {
    if (tensor.data_location() == onnx::TensorProto::EXTERNAL || tensor.external_data_size() > 0)
      fail(what + " '" + name +
           "' is stored in an external data file; ConvScope needs a self-contained model "
           "(save it with all tensors embedded)");
    if (tensor.has_segment()) fail(what + " '" + name + "' is segmented, which is not supported");
    const Shape dims = checkedDims(tensor, what);
    const int64_t count = elementCount(dims);
    // No real weight tensor comes near this; refusing it also keeps count * 8 from overflowing.
    if (count > (int64_t{1} << 31))
      fail(what + " '" + name + "' of shape " + shapeToString(dims) + " is absurdly large");
    const std::string& raw = tensor.raw_data();
    if (tensor.data_type() == onnx::TensorProto::FLOAT) {
      std::vector<float> values;
      if (!raw.empty()) {
        if (static_cast<int64_t>(raw.size()) != count * 4)
          fail(what + " '" + name + "' of shape " + shapeToString(dims) + " holds " + std::to_string(raw.size()) +
               " bytes instead of " + std::to_string(count * 4));
        values.resize(static_cast<size_t>(count));
        std::memcpy(values.data(), raw.data(), raw.size());  // ONNX raw data is little-endian, as is x86
      } else {
        if (tensor.float_data_size() != count)
          fail(what + " '" + name + "' of shape " + shapeToString(dims) + " holds " +
               std::to_string(tensor.float_data_size()) + " values instead of " + std::to_string(count));
        values.assign(tensor.float_data().begin(), tensor.float_data().end());
      }
      model.weights[name] = Tensor(dims, std::move(values));
    } else if (tensor.data_type() == onnx::TensorProto::INT64) {
      std::vector<int64_t> values;
      if (!raw.empty()) {
        if (static_cast<int64_t>(raw.size()) != count * 8)
          fail(what + " '" + name + "' holds " + std::to_string(raw.size()) + " bytes instead of " +
               std::to_string(count * 8));
        values.resize(static_cast<size_t>(count));
        std::memcpy(values.data(), raw.data(), raw.size());
      } else {
        if (tensor.int64_data_size() != count)
          fail(what + " '" + name + "' holds " + std::to_string(tensor.int64_data_size()) + " values instead of " +
               std::to_string(count));
        values.assign(tensor.int64_data().begin(), tensor.int64_data().end());
      }
      ints_[name] = std::move(values);
    } else {
      otherTypes_[name] = tensor.data_type();
    }
  }

  // Every tensor name is produced once: by a graph input, an initializer or one node. A second
  // producer would silently replace the first one's value (or its shape) somewhere downstream.
  void claimName(const std::string& name, const std::string& where, const std::string& producer) {
    if (const auto it = producers_.find(name); it != producers_.end())
      fail(where + ": output '" + name + "' reuses the name of " + it->second +
           "; every tensor must be produced exactly once");
    producers_[name] = producer;
  }

  void readInitializer(const onnx::TensorProto& tensor, Model& model) {
    if (tensor.name().empty()) fail("an initializer has no name");
    if (producers_.count(tensor.name())) fail("initializer '" + tensor.name() + "' is given twice");
    producers_[tensor.name()] = "an initializer";
    readTensor(tensor, tensor.name(), "initializer", model);
  }

  void readConstant(const onnx::NodeProto& node, const std::string& where, Model& model) {
    if (node.output_size() != 1) fail(where + ": a Constant must have one output");
    const std::string& out = node.output(0);
    claimName(out, where, "the output of " + where);
    if (node.attribute_size() != 1) fail(where + ": a Constant must have exactly one value attribute");
    const onnx::AttributeProto& a = node.attribute(0);
    if (a.name() == "value") {
      readTensor(a.t(), out, "constant", model);
    } else if (a.name() == "value_float") {
      model.weights[out] = Tensor({}, std::vector<float>{a.f()});
    } else if (a.name() == "value_floats") {
      model.weights[out] = Tensor({a.floats_size()}, std::vector<float>(a.floats().begin(), a.floats().end()));
    } else if (a.name() == "value_int") {
      ints_[out] = {a.i()};
    } else if (a.name() == "value_ints") {
      ints_[out] = std::vector<int64_t>(a.ints().begin(), a.ints().end());
    } else {
      fail(where + ": attribute '" + a.name() + "' is not supported");
    }
    available_.insert(out);
  }

  Attributes readAttributes(const onnx::NodeProto& node, const std::string& where) const {
    Attributes attributes;
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (!a.ref_attr_name().empty()) fail(where + ": attribute '" + a.name() + "' refers to a function attribute");
      switch (a.type()) {
        case onnx::AttributeProto::INT:
          attributes.set(a.name(), a.i());
          break;
        case onnx::AttributeProto::FLOAT:
          attributes.set(a.name(), a.f());
          break;
        case onnx::AttributeProto::STRING:
          attributes.set(a.name(), a.s());
          break;
        case onnx::AttributeProto::INTS:
          attributes.set(a.name(), std::vector<int64_t>(a.ints().begin(), a.ints().end()));
          break;
        case onnx::AttributeProto::FLOATS:
          attributes.set(a.name(), std::vector<float>(a.floats().begin(), a.floats().end()));
          break;
        default:
          fail(where + ": attribute '" + a.name() + "' has a kind (" +
               onnx::AttributeProto_AttributeType_Name(a.type()) + ") ConvScope does not support");
      }
    }
    return attributes;
  }

  void readNode(const onnx::NodeProto& node, int index, Model& model) {
    const std::string name = node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name();
    const std::string where = "node '" + name + "' (" + node.op_type() + ")";
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      fail(where + ": operator domain '" + node.domain() + "' is not supported (only the standard ONNX operators)");
    if (node.op_type() == "Constant") return readConstant(node, where, model);
    if (foldsShapeArithmetic(node, where, model)) return;

    std::vector<std::string> inputs(node.input().begin(), node.input().end());
    while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
    for (const std::string& input : inputs) {
      if (input.empty()) continue;
      if (otherTypes_.count(input))
        fail(where + ": input '" + input + "' has element type " + dataTypeName(otherTypes_.at(input)) +
             "; ConvScope runs float32 models");
      if (!available_.count(input))
        fail(where + ": input '" + input +
             "' is not produced by any earlier node and is no initializer "
             "(missing initializer, or nodes out of order)");
    }
    size_t outputs = 0;
    for (const std::string& output : node.output()) outputs += output.empty() ? 0 : 1;
    if (node.output_size() == 0 || node.output(0).empty()) fail(where + ": the node has no output");

    Attributes attributes = readAttributes(node, where);
    OperatorRequest request{node.op_type(),
                            model.opset,
                            attributes,
                            inputs,
                            outputs,
                            [this](const std::string& value) -> const std::vector<int64_t>* {
                              const auto it = ints_.find(value);
                              return it == ints_.end() ? nullptr : &it->second;
                            },
                            [&model](const std::string& value) -> const Tensor* {
                              const auto it = model.weights.find(value);
                              return it == model.weights.end() ? nullptr : &it->second;
                            },
                            [this](const std::string& value) -> const std::vector<ShapeElement>* {
                              const auto it = shapeValues_.find(value);
                              return it == shapeValues_.end() ? nullptr : &it->second;
                            }};
    std::unique_ptr<Operator> op;
    try {
      op = createOperator(request);
    } catch (const Error& e) {
      fail(where + ": " + e.what());
    }
    if (const std::vector<std::string> unread = attributes.unread(); !unread.empty())
      fail(where + ": attribute '" + unread.front() + "' is not supported");
    for (const std::string& input : inputs)
      if (shapeValues_.count(input))
        fail(where + ": input '" + input +
             "' is computed from the batch size; only Resize's sizes may be (ConvScope runs float32 tensors)");
    for (const std::string& input : inputs)
      if (ints_.count(input))
        fail(where + ": int64 input '" + input + "' is not supported here; ConvScope runs float32 tensors");

    claimName(node.output(0), where, "the output of " + where);
    available_.insert(node.output(0));
    model.nodes.push_back(Node{name, node.op_type(), inputs, node.output(0), std::move(op)});
  }

  // Shape, and Slice and Concat of int64 vectors, evaluated while loading: the exporters compute
  // F.interpolate's output size as Concat(Slice(Shape(x), 0, 2), [H, W]). A vector known whole
  // becomes an int64 constant; one holding the batch keeps, for that element, which dimension of
  // which tensor it is (the operator that reads it decides whether it can take that).
  bool foldsShapeArithmetic(const onnx::NodeProto& node, const std::string& where, Model& model) {
    const std::string& op = node.op_type();
    const auto isIntVector = [&](const std::string& name) { return ints_.count(name) || shapeValues_.count(name); };
    if (op == "Shape") {
      if (node.input_size() != 1 || node.output_size() != 1) fail(where + ": Shape takes one input and one output");
      return foldShape(node, where, model), true;
    }
    if (op == "Slice" && node.input_size() >= 3 && isIntVector(node.input(0))) return foldSlice(node, where), true;
    if (op == "Concat" && node.input_size() >= 1) {
      for (const std::string& input : node.input())
        if (!isIntVector(input)) return false;
      return foldConcat(node, where), true;
    }
    return false;
  }

  std::vector<ShapeElement> elementsOf(const std::string& name) const {
    if (const auto it = shapeValues_.find(name); it != shapeValues_.end()) return it->second;
    std::vector<ShapeElement> elements;
    for (int64_t v : ints_.at(name)) elements.push_back({v, "", 0});
    return elements;
  }

  void storeShapeValue(const onnx::NodeProto& node, const std::string& where, std::vector<ShapeElement> elements) {
    const std::string& out = node.output(0);
    claimName(out, where, "the output of " + where);
    available_.insert(out);
    bool known = true;
    for (const ShapeElement& e : elements) known = known && e.value.has_value();
    if (known) {
      std::vector<int64_t> values;
      for (const ShapeElement& e : elements) values.push_back(*e.value);
      ints_[out] = std::move(values);
    } else {
      shapeValues_[out] = std::move(elements);
    }
  }

  void foldShape(const onnx::NodeProto& node, const std::string& where, Model& model) {
    const std::string& x = node.input(0);
    Attributes attributes = readAttributes(node, where);
    int64_t start = attributes.getInt("start", 0);
    std::optional<int64_t> end;
    if (attributes.has("end")) end = attributes.getInt("end", 0);
    if (const std::vector<std::string> unread = attributes.unread(); !unread.empty())
      fail(where + ": attribute '" + unread.front() + "' is not supported");
    // The shape with a batch of 1 and of 2: dimensions that differ follow the batch.
    std::vector<Shape> shapes;
    for (const int64_t batch : {1, 2}) {
      std::map<std::string, Shape> inputShapes;
      for (const ValueInfo& input : model.inputs) {
        Shape s = input.shape;
        for (int64_t& d : s) d = d < 0 ? batch : d;
        inputShapes[input.name] = s;
      }
      const std::map<std::string, Shape> all = model.inferShapes(inputShapes);
      const auto it = all.find(x);
      if (it == all.end()) fail(where + ": input '" + x + "' is not a float tensor; only shapes of tensors are read");
      shapes.push_back(it->second);
    }
    const int64_t rank = static_cast<int64_t>(shapes[0].size());
    const auto clampAxis = [rank](int64_t axis) { return std::clamp<int64_t>(axis < 0 ? axis + rank : axis, 0, rank); };
    start = clampAxis(start);
    const int64_t stop = clampAxis(end.value_or(rank));
    std::vector<ShapeElement> elements;
    for (int64_t d = start; d < stop; ++d) {
      if (shapes[0][d] == shapes[1][d])
        elements.push_back({shapes[0][d], "", 0});
      else
        elements.push_back({std::nullopt, x, static_cast<int>(d)});
    }
    storeShapeValue(node, where, std::move(elements));
  }

  void foldSlice(const onnx::NodeProto& node, const std::string& where) {
    const std::vector<ShapeElement> data = elementsOf(node.input(0));
    const auto constant = [&](int k, const char* what) -> std::vector<int64_t> {
      if (node.input_size() <= k || node.input(k).empty()) return {};
      const auto it = ints_.find(node.input(k));
      if (it == ints_.end()) fail(where + ": the " + std::string(what) + " of a Slice of a shape must be constant");
      return it->second;
    };
    const std::vector<int64_t> starts = constant(1, "starts"), ends = constant(2, "ends"), axes = constant(3, "axes"),
                               steps = constant(4, "steps");
    if (starts.size() != 1 || ends.size() != 1 ||
        (!axes.empty() && (axes.size() != 1 || (axes[0] != 0 && axes[0] != -1))) ||
        (!steps.empty() && steps != std::vector<int64_t>{1}))
      fail(where + ": only a one-axis, step-1 Slice of a shape vector is supported");
    const int64_t size = static_cast<int64_t>(data.size());
    const auto clampIndex = [size](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + size : i, 0, size); };
    std::vector<ShapeElement> elements;
    for (int64_t i = clampIndex(starts[0]); i < clampIndex(ends[0]); ++i)
      elements.push_back(data[static_cast<size_t>(i)]);
    storeShapeValue(node, where, std::move(elements));
  }

  void foldConcat(const onnx::NodeProto& node, const std::string& where) {
    Attributes attributes = readAttributes(node, where);
    const int64_t axis = attributes.getInt("axis", 0);
    if (axis != 0 && axis != -1) fail(where + ": a Concat of shape vectors must have axis 0");
    std::vector<ShapeElement> elements;
    for (const std::string& input : node.input())
      for (const ShapeElement& e : elementsOf(input)) elements.push_back(e);
    storeShapeValue(node, where, std::move(elements));
  }

  const onnx::ModelProto& proto_;
  std::string source_;
  std::map<std::string, std::vector<ShapeElement>> shapeValues_;
  std::set<std::string> available_;
  std::map<std::string, std::vector<int64_t>> ints_;
  std::map<std::string, int> otherTypes_;
  std::map<std::string, std::string> producers_;  // tensor name -> what produces it, for messages
};

}  // namespace

namespace {

void parseModel(const std::string& bytes, const std::string& sourceName, onnx::ModelProto& proto) {
  if (bytes.empty()) throw Error(sourceName + ": the file is empty");
  if (!proto.ParseFromString(bytes))
    throw Error(sourceName +
                ": not a valid ONNX model (the protobuf data cannot be parsed: the file is truncated, "
                "corrupt or not ONNX)");
}

}  // namespace

std::shared_ptr<const Model> loadOnnxModelFromBytes(const std::string& bytes, const std::string& sourceName) {
  onnx::ModelProto proto;
  parseModel(bytes, sourceName, proto);
  return Loader(proto, sourceName).load();
}

std::shared_ptr<const Model> loadOnnxModel(const std::filesystem::path& path) {
  // 256 MiB: far above any network ConvScope runs (gray-image CNNs; the shipped ones are under
  // 1 MB), and low enough that a refused file -- its bytes, then the parsed message, then the
  // weights copied out of it -- stays under 1 GB of memory.
  InputFile file(path, "an ONNX model", kMaxModelFileBytes);
  onnx::ModelProto proto;
  {
    const std::string bytes = file.readAll();
    parseModel(bytes, file.name(), proto);
  }  // the file's bytes are freed before the weights are copied out of the message
  return Loader(proto, file.name()).load();
}

}  // namespace convscope
