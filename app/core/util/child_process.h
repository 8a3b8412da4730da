// Runs a program in a child process with a time limit and, on request, a memory limit: how
// ConvScope runs a student's kernel, so that a kernel that faults, never ends or makes its process
// swell takes down that process, not the window, the CLI or the grading machine.
// POSIX (fork, exec, a process group killed as a whole at a limit).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace convscope {

struct ChildOutcome {
  bool started = false;           // false: exec failed (output says why)
  bool timedOut = false;          // killed at the time limit
  bool cancelled = false;         // killed because keepGoing said stop
  bool overMemory = false;        // killed at the memory limit
  int64_t memoryLimitBytes = 0;   // the limit it ran under (0: none)
  int64_t peakResidentBytes = 0;  // the largest resident size seen (sampled every 20 ms)
  int signal = 0;                 // the signal that ended it (SIGSEGV, SIGKILL...), 0 when it exited
  int exitCode = -1;              // when it exited
  double seconds = 0.0;
  std::string output;  // its stdout and stderr, interleaved

  bool succeeded() const { return started && !timedOut && !cancelled && !overMemory && signal == 0 && exitCode == 0; }
  // "exited with code 1", "killed by signal 11 (Segmentation fault)", "stopped at the time limit of 20 s",
  // "stopped at the memory limit of 512 MB (it held 530 MB)".
  std::string describe(double timeLimitSeconds) const;
};

// Runs argv[0] (a path) with argv, waiting at most `timeLimitSeconds`; past it, when
// `keepGoing` returns false (polled every 20 ms), or when `memoryLimitBytes` > 0 and the child's
// resident size passes it (sampled every 20 ms), the child's process group is killed with SIGKILL.
// Resident size, not an address-space rlimit: the CUDA driver reserves hundreds of gigabytes of
// addresses it never touches, so RLIMIT_AS would stop every GPU process at its first CUDA call.
// Never throws for what the child does.
ChildOutcome runChildProcess(const std::vector<std::string>& argv, double timeLimitSeconds,
                             const std::function<bool()>& keepGoing = {}, int64_t memoryLimitBytes = 0);

// The resident size of process `pid` in bytes (/proc/PID/statm), 0 when it cannot be read.
int64_t residentBytesOf(int pid);

}  // namespace convscope
