// The files a user opened lately (models and images alike), remembered in QSettings and offered
// in a menu. Files that have disappeared are dropped when the menu is built.
#pragma once

#include <QObject>
#include <QStringList>

class QMenu;

namespace convscope::ui {

class RecentFiles : public QObject {
  Q_OBJECT

 public:
  // `settingsKey` names the list in QSettings; an empty key keeps the list in memory only.
  RecentFiles(QString settingsKey, QObject* parent = nullptr);

  void add(const QString& path);
  QStringList files() const { return files_; }
  // Rebuilds `menu` with one action per existing file.
  void fillMenu(QMenu* menu);

 signals:
  void fileChosen(const QString& path);

 private:
  void save() const;

  QString settingsKey_;
  QStringList files_;
  static constexpr int kMaximum = 10;
};

}  // namespace convscope::ui
