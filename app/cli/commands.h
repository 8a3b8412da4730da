// The subcommands of convscope-cli, listed once in subcommand_list.inc. Each takes the arguments
// after its name, prints its own --help, and returns the process exit code; errors are thrown as
// convscope::Error.
#pragma once

#include <string>
#include <vector>

namespace convscope::cli {

using SubcommandFunction = int (*)(const std::vector<std::string>& args);

#define CONVSCOPE_SUBCOMMAND(name, run, help) int run(const std::vector<std::string>& args);
#include "app/cli/subcommand_list.inc"
#undef CONVSCOPE_SUBCOMMAND

struct Subcommand {
  const char* name;
  const char* help;  // one line, for convscope-cli --help
  SubcommandFunction run;
};

// What main() dispatches from and --help lists.
inline constexpr Subcommand kSubcommands[] = {
#define CONVSCOPE_SUBCOMMAND(name, run, help) {name, help, run},
#include "app/cli/subcommand_list.inc"
#undef CONVSCOPE_SUBCOMMAND
};

// The shipped model used when --model is not given.
std::string defaultModelPath();

// This program's own path: what runs a student's kernel in a child process.
std::string thisProgram();

}  // namespace convscope::cli
