// The GUI tests' main: a QApplication on the offscreen platform (no display needed), settings
// and data (the kernels' history) kept in temporary folders so a test never reads or changes the
// user's, then GoogleTest.
#include <gtest/gtest.h>

#include <QApplication>
#include <QSettings>
#include <QTemporaryDir>

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QTemporaryDir settings;
  qputenv("XDG_CONFIG_HOME", settings.path().toUtf8());
  QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settings.path());
  QTemporaryDir data;
  qputenv("XDG_DATA_HOME", data.path().toUtf8());
  qunsetenv("CONVSCOPE_KERNEL_HISTORY");  // else the history would go where it names
  QApplication app(argc, argv);
  QApplication::setOrganizationName("ConvScopeTests");
  QApplication::setApplicationName("convscope-ui-tests");
  QApplication::setStyle("Fusion");
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
