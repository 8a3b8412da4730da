#include "app/core/model/operators/broadcast.h"

#include <algorithm>

#include "app/core/util/error.h"

namespace convscope::ops {

Shape broadcastShape(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw Error("shapes " + shapeToString(a) + " and " + shapeToString(b) + " cannot be broadcast together");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> broadcastStrides(const Shape& source, const Shape& target) {
  if (source.size() > target.size() || broadcastShape(source, target) != target)
    throw Error("shape " + shapeToString(source) + " does not broadcast to " + shapeToString(target));
  const size_t rank = target.size();
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t i = 0; i < source.size(); ++i) {
    const size_t axis = source.size() - 1 - i;
    const size_t targetAxis = rank - 1 - i;
    strides[targetAxis] = source[axis] == 1 ? 0 : stride;
    stride *= source[axis];
  }
  return strides;
}

Tensor broadcastTo(const Tensor& source, const Shape& target) {
  if (source.shape() == target) return source;
  const size_t rank = target.size();
  const std::vector<int64_t> strides = broadcastStrides(source.shape(), target);
  Tensor out(target);
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < out.size(); ++i) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) offset += index[d] * strides[d];
    out[i] = source[offset];
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < target[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

}  // namespace convscope::ops
