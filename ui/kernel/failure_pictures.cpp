#include "ui/kernel/failure_pictures.h"

#include <QEvent>
#include <QFontDatabase>
#include <QGridLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "ui/maps/colour_legend.h"

namespace convscope::ui {

// The three pictures, their titles and the colour bar of the two maps, painted. The element size
// follows the width (one integer number of pixels once it is 1 or more, so every element is the
// same square); the height follows from it (heightForWidth).
class FailurePicturesCanvas : public QWidget {
 public:
  explicit FailurePicturesCanvas(FailurePictures* owner) : QWidget(owner), owner_(owner) {
    setMouseTracking(true);
    QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Preferred);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
  }

  // The largest element and picture drawn: a 4x4 map is not a wall of colour, a 224x224 one still
  // fits beside the editor.
  static constexpr double kMaxElementPixels = 24.0;
  static constexpr int kMaxPictureHeight = 320;

  int gap() const { return fontMetrics().height(); }
  static QStringList titles() {
    return {FailurePictures::tr("Expected"), FailurePictures::tr("Your kernel"), FailurePictures::tr("Wrong elements")};
  }
  // One line, or two where a title is wider than its picture and the gap beside it (large fonts
  // beside the editor): a title wraps rather than being cut.
  int titleHeight(int width) const {
    const auto& map = owner_->map_;
    const double column = map ? map->width * elementPixels(width) + gap() : width;
    int lines = 1;
    for (const QString& title : titles())
      if (fontMetrics().horizontalAdvance(title) > column) lines = 2;
    return fontMetrics().height() * lines + 4;
  }
  int barHeight() const { return fontMetrics().height() * 2 + 6; }

  double elementPixels(int width) const {
    const auto& map = owner_->map_;
    if (!map || map->width <= 0 || map->height <= 0) return 0.0;
    double size = std::min({(width - 2.0 * gap()) / (3.0 * map->width), kMaxElementPixels,
                            static_cast<double>(kMaxPictureHeight) / map->height});
    if (size >= 1.0) size = std::floor(size);  // whole pixels: every element the same square
    return std::max(size, 0.25);
  }

  QRectF pictureRect(FailurePictures::Picture picture) const {
    const auto& map = owner_->map_;
    const double size = elementPixels(width());
    const double pictureWidth = map->width * size, pictureHeight = map->height * size;
    const double rowWidth = 3 * pictureWidth + 2 * gap();
    const double left = std::max(0.0, (width() - rowWidth) / 2) + static_cast<int>(picture) * (pictureWidth + gap());
    return {std::round(left), static_cast<double>(titleHeight(width())), pictureWidth, pictureHeight};
  }

  // The element under `pos` (this canvas's coordinates), with the picture it is in.
  bool elementAt(QPointF pos, int& h, int& w) const {
    if (!owner_->map_) return false;
    for (auto picture :
         {FailurePictures::Picture::Expected, FailurePictures::Picture::Actual, FailurePictures::Picture::Verdicts}) {
      const QRectF rect = pictureRect(picture);
      if (!rect.contains(pos)) continue;
      const double size = elementPixels(width());
      h = std::clamp(static_cast<int>((pos.y() - rect.top()) / size), 0, owner_->map_->height - 1);
      w = std::clamp(static_cast<int>((pos.x() - rect.left()) / size), 0, owner_->map_->width - 1);
      return true;
    }
    return false;
  }

  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override {
    const auto& map = owner_->map_;
    if (!map) return 0;
    return titleHeight(width) + static_cast<int>(std::ceil(map->height * elementPixels(width))) + barHeight();
  }
  QSize sizeHint() const override {
    const auto& map = owner_->map_;
    const int width = map ? 3 * map->width * 8 + 2 * gap() : 300;
    return {std::min(width, 900), heightForWidth(std::min(width, 900))};
  }
  QSize minimumSizeHint() const override { return {150, heightForWidth(150)}; }

 protected:
  void changeEvent(QEvent* event) override {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange) updateGeometry();  // presentation mode: larger titles
  }

  void mouseMoveEvent(QMouseEvent* event) override { owner_->pointAt(mapTo(owner_, event->position().toPoint())); }
  void leaveEvent(QEvent*) override { owner_->showReadout(-1, -1); }

  void paintEvent(QPaintEvent*) override {
    const auto& map = owner_->map_;
    if (!map) return;
    QPainter painter(this);
    const struct {
      FailurePictures::Picture picture;
      const QImage& image;
      QString title;
    } pictures[] = {
        {FailurePictures::Picture::Expected, owner_->expectedImage_, titles()[0]},
        {FailurePictures::Picture::Actual, owner_->actualImage_, titles()[1]},
        {FailurePictures::Picture::Verdicts, owner_->verdictImage_, titles()[2]},
    };
    for (const auto& p : pictures) {
      const QRectF rect = pictureRect(p.picture);
      // A title may use the gap beside its picture, and wraps rather than running into the next one.
      const QRect titleRect(static_cast<int>(rect.left() - gap() / 2), 0, static_cast<int>(rect.width()) + gap(),
                            titleHeight(width()));
      painter.setPen(palette().color(QPalette::WindowText));
      painter.drawText(titleRect, Qt::AlignHCenter | Qt::AlignBottom | Qt::TextWordWrap, p.title);
      painter.setRenderHint(QPainter::SmoothPixmapTransform, false);  // sharp squares
      painter.drawImage(rect, p.image);
      painter.setPen(palette().color(QPalette::Mid));
      painter.drawRect(rect.adjusted(-0.5, -0.5, 0.5, 0.5));
    }
    // The shared colour scale, under the two maps.
    const QRectF expected = pictureRect(FailurePictures::Picture::Expected);
    const QRectF actual = pictureRect(FailurePictures::Picture::Actual);
    const QRect bar(static_cast<int>(expected.left()), static_cast<int>(expected.bottom()) + 4,
                    static_cast<int>(actual.right() - expected.left()), barHeight() - 6);
    painter.setPen(palette().color(QPalette::WindowText));
    paintColourLegend(painter, bar, ColourMap::Viridis, owner_->range_);
  }

 private:
  FailurePictures* owner_;
};

namespace {

QImage verdictPicture(const ConvFailureMap& map) {
  QImage image(map.width, map.height, QImage::Format_RGB32);
  for (int h = 0; h < map.height; ++h)
    for (int w = 0; w < map.width; ++w) image.setPixel(w, h, FailurePictures::verdictColour(map.at(h, w)).rgb());
  return image;
}

QString swatch(const QColor& colour, const char* square = "&#9632;") {
  return QString("<span style='color:%1'>%2</span>").arg(colour.name(), square);
}

}  // namespace

FailurePictures::FailurePictures(QWidget* parent)
    : QWidget(parent),
      canvas_(new FailurePicturesCanvas(this)),
      heading_(new QLabel(this)),
      legend_(new QLabel(this)),
      counts_(new QLabel(this)),
      ranges_(new QLabel(this)),
      readout_(new QLabel(this)),
      worst_(new QPlainTextEdit(this)) {
  heading_->setWordWrap(true);
  heading_->setTextFormat(Qt::PlainText);
  heading_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  legend_->setTextFormat(Qt::RichText);
  legend_->setText(swatch(verdictColour(ElementVerdict::Wrong)) + tr(" wrong &nbsp; ") +
                   swatch(verdictColour(ElementVerdict::NeverWritten)) + tr(" never written &nbsp; ") +
                   swatch(verdictColour(ElementVerdict::NotANumber)) + tr(" NaN &nbsp; ") +
                   swatch(QColor(0x80, 0x80, 0x80), "&#9633;") /* ok is nearly the background: an outline */ +
                   tr(" ok &nbsp; ") + swatch(noNumberColour()) + tr(" no number in your kernel's map"));
  legend_->setWordWrap(true);
  for (QLabel* label : {counts_, ranges_, readout_}) {
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  }
  readout_->setToolTip(tr("Point at an element of a picture to read it"));
  worst_->setReadOnly(true);
  worst_->setLineWrapMode(QPlainTextEdit::WidgetWidth);
  worst_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  worst_->setToolTip(tr("The elements furthest from the expected values"));
  worst_->setMaximumHeight(worst_->fontMetrics().lineSpacing() * 6 + 12);

  // In a scroll area: beside the editor, in presentation mode's large fonts, the pictures keep
  // their squares and the labels their lines, and the rest scrolls.
  auto* content = new QWidget;
  auto* layout = new QVBoxLayout(content);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(3);
  // The pictures first: where the eye goes; which map they are of comes after the counts.
  layout->addWidget(canvas_);
  layout->addWidget(legend_);
  layout->addWidget(counts_);
  layout->addWidget(ranges_);
  layout->addWidget(readout_);
  layout->addWidget(heading_);
  layout->addWidget(new QLabel(tr("<b>Worst elements</b>"), this));
  layout->addWidget(worst_);
  layout->addStretch(1);
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(content);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->addWidget(scroll);
  showReadout(-1, -1);
}

// Room for the pictures at least, however little the panel has: the labels may scroll.
QSize FailurePictures::minimumSizeHint() const {
  const int width = canvas_->width() > 0 ? canvas_->width() : 300;
  return {200, canvas_->heightForWidth(width) + fontMetrics().height() * 2};
}

void FailurePictures::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  updateGeometry();  // the minimum height follows the width
}

QColor FailurePictures::verdictColour(ElementVerdict verdict) {
  // Okabe-Ito colours, told apart with the common colour-vision deficiencies; ok is a light gray
  // so that only the bad elements draw the eye.
  switch (verdict) {
    case ElementVerdict::Ok:
      return QColor(0xe4, 0xe4, 0xe4);
    case ElementVerdict::Wrong:
      return QColor(0xd5, 0x5e, 0x00);  // vermillion
    case ElementVerdict::NeverWritten:
      return QColor(0x00, 0x72, 0xb2);  // blue
    case ElementVerdict::NotANumber:
      return QColor(0xcc, 0x79, 0xa7);  // reddish purple
  }
  return Qt::black;
}

QColor FailurePictures::noNumberColour() {
  return QColor(0x80, 0x80, 0x80);
}

void FailurePictures::setFailureMap(const ConvFailureMap& map) {
  map_ = map;
  // One scale for both maps, from the expected values and the kernel's finite ones, so that a
  // kernel off by a factor shows as a different colour rather than the same picture rescaled.
  std::vector<float> expected(map.expected.begin(), map.expected.end());
  std::vector<float> finite;
  finite.reserve(expected.size() + map.actual.size());
  for (float v : expected)
    if (std::isfinite(v)) finite.push_back(v);
  for (float v : map.actual)
    if (std::isfinite(v)) finite.push_back(v);
  range_ = displayRange(finite.data(), finite.size(), ColourMap::Viridis);
  if (!(range_.high > range_.low)) range_.high = range_.low + 1.0f;  // a constant map: one colour
  // mapImage takes numbers only: a NaN or infinity is drawn as "no number" over its colour.
  std::vector<float> actual = map.actual;
  for (float& v : actual)
    if (!std::isfinite(v)) v = range_.low;
  expectedImage_ = mapImage(expected.data(), map.height, map.width, range_, ColourMap::Viridis);
  actualImage_ =
      mapImage(actual.data(), map.height, map.width, range_, ColourMap::Viridis).convertToFormat(QImage::Format_RGB32);
  for (int h = 0; h < map.height; ++h)
    for (int w = 0; w < map.width; ++w)
      if (!std::isfinite(map.actual[static_cast<size_t>(h) * map.width + w]))
        actualImage_.setPixel(w, h, noNumberColour().rgb());
  verdictImage_ = verdictPicture(map);

  QString heading = tr("The map shown: image %1, output channel %2 of the shape %3 (%4×%5).")
                        .arg(map.n)
                        .arg(map.m)
                        .arg(QString::fromStdString(map.problem.describe()))
                        .arg(map.height)
                        .arg(map.width);
  if (map.shapeTotal > 0)  // the check counts the whole shape; a map made otherwise may not
    heading += tr(" In the whole shape %1 of %2 elements are bad.").arg(map.shapeBad).arg(map.shapeTotal);
  heading_->setText(heading);
  counts_->setText(countsText());
  ranges_->setText(rangesText());
  worst_->setPlainText(worstText());
  showReadout(-1, -1);
  canvas_->updateGeometry();
  canvas_->update();
}

void FailurePictures::clear() {
  map_.reset();
  counts_->clear();
  ranges_->clear();
  heading_->clear();
  worst_->clear();
  showReadout(-1, -1);
  canvas_->updateGeometry();
  canvas_->update();
}

std::optional<QPoint> FailurePictures::elementCentre(Picture picture, int h, int w) const {
  if (!map_ || h < 0 || w < 0 || h >= map_->height || w >= map_->width) return std::nullopt;
  const double size = canvas_->elementPixels(canvas_->width());
  if (size <= 0.0) return std::nullopt;
  const QRectF rect = canvas_->pictureRect(picture);
  const QPointF inCanvas(rect.left() + (w + 0.5) * size, rect.top() + (h + 0.5) * size);
  return canvas_->mapTo(this, inCanvas.toPoint());
}

void FailurePictures::pointAt(QPoint pos) {
  int h = -1, w = -1;
  if (!canvas_->elementAt(canvas_->mapFrom(this, pos), h, w)) h = w = -1;
  showReadout(h, w);
}

void FailurePictures::showReadout(int h, int w) {
  QString text;
  if (map_ && h >= 0 && w >= 0) {
    const size_t i = static_cast<size_t>(h) * map_->width + w;
    const ElementVerdict verdict = map_->at(h, w);
    const QString got = verdict == ElementVerdict::NeverWritten ? tr("nothing")
                        : std::isnan(map_->actual[i])           ? tr("NaN")
                                                                : formatValue(map_->actual[i]);
    text = tr("h %1, w %2: expected %3, got %4 · %5")
               .arg(h)
               .arg(w)
               .arg(formatValue(map_->expected[i]), got, QString::fromUtf8(verdictName(verdict)));
  }
  readout_->setText(text.isEmpty() ? tr("Point at an element to read it.") : text);
  readout_->setProperty("element", text);
}

QString FailurePictures::readoutText() const {
  return readout_->property("element").toString();
}

QString FailurePictures::countsText() const {
  if (!map_) return {};
  return tr("wrong %1 / never written %2 / NaN %3 / total %4")
      .arg(map_->wrong)
      .arg(map_->neverWritten)
      .arg(map_->notANumber)
      .arg(map_->total());
}

QString FailurePictures::rangesText() const {
  if (!map_) return {};
  return tr("Rows %1 · columns %2")
      .arg(QString::fromStdString(map_->badRows()), QString::fromStdString(map_->badColumns()));
}

QString FailurePictures::worstText() const {
  if (!map_) return {};
  QStringList lines;
  for (const FailingElement& e : map_->worst) {
    const QString got = e.verdict == ElementVerdict::NeverWritten ? tr("nothing")
                        : std::isnan(e.got)                       ? tr("NaN")
                                                                  : formatValue(e.got);
    lines << tr("[h=%1][w=%2] expected %3, got %4 (%5)")
                 .arg(e.h)
                 .arg(e.w)
                 .arg(formatValue(e.expected), got, QString::fromUtf8(verdictName(e.verdict)));
  }
  return lines.join('\n');
}

}  // namespace convscope::ui
