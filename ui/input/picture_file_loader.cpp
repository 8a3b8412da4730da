#include "ui/input/picture_file_loader.h"

#include <QThread>

#include <algorithm>
#include <new>

#include "ui/input/picture_file.h"

namespace convscope::ui {

PictureFileLoader::PictureFileLoader(QObject* parent) : QObject(parent) {}

PictureFileLoader::~PictureFileLoader() {
  for (QThread* thread : threads_) {
    thread->wait();
    delete thread;
  }
}

void PictureFileLoader::load(const QString& path) {
  const quint64 request = ++latest_;
  const bool wasLoading = loading();
  pending_ = path;
  QThread* thread = QThread::create([this, request, path] {
    InputImage picture;
    QString error;
    try {
      picture = loadPictureFile(path);
    } catch (const std::bad_alloc&) {
      error = tr("%1: the picture is too large to decode in memory").arg(path);
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    QMetaObject::invokeMethod(
        this, [this, request, path, picture = std::move(picture), error] { arrived(request, path, picture, error); },
        Qt::QueuedConnection);
  });
  thread->setObjectName("picture decoder");
  connect(thread, &QThread::finished, this, [this, thread] {
    threads_.erase(std::remove(threads_.begin(), threads_.end(), thread), threads_.end());
    thread->deleteLater();
  });
  threads_.push_back(thread);
  thread->start();
  if (!wasLoading) emit loadingChanged(true);
}

void PictureFileLoader::cancel() {
  if (!loading()) return;
  ++latest_;  // the request in flight is no longer the latest: arrived() drops it
  pending_.clear();
  emit loadingChanged(false);
}

void PictureFileLoader::arrived(quint64 request, const QString& path, const InputImage& picture, const QString& error) {
  if (request != latest_) return;  // superseded by a later request
  pending_.clear();
  emit loadingChanged(false);
  if (error.isEmpty())
    emit loaded(picture, path);
  else
    emit failed(path, error);
}

}  // namespace convscope::ui
