// The kernels of the layers around the convolutions (bias, activations, arithmetic, pooling,
// Gemm's broadcast, softmax): one thread per output element, simple rather than fast, since the
// convolutions are what the course times. Each launcher enqueues its kernel on `stream`, checks
// the launch and never synchronises.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "app/core/data/picture.h"
#include "app/core/device/device.h"

namespace convscope::gpu {

// data[image][channel][i] += bias[channel] over an [images][channels][plane] tensor.
void launchAddChannelBias(float* data, const float* bias, int64_t images, int channels, int64_t plane,
                          cudaStream_t stream);
void launchActivation(Activation kind, const float* input, float* output, int64_t count, cudaStream_t stream);
// out = a (op) b over operands.outDims, a and b read through their broadcast strides.
void launchArithmetic(BinaryArithmetic op, const BroadcastOperands& operands, const float* a, const float* b,
                      float* out, cudaStream_t stream);
void launchMaxPool(const PoolGeometry& geometry, const float* input, float* output, cudaStream_t stream);
void launchAveragePool(const PoolGeometry& geometry, const float* input, float* output, cudaStream_t stream);
// out[i][j] = c[i or 0][j or 0], see Device::broadcast2d.
void launchBroadcast2d(const float* c, int cRows, int cCols, float* out, int m, int n, cudaStream_t stream);
// 8-bit images to floats at the model's input size: out[i][0][y][x] from the source bytes through
// the host's taps (bilinearTaps), with the host's operations in the host's order and no fused
// multiply-add, so each value has the host's bits. rowTaps/colTaps: device copies, outHeight and
// outWidth entries. Same size: x / 255 copied.
void launchResizeImageBytes(const uint8_t* bytes, int count, int height, int width, const BilinearTap* rowTaps,
                            const BilinearTap* colTaps, float* out, int outHeight, int outWidth, cudaStream_t stream);
// Softmax over the middle axis of an [outer][length][inner] view.
void launchSoftmax(const float* input, float* output, int64_t outer, int64_t length, int64_t inner,
                   cudaStream_t stream);

}  // namespace convscope::gpu
