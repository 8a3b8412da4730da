// Why the student's kernel is slow, in figures: registers per thread, static shared memory per
// block, local memory per thread (spills) and constant memory, and the occupancy of the file's
// block (blocks per SM, active warps, the limiting resource), as `convscope-cli kernel info`
// prints them. Where they come from is said: the driver on the GPU here, or the compiler for
// sm_90 with the occupancy computed from that architecture's limits.
#pragma once

#include <QWidget>

#include <memory>

class QLabel;

namespace convscope::ui {

struct KernelInspectionResult;

class KernelResourcesView : public QWidget {
  Q_OBJECT

 public:
  explicit KernelResourcesView(QWidget* parent = nullptr);

  void showInspecting();  // a compile succeeded: new figures are on their way
  void setInspection(const KernelInspectionResult& result);
  void clear();

  // What the view shows, as plain text (three lines), and every figure in words (its tooltip).
  QString text() const;
  QString detailsText() const;

 private:
  QLabel* figures_;
};

}  // namespace convscope::ui
