// The GPU as the engine sees it: memory, copies, timing and the kernels of the layers around the
// convolution (the conv variants enqueue their own kernels on it, see variant_table.h). gpu/ implements it with CUDA;
// the core holds only this interface, so it builds and runs without CUDA. Every call is queued in order on one stream;
// only download() and synchronize() wait.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/core/conv/conv_problem.h"
#include "app/core/util/tensor.h"

namespace convscope {

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual float* data() = 0;
};

// A tensor in device memory. Copies share the memory (a reshape is a new shape on the same
// memory); the memory is released when the last copy goes.
struct DeviceTensor {
  Shape shape;
  std::shared_ptr<DeviceMemory> memory;

  float* data() const { return memory->data(); }
  int64_t size() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

enum class Activation { Relu, Tanh, Sigmoid };

struct PoolGeometry {
  int64_t planes = 0;  // images x channels
  int inHeight = 0, inWidth = 0, outHeight = 0, outWidth = 0;
  int kernelHeight = 0, kernelWidth = 0, strideHeight = 1, strideWidth = 1;
  int padTop = 0, padLeft = 0, padBottom = 0, padRight = 0;
  bool countIncludePad = false;  // average pooling only
};

class Device {
 public:
  virtual ~Device() = default;

  virtual std::string name() const = 0;
  virtual DeviceTensor allocate(const Shape& shape) = 0;
  virtual DeviceTensor upload(const float* host, const Shape& shape) = 0;
  virtual void download(const DeviceTensor& tensor, float* host) = 0;
  virtual void synchronize() = 0;

  // Starts a new inference: forgets the timings of the previous one.
  virtual void beginRun() = 0;
  // The time of this run's timed() work, valid after synchronize().
  virtual double elapsedSeconds(int timing) = 0;

  // Runs `work` (which enqueues kernels) between two timing points; read the time with
  // elapsedSeconds() after synchronize().
  virtual int timed(const std::function<void()>& work) = 0;
  virtual void addChannelBias(float* data, const float* bias, int64_t images, int channels, int64_t plane) = 0;
  virtual void activation(Activation kind, const float* input, float* output, int64_t count) = 0;
  virtual void maxPool(const PoolGeometry& geometry, const float* input, float* output) = 0;
  virtual void averagePool(const PoolGeometry& geometry, const float* input, float* output) = 0;
  // Row-major C = alpha * op(A) op(B) + beta * C, in strict FP32.
  virtual void gemm(bool transA, bool transB, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                    int ldb, float beta, float* c, int ldc) = 0;
  // out[i][j] = c[i or 0][j or 0]: Gemm's C (shape [1], [n], [1,n], [m,1] or [m,n]) expanded to m x n.
  virtual void broadcast2d(const float* c, int cRows, int cCols, float* out, int m, int n) = 0;
  // Softmax over the middle axis of an [outer][length][inner] view.
  virtual void softmax(const float* input, float* output, int64_t outer, int64_t length, int64_t inner) = 0;

  // Kernel trace for `convscope-cli profile`.
  virtual void setTracing(bool on) = 0;
  struct TracedTime {
    std::string name;
    double milliseconds;
  };
  virtual std::vector<TracedTime> collectTrace() = 0;
};

}  // namespace convscope
