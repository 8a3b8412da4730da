#include "app/core/model/attributes.h"

#include "app/core/util/error.h"

namespace convscope {

template <typename T>
std::optional<T> Attributes::read(const std::string& name) {
  const auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  read_.insert(name);
  if (const T* value = std::get_if<T>(&it->second)) return *value;
  throw Error("attribute '" + name + "' has an unexpected type");
}

int64_t Attributes::getInt(const std::string& name, int64_t fallback) {
  return read<int64_t>(name).value_or(fallback);
}

float Attributes::getFloat(const std::string& name, float fallback) {
  return read<float>(name).value_or(fallback);
}

std::string Attributes::getString(const std::string& name, const std::string& fallback) {
  return read<std::string>(name).value_or(fallback);
}

std::vector<int64_t> Attributes::getInts(const std::string& name, const std::vector<int64_t>& fallback) {
  return read<std::vector<int64_t>>(name).value_or(fallback);
}

std::optional<Attributes::Value> Attributes::take(const std::string& name) {
  const auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  read_.insert(name);
  return it->second;
}

std::vector<std::string> Attributes::unread() const {
  std::vector<std::string> names;
  for (const auto& [name, value] : values_)
    if (!read_.count(name)) names.push_back(name);
  return names;
}

}  // namespace convscope
