// Where a program finds the data shipped with ConvScope (the trained models, the kernel
// templates): beside the program when it is installed, else in the source tree it was built from.
#pragma once

namespace convscope {

// The shipped .onnx models and their cards. An installed program (<prefix>/bin/convscope)
// reads <prefix>/share/convscope/models, found relative to the program's own path so that a
// relocated or DESTDIR install works; a program run from the build tree reads the source
// tree's data/models (CONVSCOPE_MODELS_DIR).
const char* shippedModelsDir();

// The kernel templates (naive_conv.cu, tiled_conv.cu, convscope_kernel.h), resolved the same
// way: <prefix>/share/convscope/examples/kernels, else the source tree's examples/kernels.
const char* kernelTemplatesDir();

}  // namespace convscope
