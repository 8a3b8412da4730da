// The grader's locks on the machine's GPUs (a private header of app/core/grading: only the
// grading of one submission takes them).
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "app/core/device/gpu_platform.h"
#include "app/core/util/error.h"
#include "app/core/util/unique_fd.h"

namespace convscope {

// GPUs of this machine without initialising CUDA: CUDA_VISIBLE_DEVICES' entries when set, else
// the driver's folder per GPU.
inline std::vector<std::string> visibleGpus() {
  std::vector<std::string> gpus;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
    std::stringstream list(visible);
    for (std::string entry; std::getline(list, entry, ',');)
      if (!entry.empty()) gpus.push_back(entry);
    return gpus;
  }
  std::error_code error;
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", error)) {
    (void)entry;
    ++count;
  }
  for (int i = 0; i < count; ++i) gpus.push_back(std::to_string(i));
  if (gpus.empty() && gpuInfo().usable) gpus.push_back("0");
  return gpus;
}

inline double unixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Timings that share nothing: no module load, compile or host check of another submission on the
// GPU or the CPU cores of a submission while it is timed, however many are graded at once (--jobs).
// Per GPU k, a reader-writer lock across the grader's processes, made of two files under RESULTS:
//   .gpu-K.lock        compiles and checks hold it shared; a timing holds it exclusive;
//   .gpu-K.turnstile   whoever wants .gpu-K.lock passes through it (holds it exclusive a moment);
//                      a timing keeps holding it while it waits, so that no new compile or check
//                      gets in and a stream of them cannot starve the timing.
// A compile or a check takes every GPU's lock shared, in order 0, 1, ...: it works on the CPU, which
// every timing's host code shares, and a check also runs a kernel on one of the GPUs. A timing takes
// one GPU's lock exclusive: while it runs, nothing else of the grading runs on the machine but the
// timings of the other GPUs, and with several GPUs each timing is pinned to its own share of the
// CPU cores (the kernel's child inherits it), so that one timing's module load cannot run on
// another's cores. No deadlock: a timing holds one turnstile and waits for one lock; a compile
// holding the locks below k waits only for turnstile k, and whoever holds lock k shared waits only
// for higher ones. flock(2): the kernel releases the locks when a process ends, however it ends; the
// files are opened O_CLOEXEC, so no kernel's process inherits them. Not used under Slurm (each task
// has a GPU of its own, and RESULTS is then on a shared file system whose locks could span nodes)
// nor without a GPU (nothing is timed).
class GpuLocks {
 public:
  // What one step holds until it ends.
  class Hold {
   public:
    Hold() = default;
    Hold(Hold&& other) noexcept
        : device(std::move(other.device)),
          startedAt(other.startedAt),
          waitedSeconds(other.waitedSeconds),
          fds_(std::move(other.fds_)),
          pinned_(std::exchange(other.pinned_, false)),
          before_(other.before_) {}
    Hold& operator=(Hold&&) = delete;
    ~Hold() {
      if (pinned_) ::sched_setaffinity(0, sizeof before_, &before_);
    }
    std::string device;          // the CUDA_VISIBLE_DEVICES the step runs with; "" when not set here
    double startedAt = 0.0;      // Unix time, once the locks were held
    double waitedSeconds = 0.0;  // how long the step waited for them

   private:
    friend class GpuLocks;
    std::vector<UniqueFd> fds_;
    bool pinned_ = false;
    cpu_set_t before_{};
  };

  // `gpuCount` 0: no locks (Slurm, no GPU).
  GpuLocks(const std::filesystem::path& results, int gpuCount) : results_(results), count_(std::max(0, gpuCount)) {
    if (count_ > 0) gpus_ = visibleGpus();  // before any step sets CUDA_VISIBLE_DEVICES here
  }

  // A compile or a check: every GPU's lock, shared; the check's kernel runs on one GPU of them.
  Hold shared() const {
    Hold hold;
    const double asked = unixSeconds();
    for (int k = 0; k < count_; ++k) {
      const UniqueFd turnstile = openLock(turnstilePath(k));
      lock(turnstile, LOCK_EX, turnstilePath(k));
      hold.fds_.push_back(openLock(lockPath(k)));
      lock(hold.fds_.back(), LOCK_SH, lockPath(k));
    }  // each turnstile is let go as soon as its lock is held
    if (count_ > 0) useGpu(hold, static_cast<int>(::getpid() % count_));
    hold.startedAt = unixSeconds();
    hold.waitedSeconds = hold.startedAt - asked;
    return hold;
  }

  // A timing: one GPU's lock, exclusive (a free GPU when there is one), and that GPU's cores.
  Hold exclusive() const {
    Hold hold;
    const double asked = unixSeconds();
    if (count_ > 0) {
      const int first = static_cast<int>(::getpid() % count_);
      int gpu = -1;
      while (gpu < 0) {
        for (int i = 0; i < count_ && gpu < 0; ++i) {
          const int k = (first + i) % count_;
          UniqueFd fd = openLock(lockPath(k));
          if (tryLock(fd, LOCK_EX, lockPath(k))) {
            hold.fds_.push_back(std::move(fd));
            gpu = k;
          }
        }
        // None free: hold a GPU's turnstile, so that no new compile or check starts, and wait for
        // that GPU's lock (the steps holding it end within their time limits).
        for (int i = 0; i < count_ && gpu < 0; ++i) {
          const int k = (first + i) % count_;
          const UniqueFd turnstile = openLock(turnstilePath(k));
          if (!tryLock(turnstile, LOCK_EX, turnstilePath(k))) continue;
          hold.fds_.push_back(openLock(lockPath(k)));
          lock(hold.fds_.back(), LOCK_EX, lockPath(k));
          gpu = k;
        }
        // Every GPU already has a timing waiting for it: look again in a moment.
        if (gpu < 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      useGpu(hold, gpu);
      pinToShareOfCores(hold, gpu);
    }
    hold.startedAt = unixSeconds();
    hold.waitedSeconds = hold.startedAt - asked;
    return hold;
  }

 private:
  std::filesystem::path lockPath(int k) const { return results_ / (".gpu-" + std::to_string(k) + ".lock"); }
  std::filesystem::path turnstilePath(int k) const { return results_ / (".gpu-" + std::to_string(k) + ".turnstile"); }

  static UniqueFd openLock(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) throw Error(path.string() + ": cannot open the grader's lock file: " + std::strerror(errno));
    return UniqueFd(fd);
  }
  static void lock(const UniqueFd& fd, int operation, const std::filesystem::path& path) {
    while (::flock(fd.get(), operation) != 0)
      if (errno != EINTR) throw Error(path.string() + ": cannot lock it: " + std::strerror(errno));
  }
  static bool tryLock(const UniqueFd& fd, int operation, const std::filesystem::path& path) {
    while (::flock(fd.get(), operation | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK) return false;
      if (errno != EINTR) throw Error(path.string() + ": cannot lock it: " + std::strerror(errno));
    }
    return true;
  }

  // With several GPUs, the step's kernel process sees only its GPU.
  void useGpu(Hold& hold, int k) const {
    if (count_ > 1 && k < static_cast<int>(gpus_.size())) {
      ::setenv("CUDA_VISIBLE_DEVICES", gpus_[k].c_str(), 1);
      hold.device = gpus_[k];
    }
  }

  // With several GPUs, timing k runs on the k-th of count_ equal shares of this process's cores.
  void pinToShareOfCores(Hold& hold, int k) const {
    if (count_ < 2) return;
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
    const size_t share = cpus.size() / static_cast<size_t>(count_);
    if (share == 0) return;  // fewer cores than GPUs: the timings share the cores
    cpu_set_t mine;
    CPU_ZERO(&mine);
    for (size_t j = share * static_cast<size_t>(k); j < share * static_cast<size_t>(k + 1); ++j)
      CPU_SET(cpus[j], &mine);
    if (::sched_setaffinity(0, sizeof mine, &mine) == 0) {
      hold.pinned_ = true;
      hold.before_ = allowed;
    }
  }

  std::filesystem::path results_;
  int count_;
  std::vector<std::string> gpus_;
};

}  // namespace convscope
