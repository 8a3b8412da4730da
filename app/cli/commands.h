// The subcommands of convscope-cli. Each takes the arguments after its name, prints its own
// --help, and returns the process exit code; errors are thrown as convscope::Error.
#pragma once

#include <string>
#include <vector>

namespace convscope::cli {

int runInfo(const std::vector<std::string>& args);
int runClassify(const std::vector<std::string>& args);
int runVariants(const std::vector<std::string>& args);
int runBench(const std::vector<std::string>& args);
int runProfile(const std::vector<std::string>& args);
int runKernel(const std::vector<std::string>& args);

// The shipped model used when --model is not given.
std::string defaultModelPath();

// This program's own path: what runs a student's kernel in a child process.
std::string thisProgram();

}  // namespace convscope::cli
