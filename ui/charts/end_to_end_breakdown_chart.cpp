#include "ui/charts/end_to_end_breakdown_chart.h"

#include <QFontMetrics>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "app/core/conv/variant_table.h"
#include "app/core/engine/end_to_end_breakdown.h"
#include "ui/charts/benchmark_series.h"
#include "ui/charts/chart_style.h"
#include "ui/charts/roofline_points.h"

namespace convscope::ui {
namespace {

// Twenty colours that differ from each other and read on white and on black (Tableau 20 without
// its greys, and two more): a stage of the course network each, so the legend names every one.
const QColor kStagePalette[] = {QColor(0x4e79a7), QColor(0xf28e2b), QColor(0x59a14f), QColor(0xe15759),
                                QColor(0x76b7b2), QColor(0xedc948), QColor(0xb07aa1), QColor(0xff9da7),
                                QColor(0x9c755f), QColor(0xa0cbe8), QColor(0xffbe7d), QColor(0x8cd17d),
                                QColor(0xb6992d), QColor(0x499894), QColor(0xff9d9a), QColor(0xd37295),
                                QColor(0xfabfd2), QColor(0xd4a6c8), QColor(0x2f4b7c), QColor(0x86bcb6)};
const QColor kGapsColour(0xbab0ac);
const QColor kPeerColour(0x6b6b6b);

bool isRest(const std::string& name) {
  return name == "gaps" || name == "other";
}

bool runsOnCpu(const std::string& variant) {
  for (const ConvVariant& v : convVariants())
    if (v.id == variant) return !v.runsOnGpu();
  return false;  // a kernel this build does not know: drawn
}

// The note's sentences, joined and wrapped at word boundaries into lines `width` pixels wide (a
// title's parts are elided; a note must be read whole).
QString wrappedNote(const QStringList& parts, const QFont& font, int width) {
  const QFontMetrics metrics(font);
  const int room = std::max(80, width - 16);
  QStringList lines;
  for (const QString& word : parts.join(QStringLiteral("; ")).split(' ', Qt::SkipEmptyParts)) {
    if (!lines.isEmpty() && metrics.horizontalAdvance(lines.back() + ' ' + word) <= room)
      lines.back() += ' ' + word;
    else
      lines << word;
  }
  return lines.join('\n');
}

QString milliseconds(double ms) {
  return QString::number(ms, 'g', ms < 0.01 ? 2 : 3) + " ms";
}

}  // namespace

EndToEndBreakdownChart::EndToEndBreakdownChart(QWidget* parent) : StyledPlot(parent), note_(new QCPTextElement(this)) {
  plotLayout()->insertRow(1);
  plotLayout()->addElement(1, 0, note_);
  // Horizontal bars: the variants' names read along the left axis, the first on top.
  yAxis->setRangeReversed(true);
  yAxis->setTickLength(0, 0);
  yAxis->setSubTicks(false);
  yAxis->grid()->setVisible(false);
  xAxis->setNumberFormat("g");
  xAxis->setNumberPrecision(6);
  // What the step is goes in the tab's tooltip and the docs: a long label would be cut at 1024x700.
  xAxis->setLabel(tr("end-to-end time (ms), linear scale"));
  // The legend under the chart, wrapped into as many columns as the width holds.
  legend->setVisible(true);
  auto* legendRow = new QCPLayoutGrid;
  plotLayout()->addElement(3, 0, legendRow);
  plotLayout()->setRowStretchFactor(3, 0.001);
  axisRect()->insetLayout()->take(legend);
  legendRow->addElement(0, 0, legend);
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  legend->setRowSpacing(0);
  legend->setIconSize(16, 10);
  legend->setColumnSpacing(12);
  legendRow->setMargins(QMargins(0, 0, 0, 4));
  setMinimumHeight(160);
  rebuild();
}

void EndToEndBreakdownChart::setReport(std::shared_ptr<const BenchmarkReport> report) {
  report_ = std::move(report);
  if (report_) {
    const std::vector<int> batches = batchesIn(*report_);
    if (!batches.empty() && std::find(batches.begin(), batches.end(), batch_) == batches.end()) batch_ = batches.back();
  }
  rebuild();
}

void EndToEndBreakdownChart::setPeer(std::shared_ptr<const PeerTimings> peer) {
  peer_ = std::move(peer);
  rebuild();
}

void EndToEndBreakdownChart::setBatch(int batch) {
  batch_ = batch;
  rebuild();
}

QCPBars* EndToEndBreakdownChart::stageBars(const QString& name) const {
  for (QCPBars* bars : stages_)
    if (bars->name() == name) return bars;
  return nullptr;
}

void EndToEndBreakdownChart::rebuild() {
  clearPlottables();
  clearItems();
  stages_.clear();
  rows_.clear();
  rowTotalsMs_.clear();
  peerBars_ = nullptr;
  floorLine_ = nullptr;
  floorLabel_ = nullptr;
  floorMs_ = 0.0;
  floorToolTip_.clear();
  noteParts_.clear();
  QSharedPointer<QCPAxisTickerText> names(new QCPAxisTickerText);

  std::vector<std::pair<std::string, EndToEndBreakdown>> drawn;
  if (report_)
    for (const std::string& variant : variantsInCourseOrder(*report_))
      if (const BenchmarkRun* run = findRun(*report_, variant, batch_))
        drawn.emplace_back(variant, endToEndBreakdown(*run));
  if (drawn.empty()) {
    titleParts_ = {tr("Where the end-to-end time goes")};
    noteParts_ = {tr("Open a benchmark JSON of 'convscope-cli bench' (it times the end-to-end step and its stages)")};
    legend->setVisible(false);
    xAxis->setRange(0.0, 1.0);
    yAxis->setTicker(names);
    restyle();
    replot(rpQueuedReplot);
    return;
  }

  // CPU variants far slower than every GPU bar are named, not drawn.
  double longestGpu = 0.0;
  for (const auto& [variant, breakdown] : drawn)
    if (!runsOnCpu(variant)) longestGpu = std::max(longestGpu, breakdown.totalSeconds);
  QStringList leftOut;
  if (longestGpu > 0.0)
    drawn.erase(std::remove_if(drawn.begin(), drawn.end(),
                               [&](const auto& row) {
                                 const bool far =
                                     runsOnCpu(row.first) && row.second.totalSeconds > kLeftOutAbove * longestGpu;
                                 if (far)
                                   leftOut << tr("%1 %2").arg(variantDisplayName(row.first),
                                                              milliseconds(row.second.totalSeconds * 1e3));
                                 return far;
                               }),
                drawn.end());

  // The stages' names in the step's order, across every bar, the gaps last; and which stages
  // touch in some bar, so that no two that touch share a colour.
  std::vector<std::string> order;
  std::map<std::string, std::set<std::string>> touching;
  for (const auto& [variant, breakdown] : drawn) {
    int last = -1;
    const std::string* previous = nullptr;
    for (const BreakdownSegment& segment : breakdown.segments) {
      if (previous) {
        touching[segment.name].insert(*previous);
        touching[*previous].insert(segment.name);
      }
      previous = &segment.name;
      if (isRest(segment.name)) continue;
      auto at = std::find(order.begin(), order.end(), segment.name);
      if (at == order.end()) at = order.insert(order.begin() + (last + 1), segment.name);
      last = std::max(last, static_cast<int>(at - order.begin()));
    }
  }
  for (const char* rest : {"gaps", "other"})
    for (const auto& [variant, breakdown] : drawn)
      if (breakdown.segments.back().name == rest) {
        order.push_back(rest);
        break;
      }
  // A colour of its own for each stage in order, moved on where a stage it touches has it already
  // (more stages than colours).
  std::map<std::string, QColor> colours;
  const size_t paletteSize = std::size(kStagePalette);
  for (size_t i = 0; i < order.size(); ++i) {
    const std::string& name = order[i];
    if (isRest(name)) {
      colours[name] = kGapsColour;
      continue;
    }
    std::set<QRgb> taken;
    for (const std::string& other : touching[name])
      if (colours.count(other)) taken.insert(colours[other].rgb());
    size_t pick = i % paletteSize;
    for (size_t tries = 0; tries < paletteSize && taken.count(kStagePalette[pick].rgb()); ++tries)
      pick = (pick + 1) % paletteSize;
    colours[name] = kStagePalette[pick];
  }

  for (size_t r = 0; r < drawn.size(); ++r) {
    rows_.push_back(drawn[r].first);
    rowTotalsMs_.push_back(drawn[r].second.sumOfSegments() * 1e3);
    names->addTick(static_cast<double>(r + 1), variantDisplayName(drawn[r].first));
  }
  QCPBars* below = nullptr;
  for (const std::string& name : order) {
    auto* bars = new QCPBars(yAxis, xAxis);
    bars->setName(QString::fromStdString(name));
    bars->setWidth(0.7);
    bars->setBrush(colours[name]);
    bars->setPen(Qt::NoPen);
    bars->setStackingGap(0);
    if (below) bars->moveAbove(below);
    below = bars;
    QVector<double> keys, values;
    for (size_t r = 0; r < drawn.size(); ++r)
      for (const BreakdownSegment& segment : drawn[r].second.segments)
        if (segment.name == name && segment.seconds > 0.0) {
          keys.push_back(static_cast<double>(r + 1));
          values.push_back(segment.seconds * 1e3);
        }
    bars->setData(keys, values, true);
    stages_.push_back(bars);
  }

  // The peer's totals beside them (it gives no breakdown).
  double longest = *std::max_element(rowTotalsMs_.begin(), rowTotalsMs_.end());
  if (peer_) {
    QVector<double> keys, values;
    for (const PeerSeries& series : peer_->series) {
      const auto at = series.seconds.find(batch_);
      if (at == series.seconds.end()) continue;
      rows_.push_back(series.label);
      rowTotalsMs_.push_back(at->second * 1e3);
      keys.push_back(static_cast<double>(rows_.size()));
      values.push_back(at->second * 1e3);
      names->addTick(keys.back(), QString::fromStdString(series.label));
      longest = std::max(longest, values.back());
    }
    if (!keys.isEmpty()) {
      peerBars_ = new QCPBars(yAxis, xAxis);
      peerBars_->setName(tr("PyTorch (total only)"));
      peerBars_->setWidth(0.7);
      peerBars_->setBrush(QBrush(kPeerColour, Qt::BDiagPattern));
      peerBars_->setPen(QPen(kPeerColour, 1.5));
      peerBars_->setData(keys, values, true);
    } else {
      noteParts_ << tr("the PyTorch peer has no figure at batch %1").arg(batch_);
    }
  }

  // The floor of each GPU variant drawn: the larger of the upload and the bytes its conv stages
  // really move (end_to_end_breakdown.h: a fused pooling writes the pooled output, one kernel for
  // the whole network reads the pictures and writes the scores) over the memory bandwidth. The
  // line is the least of them: no step drawn here can take less. Its tooltip says which bytes.
  const DeviceCeilings ceilings = ceilingsFor(*report_);
  const double peerCopy = peer_ ? peer_->copyBytesPerSecond : 0.0;
  // A ceiling: the device's peak (its driver's figures), or the copy measured in the same call
  // where that is more (or the device's figures are not known here).
  const double memory = std::max(peerCopy, ceilings.bytesPerSecond);
  const double pinned = peer_ ? peer_->pinnedBytesPerSecond : 0.0;
  struct VariantFloor {
    std::string variant;
    RunConvBytes bytes;
    EndToEndFloor floor;
  };
  std::vector<VariantFloor> floors;
  bool anyGpu = false;
  for (const auto& [variant, breakdown] : drawn) anyGpu = anyGpu || !runsOnCpu(variant);
  for (const auto& [variant, breakdown] : drawn) {
    const BenchmarkRun* run = findRun(*report_, variant, batch_);
    if (!run || run->layers.empty() || (anyGpu && runsOnCpu(variant))) continue;
    const RunConvBytes bytes = runConvBytes(*run, kEndToEndPictureBytes);
    floors.push_back(
        {variant, bytes, endToEndFloorOfBytes(bytes.bytes, batch_, kEndToEndPictureBytes, pinned, memory)});
  }
  const auto least = std::min_element(floors.begin(), floors.end(), [](const VariantFloor& a, const VariantFloor& b) {
    return a.floor.seconds() < b.floor.seconds();
  });
  if (least != floors.end() && memory > 0.0) {
    floorMs_ = least->floor.seconds() * 1e3;
    const QString upload =
        pinned > 0.0 ? tr("the upload: %1 pictures of %2 bytes over the pinned host-to-device bandwidth "
                          "(%3 GB/s, measured by the PyTorch peer's script in the same call) = %4")
                           .arg(batch_)
                           .arg(kEndToEndPictureBytes)
                           .arg(pinned / 1e9, 0, 'f', 1)
                           .arg(milliseconds(least->floor.uploadSeconds * 1e3))
                     : tr("the upload: unknown here (the pinned bandwidth is measured by the PyTorch peer's script: "
                          "open its pytorch.json)");
    // The variants that move the same bytes, together: what their conv stages read and wrote.
    const auto whichBytes = [this](const RunConvBytes& b) {
      if (b.wholeNetwork)
        return tr(
            "the 8-bit pictures read, the first conv's weights read, the scores written; the rest stays on "
            "the chip");
      if (b.pooledStages == b.stages)
        return tr("each conv's input and weights read, its pooled output written (the pooling is fused)");
      if (b.pooledStages > 0)
        return tr("each conv's input and weights read; %1 of %2 convs write their pooled output (fused pooling), "
                  "the others their full output")
            .arg(b.pooledStages)
            .arg(b.stages);
      if (b.outputsUnknown)
        return tr(
            "each conv's input and weights read, its full output written (the file does not say what the "
            "stages wrote)");
      return tr("each conv's input and weights read, its full output written");
    };
    std::vector<std::pair<QString, QStringList>> groups;  // "N MB (which bytes) = T", the variants
    for (const VariantFloor& f : floors) {
      const QString line = tr("%1 MB (%2) = %3")
                               .arg(f.bytes.bytes / 1e6, 0, 'f', 2)
                               .arg(whichBytes(f.bytes))
                               .arg(milliseconds(f.floor.convBytesSeconds * 1e3));
      auto at = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == line; });
      if (at == groups.end()) at = groups.insert(groups.end(), {line, {}});
      at->second << variantDisplayName(f.variant);
    }
    QStringList bytesLines;
    for (const auto& [line, variants] : groups) bytesLines << tr("  – %1: %2").arg(variants.join(", "), line);
    const QString bytes =
        tr("the bytes each variant's conv stages move (4-byte floats) over the memory bandwidth "
           "(%1 GB/s, %2):\n%3")
            .arg(memory / 1e9, 0, 'f', 0)
            .arg(memory == peerCopy ? tr("device-to-device copy measured in the same call") : ceilings.source)
            .arg(bytesLines.join('\n'));
    floorToolTip_ = tr("The end-to-end floor at batch %1: %2, the least of the variants' floors (%3's), each the "
                       "larger of\n· %4\n· %5\nThe upload overlaps the compute, so a floor is the larger, not their "
                       "sum: no step drawn here can take less.")
                        .arg(batch_)
                        .arg(milliseconds(floorMs_), variantDisplayName(least->variant), upload, bytes);
    floorLine_ = new QCPItemStraightLine(this);
    floorLine_->point1->setCoords(floorMs_, 0.0);
    floorLine_->point2->setCoords(floorMs_, 1.0);
    floorLine_->setPen(QPen(QColor(0xc0392b), 2, Qt::DashLine));
    floorLabel_ = new QCPItemText(this);
    floorLabel_->position->setCoords(floorMs_, -0.05);
    floorLabel_->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    floorLabel_->setPadding(QMargins(4, 0, 4, 0));
    floorLabel_->setText(tr("floor %1").arg(milliseconds(floorMs_)));
    floorLabel_->setColor(QColor(0xc0392b));
    longest = std::max(longest, floorMs_);
  } else {
    noteParts_ << (memory > 0.0 ? tr("no floor: no variant drawn lists its conv layers")
                                : tr("no floor: this device's memory bandwidth is not known here (not this "
                                     "machine's GPU, and no copy measured in the same call)"));
  }

  // What the bars are, and what they cannot say.
  QStringList clamped, rebuilt, inference;
  bool measured = false;
  for (const auto& [variant, breakdown] : drawn) {
    measured = measured || breakdown.measuredStages;
    if (breakdown.gapsClamped) clamped << variantDisplayName(variant);
    if (!breakdown.measuredStages) rebuilt << variantDisplayName(variant);
    if (breakdown.totalIsInference) inference << variantDisplayName(variant);
  }
  if (measured) noteParts_.prepend(tr("gaps = end to end − stages timed apart: host overhead, launch latency"));
  if (!clamped.isEmpty())
    noteParts_ << tr("gaps (or \"other\") of %1 drawn as 0 (the parts add up to more)").arg(clamped.join(", "));
  if (!rebuilt.isEmpty())
    // An older file, or a sweep of this window (it times op times only).
    noteParts_ << tr("no stage timings for %1 (an older file, or a sweep here): the conv op times of the op-time "
                     "runs, the rest \"other\"")
                      .arg(rebuilt.size() == static_cast<int>(drawn.size()) ? tr("any variant") : rebuilt.join(", "));
  if (!inference.isEmpty())
    noteParts_ << tr("no end-to-end time for %1: the float inference's stands in, its upload of floats a part")
                      .arg(inference.size() == static_cast<int>(drawn.size()) ? tr("any variant")
                                                                              : inference.join(", "));
  if (!leftOut.isEmpty())
    noteParts_ << tr("not drawn (over %1× the GPU bars): %2").arg(kLeftOutAbove).arg(leftOut.join(", "));

  yAxis->setTicker(names);
  // Room above the first bar for the floor's label.
  yAxis->setRange(-0.5, static_cast<double>(rows_.size()) + 0.6);
  xAxis->setRange(0.0, longest > 0.0 ? longest * 1.08 : 1.0);
  legend->setVisible(!order.empty() || peerBars_);
  titleParts_ = {tr("Where the end-to-end time goes at batch %1").arg(batch_), QString::fromStdString(report_->model),
                 QString::fromStdString(report_->device)};
  restyle();
  replot(rpQueuedReplot);
}

void EndToEndBreakdownChart::restyle() {
  StyledPlot::restyle();
  QFont small = font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  note_->setFont(small);  // styleChart made every text element bold
  note_->setText(wrappedNote(noteParts_, small, width()));
  if (floorLabel_) {
    QFont bold = font();
    bold.setBold(true);
    floorLabel_->setFont(bold);
  }
  fitLegend(width());
}

void EndToEndBreakdownChart::fitLegend(int width) {
  // As many columns as the widest entry allows: the legend wraps instead of running off the side.
  int widest = 1;
  for (int i = 0; i < legend->itemCount(); ++i)  // cells, some of them empty once wrapped
    if (QCPAbstractLegendItem* entry = legend->item(i))
      widest = std::max(widest, entry->minimumOuterSizeHint().width());
  const int columns = std::max(1, (width - 20) / (widest + legend->columnSpacing()));
  if (columns == legend->wrap()) return;
  legend->setWrap(columns);
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);  // re-flows the entries
}

QString EndToEndBreakdownChart::noteText() const {
  return noteParts_.join(QStringLiteral("; "));
}

QString EndToEndBreakdownChart::toolTipAt(const QPoint& position) const {
  if (floorLine_ && std::abs(xAxis->coordToPixel(floorMs_) - position.x()) <= 4 &&
      axisRect()->rect().contains(position))
    return floorToolTip_;
  std::vector<QCPBars*> all = stages_;
  if (peerBars_) all.push_back(peerBars_);
  for (QCPBars* bars : all) {
    QVariant details;
    if (bars->selectTest(position, false, &details) < 0) continue;
    const QCPDataSelection hit = details.value<QCPDataSelection>();
    if (hit.isEmpty()) continue;
    const auto bar = bars->data()->at(hit.dataRange().begin());
    const size_t r = static_cast<size_t>(std::lround(bar->key)) - 1;
    if (r >= rows_.size()) continue;
    if (bars == peerBars_)
      return tr("%1 · batch %2\n%3 end to end (host clock; PyTorch gives no breakdown)")
          .arg(QString::fromStdString(rows_[r]))
          .arg(batch_)
          .arg(milliseconds(bar->value));
    QString what = bars->name();
    if (what == "gaps") what = tr("gaps: end to end − stages (host overhead, launch latency)");
    if (what == "other") what = tr("other: the rest of the time (no stage timings in this file)");
    return tr("%1 · batch %2\n%3\n%4, %5% of %6 end to end")
        .arg(variantDisplayName(rows_[r]))
        .arg(batch_)
        .arg(what, milliseconds(bar->value))
        .arg(rowTotalsMs_[r] > 0.0 ? 100.0 * bar->value / rowTotalsMs_[r] : 0.0, 0, 'f', 0)
        .arg(milliseconds(rowTotalsMs_[r]));
  }
  return {};
}

void EndToEndBreakdownChart::fitTo(const QSize& size) {
  note_->setText(wrappedNote(noteParts_, note_->font(), size.width()));
  fitLegend(size.width());
}

}  // namespace convscope::ui
