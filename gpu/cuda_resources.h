// RAII owners of every GPU resource gpu/ creates: device memory, events, streams, the cuBLAS
// handle and, where the build has cuDNN, its handle and descriptors. Each owner is move-only,
// creates its resource through a checked call (a failure throws CudaError, see cuda_check.h) and
// releases it in its destructor, which never throws: a failing destroy call cannot be acted upon
// there, and the error it reports is left to the next checked call.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "gpu/cuda_check.h"

namespace convscope::gpu {

// Owns one handle of a C API (an opaque pointer). Traits supply
//   using Handle = ...;
//   static void create(Handle* handle, Args...);   // checked: throws CudaError on failure
//   static void destroy(Handle handle) noexcept;
// The owner converts to its handle, so it passes straight to the library's calls.
template <class Traits>
class UniqueHandle {
 public:
  using Handle = typename Traits::Handle;

  UniqueHandle() noexcept = default;                                  // empty
  explicit UniqueHandle(Handle handle) noexcept : handle_(handle) {}  // takes ownership
  ~UniqueHandle() { reset(); }
  UniqueHandle(UniqueHandle&& other) noexcept : handle_(other.release()) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = other.release();
    }
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;

  // A new resource, e.g. CudaStream::create(cudaStreamNonBlocking).
  template <typename... Args>
  [[nodiscard]] static UniqueHandle create(Args... args) {
    Handle handle{};
    Traits::create(&handle, args...);
    return UniqueHandle(handle);
  }

  Handle get() const noexcept { return handle_; }
  operator Handle() const noexcept { return handle_; }  // NOLINT(google-explicit-constructor)
  Handle release() noexcept { return std::exchange(handle_, Handle{}); }
  void reset() noexcept {
    if (handle_) Traits::destroy(release());
  }

 private:
  Handle handle_{};
};

namespace detail {

struct EventTraits {
  using Handle = cudaEvent_t;
  static void create(Handle* event, unsigned flags = cudaEventDefault) {
    CONVSCOPE_CUDA_CHECK(cudaEventCreateWithFlags(event, flags));
  }
  static void destroy(Handle event) noexcept { cudaEventDestroy(event); }
};

struct StreamTraits {
  using Handle = cudaStream_t;
  static void create(Handle* stream, unsigned flags = cudaStreamDefault) {
    CONVSCOPE_CUDA_CHECK(cudaStreamCreateWithFlags(stream, flags));
  }
  // Returns at once; work still queued on the stream completes first.
  static void destroy(Handle stream) noexcept { cudaStreamDestroy(stream); }
};

struct GraphTraits {
  using Handle = cudaGraph_t;
  static void destroy(Handle graph) noexcept { cudaGraphDestroy(graph); }
};

struct GraphExecTraits {
  using Handle = cudaGraphExec_t;
  static void create(Handle* exec, cudaGraph_t graph) { CONVSCOPE_CUDA_CHECK(cudaGraphInstantiate(exec, graph, 0)); }
  static void destroy(Handle exec) noexcept { cudaGraphExecDestroy(exec); }
};

// Page-locked host memory: allocated (cudaMallocHost), or an existing range locked in place
// (cudaHostRegister) and unlocked again.
struct PinnedAllocationTraits {
  using Handle = void*;
  static void create(Handle* host, size_t bytes) { CONVSCOPE_CUDA_CHECK(cudaMallocHost(host, bytes)); }
  static void destroy(Handle host) noexcept { cudaFreeHost(host); }
};

struct HostRegistrationTraits {
  using Handle = void*;
  static void create(Handle* registered, void* host, size_t bytes) {
    CONVSCOPE_CUDA_CHECK(cudaHostRegister(host, bytes, cudaHostRegisterDefault));
    *registered = host;
  }
  static void destroy(Handle host) noexcept { cudaHostUnregister(host); }
};

struct CublasTraits {
  using Handle = cublasHandle_t;
  static void create(Handle* handle) { CONVSCOPE_CUBLAS_CHECK(cublasCreate(handle)); }
  static void destroy(Handle handle) noexcept { cublasDestroy(handle); }
};

#ifdef CONVSCOPE_HAVE_CUDNN
struct CudnnTraits {
  using Handle = cudnnHandle_t;
  static void create(Handle* handle) { CONVSCOPE_CUDNN_CHECK(cudnnCreate(handle)); }
  static void destroy(Handle handle) noexcept { cudnnDestroy(handle); }
};

struct CudnnTensorTraits {
  using Handle = cudnnTensorDescriptor_t;
  static void create(Handle* descriptor) { CONVSCOPE_CUDNN_CHECK(cudnnCreateTensorDescriptor(descriptor)); }
  static void destroy(Handle descriptor) noexcept { cudnnDestroyTensorDescriptor(descriptor); }
};

struct CudnnFilterTraits {
  using Handle = cudnnFilterDescriptor_t;
  static void create(Handle* descriptor) { CONVSCOPE_CUDNN_CHECK(cudnnCreateFilterDescriptor(descriptor)); }
  static void destroy(Handle descriptor) noexcept { cudnnDestroyFilterDescriptor(descriptor); }
};

struct CudnnConvolutionTraits {
  using Handle = cudnnConvolutionDescriptor_t;
  static void create(Handle* descriptor) { CONVSCOPE_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(descriptor)); }
  static void destroy(Handle descriptor) noexcept { cudnnDestroyConvolutionDescriptor(descriptor); }
};
#endif

}  // namespace detail

using CudaEvent = UniqueHandle<detail::EventTraits>;    // CudaEvent::create(flags = cudaEventDefault)
using CudaStream = UniqueHandle<detail::StreamTraits>;  // CudaStream::create(flags = cudaStreamDefault)
using CublasHandle = UniqueHandle<detail::CublasTraits>;
using CudaGraph = UniqueHandle<detail::GraphTraits>;                    // owns a graph cudaStreamEndCapture made
using CudaGraphExec = UniqueHandle<detail::GraphExecTraits>;            // CudaGraphExec::create(graph)
using PinnedAllocation = UniqueHandle<detail::PinnedAllocationTraits>;  // PinnedAllocation::create(bytes)
using HostRegistration = UniqueHandle<detail::HostRegistrationTraits>;  // HostRegistration::create(host, bytes)
#ifdef CONVSCOPE_HAVE_CUDNN
using CudnnHandle = UniqueHandle<detail::CudnnTraits>;
using CudnnTensorDescriptor = UniqueHandle<detail::CudnnTensorTraits>;
using CudnnFilterDescriptor = UniqueHandle<detail::CudnnFilterTraits>;
using CudnnConvolutionDescriptor = UniqueHandle<detail::CudnnConvolutionTraits>;
#endif

// One device allocation, uniquely owned. Plain (cudaMalloc, freed with cudaFree, which waits for
// the device) or stream-ordered (cudaMallocAsync on a stream, freed with cudaFreeAsync on the same
// stream, i.e. after the work queued on it before the free).
class DeviceBuffer {
 public:
  DeviceBuffer() noexcept = default;  // empty
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    void* data = nullptr;
    CONVSCOPE_CUDA_CHECK(cudaMalloc(&data, bytes));
    data_ = data;
  }
  DeviceBuffer(size_t bytes, cudaStream_t stream) : bytes_(bytes), stream_(stream), streamOrdered_(true) {
    void* data = nullptr;
    CONVSCOPE_CUDA_CHECK(cudaMallocAsync(&data, bytes, stream));
    data_ = data;
  }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)),
        stream_(other.stream_),
        streamOrdered_(other.streamOrdered_) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      data_ = std::exchange(other.data_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
      stream_ = other.stream_;
      streamOrdered_ = other.streamOrdered_;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const noexcept { return data_; }
  template <typename T>
  T* as() const noexcept {
    return static_cast<T*>(data_);
  }
  size_t bytes() const noexcept { return bytes_; }

  // Frees the memory now, unchecked (a destructor must not throw).
  void reset() noexcept {
    if (!data_) return;
    void* data = release();
    if (streamOrdered_)
      cudaFreeAsync(data, stream_);
    else
      cudaFree(data);
  }
  // Frees the memory now and checks the free: a plain buffer's cudaFree waits for the device, so
  // a fault of earlier work that used the memory is thrown here as a CudaError.
  void free() {
    if (!data_) return;
    void* data = release();
    if (streamOrdered_)
      CONVSCOPE_CUDA_CHECK(cudaFreeAsync(data, stream_));
    else
      CONVSCOPE_CUDA_CHECK(cudaFree(data));
  }

 private:
  void* release() noexcept {
    bytes_ = 0;
    return std::exchange(data_, nullptr);
  }

  void* data_ = nullptr;
  size_t bytes_ = 0;
  cudaStream_t stream_ = nullptr;
  bool streamOrdered_ = false;
};

}  // namespace convscope::gpu
