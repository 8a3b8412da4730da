#include "ui/common/recent_files.h"

#include <QDir>
#include <QFileInfo>
#include <QMenu>
#include <QSettings>

namespace convscope::ui {

RecentFiles::RecentFiles(QString settingsKey, QObject* parent) : QObject(parent), settingsKey_(std::move(settingsKey)) {
  if (!settingsKey_.isEmpty()) files_ = QSettings().value(settingsKey_).toStringList();
}

void RecentFiles::add(const QString& path) {
  const QString absolute = QFileInfo(path).absoluteFilePath();
  files_.removeAll(absolute);
  files_.prepend(absolute);
  while (files_.size() > kMaximum) files_.removeLast();
  save();
}

void RecentFiles::fillMenu(QMenu* menu) {
  menu->clear();
  for (const QString& path : files_) {
    if (!QFileInfo::exists(path)) continue;
    QAction* action = menu->addAction(QDir::toNativeSeparators(path));
    connect(action, &QAction::triggered, this, [this, path] { emit fileChosen(path); });
  }
  if (menu->isEmpty()) menu->addAction(tr("(none yet)"))->setEnabled(false);
}

void RecentFiles::save() const {
  if (!settingsKey_.isEmpty()) QSettings().setValue(settingsKey_, files_);
}

}  // namespace convscope::ui
