#include "app/cli/cli_args.h"

#include "app/core/util/error.h"

namespace convscope::cli {

Args::Args(const std::vector<std::string>& tokens, const std::set<std::string>& valued,
           const std::set<std::string>& switches) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& token = tokens[i];
    if (token.rfind("--", 0) != 0) throw Error("unexpected argument '" + token + "' (see --help)");
    const std::string name = token.substr(2);
    if (switches.count(name)) {
      given_[name];
      continue;
    }
    if (!valued.count(name)) throw Error("unknown option '" + token + "' (see --help)");
    std::vector<std::string>& list = given_[name];
    while (i + 1 < tokens.size() && tokens[i + 1].rfind("--", 0) != 0) list.push_back(tokens[++i]);
    if (list.empty()) throw Error("option '" + token + "' needs a value");
  }
}

std::optional<std::string> Args::value(const std::string& name) const {
  const auto it = given_.find(name);
  if (it == given_.end()) return std::nullopt;
  if (it->second.size() != 1) throw Error("option '--" + name + "' takes one value");
  return it->second.front();
}

std::vector<std::string> Args::values(const std::string& name) const {
  const auto it = given_.find(name);
  return it == given_.end() ? std::vector<std::string>{} : it->second;
}

int Args::intValue(const std::string& name, int fallback, int least) const {
  const std::optional<std::string> text = value(name);
  if (!text) return fallback;
  size_t used = 0;
  int number = 0;
  try {
    number = std::stoi(*text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text->size() || number < least)
    throw Error("option '--" + name + "' needs a whole number of at least " + std::to_string(least) + ", got '" +
                *text + "'");
  return number;
}

}  // namespace convscope::cli
