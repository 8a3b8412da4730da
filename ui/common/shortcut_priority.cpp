#include "ui/common/shortcut_priority.h"

#include <QCoreApplication>
#include <QKeyEvent>
#include <QWidget>

namespace convscope::ui {
namespace {

constexpr char kKeepsItsKeys[] = "convscopeKeepsNavigationKeys";

bool keepsItsKeys(QObject* object) {
  for (auto* widget = qobject_cast<QWidget*>(object); widget; widget = widget->parentWidget())
    if (widget->property(kKeepsItsKeys).toBool()) return true;
  return false;
}

}  // namespace

ShortcutPriority::ShortcutPriority(QList<QKeySequence> keys, QObject* parent)
    : QObject(parent), keys_(std::move(keys)) {
  QCoreApplication::instance()->installEventFilter(this);
}

ShortcutPriority::~ShortcutPriority() {
  if (QCoreApplication::instance()) QCoreApplication::instance()->removeEventFilter(this);
}

void ShortcutPriority::leaveKeysTo(QWidget* widget) {
  widget->setProperty(kKeepsItsKeys, true);
}

bool ShortcutPriority::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() != QEvent::ShortcutOverride) return QObject::eventFilter(watched, event);
  // A widget that accepts the override keeps the key for itself; left unaccepted (and kept from
  // the widget), the key goes on to the shortcut.
  const auto* key = static_cast<QKeyEvent*>(event);
  const QKeySequence pressed(key->keyCombination());
  if (!keys_.contains(pressed) || keepsItsKeys(watched)) return false;
  event->ignore();
  return true;
}

}  // namespace convscope::ui
