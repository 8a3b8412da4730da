// The GUI tests' main: a QApplication on the offscreen platform (no display needed), settings,
// data (the kernels' history) and cache (the GPU's measured copy bandwidth) kept in temporary
// folders so a test never reads or changes the user's, then GoogleTest.
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
  // The copy bandwidth is measured in this process, never read from (or written to) the user's
  // cache or another test's.
  QTemporaryDir cache;
  qputenv("XDG_CACHE_HOME", cache.path().toUtf8());
  qunsetenv("CONVSCOPE_DEVICE_CACHE");  // else the cache would be the file it names
  QApplication app(argc, argv);
  QApplication::setOrganizationName("ConvScopeTests");
  QApplication::setApplicationName("convscope-ui-tests");
  QApplication::setStyle("Fusion");
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
