// An exception thrown inside an OpenMP parallel region and not caught in the same thread calls
// std::terminate(): the process dies without a message. Work inside a region that can throw runs
// through OmpExceptions::run, which keeps the first exception; rethrow() after the region raises
// it in the calling thread, where the usual handlers see it.
#pragma once

#include <exception>
#include <mutex>

namespace convscope {

class OmpExceptions {
 public:
  template <typename Work>
  void run(Work&& work) noexcept {
    try {
      work();
    } catch (...) {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!first_) first_ = std::current_exception();
    }
  }

  void rethrow() const {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr first_;
};

}  // namespace convscope
