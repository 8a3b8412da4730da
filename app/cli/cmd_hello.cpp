// Scratch: convscope-cli hello, following docs/architecture.md's recipe.
#include <iostream>

#include "app/cli/cli_args.h"
#include "app/cli/commands.h"

namespace convscope::cli {

int runHello(const std::vector<std::string>& tokens) {
  if (!tokens.empty() && (tokens[0] == "--help" || tokens[0] == "-h")) {
    std::cout << "usage: convscope-cli hello [--name NAME]\n";
    return 0;
  }
  const Args args(tokens, {"name"}, {});
  std::cout << "hello " << args.value("name").value_or("world") << "\n";
  return 0;
}

}  // namespace convscope::cli
