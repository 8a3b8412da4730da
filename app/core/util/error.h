// One exception type for every user-facing failure in the core: bad files, unsupported models,
// impossible requests. The message is complete on its own (it names the file, node or option
// and the problem), so the CLI prints it as is and the GUI shows it in a dialog.
#pragma once

#include <stdexcept>
#include <string>

namespace convscope {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace convscope
