// convscope-cli: the headless face of ConvScope (model tables, classification, kernel variants).
#include <iostream>

#include "app/cli/commands.h"
#include "app/core/util/error.h"
#include "app/core/util/memory_limit.h"

namespace {

constexpr const char* kUsage = R"(usage: convscope-cli <command> [options]

Commands:
  info       print a model's layer table (type, output shape, parameters, FLOPs per image)
  classify   classify test images and print op times and accuracy, course style
  variants   list every convolution kernel variant and whether it can run here
  bench      time variants at several batch sizes; write JSON and CSV
  profile    the course's kernel table (time per kernel and copy) for one inference
  kernel     your own conv kernel: 'kernel check FILE.cu' compiles and checks it

Run 'convscope-cli <command> --help' for a command's options;
'convscope-cli --version' prints the version.
)";

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> all(argv + 1, argv + argc);
  if (all.empty() || all[0] == "--help" || all[0] == "-h" || all[0] == "help") {
    std::cout << kUsage;
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
    if (command == "info") return convscope::cli::runInfo(rest);
    if (command == "classify") return convscope::cli::runClassify(rest);
    if (command == "variants") return convscope::cli::runVariants(rest);
    if (command == "bench") return convscope::cli::runBench(rest);
    if (command == "profile") return convscope::cli::runProfile(rest);
    if (command == "kernel") return convscope::cli::runKernel(rest);
    std::cerr << "convscope-cli: unknown command '" << command << "'\n\n" << kUsage;
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
