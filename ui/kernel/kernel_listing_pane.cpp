#include "ui/kernel/kernel_listing_pane.h"

#include <QButtonGroup>
#include <QEvent>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QTextBlock>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/jobs/kernel_inspection_job.h"

namespace convscope::ui {
namespace {

// The listing as the pane shows it, one line for each line of the listing (the line map still
// holds): without the indentation and the column padding, which in a pane beside the editor would
// push the instructions out of view, and nvdisasm's `//## File "/a/long/path/my_conv.cu", line 28`
// shortened to the file's name.
QString compactListing(const QString& listing) {
  static const QRegularExpression fileComment(R"re(//## File "(?:[^"]*/)?([^"/]*)", line (\d+))re");
  static const QRegularExpression padding(R"re([ \t]{2,}|\t)re");
  QStringList lines = listing.split('\n');
  for (QString& line : lines) {
    line = line.trimmed();
    line.replace(fileComment, "//## \\1:\\2");
    line.replace(padding, " ");
  }
  return lines.join('\n');
}

}  // namespace

KernelListingPane::KernelListingPane(QWidget* parent)
    : QWidget(parent),
      ptxButton_(new QToolButton(this)),
      sassButton_(new QToolButton(this)),
      caption_(new QLabel(this)),
      listing_(new QPlainTextEdit(this)) {
  ptxButton_->setText(tr("PTX"));
  sassButton_->setText(tr("SASS"));
  ptxButton_->setToolTip(tr("NVRTC's PTX of your kernel (convscope-cli kernel ptx)"));
  sassButton_->setToolTip(tr("The GPU's own instructions, disassembled by nvdisasm (convscope-cli kernel sass)"));
  auto* toggle = new QButtonGroup(this);
  for (QToolButton* button : {ptxButton_, sassButton_}) {
    button->setCheckable(true);
    button->setAutoRaise(true);
    toggle->addButton(button);
  }
  ptxButton_->setChecked(true);
  caption_->setWordWrap(true);
  listing_->setReadOnly(true);
  listing_->setLineWrapMode(QPlainTextEdit::NoWrap);
  useMonospaceFont();
  auto* top = new QHBoxLayout;
  top->setContentsMargins(0, 0, 0, 0);
  top->addWidget(ptxButton_);
  top->addWidget(sassButton_);
  top->addWidget(caption_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(top);
  layout->addWidget(listing_, 1);
  connect(ptxButton_, &QToolButton::toggled, this, [this](bool on) {
    if (on) setKind(ListingKind::Ptx);
  });
  connect(sassButton_, &QToolButton::toggled, this, [this](bool on) {
    if (on) setKind(ListingKind::Sass);
  });
  clear();
}

void KernelListingPane::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::FontChange) useMonospaceFont();  // presentation mode on or off
}

// Code in a fixed-width font at the size of the rest, as the editor's.
void KernelListingPane::useMonospaceFont() {
  QFont fixed = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  fixed.setPointSizeF(font().pointSizeF() > 0 ? font().pointSizeF() : fixed.pointSizeF());
  if (listing_->font() != fixed) listing_->setFont(fixed);
}

void KernelListingPane::clear() {
  ptx_.clear();
  sass_.clear();
  sassProblem_.clear();
  problem_ =
      tr("The PTX and SASS of your kernel appear here once it compiles; the lines of the source line "
         "under the cursor are highlighted.");
  ptxSourceLines_.clear();
  sassSourceLines_.clear();
  showListing();
}

void KernelListingPane::showInspecting() {
  problem_ = tr("Compiling with -lineinfo for the listing…");
  ptx_.clear();
  sass_.clear();
  showListing();
}

void KernelListingPane::setInspection(const KernelInspectionResult& result) {
  problem_ = result.problem;
  ptx_ = result.ptx;
  sass_ = result.sass;
  sassProblem_ = result.sassProblem;
  ptxSourceLines_ = result.ptxSourceLines;
  sassSourceLines_ = result.sassSourceLines;
  showListing();
}

void KernelListingPane::setKind(ListingKind kind) {
  (kind == ListingKind::Ptx ? ptxButton_ : sassButton_)->setChecked(true);
  if (kind == kind_) return;
  kind_ = kind;
  showListing();
}

void KernelListingPane::showSourceLine(int sourceLine) {
  if (sourceLine == sourceLine_) return;
  sourceLine_ = sourceLine;
  highlight();
}

// The whole listing of the chosen kind, or, where there is none, why.
void KernelListingPane::showListing() {
  const bool sass = kind_ == ListingKind::Sass;
  QString why = problem_;
  if (why.isEmpty() && sass && sass_.isEmpty())
    why = sassProblem_.isEmpty() ? tr("nvdisasm gave no SASS for this kernel.") : sassProblem_;
  if (!why.isEmpty()) {
    listing_->setLineWrapMode(QPlainTextEdit::WidgetWidth);  // a message, read whole
    listing_->setPlainText(why);
  } else {
    listing_->setLineWrapMode(QPlainTextEdit::NoWrap);  // code: one instruction a line
    listing_->setPlainText(compactListing(sass ? sass_ : ptx_));
  }
  highlight();
}

void KernelListingPane::highlight() {
  highlighted_.clear();
  const bool haveListing = problem_.isEmpty() && !(kind_ == ListingKind::Sass ? sass_ : ptx_).isEmpty();
  if (haveListing && sourceLine_ > 0)
    highlighted_ =
        listingLinesOfSourceLine(kind_ == ListingKind::Ptx ? ptxSourceLines_ : sassSourceLines_, sourceLine_);
  QList<QTextEdit::ExtraSelection> marks;
  QTextCharFormat format;
  format.setBackground(QColor(255, 236, 160));  // a pale amber: the editor's current line has its own tint
  format.setProperty(QTextFormat::FullWidthSelection, true);
  for (int line : highlighted_) {
    const QTextBlock block = listing_->document()->findBlockByNumber(line - 1);
    if (!block.isValid()) continue;
    QTextEdit::ExtraSelection mark;
    mark.cursor = QTextCursor(block);
    mark.format = format;
    marks.append(mark);
  }
  listing_->setExtraSelections(marks);
  const QString kindName = kind_ == ListingKind::Ptx ? tr("PTX") : tr("SASS");
  if (!haveListing)
    caption_->clear();
  else if (sourceLine_ <= 0)
    caption_->setText(tr("put the cursor on a line of your kernel"));
  else if (highlighted_.empty())
    caption_->setText(tr("line %1: no %2 comes from it").arg(sourceLine_).arg(kindName));
  else
    caption_->setText(
        tr("line %1: %n %2 line(s)", "", static_cast<int>(highlighted_.size())).arg(sourceLine_).arg(kindName));
  if (highlighted_.empty()) return;
  // The first highlighted line in view, a few lines below the top so its context shows.
  const QTextBlock first = listing_->document()->findBlockByNumber(highlighted_.front() - 1);
  const QTextBlock last = listing_->document()->findBlockByNumber(highlighted_.back() - 1);
  QTextCursor cursor(last);
  listing_->setTextCursor(cursor);
  listing_->ensureCursorVisible();
  listing_->setTextCursor(QTextCursor(first));
  listing_->ensureCursorVisible();
}

QString KernelListingPane::captionText() const {
  return caption_->text();
}

}  // namespace convscope::ui
