// The one list of the window's tabs. Each row describes a view once: the names --tab and
// selectTab know it by, its title (the tab's text and its View-menu entry), whether it needs the
// left column (model, variant, picture) in presentation mode, how to make it, and which of the
// window's changes it listens to. MainWindow, the --tab option and its --help, the View menu
// (Ctrl+1..9), presentation mode and the change notifications all read this list; none names a
// view. docs/architecture.md, "Adding a tab", says how to add a row.
#pragma once

#include <QKeySequence>
#include <QMessageBox>
#include <QObject>
#include <QString>
#include <QStringList>

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "app/core/data/image_set.h"
#include "app/core/engine/benchmark.h"
#include "app/core/model/model.h"
#include "app/core/model/model_card.h"
#include "ui/inference/inference_outcome.h"

class QSettings;
class QWidget;

namespace convscope::ui {
class JobRunner;
}

namespace convscope::gui {

class MainWindow;

// What a view may listen to. The window tells every listening view after the change is made.
enum class Change {
  Model,      // a model loaded (the model, its card and its path)
  Variant,    // another kernel variant selected
  TestSet,    // the test set's pictures arrived (with their class names)
  Outcome,    // the picture's inference answered: maps, probabilities, times
  Benchmark,  // a benchmark JSON opened (the report and its file name)
};
inline constexpr int kChangeCount = 5;
QString changeName(Change change);  // "model", "variant", ...: for tests and messages

// The window as the views see it when told of a change; fields not yet known are empty.
struct WindowState {
  std::shared_ptr<const Model> model;  // null until the first model has loaded
  std::optional<ModelCard> card;
  QString modelPath;
  QString variant;  // the selected kernel variant's id
  std::shared_ptr<const ImageSet> testSet;
  QStringList classNames;  // the test set's, or Fashion-MNIST's before it arrives
  std::shared_ptr<const ui::InferenceOutcome> outcome;
  // Why `outcome` is null after an answer: the picture was taken away (the message to show in its
  // place), or its inference failed (the first line of why). Both empty: no picture yet.
  QString outcomeCleared;
  QString outcomeFailure;
  std::shared_ptr<const BenchmarkReport> benchmark;  // what the Timing tab shows (opened, swept)
  QString benchmarkName;                             // where it came from: a file name, "Sweep"
  // Another machine's results drawn beside it in the Timing tab, or null.
  std::shared_ptr<const BenchmarkReport> benchmarkBeside;
  QString benchmarkBesideName;
  Preprocessing preprocessing;  // how pictures reach the model: its card's rule, or the user's
};

// What a view's factory and its selection hook get from the window.
struct TabContext {
  MainWindow* window;   // the parent of every view
  ui::JobRunner* jobs;  // the one runner of the window's long work
};

// What a view may ask of the window beyond being told of changes: another tab's view, a tab made
// current, a message, the window's benchmark. A row declares its view's wiring with it (.links),
// so the window names no view and a tab's connections live in its own row.
class WindowLinks {
 public:
  virtual ~WindowLinks() = default;
  // The view of the tab that has `name` among its names; null when no row has it.
  virtual QWidget* viewNamed(const QString& name) const = 0;
  template <class View>
  View* view(const QString& name) const {
    return qobject_cast<View*>(viewNamed(name));
  }
  virtual MainWindow* window() const = 0;  // its left column: the picture, the variant
  virtual WindowState state() const = 0;
  virtual bool selectTab(const QString& name) = 0;
  virtual void showView(QWidget* view) = 0;  // makes the tab that holds it current
  virtual void showStatus(const QString& text, int milliseconds) = 0;
  virtual void showError(const QString& message) = 0;  // in the banner
  virtual bool selectTestImage(int index) = 0;
  virtual void addRecentFile(const QString& path) = 0;
  // What the Timing tab shows now, for the views that listen to Change::Benchmark.
  virtual void setBenchmark(std::shared_ptr<const BenchmarkReport> report, const QString& name,
                            std::shared_ptr<const BenchmarkReport> beside, const QString& besideName) = 0;
  // Where a sweep keeps its runs until they are saved (empty: nowhere).
  virtual QString recoveryFile() const = 0;
  // The window's questions (tests answer them: MainWindow::Options).
  virtual QMessageBox::StandardButton ask(const QString& text, QMessageBox::StandardButtons buttons) = 0;
  virtual QString chooseSavePath(const QString& suggested) = 0;
};

// A File-menu entry a view brings: its text (untranslated), shortcut and what it does.
struct FileAction {
  enum class Kind { Open, Export } kind;
  const char* text;
  QKeySequence shortcut;
  std::function<void(QWidget* view, WindowLinks& window)> run;
};

// In presentation mode the left column makes way for views that do not need it: on a projector
// their charts want the whole width.
enum class LeftColumn { Needed, NotNeeded };

// What a tab's unsaved work is, for the order of the questions at quit.
enum class UnsavedWork { kUsersOwnWriting, kResults };

struct TabRow {
  QStringList names;  // the tab's own name first, then names of a part of it ("draw", "staircase")
  const char* title;  // untranslated; "&&" is a literal & (tab and menu texts)
  // The tab's text in presentation mode, where large letters must still fit every tab in one bar
  // (the full title becomes its tooltip); null: the title.
  const char* shortTitle = nullptr;
  LeftColumn leftColumn = LeftColumn::Needed;
  std::function<QWidget*(const TabContext&)> make;
  // After the tab was made current by one of its names: shows the part that name stands for.
  std::function<void(QWidget* view, const QString& name, const TabContext&)> selected;
  // Connects the view's errorOccurred(QString), where it has one, to the window's banner.
  std::function<void(QWidget* view, QObject* receiver, std::function<void(const QString&)> show)> connectErrors;
  std::array<std::function<void(QWidget* view, const WindowState&)>, kChangeCount> listeners;
  // Its connections to the window and the other tabs, made once every tab exists.
  std::function<void(QWidget* view, WindowLinks& window)> links;
  // Files it opens (a suffix in lower case, or "/" for a folder): an empty text when opened, else
  // why not (the window's banner shows it). The window offers each file to the first row that
  // takes its suffix.
  QStringList opensSuffixes;
  std::function<QString(QWidget* view, const QString& path, WindowLinks& window)> open;
  std::vector<FileAction> fileActions;
  // Its own settings, read at start and written at quit (QSettings keys of its own).
  std::function<void(QWidget* view, const QSettings& settings)> restoreSettings;
  std::function<void(QWidget* view, QSettings& settings)> saveSettings;
  // At quit: false keeps the window open (unsaved work the user wants to keep). Then, once the
  // window closes, `closing` stops its long work. The user's own writing (a kernel's edits) is
  // asked about before results that can be measured again (a sweep), whatever the tabs' order.
  UnsavedWork unsavedWork = UnsavedWork::kResults;
  std::function<bool(QWidget* view, WindowLinks& window)> mayClose;
  std::function<void(QWidget* view)> closing;

  bool listensTo(Change change) const { return static_cast<bool>(listeners[static_cast<int>(change)]); }
};

// Writes a row with the view's own type: tab<ui::ProfilePanel>(...).on(Change::Model, ...).
template <class View>
class TabRowBuilder {
 public:
  TabRowBuilder(QStringList names, const char* title, LeftColumn leftColumn,
                std::function<View*(const TabContext&)> make) {
    row_.names = std::move(names);
    row_.title = title;
    row_.leftColumn = leftColumn;
    row_.make = [make = std::move(make)](const TabContext& context) -> QWidget* { return make(context); };
    if constexpr (requires(View & view) { &View::errorOccurred; }) {
      row_.connectErrors = [](QWidget* view, QObject* receiver, std::function<void(const QString&)> show) {
        QObject::connect(static_cast<View*>(view), &View::errorOccurred, receiver, std::move(show));
      };
    }
  }

  TabRowBuilder& on(Change change, std::function<void(View&, const WindowState&)> listener) {
    row_.listeners[static_cast<int>(change)] = [listener = std::move(listener)](QWidget* view,
                                                                                const WindowState& state) {
      listener(static_cast<View&>(*view), state);
    };
    return *this;
  }

  TabRowBuilder& links(std::function<void(View&, WindowLinks&)> links) {
    row_.links = [links = std::move(links)](QWidget* view, WindowLinks& window) {
      links(static_cast<View&>(*view), window);
    };
    return *this;
  }

  TabRowBuilder& opens(QStringList suffixes, std::function<QString(View&, const QString& path, WindowLinks&)> open) {
    row_.opensSuffixes = std::move(suffixes);
    row_.open = [open = std::move(open)](QWidget* view, const QString& path, WindowLinks& window) {
      return open(static_cast<View&>(*view), path, window);
    };
    return *this;
  }

  TabRowBuilder& fileAction(FileAction::Kind kind, const char* text, QKeySequence shortcut,
                            std::function<void(View&, WindowLinks&)> run) {
    row_.fileActions.push_back({kind, text, std::move(shortcut), [run = std::move(run)](QWidget* view, WindowLinks& w) {
                                  run(static_cast<View&>(*view), w);
                                }});
    return *this;
  }

  TabRowBuilder& remembers(std::function<void(View&, const QSettings&)> restore,
                           std::function<void(View&, QSettings&)> save) {
    row_.restoreSettings = [restore = std::move(restore)](QWidget* view, const QSettings& settings) {
      restore(static_cast<View&>(*view), settings);
    };
    row_.saveSettings = [save = std::move(save)](QWidget* view, QSettings& settings) {
      save(static_cast<View&>(*view), settings);
    };
    return *this;
  }

  TabRowBuilder& atQuit(UnsavedWork unsavedWork, std::function<bool(View&, WindowLinks&)> mayClose,
                        std::function<void(View&)> closing) {
    row_.unsavedWork = unsavedWork;
    if (mayClose)
      row_.mayClose = [mayClose = std::move(mayClose)](QWidget* view, WindowLinks& window) {
        return mayClose(static_cast<View&>(*view), window);
      };
    if (closing) row_.closing = [closing = std::move(closing)](QWidget* view) { closing(static_cast<View&>(*view)); };
    return *this;
  }

  TabRowBuilder& presentedAs(const char* shortTitle) {
    row_.shortTitle = shortTitle;
    return *this;
  }

  TabRowBuilder& whenSelected(std::function<void(View&, const QString& name, const TabContext&)> selected) {
    row_.selected = [selected = std::move(selected)](QWidget* view, const QString& name, const TabContext& context) {
      selected(static_cast<View&>(*view), name, context);
    };
    return *this;
  }

  operator TabRow() const { return row_; }  // NOLINT(google-explicit-constructor): rows of a list

 private:
  TabRow row_;
};

template <class View>
TabRowBuilder<View> tab(QStringList names, const char* title, LeftColumn leftColumn,
                        std::function<View*(const TabContext&)> make) {
  return TabRowBuilder<View>(std::move(names), title, leftColumn, std::move(make));
}

// The window's tabs, in the order of the tab bar (and of Ctrl+1..9).
std::vector<TabRow> standardTabs();

// Every name of `rows`, in order: what --tab accepts.
QStringList tabNamesOf(const std::vector<TabRow>& rows);

}  // namespace convscope::gui
