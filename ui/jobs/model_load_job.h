// Loads an ONNX model off the GUI thread and checks there everything the window will ask of it (a
// classifier of one-channel pictures, every layer's shape, the layer titles), so that nothing about
// the model can fail later on the GUI thread. Parsing a model needs no device, so it does not queue
// behind the JobRunner's long work (a sweep, a whole test set): it runs on a pool thread of its own
// and a broken file is reported at once. A later load supersedes an earlier one: the earlier one's
// result, when it comes, is ignored.
#pragma once

#include <QObject>
#include <QString>

#include <memory>
#include <optional>

#include "app/core/model/model.h"
#include "app/core/model/model_card.h"

namespace convscope::ui {

class ModelLoadJob : public QObject {
  Q_OBJECT

 public:
  explicit ModelLoadJob(QObject* parent = nullptr);

  void load(const QString& path);
  bool loading() const { return loading_; }

 signals:
  void progressed(int percent, const QString& message);
  void loaded(std::shared_ptr<const convscope::Model> model, std::optional<convscope::ModelCard> card,
              const QString& path);
  void failed(const QString& path, const QString& message);

 private:
  bool loading_ = false;
  quint64 latest_ = 0;
};

}  // namespace convscope::ui
