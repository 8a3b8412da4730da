// A small command-line parser for convscope-cli: --name value options, --flag switches and
// multi-value options (--images a.png b.png). Unknown options are errors, never ignored.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace convscope::cli {

class Args {
 public:
  // `valued`: options that take values; every other --option is a switch.
  Args(const std::vector<std::string>& tokens, const std::set<std::string>& valued,
       const std::set<std::string>& switches);

  std::optional<std::string> value(const std::string& name) const;
  std::vector<std::string> values(const std::string& name) const;
  bool has(const std::string& name) const { return given_.count(name) != 0; }
  int intValue(const std::string& name, int fallback, int least) const;

 private:
  std::map<std::string, std::vector<std::string>> given_;
};

}  // namespace convscope::cli
