#include "ui/gpumap/gpu_mapping_view.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>

#include <algorithm>
#include <cmath>
#include <optional>

#include "app/core/device/gpu_platform.h"

namespace convscope::ui {
namespace {

// Neighbouring blocks in alternating pale colours, so that the grid reads without a legend.
QColor blockColour(int64_t block, const QPalette& palette) {
  static const QColor colours[] = {QColor(198, 219, 239), QColor(253, 208, 162), QColor(199, 233, 192),
                                   QColor(218, 218, 235)};
  QColor c = colours[static_cast<size_t>(block % 4)];
  if (palette.color(QPalette::Window).lightness() < 110) c = c.darker(220);  // dark palettes
  return c;
}

QString bytesText(int64_t bytes) {
  if (bytes >= 1024) return QObject::tr("%1 KB (%2 bytes)").arg(bytes / 1024.0, 0, 'f', 1).arg(bytes);
  return QObject::tr("%1 bytes").arg(bytes);
}

QString geometryLine(const KernelLaunchGeometry& g) {
  return QObject::tr("%1: grid %2×%3×%4, block %5×%6×%7")
      .arg(QString::fromStdString(g.kernel))
      .arg(g.gridX)
      .arg(g.gridY)
      .arg(g.gridZ)
      .arg(g.blockX)
      .arg(g.blockY)
      .arg(g.blockZ);
}

}  // namespace

GpuMappingView::GpuMappingView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  QSizePolicy policy(QSizePolicy::Expanding, QSizePolicy::Preferred);
  policy.setHeightForWidth(true);
  setSizePolicy(policy);
}

void GpuMappingView::setLayer(const ConvProblem& problem, const QString& layerName) {
  const bool first = !hasProblem_;
  problem_ = problem;
  hasProblem_ = true;
  layerName_ = layerName;
  map_ = std::clamp(map_, 0, problem.outChannels - 1);
  if (first) {  // start in the middle of the map, away from the edges' partial blocks
    oh_ = problem.outHeight() / 2;
    ow_ = problem.outWidth() / 2;
  }
  oh_ = std::clamp(oh_, 0, problem.outHeight() - 1);
  ow_ = std::clamp(ow_, 0, problem.outWidth() - 1);
  rebuild();
}

void GpuMappingView::setVariant(const std::string& variantId) {
  variant_ = variantId;
  rebuild();
}

void GpuMappingView::setMap(int map) {
  if (!hasProblem_) return;
  map_ = std::clamp(map, 0, problem_.outChannels - 1);
  rebuild();
}

void GpuMappingView::setPixel(int oh, int ow) {
  if (!hasProblem_) return;
  oh = std::clamp(oh, 0, problem_.outHeight() - 1);
  ow = std::clamp(ow, 0, problem_.outWidth() - 1);
  if (oh == oh_ && ow == ow_) return;
  oh_ = oh;
  ow_ = ow;
  updateSelection();
  update();
  emit pixelChanged(oh_, ow_);
}

void GpuMappingView::rebuild() {
  updateGeometry();  // another shape or variant: another height for the same width
  launches_.clear();
  launchIndex_ = -1;
  row_ = nullptr;
  unavailable_.clear();
  blockOfPixel_.clear();
  if (!hasProblem_ || variant_.empty()) {
    unavailable_ = tr("Choose a layer and a GPU variant.");
  } else {
    const ConvVariant* v = nullptr;
    for (const ConvVariant& row : convVariants())
      if (row.id == variant_) v = &row;
    for (const ConvVariant* row : userConvVariants())  // a student's kernel that passed its check
      if (row->id == variant_) v = row;
    if (!v) {
      unavailable_ = tr("%1 is not a variant of this build").arg(QString::fromStdString(variant_));
    } else if (!v->runsOnGpu()) {
      unavailable_ = tr("%1 runs on the CPU: no thread blocks to draw").arg(QString::fromStdString(v->displayName));
    } else if (!v->launchGeometry) {
      unavailable_ =
          tr("This build has no CUDA, so it lacks the kernels' launch geometry (build with "
             "CONVSCOPE_WITH_CUDA=ON; no GPU is needed to draw it).");
    } else if (const std::string reason = v->unsupportedReasonFor(problem_); !reason.empty()) {
      unavailable_ = tr("%1 does not run this layer: %2")
                         .arg(QString::fromStdString(v->displayName), QString::fromStdString(reason));
    } else {
      row_ = v;
      launches_ = v->launchGeometry(problem_);
      for (size_t i = 0; i < launches_.size() && launchIndex_ < 0; ++i)
        if (launches_[i].order != BlockOrder::kNotDescribed) launchIndex_ = static_cast<int>(i);
      if (launchIndex_ < 0)
        unavailable_ = tr("%1 chooses its blocks' work at run time; the launch says only this:")
                           .arg(QString::fromStdString(v->displayName));
    }
  }
  if (launchIndex_ >= 0) {
    const int outHeight = problem_.outHeight();
    const int outWidth = problem_.outWidth();
    blockOfPixel_.resize(static_cast<size_t>(outHeight) * outWidth);
    for (int y = 0; y < outHeight; ++y)
      for (int x = 0; x < outWidth; ++x)
        blockOfPixel_[static_cast<size_t>(y) * outWidth + x] = blockUnderPixel(problem_, launch(), 0, map_, y, x).block;
  }
  updateSelection();
  update();
}

void GpuMappingView::updateSelection() {
  selection_ = {};
  mapping_.clear();
  QStringList lines;
  if (!hasProblem_) {
    figures_ = unavailable_;
    return;
  }
  const ConvProblem& p = problem_;
  lines << tr("%1 · %2").arg(layerName_, QString::fromStdString(p.describe()));
  if (launchIndex_ < 0) {
    lines << unavailable_;
    for (const KernelLaunchGeometry& g : launches_) lines << geometryLine(g) << QString::fromStdString(g.mapping);
    figures_ = lines.join('\n');
    return;
  }
  const KernelLaunchGeometry& g = launch();
  selection_ = blockUnderPixel(p, g, 0, map_, oh_, ow_);
  for (size_t i = 0; i < launches_.size(); ++i)
    if (static_cast<int>(i) != launchIndex_)
      lines << tr("also launches %1 (not drawn)").arg(geometryLine(launches_[i]));
  lines << geometryLine(g);
  const bool tiles = g.order == BlockOrder::kMapTiles || g.order == BlockOrder::kGridTiles;
  const QString thread = selection_.threadX < 0
                             ? tr("a thread your kernel chooses (its block is smaller than its tile)")
                         : tiles ? tr("thread (%1, %2) of the tile").arg(selection_.threadX).arg(selection_.threadY)
                                 : tr("thread %1").arg(selection_.threadX);
  lines << tr("Output (row %1, column %2) of map %3, image 0: block %4 (blockIdx.x %5%6), %7")
               .arg(oh_)
               .arg(ow_)
               .arg(map_)
               .arg(selection_.block)
               .arg(selection_.blockIdxX)
               .arg(selection_.pass > 0 ? tr(", grid-stride pass %1").arg(selection_.pass + 1) : QString())
               .arg(thread);
  lines << tr("Block: %1 threads, %2 of shared memory; it computes %3 outputs of this map")
               .arg(g.threadsPerBlock())
               .arg(bytesText(g.sharedBytes))
               .arg(selection_.pixelsInMap);
  const PixelRect& in = selection_.input;
  lines << tr("Input it reads per channel: rows %1–%2, columns %3–%4 (%5×%6%7)")
               .arg(in.top)
               .arg(in.bottom)
               .arg(in.left)
               .arg(in.right)
               .arg(in.bottom - in.top + 1)
               .arg(in.right - in.left + 1)
               .arg(selection_.inputStagedInShared      ? tr(", staged in shared memory with its halo")
                    : g.order == BlockOrder::kGridTiles ? tr(", the windows of its outputs")
                                                        : tr(", from global memory"));
  // Measured by the CUDA runtime where a GPU and the kernel's handle exist, else estimated.
  const KernelHandle handle =
      row_ && row_->kernelHandle ? row_->kernelHandle(p, static_cast<size_t>(launchIndex_)) : KernelHandle{};
  if (const std::optional<KernelOccupancy> measured = kernelOccupancy(handle, static_cast<int>(g.threadsPerBlock()))) {
    lines << tr("Registers: %1 per thread; occupancy: %2 blocks per SM, %3% (CUDA occupancy API, %4)")
                 .arg(measured->registersPerThread)
                 .arg(measured->blocksPerSm)
                 .arg(measured->occupancy * 100.0, 0, 'f', 0)
                 .arg(QString::fromStdString(gpuInfo().name));
  } else {
    const OccupancyEstimate occupancy = estimateOccupancy(g, hopperSmLimits());
    lines << tr("Occupancy, estimated from threads and shared memory against %1 limits: %2 blocks per SM, %3% "
                "(limited by %4); registers unknown here%5")
                 .arg(QString::fromStdString(hopperSmLimits().name))
                 .arg(occupancy.blocksPerSm)
                 .arg(occupancy.occupancy * 100.0, 0, 'f', 0)
                 .arg(QString::fromStdString(occupancy.limitedBy))
                 .arg(gpuInfo().usable ? tr(" (the runtime does not report this kernel)")
                                       : tr(" (no GPU on this machine)"));
  }
  const LoadsPerOutput loads = globalLoadsPerOutput(p, g);
  const double depth = double{1} * p.inChannels * p.kernelHeight * p.kernelWidth;
  if (loads.input >= 0.0)
    lines << tr("Per output: %1 input loads and %2 weight loads from memory, %3 FLOPs")
                 .arg(loads.input, 0, 'g', 4)
                 .arg(loads.weights, 0, 'g', 4)
                 .arg(2.0 * depth, 0, 'g', 6);
  else  // a student's kernel: its loads are its own (kernel sass shows them)
    lines << tr("Per output: %1 FLOPs; the loads from memory are your kernel's own").arg(2.0 * depth, 0, 'g', 6);
  if (g.order == BlockOrder::kMatrixTiles)
    lines << tr("As a matrix product: W (%1×%2) · X_unroll (%2×%3) = output (%1×%3)")
                 .arg(p.outChannels)
                 .arg(static_cast<int64_t>(depth))
                 .arg(int64_t{p.batch} * p.outHeight() * p.outWidth());
  // The launcher's own words: the panel shows them as the figures' tooltip, where a small screen
  // has no room for them.
  mapping_ = QString::fromStdString(g.mapping);
  figures_ = lines.join('\n');
}

int GpuMappingView::heightForWidth(int width) const {
  if (!hasProblem_ || launchIndex_ < 0) return QFontMetrics(font()).height() * 4;  // a message, no drawing
  // layout() run backwards: the cell that the width allows, then the heights under it.
  const ConvProblem& p = problem_;
  const double caption = QFontMetrics(font()).height() * 1.4;
  const int inHeight = p.inHeight + p.padTop + p.padBottom;
  const int inWidth = p.inWidth + p.padLeft + p.padRight;
  const double cell = std::max(1.0, (width - 12.0 - 16.0) / (inWidth + p.outWidth()));
  const double planes = cell * std::max(inHeight, p.outHeight());
  double area = planes;
  if (launch().order == BlockOrder::kMatrixTiles)  // the matrix takes 42% of the area, at least 90 px
    area = std::max((planes + 8.0) / 0.58, planes + 8.0 + 90.0);
  return static_cast<int>(std::ceil(caption + area + 6.0));
}

int GpuMappingView::drawingBottom() const {
  const Layout l = layout();
  return static_cast<int>(std::ceil(std::max({l.input.bottom(), l.output.bottom(), l.matrix.bottom()})));
}

GpuMappingView::Layout GpuMappingView::layout() const {
  Layout l;
  if (!hasProblem_ || launchIndex_ < 0) return l;
  const ConvProblem& p = problem_;
  const QFontMetrics metrics(font());
  const double caption = metrics.height() * 1.4;
  const bool matrix = launch().order == BlockOrder::kMatrixTiles;
  const QRectF area = QRectF(rect()).adjusted(6, caption, -6, -6);
  const double matrixHeight = matrix ? std::max(90.0, area.height() * 0.42) : 0.0;
  const QRectF maps = area.adjusted(0, 0, 0, -(matrix ? matrixHeight + 8.0 : 0.0));
  const int inHeight = p.inHeight + p.padTop + p.padBottom;
  const int inWidth = p.inWidth + p.padLeft + p.padRight;
  const double gap = 16.0;
  // One cell size for both planes, so the input tile and the output patch compare by eye.
  const double cell =
      std::min((maps.width() - gap) / (inWidth + p.outWidth()), maps.height() / std::max(inHeight, p.outHeight()));
  l.inputCell = l.outputCell = std::max(1.0, cell);
  l.input = QRectF(maps.left(), maps.top(), inWidth * l.inputCell, inHeight * l.inputCell);
  l.output = QRectF(l.input.right() + gap, maps.top(), p.outWidth() * l.outputCell, p.outHeight() * l.outputCell);
  if (matrix) l.matrix = QRectF(area.left(), area.bottom() - matrixHeight, area.width(), matrixHeight);
  return l;
}

QPoint GpuMappingView::outputPixelCentre(int oh, int ow) const {
  const Layout l = layout();
  return QPointF(l.output.left() + (ow + 0.5) * l.outputCell, l.output.top() + (oh + 0.5) * l.outputCell).toPoint();
}

bool GpuMappingView::pixelAt(const QPointF& position, int* oh, int* ow) const {
  const Layout l = layout();
  if (l.output.isEmpty() || !l.output.contains(position)) return false;
  *ow = std::clamp(static_cast<int>((position.x() - l.output.left()) / l.outputCell), 0, problem_.outWidth() - 1);
  *oh = std::clamp(static_cast<int>((position.y() - l.output.top()) / l.outputCell), 0, problem_.outHeight() - 1);
  return true;
}

void GpuMappingView::mouseMoveEvent(QMouseEvent* event) {
  int oh = 0, ow = 0;
  if (pixelAt(event->position(), &oh, &ow)) setPixel(oh, ow);
}

void GpuMappingView::mousePressEvent(QMouseEvent* event) {
  setFocus();
  int oh = 0, ow = 0;
  if (pixelAt(event->position(), &oh, &ow)) setPixel(oh, ow);
}

void GpuMappingView::keyPressEvent(QKeyEvent* event) {
  switch (event->key()) {
    case Qt::Key_Left:
      setPixel(oh_, ow_ - 1);
      break;
    case Qt::Key_Right:
      setPixel(oh_, ow_ + 1);
      break;
    case Qt::Key_Up:
      setPixel(oh_ - 1, ow_);
      break;
    case Qt::Key_Down:
      setPixel(oh_ + 1, ow_);
      break;
    default:
      QWidget::keyPressEvent(event);
      return;
  }
}

void GpuMappingView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().color(QPalette::Base));
  const QColor text = palette().color(QPalette::Text);
  painter.setPen(text);
  const Layout l = layout();
  if (l.output.isEmpty()) {
    painter.drawText(rect().adjusted(8, 8, -8, -8), Qt::AlignCenter | Qt::TextWordWrap,
                     unavailable_.isEmpty() ? tr("Nothing to draw") : unavailable_);
    return;
  }
  const ConvProblem& p = problem_;
  const double caption = QFontMetrics(font()).height() * 1.4;
  // Captions as wide as their planes (the output's to the widget's edge), elided on a small screen.
  const QFontMetrics metrics(font());
  const QRectF inputCaption(l.input.left(), l.input.top() - caption, l.output.left() - l.input.left() - 4, caption);
  const QRectF outputCaption(l.output.left(), l.output.top() - caption, width() - l.output.left() - 4, caption);
  painter.drawText(
      inputCaption, Qt::AlignLeft | Qt::AlignVCenter,
      metrics.elidedText(tr("input (padding shaded)"), Qt::ElideRight, static_cast<int>(inputCaption.width())));
  painter.drawText(outputCaption, Qt::AlignLeft | Qt::AlignVCenter,
                   metrics.elidedText(tr("output map %1: blocks").arg(map_), Qt::ElideRight,
                                      static_cast<int>(outputCaption.width())));

  // The input plane, its padding shaded, the block's input and this pixel's window outlined.
  const int inHeight = p.inHeight + p.padTop + p.padBottom;
  const int inWidth = p.inWidth + p.padLeft + p.padRight;
  const QColor paddingColour = palette().color(QPalette::Mid);
  painter.fillRect(l.input, palette().color(QPalette::AlternateBase));
  for (int y = 0; y < inHeight; ++y)
    for (int x = 0; x < inWidth; ++x)
      if (y < p.padTop || y >= p.padTop + p.inHeight || x < p.padLeft || x >= p.padLeft + p.inWidth)
        painter.fillRect(
            QRectF(l.input.left() + x * l.inputCell, l.input.top() + y * l.inputCell, l.inputCell, l.inputCell),
            paddingColour);
  // Input rows/columns are drawn with the padding at 0: input row r sits at r + padTop.
  auto inputRect = [&](const PixelRect& r) {
    const double top = std::max(0, r.top + p.padTop), left = std::max(0, r.left + p.padLeft);
    const double bottom = std::min(inHeight - 1, r.bottom + p.padTop),
                 right = std::min(inWidth - 1, r.right + p.padLeft);
    return QRectF(l.input.left() + left * l.inputCell, l.input.top() + top * l.inputCell,
                  (right - left + 1) * l.inputCell, (bottom - top + 1) * l.inputCell);
  };
  const QColor blockMark(230, 85, 13);
  const QColor threadMark(8, 81, 156);
  if (selection_.described) {
    QColor fill = blockMark;
    fill.setAlpha(60);
    painter.fillRect(inputRect(selection_.input), fill);
    painter.setPen(QPen(blockMark, 2));
    painter.drawRect(inputRect(selection_.input));
  }
  PixelRect window;
  window.top = oh_ * p.strideHeight - p.padTop;
  window.left = ow_ * p.strideWidth - p.padLeft;
  window.bottom = window.top + p.kernelHeight - 1;
  window.right = window.left + p.kernelWidth - 1;
  painter.setPen(QPen(threadMark, 2));
  painter.drawRect(inputRect(window));
  painter.setPen(QPen(text, 1));
  painter.setBrush(Qt::NoBrush);
  painter.drawRect(l.input);

  // The output map: each block's pixels in its colour, borders between blocks, the selected
  // block strong and the pixel under the pointer marked.
  const int outHeight = p.outHeight();
  const int outWidth = p.outWidth();
  auto cellOf = [&](int y, int x) {
    return QRectF(l.output.left() + x * l.outputCell, l.output.top() + y * l.outputCell, l.outputCell, l.outputCell);
  };
  for (int y = 0; y < outHeight; ++y)
    for (int x = 0; x < outWidth; ++x) {
      const int64_t block = blockOfPixel_[static_cast<size_t>(y) * outWidth + x];
      QColor c = blockColour(block, palette());
      if (block == selection_.block) c = blockMark.lighter(140);
      painter.fillRect(cellOf(y, x), c);
    }
  painter.setPen(QPen(text, std::max(1.0, l.outputCell / 8.0)));
  for (int y = 0; y < outHeight; ++y)
    for (int x = 0; x < outWidth; ++x) {
      const int64_t block = blockOfPixel_[static_cast<size_t>(y) * outWidth + x];
      const QRectF c = cellOf(y, x);
      if (x + 1 < outWidth && blockOfPixel_[static_cast<size_t>(y) * outWidth + x + 1] != block)
        painter.drawLine(c.topRight(), c.bottomRight());
      if (y + 1 < outHeight && blockOfPixel_[static_cast<size_t>(y + 1) * outWidth + x] != block)
        painter.drawLine(c.bottomLeft(), c.bottomRight());
    }
  painter.setPen(QPen(text, 1));
  painter.drawRect(l.output);
  painter.fillRect(cellOf(oh_, ow_), threadMark);

  if (l.matrix.isEmpty()) return;
  // The matrix product the GEMM variants compute, drawn as a schematic (not to scale): W
  // (maps x C*K*K) times X_unroll (C*K*K x columns, a column per (image, pixel)) gives the output
  // (maps x columns). The grid's tiles cut the output; the selected block's tile, the W rows and
  // the X_unroll columns it reads, and this pixel's row and column are marked.
  const KernelLaunchGeometry& g = launch();
  const double depth = double{1} * p.inChannels * p.kernelHeight * p.kernelWidth;
  const double columns = double{1} * p.batch * outHeight * outWidth;
  const double columnTiles = std::ceil(columns / g.tileWidth);
  const double mapTiles = std::ceil(double{1} * p.outChannels / g.tileHeight);
  const QRectF m = l.matrix;
  const double gap = 6.0;
  const double wWidth = m.width() * 0.16;
  const double xHeight = (m.height() - caption - gap) * 0.45;
  const QRectF wRect(m.left(), m.top() + caption + xHeight + gap, wWidth, m.height() - caption - xHeight - gap);
  const QRectF xRect(m.left() + wWidth + gap, m.top() + caption, m.width() - wWidth - gap, xHeight);
  const QRectF outRect(xRect.left(), wRect.top(), xRect.width(), wRect.height());
  painter.drawText(QRectF(m.left(), m.top(), m.width(), caption), Qt::AlignLeft | Qt::AlignVCenter,
                   metrics.elidedText(tr("W (%1×%2) · X_unroll (%2×%3) = output; a block computes a %4×%5 tile")
                                          .arg(p.outChannels)
                                          .arg(static_cast<int64_t>(depth))
                                          .arg(static_cast<int64_t>(columns))
                                          .arg(g.tileHeight)
                                          .arg(g.tileWidth),
                                      Qt::ElideRight, static_cast<int>(m.width())));
  for (const QRectF& r : {wRect, xRect, outRect}) painter.fillRect(r, palette().color(QPalette::AlternateBase));
  const double columnWidth = outRect.width() / (columnTiles * g.tileWidth);  // per matrix column
  const double mapHeight = outRect.height() / (mapTiles * g.tileHeight);     // per output map
  painter.setPen(QPen(palette().color(QPalette::Mid), 1));
  if (columnTiles <= 400)
    for (int t = 1; t < columnTiles; ++t) {
      const double x = outRect.left() + t * g.tileWidth * columnWidth;
      painter.drawLine(QPointF(x, xRect.top()), QPointF(x, xRect.bottom()));
      painter.drawLine(QPointF(x, outRect.top()), QPointF(x, outRect.bottom()));
    }
  for (int t = 1; t < mapTiles; ++t) {
    const double y = outRect.top() + t * g.tileHeight * mapHeight;
    painter.drawLine(QPointF(wRect.left(), y), QPointF(outRect.right(), y));
  }
  if (selection_.described) {
    const int64_t columnTile = selection_.block / static_cast<int64_t>(mapTiles);
    const int64_t mapTile = selection_.block % static_cast<int64_t>(mapTiles);
    const double x0 = outRect.left() + columnTile * g.tileWidth * columnWidth;
    const double tileWidth = std::max(2.0, g.tileWidth * columnWidth);
    const double y0 = outRect.top() + mapTile * g.tileHeight * mapHeight;
    const double tileHeight = g.tileHeight * mapHeight;
    QColor band = blockMark;
    band.setAlpha(70);
    painter.fillRect(QRectF(x0, xRect.top(), tileWidth, xRect.height()), band);   // the X_unroll columns it reads
    painter.fillRect(QRectF(wRect.left(), y0, wRect.width(), tileHeight), band);  // the W rows it reads
    const QRectF tile(x0, y0, tileWidth, tileHeight);
    painter.fillRect(tile, blockMark.lighter(140));
    painter.setPen(QPen(blockMark, 2));
    painter.drawRect(tile);
    const double column = double{1} * oh_ * outWidth + ow_;  // image 0's columns come first
    const double x = outRect.left() + (column + 0.5) * columnWidth;
    const double y = outRect.top() + (map_ + 0.5) * mapHeight;
    painter.setPen(QPen(threadMark, 2));
    painter.drawLine(QPointF(x, xRect.top()), QPointF(x, outRect.bottom()));
    painter.drawLine(QPointF(wRect.left(), y), QPointF(outRect.right(), y));
  }
  painter.setPen(QPen(text, 1));
  for (const QRectF& r : {wRect, xRect, outRect}) painter.drawRect(r);
  painter.drawText(wRect.adjusted(2, 2, -2, -2), Qt::AlignLeft | Qt::AlignTop, tr("W"));
  painter.drawText(xRect.adjusted(4, 2, -4, -2), Qt::AlignLeft | Qt::AlignTop, tr("X_unroll"));
  painter.drawText(outRect.adjusted(4, 2, -4, -2), Qt::AlignLeft | Qt::AlignTop, tr("output"));
}

}  // namespace convscope::ui
