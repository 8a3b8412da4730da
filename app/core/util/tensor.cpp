#include "app/core/util/tensor.h"

#include <limits>
#include <sstream>

#include "app/core/util/error.h"

namespace convscope {

int64_t elementCount(const Shape& shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error("shape " + shapeToString(shape) + " has a negative dimension");
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d)
      throw Error("shape " + shapeToString(shape) + " is too large (its element count overflows 64 bits)");
    count *= d;
  }
  return count;
}

std::string shapeToString(const Shape& shape) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? "x" : "") << shape[i];
  out << ']';
  return out.str();
}

Tensor::Tensor(Shape shape, float fill)
    : shape_(std::move(shape)), values_(static_cast<size_t>(elementCount(shape_)), fill) {}

Tensor::Tensor(Shape shape, const std::vector<float>& values)
    : shape_(std::move(shape)), values_(values.begin(), values.end()) {
  if (elementCount(shape_) != static_cast<int64_t>(values_.size()))
    throw Error("tensor of shape " + shapeToString(shape_) + " given " + std::to_string(values_.size()) + " values");
}

Tensor Tensor::uninitialized(Shape shape) {
  Tensor t;
  t.values_.resize(static_cast<size_t>(elementCount(shape)));  // UninitializedAllocator: no value written
  t.shape_ = std::move(shape);
  return t;
}

void Tensor::reshape(Shape shape) {
  if (elementCount(shape) != size())
    throw Error("cannot reshape " + shapeToString(shape_) + " to " + shapeToString(shape));
  shape_ = std::move(shape);
}

}  // namespace convscope
