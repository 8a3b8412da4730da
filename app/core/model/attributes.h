// A node's attributes, decoded from ONNX and handed to the operator that owns them. Every read
// marks the attribute as understood; whatever no operator read is refused by the loader, so an
// attribute ConvScope does not implement can never be silently ignored.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "app/core/util/tensor.h"

namespace convscope {

class Attributes {
 public:
  using Value = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>, Tensor>;

  void set(const std::string& name, Value value) { values_[name] = std::move(value); }
  bool has(const std::string& name) const { return values_.count(name) != 0; }

  int64_t getInt(const std::string& name, int64_t fallback);
  float getFloat(const std::string& name, float fallback);
  std::string getString(const std::string& name, const std::string& fallback);
  std::vector<int64_t> getInts(const std::string& name, const std::vector<int64_t>& fallback);
  std::optional<Value> take(const std::string& name);

  // Names present but never read.
  std::vector<std::string> unread() const;

 private:
  template <typename T>
  std::optional<T> read(const std::string& name);

  std::map<std::string, Value> values_;
  std::set<std::string> read_;
};

}  // namespace convscope
