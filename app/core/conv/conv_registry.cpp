#include "conv/conv_registry.h"

#include "conv/cpu_backends.h"
#include "util/error.h"

namespace convscope {
namespace {

std::string alwaysAvailable() { return {}; }

std::vector<ConvVariant> buildRegistry() {
  std::vector<ConvVariant> variants = {
      {"cpu-reference", "CPU reference",
       "Seven plain loops, one output at a time, accumulated in double: the yardstick for every other variant.",
       "CPU implementation", "CPU", alwaysAvailable, makeCpuReferenceConv},
      {"cpu-im2col-gemm", "CPU im2col + GEMM",
       "Unrolls receptive fields into a matrix so the convolution becomes one BLAS matrix product.",
       "Input unrolling (on the CPU)", "CPU", alwaysAvailable, makeCpuIm2colGemmConv},
  };
  // The GPU variants of the course join this table in gpu/ (see gpu/README.md).
  return variants;
}

}  // namespace

const std::vector<ConvVariant>& convVariants() {
  static const std::vector<ConvVariant> registry = buildRegistry();
  return registry;
}

const ConvVariant& findConvVariant(const std::string& id) {
  std::string known;
  for (const ConvVariant& v : convVariants()) {
    if (v.id == id) return v;
    known += (known.empty() ? "" : ", ") + v.id;
  }
  throw Error("unknown kernel variant '" + id + "' (known: " + known + ")");
}

std::unique_ptr<ConvBackend> createConvBackend(const std::string& id) {
  const ConvVariant& variant = findConvVariant(id);
  if (const std::string reason = variant.unavailableReason(); !reason.empty())
    throw Error("kernel variant '" + id + "' cannot run here: " + reason);
  return variant.create();
}

std::string defaultConvVariant() { return "cpu-im2col-gemm"; }

}  // namespace convscope
