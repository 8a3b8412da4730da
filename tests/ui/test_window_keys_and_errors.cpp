// The window's keys, menus and errors as a teacher in front of a class meets them: the
// next/previous keys work wherever the focus is (after typing in the # box too) and Enter in
// the box jumps; every menu entry reads as written; an opened image file is not shown as a
// test image; an error appears once, in the banner, and no dialog interrupts the demo.
#include <gtest/gtest.h>

#include <QApplication>
#include <QLineEdit>
#include <QListView>
#include <QMenuBar>
#include <QMessageBox>
#include <QSpinBox>
#include <QStatusBar>

#include "app/core/data/image_file.h"
#include "tests/ui/ui_test_support.h"
#include "ui/common/error_banner.h"
#include "ui/input/dataset_browser.h"
#include "ui/input/input_panel.h"

namespace convscope::testing {
namespace {

// The text a menu shows for an action's text: "&&" is a literal "&", a single "&" marks the
// mnemonic (underlined, not shown) and takes the character after it as that letter.
QString shownText(const QString& text) {
  QString shown;
  for (int i = 0; i < text.size(); ++i) {
    if (text[i] == '&' && i + 1 < text.size()) {
      ++i;  // "&&" -> "&"; "&x" -> "x"
    }
    shown += text[i];
  }
  return shown;
}

void collectActions(const QList<QAction*>& actions, QList<QAction*>* all) {
  for (QAction* action : actions) {
    all->append(action);
    if (action->menu()) collectActions(action->menu()->actions(), all);
  }
}

std::unique_ptr<gui::MainWindow> activeWindow() {
  auto window = openWindow();
  window->activateWindow();
  EXPECT_TRUE(QTest::qWaitForWindowActive(window.get()));
  return window;
}

TEST(Keys, CtrlRightAndLeftStepAfterTypingInTheJumpBox) {
  auto window = activeWindow();
  ui::DatasetBrowser* browser = window->inputPanel()->browser();
  QSpinBox* box = browser->goToBox();
  auto* edit = box->findChild<QLineEdit*>();
  ASSERT_NE(edit, nullptr);
  box->setFocus();
  ASSERT_TRUE(QTest::qWaitFor([&] { return edit->hasFocus() || box->hasFocus(); }));
  edit->selectAll();
  QTest::keyClicks(edit, "42");
  QTest::keyClick(edit, Qt::Key_Return);
  ASSERT_TRUE(waitForInference(*window));
  EXPECT_EQ(browser->currentImage(), 42) << "Enter jumps";
  EXPECT_EQ(window->inference()->lastOutcome()->input.testIndex, 42);
  EXPECT_FALSE(edit->hasFocus() || box->hasFocus()) << "Enter gives the keys back";
  EXPECT_TRUE(browser->view()->hasFocus());

  // The focus back in the box, as after a click into it: the picture keys still work.
  box->setFocus();
  ASSERT_TRUE(QTest::qWaitFor([&] { return box->hasFocus(); }));
  QTest::keyClick(QApplication::focusWidget(), Qt::Key_Right, Qt::ControlModifier);
  ASSERT_TRUE(waitForInference(*window));
  EXPECT_EQ(browser->currentImage(), 43);
  EXPECT_EQ(window->inference()->lastOutcome()->input.testIndex, 43);
  QTest::keyClick(QApplication::focusWidget(), Qt::Key_Left, Qt::ControlModifier);
  QTest::keyClick(QApplication::focusWidget(), Qt::Key_Left, Qt::ControlModifier);
  ASSERT_TRUE(waitForInference(*window));
  EXPECT_EQ(browser->currentImage(), 41);
  EXPECT_EQ(window->inference()->lastOutcome()->input.testIndex, 41);
}

TEST(Menus, EveryEntryReadsAsWrittenWithAtMostOneMnemonic) {
  auto window = openWindow();
  QList<QAction*> actions;
  collectActions(window->menuBar()->actions(), &actions);
  ASSERT_GT(actions.size(), 15);
  QStringList shown;
  for (QAction* action : actions) {
    if (action->isSeparator()) continue;
    const QString text = action->text();
    SCOPED_TRACE(text.toStdString());
    int mnemonics = 0;
    for (int i = 0; i < text.size(); ++i) {
      if (text[i] != '&') continue;
      ASSERT_LT(i + 1, text.size()) << "a trailing &";
      if (text[i + 1] == '&') {
        ++i;
        continue;
      }
      ++mnemonics;
      EXPECT_TRUE(text[i + 1].isLetterOrNumber())
          << "a single & before '" << QString(text[i + 1]).toStdString() << "' shows as an underlined blank, not an &";
    }
    EXPECT_LE(mnemonics, 1);
    shown << shownText(text);
  }
  EXPECT_TRUE(shown.contains("Feature maps & prediction")) << shown.join(" | ").toStdString();
  EXPECT_TRUE(shown.contains("Timing"));
}

TEST(Picture, AnOpenedImageFileLeavesNoTestImageHighlightedAndSaysWhatIsShown) {
  if (!imageFilesSupported()) GTEST_SKIP() << "built with -DCONVSCOPE_WITH_OPENCV=OFF: no image files";
  auto window = openWindow();
  ui::DatasetBrowser* browser = window->inputPanel()->browser();
  ASSERT_EQ(browser->currentImage(), 0);
  QTemporaryDir dir;
  QImage picture(28, 28, QImage::Format_Grayscale8);
  picture.fill(0);
  for (int y = 4; y < 24; ++y)
    for (int x = 8; x < 20; ++x) picture.setPixel(x, y, qRgb(255, 255, 255));
  const QString png = dir.filePath("my-shirt.png");
  ASSERT_TRUE(picture.save(png));
  ASSERT_TRUE(window->openImage(png)) << window->lastError().toStdString();
  ASSERT_TRUE(waitForInference(*window));
  EXPECT_EQ(window->inference()->lastOutcome()->input.description, "my-shirt.png");
  EXPECT_TRUE(browser->view()->selectionModel()->selectedIndexes().isEmpty()) << "#0 is still highlighted";
  EXPECT_FALSE(browser->view()->currentIndex().isValid());
  EXPECT_EQ(browser->currentImage(), -1);
  EXPECT_TRUE(browser->outsidePictureNote().contains("my-shirt.png")) << browser->outsidePictureNote().toStdString();

  // Choosing a test image again: it is highlighted, and the note goes.
  ASSERT_TRUE(window->selectTestImage(5));
  ASSERT_TRUE(waitForInference(*window));
  EXPECT_EQ(browser->view()->selectionModel()->selectedIndexes().size(), 1);
  EXPECT_TRUE(browser->outsidePictureNote().isEmpty());
  EXPECT_EQ(window->inference()->lastOutcome()->input.testIndex, 5);
}

TEST(Errors, AnErrorShowsOnceInTheBannerAndNoDialogInterrupts) {
  // The window as users get it: settings aside, a visible window, nothing switched off for tests.
  gui::MainWindow window(gui::MainWindow::Options::with(false, true));
  window.resize(1200, 800);
  window.show();
  ASSERT_TRUE(waitForInference(window));
  QTemporaryDir dir;
  const QString notAnImage = writeFile(dir, "lesson-notes.png", "plain text, not a PNG\n");
  window.openImage(notAnImage);  // decoded in the background: the refusal arrives a moment later
  ASSERT_TRUE(QTest::qWaitFor([&] { return !window.pictureLoading(); }, 30000));
  for (int i = 0; i < 3; ++i) QCoreApplication::processEvents();
  EXPECT_TRUE(window.errorBanner()->isVisible());
  EXPECT_TRUE(window.errorBanner()->message().contains("lesson-notes.png"));
  EXPECT_FALSE(window.statusBar()->currentMessage().contains("lesson-notes.png"))
      << "the status bar repeats the banner: " << window.statusBar()->currentMessage().toStdString();
  for (QWidget* top : QApplication::topLevelWidgets()) {
    EXPECT_EQ(qobject_cast<QMessageBox*>(top), nullptr) << "a message box: " << top->windowTitle().toStdString();
    if (top != &window && top->isVisible()) {
      EXPECT_FALSE(top->isModal()) << top->metaObject()->className();
    }
  }
  EXPECT_EQ(QApplication::activeModalWidget(), nullptr);
  // Each failure of a demo's kind: a bad benchmark file, a bad model.
  EXPECT_FALSE(window.openBenchmark(writeFile(dir, "broken.json", "{")));
  EXPECT_TRUE(window.errorBanner()->message().contains("broken.json"));
  EXPECT_EQ(QApplication::activeModalWidget(), nullptr);
  EXPECT_TRUE(window.findChildren<QMessageBox*>().isEmpty());
}

}  // namespace
}  // namespace convscope::testing
