// Decodes picture files off the GUI thread: a 20000 x 20000 PNG takes seconds to decode, and the
// window must keep answering meanwhile. A later request supersedes an earlier one: the earlier
// decode finishes on its thread (OpenCV cannot be interrupted) but its result is dropped, so the
// picture shown is always the last one asked for. Choosing another input (a test image, a
// drawing) cancels a pending decode the same way.
#pragma once

#include <QObject>
#include <QString>

#include <vector>

#include "ui/inference/input_image.h"

class QThread;

namespace convscope::ui {

class PictureFileLoader : public QObject {
  Q_OBJECT

 public:
  explicit PictureFileLoader(QObject* parent = nullptr);
  ~PictureFileLoader() override;  // waits for decodes in flight, dropping their results

  // Starts decoding `path` (loadPictureFile) and returns at once.
  void load(const QString& path);
  // Drops the result of any decode in flight: the user chose another input meanwhile.
  void cancel();
  bool loading() const { return !pending_.isEmpty(); }
  QString pendingPath() const { return pending_; }  // the file being decoded, empty when none
  // True while any decoder thread runs, a cancelled or superseded one included (for tests: its
  // dropped result has been delivered once this is false).
  bool decoding() const { return !threads_.empty(); }

 signals:
  void loaded(const convscope::ui::InputImage& picture, const QString& path);
  void failed(const QString& path, const QString& message);
  void loadingChanged(bool loading);

 private:
  void arrived(quint64 request, const QString& path, const InputImage& picture, const QString& error);

  quint64 latest_ = 0;
  QString pending_;
  std::vector<QThread*> threads_;
};

}  // namespace convscope::ui
