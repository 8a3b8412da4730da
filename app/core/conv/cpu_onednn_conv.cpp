// cpu-onednn: beyond the course, the convolution as a tuned CPU library computes it. oneDNN
// (Debian's libdnnl) generates a kernel for this machine's vector units when a layer shape is
// first seen (AVX2, AVX-512), keeps several output maps in one vector register (a "blocked"
// layout) and applies the bias and the activation while each output is still in a register.
// ConvScope hands it a few images per core at a time and pools each chunk while it is still in
// that core's cache, so a conv -> activation -> pooling chain is one pass over memory.
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "app/core/conv/cpu_backends.h"
#include "app/core/util/checked_math.h"
#include "app/core/util/error.h"
#include "app/core/util/host_epilogue.h"
#include "app/core/util/input_file.h"
#include "app/core/util/memory_limit.h"
#include "app/core/util/omp_exceptions.h"

namespace convscope {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// A chunk's data in cache between the convolution and the pooling: about half a core's L2.
constexpr int64_t kChunkBytes = int64_t{512} << 10;
// A chunk of fewer FLOPs than this runs on the calling thread alone. Spread over the cores it
// would save a few microseconds at best, about what waking the other threads and joining them
// costs: lenet5's two layers for one image (0.24 and 0.48 MFLOP) took 9.4 and 6.5 us on one core
// of the 2-core development machine and 10-22 and 7-10 us on two (docs/results/2026-11-26-cpu-latency).
constexpr int64_t kSerialChunkFlops = int64_t{1} << 20;
// ... and moves fewer bytes than this: a depthwise conv does few FLOPs for its bytes, and
// EfficientNet-Lite0's 3x3 ones (1 MFLOP, 450 kB at 1,152 x 7 x 7) took 130 us on one core.
constexpr int64_t kSerialChunkBytes = int64_t{256} << 10;
// oneDNN's kernels load whole cache lines; buffers start on one.
constexpr size_t kAlignment = 64;

size_t alignUp(size_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

std::byte* alignedStart(std::byte* data) {
  const auto address = reinterpret_cast<uintptr_t>(data);
  return data + (kAlignment - address % kAlignment) % kAlignment;
}

bool runsSerially(const ConvProblem& p, int images) {
  const int64_t batch = std::max(p.batch, 1);
  const int64_t bytes = (p.inputElements() + p.outputElements()) / batch * images * int64_t{sizeof(float)};
  return p.flops() / batch * images < kSerialChunkFlops && bytes < kSerialChunkBytes;
}

// oneDNN (its OpenMP build) sizes a primitive's thread split, and runs it, with as many threads
// as omp_get_max_threads() says at that moment. While this lives the calling thread says `threads`.
class OneDnnThreads {
 public:
  explicit OneDnnThreads(int threads) : previous_(omp_get_max_threads()) { omp_set_num_threads(threads); }
  ~OneDnnThreads() { omp_set_num_threads(previous_); }
  OneDnnThreads(const OneDnnThreads&) = delete;
  OneDnnThreads& operator=(const OneDnnThreads&) = delete;

 private:
  int previous_;
};

// The post-op that computes an activation (util/activations.h's oneDNN columns).
struct Eltwise {
  dnnl::algorithm algorithm;
  float alpha, beta;
};

Eltwise eltwiseOf(Activation activation) {
  switch (activation) {
#define CONVSCOPE_ONEDNN_ELTWISE(name, onednn, alpha, beta, nondecreasing, value) \
  case Activation::name:                                                          \
    return {dnnl::algorithm::onednn, alpha, beta};
    CONVSCOPE_FUSABLE_ACTIVATIONS(CONVSCOPE_ONEDNN_ELTWISE)
#undef CONVSCOPE_ONEDNN_ELTWISE
  }
  throw Error("internal: an activation without a oneDNN counterpart");
}

// What the primitives for one chunk size depend on.
struct KernelKey {
  std::array<int, 16> problem;  // the ConvProblem's fields, the batch being the chunk's images
  bool bias;
  int activation;  // -1: none
  int srcBlock;    // the input's channel block when it is held (OneDnnHeld), 0 for NCHW
  auto operator<=>(const KernelKey&) const = default;
};

// A oneDNN memory object over one buffer. Making one takes about a microsecond (the library
// allocates it and copies its descriptor); a run on the calling thread finds most buffers where
// the last run left them (the workspace, the reordered weights, the bias) and keeps their objects.
struct MemoryAt {
  memory object;
  const void* handle = nullptr;
};

// The primitives that run one chunk of `images` images: the convolution with its bias and
// activation, and the reorders between ConvScope's NCHW tensors and the layouts oneDNN chose.
struct ChunkKernels {
  int images = 0;
  dnnl::convolution_forward conv;
  memory::desc userSrc, convSrc, userWeights, convWeights, userDst, convDst, bias, scratchpad;
  std::optional<dnnl::reorder> srcReorder, weightsReorder, dstReorder;
  // 8 or 16 when the conv output is channel-blocked (nChw8c, nChw16c), which the pooling reads
  // as it is; 0 for any other layout.
  int dstBlock = 0;
  // The weights in convWeights' layout. A model's weights (ConvEpilogue::constantWeights) are
  // reordered once for each address: layers of one shape (EfficientNet repeats its blocks) keep
  // one copy each, and no call compares them again (EfficientNet-Lite0's are 18 MB). Other weights
  // are compared with the last call's, and reordered when they differ.
  std::unordered_map<const float*, std::unique_ptr<std::byte[]>> constantWeights;
  std::vector<float> weightsSeen;
  std::unique_ptr<std::byte[]> reorderedWeights;
  // The calling thread's memory objects from its last run of this chunk size (runs are serialised
  // by the backend's mutex; the threads of a parallel region make their own).
  struct Memories {
    MemoryAt userSrc, convSrc, weights, convDst, scratchpad, bias, plainDst;
  };
  mutable Memories callingThread;

  // Per thread: the input in oneDNN's layout, the conv output in oneDNN's layout, the conv output
  // as NCHW planes (for a pooling that cannot read its layout), and the library's scratch memory.
  size_t srcBytes() const { return srcReorder ? alignUp(convSrc.get_size()) : 0; }
  size_t convDstBytes(bool pooled) const { return dstReorder || pooled ? alignUp(convDst.get_size()) : 0; }
  size_t plainDstBytes(bool pooled) const {
    return pooled && dstReorder && !dstBlock ? alignUp(userDst.get_size()) : 0;
  }
  size_t threadBytes(bool pooled) const {
    return srcBytes() + convDstBytes(pooled) + plainDstBytes(pooled) + alignUp(scratchpad.get_size());
  }
};

// A conv output in the channel-blocked layout its kernel wrote (nChw8c, nChw16c): the batch is
// the outermost axis, so a chunk of images is one contiguous slice of it. Held only when the
// channels fill whole blocks, so it is no larger than its NCHW copy and has no padding.
class OneDnnHeld final : public HeldValue {
 public:
  OneDnnHeld(const ConvBackend& owner, const dnnl::engine& engine, Shape shape, int block)
      : owner_(owner),
        engine_(engine),
        shape_(std::move(shape)),
        block_(block),
        bytes_(std::make_unique_for_overwrite<std::byte[]>(byteCount() + kAlignment)) {}

  const ConvBackend& owner() const override { return owner_; }
  const Shape& shape() const override { return shape_; }
  int block() const { return block_; }
  float* data() const { return reinterpret_cast<float*>(alignedStart(bytes_.get())); }
  size_t imageBytes() const { return byteCount() / static_cast<size_t>(shape_[0]); }

  void copyTo(float* nchw) const override {
    const memory::dims dims(shape_.begin(), shape_.end());
    memory from(memory::desc(dims, memory::data_type::f32, blockedTag(block_)), engine_, data());
    memory to(memory::desc(dims, memory::data_type::f32, Tag::nchw), engine_, nchw);
    dnnl::stream stream(engine_);
    dnnl::reorder(from, to).execute(stream, from, to);
    stream.wait();
  }

  std::unique_ptr<HeldValue> plus(const HeldValue& other) const override {
    const auto* same = dynamic_cast<const OneDnnHeld*>(&other);
    if (!same || same->block_ != block_ || same->shape_ != shape_) return nullptr;
    // One layout, no padding: the sum of the layouts is the layout of the sum.
    auto sum = std::make_unique<OneDnnHeld>(owner_, engine_, shape_, block_);
    const float* a = data();
    const float* b = same->data();
    float* y = sum->data();
    const int64_t count = static_cast<int64_t>(byteCount() / sizeof(float));
#pragma omp parallel for schedule(static) if (count >= kParallelElements)
    for (int64_t i = 0; i < count; ++i) y[i] = a[i] + b[i];
    return sum;
  }

  static Tag blockedTag(int block) {
    return block == 16 ? Tag::nChw16c : Tag::nChw8c;
  }

 private:
  // Fewer elements than this are summed on the calling thread (waking the others costs more).
  static constexpr int64_t kParallelElements = int64_t{1} << 16;
  size_t byteCount() const {
    size_t count = sizeof(float);
    for (const int64_t extent : shape_) count *= static_cast<size_t>(extent);
    return count;
  }

  const ConvBackend& owner_;
  dnnl::engine engine_;
  Shape shape_;
  int block_;
  std::unique_ptr<std::byte[]> bytes_;
};

class CpuOneDnnConv final : public ConvBackend {
 public:
  CpuOneDnnConv() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {}

  int64_t workspaceBytes(const ConvProblem& p) const override {
    const std::lock_guard<std::mutex> lock(mutex_);
    const Schedule s = scheduleFor(p, ConvEpilogue{}, 0);
    return saturatingMul(s.threads, static_cast<int64_t>(s.threadBytes));
  }

  void forward(const ConvProblem& p, const float* input, const float* weights, float* output) override {
    run(p, input, weights, output, ConvEpilogue{});
  }

  void forwardFused(const ConvProblem& p, const float* input, const float* weights, float* output,
                    const ConvEpilogue& epilogue) override {
    run(p, input, weights, output, epilogue);
  }

  // The output stays in the blocked layout the conv wrote when the next conv can read it as it is
  // (no pooling, whole blocks of channels); a held input is read in its layout.
  std::unique_ptr<HeldValue> forwardHeld(const ConvProblem& p, const ConvInput& input, const float* weights,
                                         const ConvEpilogue& epilogue,
                                         const std::function<float*()>& plainOutput) override {
    const OneDnnHeld* heldIn = nullptr;
    if (input.held) {
      heldIn = dynamic_cast<const OneDnnHeld*>(input.held);
      if (!heldIn || &heldIn->owner() != this) throw Error("internal: cpu-onednn given another backend's value");
    }
    try {
      const std::lock_guard<std::mutex> lock(mutex_);
      const int srcBlock = heldIn ? heldIn->block() : 0;
      const Schedule s = scheduleFor(p, epilogue, srcBlock);
      const int block = s.full->dstBlock;
      if (!epilogue.hasPool && block && s.last->dstBlock == block && p.outChannels % block == 0) {
        auto heldOut = std::make_unique<OneDnnHeld>(*this, engine_,
                                                    Shape{p.batch, p.outChannels, p.outHeight(), p.outWidth()}, block);
        runLocked(p, input.plain, heldIn, weights, nullptr, heldOut.get(), epilogue);
        return heldOut;
      }
      runLocked(p, input.plain, heldIn, weights, plainOutput(), nullptr, epilogue);
      return nullptr;
    } catch (const dnnl::error& error) {
      throw Error("cpu-onednn: oneDNN failed on " + p.describe() + ": " + error.what());
    }
  }

 private:
  // How a batch is cut: chunks of `chunk` images (the last may be smaller), run by `threads`
  // threads at once; with one thread oneDNN spreads each chunk over the cores itself.
  struct Schedule {
    int chunk = 1;
    int chunks = 1;
    int threads = 1;
    ChunkKernels* full = nullptr;
    ChunkKernels* last = nullptr;  // the remainder chunk's (== full when there is none)
    size_t threadBytes = 0;
  };

  Schedule scheduleFor(const ConvProblem& p, const ConvEpilogue& e, int srcBlock) const {
    Schedule s;
    const int64_t perImage =
        (p.inputElements() / p.batch + 2 * p.outputElements() / p.batch) * static_cast<int64_t>(sizeof(float));
    const int cores = omp_get_max_threads();
    s.chunk = static_cast<int>(std::clamp<int64_t>(kChunkBytes / std::max<int64_t>(perImage, 1), 1, 64));
    // Enough chunks for every core; a batch smaller than that is one chunk, threaded by oneDNN.
    s.chunk = std::min(s.chunk, std::max(1, p.batch / cores));
    if (p.batch < 2 * cores) s.chunk = p.batch;
    s.chunks = (p.batch + s.chunk - 1) / s.chunk;
    s.threads = std::min(s.chunks, cores);
    s.full = &kernels(p, s.chunk, e, srcBlock);
    const int remainder = p.batch - (s.chunks - 1) * s.chunk;
    s.last = remainder == s.chunk ? s.full : &kernels(p, remainder, e, srcBlock);
    s.threadBytes = std::max(s.full->threadBytes(e.hasPool), s.last->threadBytes(e.hasPool));
    return s;
  }

  ChunkKernels& kernels(const ConvProblem& p, int images, const ConvEpilogue& e, int srcBlock) const {
    const KernelKey key{
        {images, p.inChannels, p.inHeight, p.inWidth, p.outChannels, p.kernelHeight, p.kernelWidth, p.strideHeight,
         p.strideWidth, p.padTop, p.padLeft, p.padBottom, p.padRight, p.group, p.dilationHeight, p.dilationWidth},
        e.bias != nullptr,
        e.hasActivation ? static_cast<int>(e.activation) : -1,
        srcBlock};
    std::unique_ptr<ChunkKernels>& slot = cache_[key];
    if (!slot) {
      // A small chunk's primitive is made for the one thread that runs it (its scratchpad too).
      std::optional<OneDnnThreads> oneThread;
      if (runsSerially(p, images)) oneThread.emplace(1);
      slot = makeKernels(p, images, e, srcBlock);
    }
    return *slot;
  }

  std::unique_ptr<ChunkKernels> makeKernels(const ConvProblem& p, int images, const ConvEpilogue& e,
                                            int srcBlock) const {
    auto k = std::make_unique<ChunkKernels>();
    k->images = images;
    const memory::dims src{images, p.inChannels, p.inHeight, p.inWidth};
    // A grouped convolution's weights carry the group as their own leading axis in oneDNN
    // (goihw): the same bytes as ConvScope's [outChannels][inChannels / group][KH][KW].
    const memory::dims weights =
        p.isGrouped()
            ? memory::dims{p.group, p.outChannelsPerGroup(), p.inChannelsPerGroup(), p.kernelHeight, p.kernelWidth}
            : memory::dims{p.outChannels, p.inChannels, p.kernelHeight, p.kernelWidth};
    const memory::dims dst{images, p.outChannels, p.outHeight(), p.outWidth()};
    const auto f32 = memory::data_type::f32;
    // The input as the caller has it: NCHW, or held in a conv's blocked output layout.
    const Tag userSrcTag = srcBlock ? OneDnnHeld::blockedTag(srcBlock) : Tag::nchw;
    k->userSrc = memory::desc(src, f32, userSrcTag);
    k->userWeights = memory::desc(weights, f32, p.isGrouped() ? Tag::goihw : Tag::oihw);
    k->userDst = memory::desc(dst, f32, Tag::nchw);
    if (e.bias) k->bias = memory::desc({p.outChannels}, f32, Tag::x);
    dnnl::primitive_attr attributes;
    attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // one scratch buffer per thread, ours
    if (e.hasActivation) {
      dnnl::post_ops ops;
      const Eltwise eltwise = eltwiseOf(e.activation);
      ops.append_eltwise(1.0f, eltwise.algorithm, eltwise.alpha, eltwise.beta);
      attributes.set_post_ops(ops);
    }
    // The output and weights in layouts of oneDNN's choice (format_tag::any: for its direct
    // kernels, maps in blocks of one vector register); the input as it is (NCHW, which the direct
    // kernels read for layers of few channels, or held blocked) without a reorder. Where only a slower general
    // (im2col + gemm, or reference) implementation reads NCHW, the input's layout is left to
    // oneDNN too, and reordered.
    const auto primitiveFor = [&](Tag srcTag) {
      const dnnl::convolution_forward::desc desc(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, memory::desc(src, f32, srcTag),
          memory::desc(weights, f32, Tag::any), k->bias, memory::desc(dst, f32, Tag::any),
          {p.strideHeight, p.strideWidth}, {p.dilationHeight - 1, p.dilationWidth - 1},  // oneDNN counts 0 as adjacent
          {p.padTop, p.padLeft}, {p.padBottom, p.padRight});
      return dnnl::convolution_forward::primitive_desc(desc, attributes, engine_);
    };
    dnnl::convolution_forward::primitive_desc pd = primitiveFor(userSrcTag);
    const std::string implementation = pd.impl_info_str();
    if (implementation.find("gemm") != std::string::npos || implementation.find("ref") != std::string::npos)
      pd = primitiveFor(Tag::any);
    k->conv = dnnl::convolution_forward(pd);
    k->convSrc = pd.src_desc();
    k->convWeights = pd.weights_desc();
    k->convDst = pd.dst_desc();
    k->scratchpad = pd.scratchpad_desc();
    if (k->convSrc != k->userSrc)
      k->srcReorder = dnnl::reorder(dnnl::reorder::primitive_desc(engine_, k->userSrc, engine_, k->convSrc));
    if (k->convWeights != k->userWeights)
      k->weightsReorder =
          dnnl::reorder(dnnl::reorder::primitive_desc(engine_, k->userWeights, engine_, k->convWeights));
    if (k->convDst == memory::desc(dst, f32, Tag::nChw16c)) k->dstBlock = 16;
    if (k->convDst == memory::desc(dst, f32, Tag::nChw8c)) k->dstBlock = 8;
    if (k->convDst != k->userDst)
      k->dstReorder = dnnl::reorder(dnnl::reorder::primitive_desc(engine_, k->convDst, engine_, k->userDst));
    return k;
  }

  void run(const ConvProblem& p, const float* input, const float* weights, float* output, const ConvEpilogue& e) {
    try {
      const std::lock_guard<std::mutex> lock(mutex_);
      runLocked(p, input, nullptr, weights, output, nullptr, e);
    } catch (const dnnl::error& error) {
      throw Error("cpu-onednn: oneDNN failed on " + p.describe() + ": " + error.what());
    }
  }

  // The input is `input` (NCHW) or `heldIn`; the output goes to `output` (NCHW, pooled when the
  // epilogue pools) or to `heldOut`, in the conv's own blocked layout.
  void runLocked(const ConvProblem& p, const float* input, const OneDnnHeld* heldIn, const float* weights,
                 float* output, OneDnnHeld* heldOut, const ConvEpilogue& e) {
    const Schedule s = scheduleFor(p, e, heldIn ? heldIn->block() : 0);
    // Every buffer is allocated here, before the parallel region: an exception (std::bad_alloc)
    // thrown inside one cannot be caught outside it and ends the process.
    const int64_t bytes = saturatingMul(s.threads, static_cast<int64_t>(s.threadBytes));
    // Kept between calls: a fresh buffer per call would be zeroed, or page-faulted in, each time.
    if (workspaceSize_ < static_cast<size_t>(bytes) + kAlignment) {
      const MemoryLimit limit = memoryLimit();
      if (bytes > limit.bytes)
        throw Error("cpu-onednn: the chunk buffers for " + p.describe() + " need " + formatBytes(bytes) +
                    "; the limit is " + formatBytes(limit.bytes) + " (" + limit.origin + ")");
      workspace_.reset();
      workspaceSize_ = static_cast<size_t>(bytes) + kAlignment;
      workspace_ = std::make_unique_for_overwrite<std::byte[]>(workspaceSize_);
    }
    std::byte* base = alignedStart(workspace_.get());

    // The weights in each chunk size's layout.
    dnnl::stream& stream = stream_;
    std::map<const ChunkKernels*, void*> convWeights;
    for (ChunkKernels* k : {s.full, s.last})
      convWeights[k] = k->weightsReorder ? reorderedWeights(*k, weights, p.weightElements(), e.constantWeights, stream)
                                         : static_cast<void*>(const_cast<float*>(weights));
    stream.wait();

    const int64_t inImage = p.inputElements() / p.batch;
    const int64_t convImage = p.outputElements() / p.batch;
    const int64_t outImage = e.hasPool ? int64_t{p.outChannels} * e.pool.outHeight * e.pool.outWidth : convImage;
    const auto runChunk = [&](int c, std::byte* scratch, dnnl::stream& chunkStream, bool poolInParallel,
                              bool callingThread) {
      const ChunkKernels& k = c == s.chunks - 1 ? *s.last : *s.full;
      ChunkKernels::Memories fresh;
      ChunkKernels::Memories& kept = callingThread ? k.callingThread : fresh;
      // The object for `desc` over `handle`: the kept one while its buffer has not moved.
      const auto memoryAt = [this](MemoryAt& slot, const memory::desc& desc, const void* handle) -> memory& {
        if (!slot.object || slot.handle != handle) {
          slot.object = memory(desc, engine_, const_cast<void*>(handle));
          slot.handle = handle;
        }
        return slot.object;
      };
      const int64_t first = int64_t{c} * s.chunk;
      std::byte* next = scratch;
      const auto take = [&next](size_t size) {
        std::byte* at = next;
        next += size;
        return at;
      };
      const void* chunkIn = heldIn ? static_cast<const void*>(reinterpret_cast<const std::byte*>(heldIn->data()) +
                                                              first * heldIn->imageBytes())
                                   : static_cast<const void*>(input + first * inImage);
      memory userSrc = memoryAt(kept.userSrc, k.userSrc, chunkIn);
      memory convSrc = userSrc;
      if (k.srcReorder) {
        convSrc = memoryAt(kept.convSrc, k.convSrc, take(k.srcBytes()));
        k.srcReorder->execute(chunkStream, userSrc, convSrc);
      }
      // A held output: the conv writes its slice of it, and nothing follows. Without pooling, an
      // NCHW conv output goes straight to `output`.
      float* chunkOut = heldOut ? nullptr : output + first * outImage;
      void* convDstHandle = nullptr;
      if (heldOut)
        convDstHandle = reinterpret_cast<std::byte*>(heldOut->data()) + first * heldOut->imageBytes();
      else if (k.convDstBytes(e.hasPool))
        convDstHandle = take(k.convDstBytes(e.hasPool));
      else
        convDstHandle = chunkOut;
      memory convDst = memoryAt(kept.convDst, k.convDst, convDstHandle);
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, convSrc},
          {DNNL_ARG_WEIGHTS, memoryAt(kept.weights, k.convWeights, convWeights.at(&k))},
          {DNNL_ARG_DST, convDst},
          {DNNL_ARG_SCRATCHPAD, memoryAt(kept.scratchpad, k.scratchpad, take(alignUp(k.scratchpad.get_size())))}};
      if (e.bias) args.emplace(DNNL_ARG_BIAS, memoryAt(kept.bias, k.bias, e.bias));
      k.conv.execute(chunkStream, args);
      if (heldOut) {
        chunkStream.wait();
        return;
      }
      if (e.hasPool && k.dstBlock) {
        chunkStream.wait();
        poolBlockedPlanes(e.pool, e.maxPool, k.dstBlock, p.outChannels, static_cast<const float*>(convDstHandle),
                          chunkOut, k.images);
        return;
      }
      const float* plain = static_cast<const float*>(convDstHandle);
      if (k.dstReorder) {
        void* plainHandle = e.hasPool ? static_cast<void*>(take(k.plainDstBytes(true))) : chunkOut;
        k.dstReorder->execute(chunkStream, convDst, memoryAt(kept.plainDst, k.userDst, plainHandle));
        plain = static_cast<const float*>(plainHandle);
      }
      chunkStream.wait();
      if (!e.hasPool) return;
      const int64_t planes = int64_t{k.images} * p.outChannels;
      if (!poolInParallel) {
        poolPlanes(e.pool, e.maxPool, plain, chunkOut, 0, planes);
        return;
      }
#pragma omp parallel for schedule(static)
      for (int64_t plane = 0; plane < planes; ++plane) poolPlanes(e.pool, e.maxPool, plain, chunkOut, plane, 1);
    };

    if (s.threads == 1) {
      // One chunk at a time, each spread over the cores by oneDNN (one image's latency), unless it
      // is too small to gain from more than one.
      for (int c = 0; c < s.chunks; ++c) {
        const bool serial = runsSerially(p, (c == s.chunks - 1 ? s.last : s.full)->images);
        std::optional<OneDnnThreads> oneThread;
        if (serial) oneThread.emplace(1);
        runChunk(c, base, stream, !serial, true);
      }
      return;
    }
    OmpExceptions errors;
#pragma omp parallel num_threads(s.threads)
    {
      std::byte* scratch = base + omp_get_thread_num() * s.threadBytes;
      std::optional<dnnl::stream> threadStream;
      errors.run([&] { threadStream.emplace(engine_); });
#pragma omp for schedule(dynamic)
      for (int c = 0; c < s.chunks; ++c)
        errors.run([&] {
          if (threadStream) runChunk(c, scratch, *threadStream, false, false);
        });
    }
    errors.rethrow();
  }

  // The caller's weights in k's layout: reordered once for a model's weights, and for other
  // weights whenever they differ from the last call's.
  static void* reorderedWeights(ChunkKernels& k, const float* weights, int64_t count, bool constant,
                                dnnl::stream& stream) {
    std::unique_ptr<std::byte[]>* slot = nullptr;
    if (constant) {
      slot = &k.constantWeights[weights];
      if (*slot) return alignedStart(slot->get());
    } else {
      const size_t n = static_cast<size_t>(count);
      if (k.reorderedWeights && k.weightsSeen.size() == n &&
          std::memcmp(weights, k.weightsSeen.data(), n * sizeof(float)) == 0)
        return alignedStart(k.reorderedWeights.get());
      k.weightsSeen.assign(weights, weights + n);
      slot = &k.reorderedWeights;
    }
    *slot = std::make_unique_for_overwrite<std::byte[]>(k.convWeights.get_size() + kAlignment);
    void* handle = alignedStart(slot->get());
    memory from(k.userWeights, stream.get_engine(), const_cast<float*>(weights));
    memory to(k.convWeights, stream.get_engine(), handle);
    k.weightsReorder->execute(stream, from, to);
    return handle;
  }

  dnnl::engine engine_;
  dnnl::stream stream_;  // the calling thread's; each thread of a parallel region makes its own
  mutable std::mutex mutex_;
  mutable std::map<KernelKey, std::unique_ptr<ChunkKernels>> cache_;
  std::unique_ptr<std::byte[]> workspace_;
  size_t workspaceSize_ = 0;
};

}  // namespace

ConvVariant cpuOneDnnVariant() {
  ConvVariant row;
  row.id = "cpu-onednn";
  row.displayName = "CPU oneDNN";
  row.description =
      "oneDNN's run-time generated kernels for this CPU's vector units, with bias, activation and pooling applied "
      "to each chunk of images while it is in cache.";
  row.courseStep = "Beyond the course: a tuned CPU library";
  row.courseOrder = 0;  // a CPU variant: listed with the other two, after them
  row.sourceFile = "app/core/conv/cpu_onednn_conv.cpp";
  row.fusableOps = everyEpilogueOp();
  row.preferredDefault = true;  // the fastest CPU variant (docs/results/2026-11-23-cpu), where no GPU variant runs
  row.createHostBackend = [] { return std::make_unique<CpuOneDnnConv>(); };
  return row;
}

}  // namespace convscope
