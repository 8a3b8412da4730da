#include "ui/common/presentation_mode.h"

#include <QApplication>
#include <QFont>
#include <QPalette>

#include <algorithm>

namespace convscope::ui {
namespace {

struct SavedLook {
  bool on = false;
  bool saved = false;
  QFont font;
  QPalette palette;
};

SavedLook& look() {
  static SavedLook state;
  return state;
}

QPalette highContrastPalette() {
  QPalette p;
  const QColor black(0, 0, 0), white(255, 255, 255), yellow(255, 221, 0), gray(150, 150, 150);
  p.setColor(QPalette::Window, black);
  p.setColor(QPalette::WindowText, white);
  p.setColor(QPalette::Base, black);
  p.setColor(QPalette::AlternateBase, QColor(30, 30, 30));
  p.setColor(QPalette::Text, white);
  p.setColor(QPalette::BrightText, yellow);
  p.setColor(QPalette::Button, QColor(25, 25, 25));
  p.setColor(QPalette::ButtonText, white);
  p.setColor(QPalette::Highlight, yellow);
  p.setColor(QPalette::HighlightedText, black);
  p.setColor(QPalette::ToolTipBase, white);
  p.setColor(QPalette::ToolTipText, black);
  p.setColor(QPalette::PlaceholderText, gray);
  p.setColor(QPalette::Link, QColor(120, 200, 255));
  p.setColor(QPalette::Mid, gray);
  p.setColor(QPalette::Dark, gray);
  p.setColor(QPalette::Light, white);
  for (QPalette::ColorRole role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
    p.setColor(QPalette::Disabled, role, gray);
  return p;
}

}  // namespace

void setPresentationMode(bool on) {
  SavedLook& state = look();
  if (on == state.on) return;
  if (!state.saved) {
    state.font = QApplication::font();
    state.palette = QApplication::palette();
    state.saved = true;
  }
  state.on = on;
  if (on) {
    QFont big = state.font;
    big.setPointSizeF(std::max(16.0, state.font.pointSizeF() * 1.6));
    big.setBold(true);
    QApplication::setFont(big);
    QApplication::setPalette(highContrastPalette());
  } else {
    QApplication::setFont(state.font);
    QApplication::setPalette(state.palette);
  }
}

bool presentationMode() {
  return look().on;
}

}  // namespace convscope::ui
