// convscope-cli run as a user runs it, from the tests: its exit code and what it printed.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace convscope::testing {

struct CliOutcome {
  int exitCode;
  std::string output;  // stdout and stderr together
};

// `prefix` goes before the program, e.g. "timeout 30" for a command that must not hang.
inline CliOutcome runCli(const std::string& arguments, const std::string& prefix = "") {
  const std::string command = prefix + " '" + CONVSCOPE_CLI_PATH + "' " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::string output;
  std::array<char, 4096> buffer{};
  while (size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) output.append(buffer.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

}  // namespace convscope::testing
