// Runs a program in a child process with a time limit: how ConvScope runs a student's kernel, so
// that a kernel that faults or never ends takes down that process, not the window or the CLI.
// POSIX (fork, exec, a process group killed as a whole on timeout).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace convscope {

struct ChildOutcome {
  bool started = false;    // false: exec failed (output says why)
  bool timedOut = false;   // killed at the time limit
  bool cancelled = false;  // killed because keepGoing said stop
  int signal = 0;          // the signal that ended it (SIGSEGV, SIGKILL...), 0 when it exited
  int exitCode = -1;       // when it exited
  double seconds = 0.0;
  std::string output;  // its stdout and stderr, interleaved

  bool succeeded() const { return started && !timedOut && !cancelled && signal == 0 && exitCode == 0; }
  // "exited with code 1", "killed by signal 11 (Segmentation fault)", "stopped at the time limit of 20 s".
  std::string describe(double timeLimitSeconds) const;
};

// Runs argv[0] (a path) with argv, waiting at most `timeLimitSeconds`; past it, or when
// `keepGoing` returns false (polled every 50 ms), the child's process group is killed with
// SIGKILL. Never throws for what the child does.
ChildOutcome runChildProcess(const std::vector<std::string>& argv, double timeLimitSeconds,
                             const std::function<bool()>& keepGoing = {});

}  // namespace convscope
