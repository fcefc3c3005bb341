// Helpers for the widget tests: one QApplication for the test binary, on the offscreen platform,
// with settings (recent files) in a private temporary folder.
#pragma once

#include <gtest/gtest.h>

#include <QApplication>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QTemporaryDir>

#include <cstdlib>
#include <functional>

namespace zb::view::testing {

// Deletes the application after the last test, while Qt's own globals still exist (a function-local
// static QApplication would be destroyed after them, at exit, and crash there).
class QtAppEnvironment : public ::testing::Environment {
 public:
  static QApplication*& app() {
    static QApplication* instance = nullptr;
    return instance;
  }
  void TearDown() override {
    delete app();
    app() = nullptr;
  }
};

inline QApplication& test_app() {
  static QTemporaryDir config_dir;
  static int argc = 1;
  static char name[] = "zbview_widget_tests";
  static char* argv[] = {name, nullptr};
  if (!QtAppEnvironment::app()) {
    if (!std::getenv("QT_QPA_PLATFORM")) setenv("QT_QPA_PLATFORM", "offscreen", 1);
    setenv("XDG_CONFIG_HOME", config_dir.path().toLocal8Bit().constData(), 1);
    QtAppEnvironment::app() = new QApplication(argc, argv);
    ::testing::AddGlobalTestEnvironment(new QtAppEnvironment);
  }
  return *QtAppEnvironment::app();
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
