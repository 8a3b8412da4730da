// The model's preprocessing, shown and changed in the window (File > Picture preprocessing…):
// how a picture is framed (fit, centre crop, stretch), inverted, ordered (RGB or BGR) and mapped
// to the model's values (range, mean, standard deviation per channel). It starts from the rule
// in use; "Model's own" puts back the card's (or the default for the model's channels).
#pragma once

#include <QDialog>

#include <array>

#include "app/core/data/preprocessing.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;

namespace convscope::ui {

class PreprocessingDialog : public QDialog {
  Q_OBJECT

 public:
  // `current`: the rule in use; `modelsOwn`: the card's or the default; `channels`: the model's
  // input channels (the channel order and the second and third mean and deviation need three).
  PreprocessingDialog(const Preprocessing& current, const Preprocessing& modelsOwn, int channels,
                      QWidget* parent = nullptr);

  Preprocessing preprocessing() const;
  void setPreprocessing(const Preprocessing& rule);

 private:
  void updateSummary();

  Preprocessing modelsOwn_;
  int channels_ = 1;
  QComboBox* framing_ = nullptr;
  QDoubleSpinBox* cropFraction_ = nullptr;
  QComboBox* inversion_ = nullptr;
  QComboBox* channelOrder_ = nullptr;
  QDoubleSpinBox* valueRange_ = nullptr;
  std::array<QDoubleSpinBox*, 3> mean_{};
  std::array<QDoubleSpinBox*, 3> deviation_{};
  QLabel* summary_ = nullptr;
};

}  // namespace convscope::ui
