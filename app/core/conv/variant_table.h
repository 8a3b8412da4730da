// The one table of convolution variants. A row says everything the rest of ConvScope knows about a
// variant: its id, names, the idea, its place in the course, what it needs, how it spreads a layer
// over the GPU (for the GUI to draw), which ops it applies inside its own kernel, and how to run
// it. The CLI, the GUI (selector, legends, colours), the benchmark, the engine's planner and the
// tests all iterate this table; nothing else names variants.
//
// Rows live next to their code: the CPU rows in app/core/conv/cpu_*.cpp (the core installs them);
// the GPU rows in gpu/gpu_variants.cpp, each pointing at its kernel file gpu/kernels/NN_name.cu,
// registered when a program that links gpu/ starts. Adding a GPU variant: one kernel file and its
// row. Tests add rows of their own.
//
// Students' kernels (docs/your-kernel.md) are rows too, but added while the program runs: the
// course's rows are fixed before the table is first read (convVariants()), and user rows live in
// a list of their own after them (userConvVariants()), added with addUserConvVariant(). Both are
// found by findConvVariant(), so the engine, the planner and the benchmark run a user row like
// any other.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/core/conv/conv_backend.h"
#include "app/core/conv/conv_problem.h"
#include "app/core/data/picture.h"
#include "app/core/device/kernel_handle.h"

namespace convscope {

// What a variant needs to run.
struct VariantRequirements {
  bool gpu = false;
  bool cudnn = false;
  bool tensorCores = false;
  int minComputeMajor = 0;  // e.g. 8 for Ampere's TF32 tensor cores
  int minComputeMinor = 0;

  // "CPU", "CUDA GPU", "CUDA GPU + cuDNN", "CUDA GPU, compute capability 8.0+, tensor cores".
  std::string describe() const;
};

// How a kernel's block and thread indices reach the output, in a form the GPU mapping view can
// compute with (the `mapping` words say the same for people). Blocks are listed in the order
// below and run grid-stride: block b of the list runs as blockIdx.x = b % gridX.
enum class BlockOrder {
  kNotDescribed,  // cuDNN's own kernels, persistent grids that take work at run time, helper kernels
  // Block b, thread t: element b * threadsPerBlock + t of the flat N x M x H x W output.
  kFlatOutput,
  // Blocks (image, tile row, tile column, output map), the map fastest; a block computes a
  // tileHeight x tileWidth patch of one map, thread (x, y) its output (x, y) (the input tile it
  // stages: ((tile - 1) * stride + kernel) per side, the halo included).
  kMapTiles,
  // The output as a matrix (rows: output maps; columns: (image, oh, ow) flat): blocks (column
  // tile, map tile), the map tile fastest; a block computes tileHeight maps x tileWidth columns,
  // thread t the columns t, t + threadsPerBlock, ... of it.
  kMatrixTiles,
  // A student's kernel (docs/your-kernel.md): blockIdx.x a tile column, blockIdx.y a tile row,
  // blockIdx.z image x output map (n * M + m), each block a tileHeight x tileWidth patch of one
  // map; no grid-stride loop. Thread (x, y) computes output (x, y) of the tile when the block is
  // the tile's size, as the templates do; a smaller block's threads take outputs as the kernel chooses.
  kGridTiles,
};

// One kernel launch of a variant for one layer: what the GPU mapping view draws. A variant may
// launch several kernels per layer (an unroll kernel, then a matrix multiply).
struct KernelLaunchGeometry {
  std::string kernel;  // the __global__ function
  int gridX = 1, gridY = 1, gridZ = 1;
  int blockX = 1, blockY = 1, blockZ = 1;
  int tileHeight = 0, tileWidth = 0;             // outputs one block computes (0: not tiled over the map)
  int64_t sharedBytes = 0;                       // per block, static and dynamic
  std::string mapping;                           // how grid and block indices map to the output, in words
  BlockOrder order = BlockOrder::kNotDescribed;  // the same, for the mapping view to compute with

  int64_t threadsPerBlock() const { return int64_t{blockX} * blockY * blockZ; }
  int64_t blocks() const { return int64_t{gridX} * gridY * gridZ; }
};

struct ChainNetwork;

// What the rest of ConvScope measures against a variant. The table gives each role other than
// kCourseStep to at most one row, so no code outside it names a variant to find it.
enum class VariantRole {
  kCourseStep,
  // The course's first GPU step: the Timing tab's speed-ups are "over" it, and a class's ranking
  // draws it as a reference line (its "x GPU baseline" column).
  kCourseBaseline,
  // The vendor's library (cuDNN): the line to beat; a class's ranking draws it and counts the
  // submissions faster than it.
  kVendorLibrary,
};

// Every op type a conv kernel can apply after its bias (the activations and pooling windows of
// epilogue.h): the fusableOps of a variant whose kernel has the whole epilogue.
const std::vector<std::string>& everyEpilogueOp();

// What a whole-network kernel reads and writes for one batch, all on the device. The images come
// as floats at the model's input size, or as the 8-bit images the end-to-end path staged, which
// the kernel resizes as it reads them (the taps of bilinearTaps, for height and width).
struct NetworkRun {
  int images = 0;
  const float* input = nullptr;    // images x 1 x inputHeight x inputWidth, or null when bytes are given
  const uint8_t* bytes = nullptr;  // images x byteHeight x byteWidth
  int byteHeight = 0, byteWidth = 0;
  const BilinearTap* rowTaps = nullptr;  // inputHeight entries
  const BilinearTap* colTaps = nullptr;  // inputWidth entries
  // Per layer of the chain, conv layers first, then the fully connected ones: weights and bias
  // (null when the layer has none).
  std::vector<const float*> weights, biases;
  float* output = nullptr;  // images x classes: probabilities with the network's softmax, else scores
};

struct ConvVariant {
  std::string id;           // what users type: --variant <id>
  std::string displayName;  // what charts and the GUI show
  std::string description;  // one sentence: the idea this variant demonstrates
  std::string courseStep;   // the course optimization it corresponds to
  int courseOrder = 0;      // its place in the course; the table's order (GPU kernel files carry it)
  VariantRequirements requirements;
  std::string sourceFile;  // where its code lives, relative to the project folder
  // The variant ConvScope picks by default among those that can run here (GPU ones first).
  bool preferredDefault = false;
  VariantRole role = VariantRole::kCourseStep;
  // ONNX op types this variant applies in its own conv kernel after the bias ("Relu", "MaxPool");
  // the planner fuses such a chain into one stage. Empty: the conv output is written as it is.
  std::vector<std::string> fusableOps;
  // Whether it fuses `step` after a conv of this shape (one of fusableOps; e.g. only the pooling
  // windows its kernel was written for). Null: every step whose op type is in fusableOps.
  std::function<bool(const ConvProblem&, const EpilogueStep&)> fusesStep;

  // The arithmetic of its products, as the plan and the charts name it ("FP32", "TF32",
  // "3xTF32"), and the normwise relative error against a double-precision reference that the
  // tests allow it: 1e-5 for FP32 products; TF32 rounds both factors to 11 significant bits
  // (2^-11 each), ~2^-10 a product: 2e-3 (the course layers measure 1e-4 to 3e-4).
  // Bytes it writes to global memory and reads back beyond the compulsory traffic (input,
  // weights and output once), e.g. an unrolled matrix; the roofline's intensity counts them.
  // Null: none.
  std::function<int64_t(const ConvProblem&)> scratchBytes;

  std::string arithmetic = "FP32";
  double relativeTolerance = 1e-5;

  // Empty when the variant computes `problem`, else why not (the plan then gives that layer to
  // another variant, and says so). Null: every shape.
  std::function<std::string(const ConvProblem&)> unsupportedReason;
  // How it launches `problem` on a GPU; null for CPU variants.
  std::function<std::vector<KernelLaunchGeometry>(const ConvProblem&)> launchGeometry;
  // GPU variants of a CUDA build: the kernel of launch `index` of launchGeometry(problem), for
  // the occupancy the CUDA runtime reports (gpu_platform.h); null, or a null function: unknown.
  std::function<KernelHandle(const ConvProblem&, size_t index)> kernelHandle;
  // CPU variants: the backend on host pointers.
  std::function<std::unique_ptr<ConvBackend>()> createHostBackend;
  // GPU variants: enqueue the convolution on `device` (device pointers). With an epilogue, only
  // the parts listed in fusableOps are ever set.
  std::function<void(Device& device, const ConvProblem& problem, const float* input, const float* weights,
                     float* output, const ConvEpilogue& epilogue)>
      runOnDevice;

  // Whole-network variants (one kernel for the whole network): empty when it runs `network` in
  // one kernel on this machine, else why not; null for the variants that run layers.
  std::function<std::string(const ChainNetwork& network)> declinesNetwork;
  std::function<void(Device& device, const ChainNetwork& network, const NetworkRun& run)> runNetwork;

  bool runsOnGpu() const { return requirements.gpu; }
  bool canFuse(const std::string& opType) const;
  // Empty when it can run on this machine, else why not ("no CUDA device found").
  std::string unavailableReason() const;
  std::string unsupportedReasonFor(const ConvProblem& problem) const {
    return unsupportedReason ? unsupportedReason(problem) : std::string();
  }
};

// Adds a row, before the table is first read (gpu/ and tests add theirs while the program starts,
// before main()). Throws convscope::Error when the id or the role is taken, the row lacks a way to
// run, or the table has been read already (references to rows must stay valid). Not thread-safe.
void registerConvVariant(ConvVariant variant);

// Every row of the course, in course order (user rows are not among them: userConvVariants()).
const std::vector<ConvVariant>& convVariants();

// Adds a student's kernel as a row at run time, after the course's (its courseOrder is ignored).
// Rows are never moved or removed, so the returned reference stays valid; to recompile a file,
// keep its row and change what its runOnDevice calls. Throws convscope::Error when the id is
// taken (by a course or user row) or the row has no way to run. Thread-safe.
const ConvVariant& addUserConvVariant(ConvVariant variant);

// The user rows, in the order they were added; the pointers stay valid. Thread-safe.
std::vector<const ConvVariant*> userConvVariants();

// A course or user row. Throws convscope::Error listing the known ids when `id` is neither.
const ConvVariant& findConvVariant(const std::string& id);

// The course row with `role` (not kCourseStep), or null when no row has it.
const ConvVariant* variantWithRole(VariantRole role);

// A backend on host pointers for any variant (a GPU variant copies to the GPU and back: the
// correctness harness). Throws convscope::Error with the reason when the variant cannot run here.
std::unique_ptr<ConvBackend> createConvBackend(const std::string& id);

// The preferred variant that can run on this machine; what the CLI and GUI use by default.
std::string defaultConvVariant();

// Who runs a layer that `selected` declines: the nearest earlier step of the course on the same
// device (GPU or CPU) that computes `problem` and can run here (when `selected` cannot run here
// either, by shape alone), else the nearest later one; for a GPU variant whose shape no GPU row
// computes, the nearest CPU variant (the stage then runs on the host). Throws convscope::Error
// when none does.
const ConvVariant& fallbackConvVariant(const ConvVariant& selected, const ConvProblem& problem);

}  // namespace convscope
