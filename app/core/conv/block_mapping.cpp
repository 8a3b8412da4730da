#include "app/core/conv/block_mapping.h"

#include <algorithm>

#include "app/core/util/error.h"

namespace convscope {
namespace {

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// The rows of one output map that a run of flat positions [first, last] of the map touches.
PixelRect rectOfRun(int64_t first, int64_t last, int outWidth) {
  PixelRect r;
  r.top = static_cast<int>(first / outWidth);
  r.bottom = static_cast<int>(last / outWidth);
  r.left = r.top == r.bottom ? static_cast<int>(first % outWidth) : 0;
  r.right = r.top == r.bottom ? static_cast<int>(last % outWidth) : outWidth - 1;
  return r;
}

// The input pixels the outputs of `outputs` read, each its kernel window, unclipped.
PixelRect windowsOf(const PixelRect& outputs, const ConvProblem& p) {
  PixelRect r;
  r.top = outputs.top * p.strideHeight - p.padTop;
  r.left = outputs.left * p.strideWidth - p.padLeft;
  r.bottom = outputs.bottom * p.strideHeight - p.padTop + p.kernelHeight - 1;
  r.right = outputs.right * p.strideWidth - p.padLeft + p.kernelWidth - 1;
  return r;
}

// Fills the block's share of map (n, m) when its outputs are a run [runFirst, runLast] of flat
// positions that may start or end in other maps (`mapFirst`: the map's first flat position).
void setRunInMap(BlockUnderPixel& b, int64_t runFirst, int64_t runLast, int64_t mapFirst, const ConvProblem& p) {
  const int64_t plane = int64_t{p.outHeight()} * p.outWidth();
  const int64_t first = std::max(runFirst, mapFirst) - mapFirst;
  const int64_t last = std::min(runLast, mapFirst + plane - 1) - mapFirst;
  b.outputs = rectOfRun(first, last, p.outWidth());
  b.pixelsInMap = last - first + 1;
  b.input = windowsOf(b.outputs, p);
}

}  // namespace

BlockUnderPixel blockUnderPixel(const ConvProblem& p, const KernelLaunchGeometry& g, int image, int map, int oh,
                                int ow) {
  const int outHeight = p.outHeight();
  const int outWidth = p.outWidth();
  if (image < 0 || image >= p.batch || map < 0 || map >= p.outChannels || oh < 0 || oh >= outHeight || ow < 0 ||
      ow >= outWidth)
    throw Error("output pixel (image " + std::to_string(image) + ", map " + std::to_string(map) + ", row " +
                std::to_string(oh) + ", column " + std::to_string(ow) + ") lies outside the layer's output (" +
                p.describe() + ")");
  BlockUnderPixel b;
  const int64_t threads = g.threadsPerBlock();
  const int64_t plane = int64_t{outHeight} * outWidth;
  switch (g.order) {
    case BlockOrder::kNotDescribed:
      return b;
    case BlockOrder::kFlatOutput: {
      const int64_t mapFirst = (int64_t{image} * p.outChannels + map) * plane;
      const int64_t flat = mapFirst + int64_t{oh} * outWidth + ow;
      b.block = flat / threads;
      b.threadX = static_cast<int>(flat % threads);
      setRunInMap(b, b.block * threads, b.block * threads + threads - 1, mapFirst, p);
      break;
    }
    case BlockOrder::kMapTiles: {
      const int tilesY = static_cast<int>(ceilDiv(outHeight, g.tileHeight));
      const int tilesX = static_cast<int>(ceilDiv(outWidth, g.tileWidth));
      const int tileY = oh / g.tileHeight;
      const int tileX = ow / g.tileWidth;
      b.block = ((int64_t{image} * tilesY + tileY) * tilesX + tileX) * p.outChannels + map;
      b.threadX = ow % g.tileWidth;
      b.threadY = oh % g.tileHeight;
      b.outputs = {tileY * g.tileHeight, tileX * g.tileWidth, std::min(outHeight, (tileY + 1) * g.tileHeight) - 1,
                   std::min(outWidth, (tileX + 1) * g.tileWidth) - 1};
      b.pixelsInMap = int64_t{b.outputs.bottom - b.outputs.top + 1} * (b.outputs.right - b.outputs.left + 1);
      // The whole tile's input is staged, also where the tile hangs over the map's edge (zeros).
      const int top = tileY * g.tileHeight * p.strideHeight - p.padTop;
      const int left = tileX * g.tileWidth * p.strideWidth - p.padLeft;
      b.input = {top, left, top + (g.tileHeight - 1) * p.strideHeight + p.kernelHeight - 1,
                 left + (g.tileWidth - 1) * p.strideWidth + p.kernelWidth - 1};
      b.inputStagedInShared = true;
      break;
    }
    case BlockOrder::kGridTiles: {
      const int tilesY = static_cast<int>(ceilDiv(outHeight, g.tileHeight));
      const int tilesX = static_cast<int>(ceilDiv(outWidth, g.tileWidth));
      const int tileY = oh / g.tileHeight;
      const int tileX = ow / g.tileWidth;
      // Blocks in the GPU's own order, blockIdx.x fastest; every block is launched: no passes.
      b.block = ((int64_t{image} * p.outChannels + map) * tilesY + tileY) * tilesX + tileX;
      if (g.blockX == g.tileWidth && g.blockY == g.tileHeight) {
        b.threadX = ow % g.tileWidth;
        b.threadY = oh % g.tileHeight;
      }  // else: which of the block's threads computes it is the kernel's choice (threadX stays -1)
      b.outputs = {tileY * g.tileHeight, tileX * g.tileWidth, std::min(outHeight, (tileY + 1) * g.tileHeight) - 1,
                   std::min(outWidth, (tileX + 1) * g.tileWidth) - 1};
      b.pixelsInMap = int64_t{b.outputs.bottom - b.outputs.top + 1} * (b.outputs.right - b.outputs.left + 1);
      // The windows of the tile's outputs; whether the kernel stages them in shared memory, the
      // geometry does not say.
      const int top = tileY * g.tileHeight * p.strideHeight - p.padTop;
      const int left = tileX * g.tileWidth * p.strideWidth - p.padLeft;
      b.input = {top, left, top + (g.tileHeight - 1) * p.strideHeight + p.kernelHeight - 1,
                 left + (g.tileWidth - 1) * p.strideWidth + p.kernelWidth - 1};
      b.described = true;
      b.blockIdxX = tileX;
      b.pass = 0;
      return b;
    }
    case BlockOrder::kMatrixTiles: {
      const int64_t mapTiles = ceilDiv(p.outChannels, g.tileHeight);
      const int64_t imageFirst = int64_t{image} * plane;  // the image's first column
      const int64_t column = imageFirst + int64_t{oh} * outWidth + ow;
      const int64_t columnTile = column / g.tileWidth;
      b.block = columnTile * mapTiles + map / g.tileHeight;
      b.threadX = static_cast<int>(column % g.tileWidth % threads);
      setRunInMap(b, columnTile * g.tileWidth, columnTile * g.tileWidth + g.tileWidth - 1, imageFirst, p);
      break;
    }
  }
  b.described = true;
  b.blockIdxX = b.block % g.gridX;
  b.pass = b.block / g.gridX;
  return b;
}

SmLimits hopperSmLimits() {
  SmLimits sm;
  sm.name = "H100 (compute capability 9.0)";
  return sm;
}

OccupancyEstimate estimateOccupancy(const KernelLaunchGeometry& g, const SmLimits& sm) {
  OccupancyEstimate e;
  const int64_t warpsPerBlock = ceilDiv(g.threadsPerBlock(), 32);
  int64_t blocks = sm.maxBlocksPerSm;
  e.limitedBy = "blocks per SM";
  const int64_t byWarps = sm.maxWarpsPerSm / warpsPerBlock;
  if (byWarps < blocks) {
    blocks = byWarps;
    e.limitedBy = "threads";
  }
  if (g.sharedBytes > 0) {
    const int64_t byShared = sm.sharedBytesPerSm / (g.sharedBytes + sm.reservedSharedPerBlock);
    if (byShared < blocks) {
      blocks = byShared;
      e.limitedBy = "shared memory";
    }
  }
  e.blocksPerSm = static_cast<int>(blocks);
  e.warpsPerSm = blocks * warpsPerBlock;
  e.occupancy = static_cast<double>(e.warpsPerSm) / sm.maxWarpsPerSm;
  return e;
}

LoadsPerOutput globalLoadsPerOutput(const ConvProblem& p, const KernelLaunchGeometry& g) {
  const double depth = double{1} * p.inChannels * p.kernelHeight * p.kernelWidth;
  switch (g.order) {
    case BlockOrder::kFlatOutput:
      return {depth, depth};
    case BlockOrder::kMapTiles: {
      const double rows = double{1} * (g.tileHeight - 1) * p.strideHeight + p.kernelHeight;
      const double cols = double{1} * (g.tileWidth - 1) * p.strideWidth + p.kernelWidth;
      return {p.inChannels * rows * cols / (double{1} * g.tileHeight * g.tileWidth), depth};
    }
    case BlockOrder::kMatrixTiles:
      return {depth / g.tileHeight, depth / g.tileWidth};
    case BlockOrder::kGridTiles:  // what a student's kernel loads is its own: not known here
    case BlockOrder::kNotDescribed:
      break;
  }
  return {-1.0, -1.0};
}

}  // namespace convscope
