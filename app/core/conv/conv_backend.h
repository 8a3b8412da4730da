// A convolution on host pointers: what a CPU variant of the table (variant_table.h) provides, and
// what the correctness harness runs any variant through. It computes exactly the course's kernel,
// y[n][m][h][w] = sum_c,p,q x[..] * k[m][c][p][q]; bias and everything after it are the plan's.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "app/core/conv/conv_problem.h"
#include "app/core/device/device.h"
#include "app/core/util/error.h"

namespace convscope {

// What a variant computes on the way out of its conv kernel (a fused epilogue): the bias, then
// the activation, then the pooling, each only when the plan gave it to the variant.
struct ConvEpilogue {
  const float* bias = nullptr;  // [outChannels]
  bool hasActivation = false;
  Activation activation = Activation::Relu;
  bool hasPool = false;
  bool maxPool = true;  // else average
  PoolGeometry pool;
  // The weights are a model's initializer: the same values at the same address for as long as the
  // backend lives (HostBackends belongs to an Engine, which keeps its model). A backend that keeps
  // the weights in a layout of its own may then reuse that copy without comparing them again.
  bool constantWeights = false;

  bool empty() const { return !bias && !hasActivation && !hasPool; }
};

// An activation or a pooling applied to a conv kernel's output before it is written.
struct EpilogueStep {
  bool isPool = false;
  Activation activation = Activation::Relu;  // when !isPool
  bool maxPool = true;                       // when isPool; else average
  PoolGeometry pool;                         // when isPool
};

class ConvBackend;

// A conv output kept in a backend's own layout (cpu-onednn: channels in blocks of one vector
// register) for its next conv, which reads it without a reorder to NCHW and back. Whatever else
// reads it (another op, another variant, a feature map) reads copyTo's NCHW copy.
class HeldValue {
 public:
  virtual ~HeldValue() = default;
  virtual const ConvBackend& owner() const = 0;
  virtual const Shape& shape() const = 0;  // NCHW
  virtual void copyTo(float* nchw) const = 0;
  // This value plus `other` (a residual connection), kept in the same layout; nullptr when
  // `other` is not held the same way.
  virtual std::unique_ptr<HeldValue> plus(const HeldValue& other) const = 0;
};

// A conv's input: NCHW values, or a value its backend holds.
struct ConvInput {
  const float* plain = nullptr;
  const HeldValue* held = nullptr;
};

class ConvBackend {
 public:
  virtual ~ConvBackend() = default;

  // Bytes of scratch memory forward() allocates for `problem` (the im2col matrix, ...), so the
  // engine can refuse a layer whose workspace would not fit before running it.
  virtual int64_t workspaceBytes(const ConvProblem& problem) const {
    (void)problem;
    return 0;
  }

  // Host pointers: input NCHW, weights MCKK, output N x M x outHeight x outWidth (overwritten).
  virtual void forward(const ConvProblem& problem, const float* input, const float* weights, float* output) = 0;

  // For variants whose row lists fusable ops: the convolution and its epilogue in one pass;
  // `output` has the shape after the pooling when there is one.
  virtual void forwardFused(const ConvProblem& problem, const float* input, const float* weights, float* output,
                            const ConvEpilogue& epilogue) {
    (void)problem, (void)input, (void)weights, (void)output, (void)epilogue;
    throw Error("internal: a fused stage was planned for a variant that fuses nothing");
  }

  // forwardFused whose output may stay in the backend's own layout: returned held, or written as
  // NCHW to plainOutput() (and nullptr returned). `input.held`, if set, is this backend's.
  virtual std::unique_ptr<HeldValue> forwardHeld(const ConvProblem& problem, const ConvInput& input,
                                                 const float* weights, const ConvEpilogue& epilogue,
                                                 const std::function<float*()>& plainOutput) {
    if (input.held) throw Error("internal: a held value given to a backend that holds none");
    forwardFused(problem, input.plain, weights, plainOutput(), epilogue);
    return nullptr;
  }
};

}  // namespace convscope
