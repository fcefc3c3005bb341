// Helpers for the widget tests: one QApplication for the test binary, on the offscreen platform,
// with settings (recent files) in a private temporary folder.
#pragma once

#include <QApplication>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QTemporaryDir>

#include <cstdlib>
#include <functional>

namespace zb::view::testing {

inline QApplication& test_app() {
  static QTemporaryDir config_dir;
  static int argc = 1;
  static char name[] = "zbview_widget_tests";
  static char* argv[] = {name, nullptr};
  if (!std::getenv("QT_QPA_PLATFORM")) setenv("QT_QPA_PLATFORM", "offscreen", 1);
  setenv("XDG_CONFIG_HOME", config_dir.path().toLocal8Bit().constData(), 1);
  static QApplication app(argc, argv);
  return app;
}

// Processes events until `done` or the timeout; true when done.
inline bool wait_until(const std::function<bool()>& done, int timeout_ms = 10000) {
  QElapsedTimer timer;
  timer.start();
  while (!done()) {
    if (timer.elapsed() > timeout_ms) return false;
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
  }
  return true;
}

}  // namespace zb::view::testing
