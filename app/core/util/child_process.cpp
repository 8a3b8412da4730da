#include "app/core/util/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>

namespace convscope {

std::string ChildOutcome::describe(double timeLimitSeconds) const {
  if (!started) return "could not be started";
  if (timedOut) return "stopped at the time limit of " + std::to_string(static_cast<int>(timeLimitSeconds)) + " s";
  if (cancelled) return "cancelled";
  if (overMemory)
    return "stopped at the memory limit of " + std::to_string(memoryLimitBytes / 1000000) + " MB (it held " +
           std::to_string(peakResidentBytes / 1000000) + " MB)";
  if (signal != 0) return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exited with code " + std::to_string(exitCode);
}

int64_t residentBytesOf(int pid) {
  std::ifstream statm("/proc/" + std::to_string(pid) + "/statm");
  int64_t sizePages = 0, residentPages = 0;
  if (!(statm >> sizePages >> residentPages)) return 0;
  return residentPages * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

ChildOutcome runChildProcess(const std::vector<std::string>& argv, double timeLimitSeconds,
                             const std::function<bool()>& keepGoing, int64_t memoryLimitBytes) {
  ChildOutcome outcome;
  outcome.memoryLimitBytes = std::max<int64_t>(0, memoryLimitBytes);
  int pipeFds[2];
  if (argv.empty() || pipe2(pipeFds, O_CLOEXEC) != 0) {
    outcome.output = argv.empty() ? "no program given" : std::string("pipe: ") + std::strerror(errno);
    return outcome;
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    outcome.output = std::string("fork: ") + std::strerror(errno);
    close(pipeFds[0]);
    close(pipeFds[1]);
    return outcome;
  }
  if (pid == 0) {
    // Its own process group, so that killing it also ends anything it started.
    setpgid(0, 0);
    // And it dies with this process: what it starts in process groups of its own (a grader's
    // compiler and kernel children) ends when it is killed, at a cancel or a time limit, instead
    // of running on without the parent that enforced their limits. This thread waits for the
    // child, so the signal never comes early; a parent already gone before the line above is
    // caught by the second test.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(pipeFds[1], STDOUT_FILENO);
    dup2(pipeFds[1], STDERR_FILENO);
    execv(args[0], args.data());
    const std::string message = std::string("cannot run ") + args[0] + ": " + std::strerror(errno) + "\n";
    (void)!write(STDERR_FILENO, message.data(), message.size());
    _exit(127);
  }
  setpgid(pid, pid);  // also here, so the group exists before the first kill whatever runs first
  close(pipeFds[1]);
  outcome.started = true;
  bool open = true;
  int status = 0;
  bool reaped = false;
  double lastSample = -1.0;
  while (!reaped) {
    if (open) {
      pollfd fd{pipeFds[0], POLLIN, 0};
      if (poll(&fd, 1, 20) > 0) {
        char buffer[4096];
        const ssize_t got = read(pipeFds[0], buffer, sizeof buffer);
        if (got > 0)
          outcome.output.append(buffer, static_cast<size_t>(got));
        else if (got == 0 || errno != EINTR)
          open = false;
      }
    } else {
      usleep(20000);
    }
    if (waitpid(pid, &status, WNOHANG) == pid) {
      reaped = true;
      break;
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool overTime = elapsed > timeLimitSeconds;
    const bool stop = keepGoing && !keepGoing();
    // Sampled at most every 20 ms: a child that floods its output wakes this loop far more often.
    bool overMemory = false;
    if (elapsed - lastSample >= 0.02) {
      lastSample = elapsed;
      const int64_t resident = residentBytesOf(pid);
      outcome.peakResidentBytes = std::max(outcome.peakResidentBytes, resident);
      overMemory = outcome.memoryLimitBytes > 0 && resident > outcome.memoryLimitBytes;
    }
    if (overTime || stop || overMemory) {
      outcome.timedOut = overTime;
      outcome.overMemory = !overTime && overMemory;
      outcome.cancelled = !overTime && !overMemory;
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      reaped = true;
    }
  }
  // What the child wrote just before it ended.
  if (open) {
    fcntl(pipeFds[0], F_SETFL, O_NONBLOCK);
    char buffer[4096];
    for (ssize_t got; (got = read(pipeFds[0], buffer, sizeof buffer)) > 0;) outcome.output.append(buffer, size_t(got));
  }
  close(pipeFds[0]);
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFSIGNALED(status) && !outcome.timedOut && !outcome.cancelled && !outcome.overMemory)
    outcome.signal = WTERMSIG(status);
  if (WIFEXITED(status)) outcome.exitCode = WEXITSTATUS(status);
  return outcome;
}

}  // namespace convscope
