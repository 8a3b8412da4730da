// The PTX or the SASS of the student's kernel beside the editor (read-only; a PTX | SASS toggle):
// the listing lines compiled from the source line under the editor's cursor are highlighted and
// scrolled into view (-lineinfo: PTX .loc, SASS nvdisasm -g; listingLinesOfSourceLine in
// app/core/conv/kernel_resources.h), so that the student sees what a line of C++ became. Where
// there is no SASS (nvdisasm missing), the pane says why, in words. Each line is shown without its
// indentation and column padding (the pane is narrow), so line N of the pane is line N of the listing.
#pragma once

#include <QWidget>

#include <vector>

#include "app/core/conv/kernel_resources.h"

class QLabel;
class QPlainTextEdit;
class QToolButton;

namespace convscope::ui {

struct KernelInspectionResult;

class KernelListingPane : public QWidget {
  Q_OBJECT

 public:
  explicit KernelListingPane(QWidget* parent = nullptr);

  void showInspecting();
  void setInspection(const KernelInspectionResult& result);
  void clear();

  void setKind(ListingKind kind);  // what the toggle does
  ListingKind kind() const { return kind_; }
  // Highlights what `sourceLine` (1-based, the compiler's count) became; 0: nothing.
  void showSourceLine(int sourceLine);
  int sourceLine() const { return sourceLine_; }

  // The listing lines (1-based) highlighted now, in order.
  const std::vector<int>& highlightedLines() const { return highlighted_; }
  QPlainTextEdit* listing() const { return listing_; }
  QString captionText() const;

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void useMonospaceFont();
  void showListing();
  void highlight();

  QToolButton* ptxButton_;
  QToolButton* sassButton_;
  QLabel* caption_;
  QPlainTextEdit* listing_;
  ListingKind kind_ = ListingKind::Ptx;
  int sourceLine_ = 0;
  QString ptx_, sass_, sassProblem_, problem_;
  std::vector<int> ptxSourceLines_, sassSourceLines_;
  std::vector<int> highlighted_;
};

}  // namespace convscope::ui
