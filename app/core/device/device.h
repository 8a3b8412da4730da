// The GPU as the engine sees it: memory, copies, timing and the kernels of the layers around the
// convolution (the conv variants enqueue their own kernels on it, see variant_table.h). gpu/ implements it with CUDA;
// the core holds only this interface, so it builds and runs without CUDA. Every call is queued in order on one stream;
// only download() and synchronize() wait.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/core/data/picture.h"
#include "app/core/util/epilogue.h"
#include "app/core/util/tensor.h"

namespace convscope {

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual float* data() = 0;
};

// The element-wise arithmetic of two tensors that a device computes (ONNX's Add, Sub, Mul, Div),
// in FP32 with IEEE rounding, as the host does.
enum class BinaryArithmetic { Add, Sub, Mul, Div };

// Two tensors broadcast to one output shape (NumPy's rules), as strides: the element of a at the
// output index (i_0 .. i_rank-1) is a[sum of i_k * aStrides[k]], stride 0 along an axis a is
// broadcast over; the same for b.
struct BroadcastOperands {
  static constexpr int kMaxRank = 8;
  int rank = 0;
  int64_t outDims[kMaxRank] = {};
  int64_t aStrides[kMaxRank] = {};
  int64_t bStrides[kMaxRank] = {};
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

// Page-locked host memory: the GPU copies to and from it at full bus speed, without staging, and
// a recorded copy (below) may read or write it.
class PinnedMemory {
 public:
  virtual ~PinnedMemory() = default;
  virtual void* data() = 0;
};

// Work recorded once and replayed as one launch (a CUDA graph). A small batch's inference is
// mostly the time it takes to launch a dozen kernels; replayed, it is one launch.
class RecordedWork {
 public:
  virtual ~RecordedWork() = default;
  // Runs the recorded work after the work already queued, and waits for it.
  virtual void replay() = 0;
};

// Holds back the work a Device queues until it goes (Device::holdQueue).
class QueueGate {
 public:
  virtual ~QueueGate() = default;
};

class Device {
 public:
  virtual ~Device() = default;

  virtual std::string name() const = 0;
  virtual DeviceTensor allocate(const Shape& shape) = 0;
  virtual DeviceTensor upload(const float* host, const Shape& shape) = 0;
  virtual void download(const DeviceTensor& tensor, float* host) = 0;
  virtual void synchronize() = 0;

  // The end-to-end path (Engine::inferBytes): 8-bit images as stored (count x height x width,
  // row-major, in host memory) go to the GPU as bytes, a quarter of the floats' size before
  // resizing, and become the model's N x 1 x outHeight x outWidth input there: x / 255, resized
  // bilinearly with half-pixel centres exactly as the host resizes (resizeBilinearHalfPixel).
  // uploadImageBytes copies in chunks on a second stream and resizes each chunk while the next
  // one is copied. stageImageBytes + resizeImageBytes do the same in two steps, so that a
  // recording can hold the resize and not the copy from a caller's memory.
  virtual DeviceTensor uploadImageBytes(const uint8_t* host, int count, int height, int width, int outHeight,
                                        int outWidth) = 0;
  virtual void stageImageBytes(const uint8_t* host, int count, int height, int width) = 0;
  virtual DeviceTensor resizeImageBytes(int count, int height, int width, int outHeight, int outWidth) = 0;
  // What stageImageBytes left on the device, for a kernel that resizes as it reads (the whole-
  // network kernel): the bytes and the resize's taps (outHeight, then outWidth entries).
  struct StagedImages {
    const uint8_t* bytes = nullptr;
    const BilinearTap* rowTaps = nullptr;
    const BilinearTap* colTaps = nullptr;
  };
  virtual StagedImages stagedImageBytes(int count, int height, int width, int outHeight, int outWidth) = 0;

  // Host memory for fast copies: allocated page-locked, or an existing range locked in place
  // for as long as the returned owner lives.
  virtual std::unique_ptr<PinnedMemory> allocatePinned(size_t bytes) = 0;
  virtual std::unique_ptr<PinnedMemory> pin(void* host, size_t bytes) = 0;
  // Queues a copy to host memory without waiting (pinned memory: the only kind a recording may
  // write); the values are there after synchronize().
  virtual void downloadAsync(const DeviceTensor& tensor, float* host) = 0;

  // Between these two calls the work queued is recorded, not run, and nothing is timed: every
  // value allocated while recording must be freed before endRecording(), and nothing may wait
  // (synchronize() or download() throw convscope::Error). A device that cannot record throws.
  virtual void beginRecording() = 0;
  virtual std::unique_ptr<RecordedWork> endRecording() = 0;
  // Ends a recording that failed part way and discards it; values allocated during it must be
  // gone already.
  virtual void cancelRecording() noexcept = 0;

  // Holds back the work queued after this call until the returned gate goes: that work then runs
  // back to back, as a replayed recording does, so timing points between its parts time the parts,
  // not the host's launches of them (Engine::timeEndToEndStages). Nothing may wait for the GPU
  // while a gate is held -- it would wait for the gate, which opens by itself after a second, the
  // timings then spoilt. Null where a device cannot hold its queue: the work runs as queued.
  virtual std::unique_ptr<QueueGate> holdQueue() { return nullptr; }

  // Starts a new inference: forgets the timings of the previous one.
  virtual void beginRun() = 0;
  // The time of this run's timed() work, valid after synchronize().
  virtual double elapsedSeconds(int timing) = 0;

  // Runs `work` (which enqueues kernels) between two timing points; read the time with
  // elapsedSeconds() after synchronize().
  virtual int timed(const std::function<void()>& work) = 0;
  virtual void addChannelBias(float* data, const float* bias, int64_t images, int channels, int64_t plane) = 0;
  virtual void activation(Activation kind, const float* input, float* output, int64_t count) = 0;
  // out = a (op) b, element by element, a and b broadcast to out's shape (BroadcastOperands).
  virtual void arithmetic(BinaryArithmetic op, const BroadcastOperands& operands, const float* a, const float* b,
                          float* out) = 0;
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
