// Choosing the network: the shipped models of data/models/ in a list, any other ONNX file
// through "Open…", and a one-line summary of the model in use (input, parameters, FLOPs and
// PyTorch's test accuracy from its card). It only asks for a model; the window loads it and
// tells the picker what is in use, so a file that fails to load leaves the choice unchanged.
#pragma once

#include <QWidget>

#include <optional>

#include "app/core/model/model.h"
#include "app/core/model/model_card.h"

class QComboBox;
class QLabel;

namespace convscope::ui {

class ModelPicker : public QWidget {
  Q_OBJECT

 public:
  explicit ModelPicker(QWidget* parent = nullptr);

  // The .onnx files shipped in data/models/ (CONVSCOPE_MODELS_DIR), sorted by name.
  static QStringList shippedModels();
  static QString summary(const Model& model, const std::optional<ModelCard>& card);

  void setCurrentModel(const QString& path, const Model& model, const std::optional<ModelCard>& card);
  QString currentPath() const { return current_; }
  QString summaryText() const;

  // Compact: the choice alone, the text under it hidden (presentation mode needs the room).
  void setCompact(bool compact);

 public slots:
  void openFileDialog();

 signals:
  void modelRequested(const QString& path);

 private:
  void selectInCombo(const QString& path);

  QComboBox* combo_;
  QLabel* summary_;
  QString current_;
};

}  // namespace convscope::ui
