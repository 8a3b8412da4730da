// A dense float32 tensor in row-major (NCHW for images) order. The engine works only in float32,
// as the course does; integer data (IDX pixels, ONNX shape constants) is converted at the edges.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace convscope {

using Shape = std::vector<int64_t>;

// Number of elements of a shape; throws convscope::Error on a negative dimension or overflow.
int64_t elementCount(const Shape& shape);
std::string shapeToString(const Shape& shape);

// Leaves a float unset where a vector grows without a value given (Tensor::uninitialized), and
// is std::allocator otherwise.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    std::allocator_traits<std::allocator<T>>::construct(*this, p, std::forward<Args>(args)...);
  }
};

class Tensor {
 public:
  using Storage = std::vector<float, UninitializedAllocator<float>>;

  Tensor() = default;
  explicit Tensor(Shape shape, float fill = 0.0f);
  Tensor(Shape shape, const std::vector<float>& values);
  // A tensor whose every element its maker writes: not zeroed first. A conv layer's output for a
  // batch of 64 photos is 300 MB; zeroing it would be a pass over memory for nothing.
  static Tensor uninitialized(Shape shape);

  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int axis) const { return shape_.at(static_cast<size_t>(axis)); }
  int64_t size() const { return static_cast<int64_t>(values_.size()); }
  bool empty() const { return values_.empty(); }

  float* data() { return values_.data(); }
  const float* data() const { return values_.data(); }
  const Storage& values() const { return values_; }
  float& operator[](int64_t i) { return values_[static_cast<size_t>(i)]; }
  float operator[](int64_t i) const { return values_[static_cast<size_t>(i)]; }

  // Same values, new shape of the same element count.
  void reshape(Shape shape);

 private:
  Shape shape_;
  Storage values_;
};

}  // namespace convscope
