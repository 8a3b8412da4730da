// What ConvScope gives your kernel (docs/your-kernel.md): the shape of one convolution. ConvScope
// compiles your file with NVRTC and supplies this header itself, so #include "convscope_kernel.h"
// works wherever your file lives; the copy here is for your editor.
//
// Tensors are NCHW floats in GPU memory:
//   input   [batch][inChannels][inHeight][inWidth]
//   weights [outChannels][inChannels][kernelHeight][kernelWidth]
//   output  [batch][outChannels][outHeight][outWidth]   (write every element)
// output[n][m][h][w] = sum over c, p, q of
//   input[n][c][h * strideHeight - padTop + p][w * strideWidth - padLeft + q] * weights[m][c][p][q],
// where an input position outside the image counts as zero (padding).
#ifndef CONVSCOPE_KERNEL_H
#define CONVSCOPE_KERNEL_H

struct ConvShape {
  int batch;
  int inChannels, inHeight, inWidth;
  int outChannels, outHeight, outWidth;
  int kernelHeight, kernelWidth;
  int strideHeight, strideWidth;
  int padTop, padLeft;
};

#endif  // CONVSCOPE_KERNEL_H
