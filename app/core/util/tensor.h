// A dense float32 tensor in row-major (NCHW for images) order. The engine works only in float32,
// as the course does; integer data (IDX pixels, ONNX shape constants) is converted at the edges.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace convscope {

using Shape = std::vector<int64_t>;

// Number of elements of a shape; throws convscope::Error on a negative dimension or overflow.
int64_t elementCount(const Shape& shape);
std::string shapeToString(const Shape& shape);

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Shape shape, float fill = 0.0f);
  Tensor(Shape shape, std::vector<float> values);

  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int axis) const { return shape_.at(static_cast<size_t>(axis)); }
  int64_t size() const { return static_cast<int64_t>(values_.size()); }
  bool empty() const { return values_.empty(); }

  float* data() { return values_.data(); }
  const float* data() const { return values_.data(); }
  const std::vector<float>& values() const { return values_; }
  float& operator[](int64_t i) { return values_[static_cast<size_t>(i)]; }
  float operator[](int64_t i) const { return values_[static_cast<size_t>(i)]; }

  // Same values, new shape of the same element count.
  void reshape(Shape shape);

 private:
  Shape shape_;
  std::vector<float> values_;
};

}  // namespace convscope
