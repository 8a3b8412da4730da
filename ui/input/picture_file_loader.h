// Decodes picture files off the GUI thread: a 20000 x 20000 PNG takes seconds to decode, and the
// window must keep answering meanwhile. A later request supersedes an earlier one: the earlier
// decode finishes on its thread (OpenCV cannot be interrupted) but its result is dropped, so the
// picture shown is always the last one asked for.
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
  bool loading() const { return !pending_.isEmpty(); }
  QString pendingPath() const { return pending_; }  // the file being decoded, empty when none

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
