// convscope-cli: the headless face of ConvScope (model tables, classification, kernel variants).
#include <algorithm>
#include <iostream>
#include <string>
#include <string_view>

#include "app/cli/commands.h"
#include "app/core/util/error.h"
#include "app/core/util/memory_limit.h"

namespace {

// The usage text, its list of commands from the one table (subcommand_list.inc).
std::string usage() {
  size_t width = 0;
  for (const convscope::cli::Subcommand& command : convscope::cli::kSubcommands)
    width = std::max(width, std::string_view(command.name).size());
  std::string text = "usage: convscope-cli <command> [options]\n\nCommands:\n";
  for (const convscope::cli::Subcommand& command : convscope::cli::kSubcommands) {
    const std::string name = command.name;
    text += "  " + name + std::string(width + 3 - name.size(), ' ') + command.help + "\n";
  }
  return text +
         "\nRun 'convscope-cli <command> --help' for a command's options;\n'convscope-cli --version' prints the "
         "version.\n";
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> all(argv + 1, argv + argc);
  if (all.empty() || all[0] == "--help" || all[0] == "-h" || all[0] == "help") {
    std::cout << usage();
    return all.empty() ? 2 : 0;
  }
  if (all[0] == "--version") {
    std::cout << "convscope-cli " << CONVSCOPE_VERSION << "\n";  // the project's, from CMake
    return 0;
  }
  const std::string command = all[0];
  const std::vector<std::string> rest(all.begin() + 1, all.end());
  convscope::keepFreedMemoryForReuse();
  try {
    for (const convscope::cli::Subcommand& subcommand : convscope::cli::kSubcommands)
      if (command == subcommand.name) return subcommand.run(rest);
    std::cerr << "convscope-cli: unknown command '" << command << "'\n\n" << usage();
    return 2;
  } catch (const convscope::Error& e) {
    std::cout.flush();
    std::cerr << "\nerror: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "\ninternal error: " << e.what() << "\n";
    return 3;
  }
}
