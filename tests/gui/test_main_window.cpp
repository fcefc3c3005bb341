// The main window offscreen: the panel drives the rows, bad files keep the view, files and exports,
// zoom and fit, and slow generators on the worker thread with cancel.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QDropEvent>
#include <QFile>
#include <QFileInfo>
#include <QSettings>
#include <QSlider>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QUrl>
#include <QWheelEvent>

#include <chrono>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "gui/app/explorer_panel.h"
#include "gui/app/main_window.h"
#include "gui/app/timeline_view.h"
#include "tests/gui/gui_test_support.h"
#include "tests/gui/qt_test_support.h"
#include "sim/core/generators/generators.h"
#include "sim/formats/trace_json.h"
#include "gui/viewer_core/explorer_run.h"
#include "sim/app/catalog/generators.h"

namespace zb::view {
namespace {

using testing::evaluated;
using testing::test_app;
using testing::uniform_spec;
using testing::wait_until;

void write_text(const QString& path, const std::string& text) {
  std::ofstream out(path.toStdString());
  out << text;
}

std::vector<std::string> labels(const TimelineScene& scene) {
  std::vector<std::string> out;
  for (const auto& group : scene.groups()) out.push_back(group.label);
  return out;
}

class MainWindowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test_app();
    window_ = std::make_unique<MainWindow>(catalog::generators());
    window_->resize(1200, 800);
    window_->set_problem(uniform_spec(4, 8), {"1f1b", "zb-h1", "zb-h2"});
    window_->show();
    QCoreApplication::processEvents();
  }

  std::unique_ptr<MainWindow> window_;
  QTemporaryDir dir_;
};

TEST_F(MainWindowTest, ShowsOneGroupPerScheduleWithTheClosedFormSpans) {
  const auto& groups = window_->scene().groups();
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_DOUBLE_EQ(groups[0].trace.metrics.span, 33);
  EXPECT_DOUBLE_EQ(groups[1].trace.metrics.span, 27);
  EXPECT_DOUBLE_EQ(groups[2].trace.metrics.span, 24);
  EXPECT_EQ(window_->timeline()->layout().rows.size(), 12u);
  QTableWidget* table = window_->metrics_table();
  ASSERT_EQ(table->rowCount(), 3);
  EXPECT_EQ(table->item(1, 0)->text(), "zb-h1");
  EXPECT_EQ(table->item(1, 3)->text(), "27 ms");
  EXPECT_EQ(table->item(1, 4)->text(), "11.11 %");
}

TEST_F(MainWindowTest, ChangingPInThePanelUpdatesTheRows) {
  auto* p = window_->panel()->findChild<QSpinBox*>("p");
  ASSERT_NE(p, nullptr);
  p->setValue(6);
  EXPECT_EQ(window_->scene().row_count(), 18);
  EXPECT_EQ(window_->timeline()->layout().rows.size(), 18u);
  for (const auto& group : window_->scene().groups()) EXPECT_EQ(group.devices(), 6);
  // The slider drives the same value.
  auto* slider = window_->panel()->findChild<QSlider*>("p_slider");
  slider->setValue(3);
  EXPECT_EQ(p->value(), 3);
  EXPECT_EQ(window_->timeline()->layout().rows.size(), 9u);
}

TEST_F(MainWindowTest, DraggingTheTwSliderChangesTheBubbles) {
  auto* slider = window_->panel()->findChild<QSlider*>("t_w_slider");
  auto* spin = window_->panel()->findChild<QDoubleSpinBox*>("t_w");
  ASSERT_NE(slider, nullptr);
  const double before = window_->scene().groups()[1].trace.metrics.bubble_rate;
  slider->setValue(slider->value() / 2);  // t_w 1 -> 0.5
  EXPECT_NEAR(spin->value(), 0.5, 1e-9);
  const double after = window_->scene().groups()[1].trace.metrics.bubble_rate;
  EXPECT_GT(after, before);  // less W to fill the gaps: ZB-H1's bubble grows
  // ZB-H1 at t_w = 0.5: bubble (p-1)(t_f + t_b - t_w) = 3 * 1.5 over work 8 * 2.5.
  EXPECT_NEAR(window_->scene().groups()[1].trace.metrics.span, 20 + 4.5, 1e-9);
}

TEST_F(MainWindowTest, UncheckingAScheduleRemovesItsGroup) {
  auto* list = window_->panel()->findChild<QListWidget*>("schedules");
  for (int i = 0; i < list->count(); ++i) {
    if (list->item(i)->text() == "1f1b") list->item(i)->setCheckState(Qt::Unchecked);
  }
  EXPECT_EQ(labels(window_->scene()), (std::vector<std::string>{"zb-h1", "zb-h2"}));
}

// As in zbsim compare, each generator runs at its own chunk count (1f1b-i at 2 beside the
// one-chunk schedules); one that cannot run on the problem is a row with a status, not a group.
TEST_F(MainWindowTest, EachGeneratorRunsAtItsChunkCountAndAnUnsupportedOneIsARow) {
  auto* list = window_->panel()->findChild<QListWidget*>("schedules");
  for (int i = 0; i < list->count(); ++i) {
    if (list->item(i)->text() == "1f1b-i") list->item(i)->setCheckState(Qt::Checked);
  }
  auto row_of = [&](const std::string& label) {
    for (const MetricsRow& row : window_->metrics()) {
      if (row.label == label) return row;
    }
    return MetricsRow{};
  };
  EXPECT_EQ(window_->scene().groups().size(), 4u);
  EXPECT_EQ(row_of("1f1b-i").status, "ok");
  // m = 9 on p = 4 does not split into 2 equal rounds: the interleaved schedule cannot run.
  window_->set_problem(uniform_spec(4, 9), {"1f1b", "1f1b-i"});
  EXPECT_EQ(window_->scene().groups().size(), 1u);
  ASSERT_EQ(window_->metrics().size(), 2u);
  EXPECT_NE(row_of("1f1b-i").status.find("equal rounds"), std::string::npos) << row_of("1f1b-i").status;
}

TEST_F(MainWindowTest, LoadingAMalformedTraceShowsAnErrorAndKeepsThePreviousView) {
  const QString good = dir_.filePath("good.json");
  Trace measured = evaluated("zb-h1", uniform_spec(4, 8));
  measured.meta.engine = "cpu";
  write_text(good, to_json(measured).dump());
  ASSERT_TRUE(window_->open_file(good)) << window_->last_error().toStdString();
  const auto before = labels(window_->scene());
  ASSERT_EQ(before.size(), 4u);
  EXPECT_EQ(before[0], "zb-h1 (cpu, good.json)");  // opened files first
  const auto rows_before = window_->timeline()->layout().rows.size();

  const QString bad = dir_.filePath("bad.json");
  write_text(bad, R"({"devices": 2, "spans": [{"device": 0, "stream": "compute", "kind": "Q"}]})");
  EXPECT_FALSE(window_->open_file(bad));
  EXPECT_TRUE(window_->last_error().contains("bad.json")) << window_->last_error().toStdString();
  QMessageBox* box = nullptr;
  ASSERT_TRUE(wait_until([&] {
    box = window_->findChild<QMessageBox*>();
    return box && box->isVisible();
  }));
  EXPECT_TRUE(box->text().contains("bad.json"));
  EXPECT_EQ(labels(window_->scene()), before);
  EXPECT_EQ(window_->timeline()->layout().rows.size(), rows_before);
  box->close();

  // Not JSON at all, and a missing file: the same.
  const QString garbage = dir_.filePath("garbage.json");
  write_text(garbage, "{ this is not json");
  EXPECT_FALSE(window_->open_file(garbage));
  EXPECT_FALSE(window_->open_file(dir_.filePath("missing.json")));
  EXPECT_EQ(labels(window_->scene()), before);
}

TEST_F(MainWindowTest, AMeasuredTraceShowsItsSpanDifferenceToTheSimulatedOne) {
  Trace measured = evaluated("zb-h1", uniform_spec(4, 8));
  measured.meta.engine = "cuda";
  for (Span& span : measured.spans) {
    span.start *= 1.5;
    span.end *= 1.5;
  }
  measured.metrics = compute_metrics(measured, measured.metrics.work);
  const QString path = dir_.filePath("measured.json");
  write_text(path, to_json(measured).dump());
  ASSERT_TRUE(window_->open_file(path));
  // Opened files come first; with no simulated file beside it, the explorer's zb-h1 is the reference.
  const MetricsRow& row = window_->metrics().front();
  EXPECT_EQ(row.reference, "zb-h1");
  ASSERT_EQ(row.span_delta.size(), 4u);
  EXPECT_NEAR(row.span_delta[0], window_->scene().groups()[2].trace.metrics.device_span[0] * 0.5, 1e-9);
  EXPECT_TRUE(window_->metrics_table()->item(0, 7)->text().startsWith("span +50.0% vs zb-h1; per device +"))
      << window_->metrics_table()->item(0, 7)->text().toStdString();
  EXPECT_TRUE(window_->metrics_table()->item(0, 7)->text().endsWith(" ms"));
}

TEST_F(MainWindowTest, OpensScenarioAndScheduleFilesAndDroppedFiles) {
  const QString scenario = dir_.filePath("scenario.json");
  write_text(scenario, R"({"problem": {"p": 3, "m": 6, "t_f": 2, "t_b": 2, "t_w": 1}, "schedules": ["zb-h1"]})");
  ASSERT_TRUE(window_->open_file(scenario)) << window_->last_error().toStdString();
  EXPECT_EQ(window_->panel()->findChild<QSpinBox*>("p")->value(), 3);
  EXPECT_EQ(labels(window_->scene()), (std::vector<std::string>{"zb-h1"}));
  EXPECT_NEAR(window_->panel()->findChild<QDoubleSpinBox*>("t_f")->value(), 2, 1e-12);
  // Remembered for File > Open Recent (settings live in the test's private config folder).
  const QStringList recent = QSettings("zbsim", "zbview").value("recent_files").toStringList();
  ASSERT_FALSE(recent.isEmpty());
  EXPECT_EQ(recent.front(), QFileInfo(scenario).absoluteFilePath());

  const QString schedule = dir_.filePath("mine.txt");
  write_text(schedule, "d0: F0 F1 B0 W0 B1 W1\nd1: F0 B0 F1 B1 W0 W1\n");
  // What dropping the file onto the window does (Qt's drag plumbing itself is not simulated offscreen).
  EXPECT_EQ(window_->open_urls({QUrl::fromLocalFile(schedule)}), 1);
  EXPECT_EQ(window_->panel()->findChild<QSpinBox*>("p")->value(), 2);
  EXPECT_EQ(labels(window_->scene()), (std::vector<std::string>{"mine.txt (file)", "zb-h1"}));
  // The schedule file follows the panel: a slower t_f lengthens it.
  const double span = window_->scene().groups()[0].trace.metrics.span;
  window_->panel()->findChild<QDoubleSpinBox*>("t_f")->setValue(4);
  EXPECT_GT(window_->scene().groups()[0].trace.metrics.span, span);
  window_->clear_files();
  EXPECT_EQ(labels(window_->scene()), (std::vector<std::string>{"zb-h1"}));
}

TEST_F(MainWindowTest, DroppedTorchProfilerFilesOfOneRunAreOneTrace) {
  QList<QUrl> urls;
  for (int r : {1, 3, 0, 2}) {
    urls.push_back(QUrl::fromLocalFile(QString::fromStdString(
        testing::source_path("tests/data/kineto/zb-h1_4rank_4mb.rank" + std::to_string(r) + ".json"))));
  }
  const auto before = labels(window_->scene());
  EXPECT_EQ(window_->open_urls(urls), 4);
  const auto after = labels(window_->scene());
  ASSERT_EQ(after.size(), before.size() + 1);
  EXPECT_EQ(after.front(), "trace (torch.profiler, zb-h1_4rank_4mb.rank1.json + 3 more)");
  EXPECT_EQ(window_->scene().groups().front().trace.devices, 4);
  EXPECT_EQ(window_->metrics().front().engine, "torch.profiler");
}

// A real measured run opened with its simulation: the measured group is compared with the
// simulated file, not with the explorer's unit-cost zb-h1 of the same pipeline.
TEST_F(MainWindowTest, AMeasuredRunIsComparedWithTheSimulatedFileOpenedWithIt) {
  window_->set_problem(uniform_spec(4, 4), {"zb-h1"});
  Trace simulated = evaluated("zb-h1", uniform_spec(4, 4, 20, 20, 20));
  const QString sim = dir_.filePath("sim.json");
  write_text(sim, to_json(simulated).dump());
  QStringList paths{sim};
  for (int r = 0; r < 4; ++r) {
    paths.push_back(QString::fromStdString(
        testing::source_path("tests/data/kineto/zb-h1_4rank_4mb.rank" + std::to_string(r) + ".json")));
  }
  ASSERT_TRUE(window_->open_files(paths)) << window_->last_error().toStdString();
  EXPECT_EQ(labels(window_->scene()),
            (std::vector<std::string>{"zb-h1 (eval, sim.json)", "trace (torch.profiler, zb-h1_4rank_4mb.rank0.json + 3 more)",
                                      "zb-h1"}));
  const MetricsRow& measured = window_->metrics()[1];
  EXPECT_EQ(measured.reference, "zb-h1 (eval, sim.json)");
  const Trace& run = window_->scene().groups()[1].trace;
  ASSERT_EQ(measured.span_delta.size(), 4u);
  EXPECT_NEAR(measured.span_delta[3], run.metrics.device_span[3] - simulated.metrics.device_span[3], 1e-9);
  EXPECT_NEAR(measured.span_relative, run.metrics.span / simulated.metrics.span - 1, 1e-12);
  EXPECT_TRUE(window_->metrics_table()->item(1, 7)->text().contains(" vs zb-h1 (eval, sim.json); per device "));
}

TEST_F(MainWindowTest, ABadMemoryLimitIsReportedAndIgnored) {
  auto* limit = window_->panel()->findChild<QLineEdit*>("mem_limit");
  limit->setText("lots");
  emit limit->editingFinished();
  EXPECT_FALSE(window_->panel()->spec().mem_limit);
  limit->setText("1p");
  emit limit->editingFinished();
  ASSERT_TRUE(window_->panel()->spec().mem_limit);
  // ZB-H2 needs 2p-1: flagged over the limit, still drawn with the limit line.
  EXPECT_NE(window_->metrics()[2].status.find("over-limit: d"), std::string::npos);
  ASSERT_FALSE(window_->timeline()->layout().memory.empty());
  EXPECT_TRUE(window_->timeline()->layout().memory[2].limit_y.has_value());
}

TEST_F(MainWindowTest, WheelZoomsDoubleClickFits) {
  TimelineView* view = window_->timeline();
  const double fitted = view->viewport().px_per_time();
  const QPointF at(view->layout().plot.x + 200, 60);
  QWheelEvent wheel(at, view->mapToGlobal(at), QPoint(), QPoint(0, 240), Qt::NoButton, Qt::NoModifier,
                    Qt::NoScrollPhase, false);
  QCoreApplication::sendEvent(view, &wheel);
  EXPECT_NEAR(view->viewport().px_per_time(), fitted * 1.25 * 1.25, 1e-9);
  EXPECT_FALSE(view->auto_fit());
  // Zoomed views keep their viewport when the problem changes.
  window_->panel()->findChild<QSpinBox*>("m")->setValue(12);
  EXPECT_NEAR(view->viewport().px_per_time(), fitted * 1.5625, 1e-9);
  view->fit_to_window();
  EXPECT_TRUE(view->auto_fit());
  EXPECT_LT(view->viewport().px_per_time(), fitted);  // m = 12 is longer than m = 8
}

TEST_F(MainWindowTest, ExportsPngAndSvg) {
  QString error;
  const QString png = dir_.filePath("view.png");
  ASSERT_TRUE(window_->export_png(png, &error)) << error.toStdString();
  QImage image(png);
  EXPECT_EQ(image.width(), window_->timeline()->width());
  EXPECT_GE(image.height(), static_cast<int>(window_->timeline()->layout().height_px));
  if (TimelineView::svg_supported()) {
    const QString svg = dir_.filePath("view.svg");
    ASSERT_TRUE(window_->export_svg(svg, &error)) << error.toStdString();
    QFile file(svg);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    const QByteArray text = file.readAll();
    EXPECT_TRUE(text.contains("<svg"));
    EXPECT_TRUE(text.contains("zb-h1"));
  }
  EXPECT_FALSE(window_->export_png("/nonexistent/dir/view.png", &error));
  EXPECT_TRUE(error.contains("/nonexistent/dir/view.png"));
}

// A stand-in for the ILP: slow, and named so that the window runs it on the worker thread.
GeneratorRegistry registry_with_slow_generator() {
  GeneratorRegistry registry = catalog::generators();
  GeneratorInfo slow;
  slow.name = "slow-ilp";
  slow.long_running = true;
  slow.summary = "zb-h1 after 300 ms";
  slow.make = [](const Problem& problem) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    Schedule schedule = make_zb_h1(problem);
    schedule.name = "slow-ilp";
    return schedule;
  };
  registry.add(slow);
  return registry;
}

TEST(MainWindowBackground, SlowGeneratorsRunOffTheUiThreadWithProgress) {
  test_app();
  MainWindow window(registry_with_slow_generator());
  window.set_problem(uniform_spec(4, 8), {"1f1b", "slow-ilp"});
  window.show();
  // The fast schedule is there at once; the slow one is a pending row with a busy indicator.
  EXPECT_EQ(labels(window.scene()), (std::vector<std::string>{"1f1b"}));
  EXPECT_EQ(window.metrics().back().status, "running...");
  EXPECT_TRUE(window.background_busy());
  EXPECT_TRUE(window.findChild<QProgressBar*>()->isVisibleTo(&window));
  ASSERT_TRUE(wait_until([&] { return !window.background_busy(); }));
  EXPECT_EQ(labels(window.scene()), (std::vector<std::string>{"1f1b", "slow-ilp"}));
  EXPECT_DOUBLE_EQ(window.scene().groups()[1].trace.metrics.span, 27);
  EXPECT_FALSE(window.findChild<QProgressBar*>()->isVisibleTo(&window));
}

TEST(MainWindowBackground, CancelDropsTheResult) {
  test_app();
  MainWindow window(registry_with_slow_generator());
  window.set_problem(uniform_spec(4, 8), {"slow-ilp"});
  window.show();
  // Let the job start, then press Cancel.
  ASSERT_TRUE(wait_until([&] { return !window.findChild<QPushButton*>("cancel")->isHidden() && window.background_busy(); }));
  QCoreApplication::processEvents();
  std::this_thread::sleep_for(std::chrono::milliseconds(350));  // past the debounce: the job is running
  QCoreApplication::processEvents();
  window.findChild<QPushButton*>("cancel")->click();
  EXPECT_FALSE(window.background_busy());
  EXPECT_EQ(window.metrics().back().status, "cancelled");
  // The job's late result must not appear.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(800);
  while (std::chrono::steady_clock::now() < until) QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
  EXPECT_TRUE(window.scene().groups().empty());
  EXPECT_EQ(window.metrics().back().status, "cancelled");
}

}  // namespace
}  // namespace zb::view

namespace zb::view {
namespace {

// A second engine: every schedule also runs on it in the background and lands under the evaluator's
// result, compared device by device.
TEST(MainWindowBackground, AnotherEngineAddsAComparedGroupPerSchedule) {
  testing::test_app();
  std::vector<EngineOption> engines{{"evaluator", {}, {}},
                                    {"slow network", [](const Problem& problem, const Schedule& schedule) {
                                       std::this_thread::sleep_for(std::chrono::milliseconds(50));
                                       Problem slower = problem;
                                       for (double& t : slower.t_comm) t += 0.5;
                                       Trace trace = evaluate(slower, schedule);
                                       trace.meta.engine = "test";
                                       return trace;
                                     },
                                     {}}};
  MainWindow window(catalog::generators(), engines);
  window.set_problem(uniform_spec(4, 8), {"1f1b", "zb-h1"});
  window.show();
  EXPECT_EQ(labels(window.scene()), (std::vector<std::string>{"1f1b", "zb-h1"}));
  auto* engine = window.panel()->findChild<QComboBox*>("engine");
  ASSERT_NE(engine, nullptr);
  engine->setCurrentIndex(1);
  EXPECT_TRUE(window.background_busy());
  ASSERT_TRUE(wait_until([&] { return !window.background_busy(); }));
  EXPECT_EQ(labels(window.scene()),
            (std::vector<std::string>{"1f1b", "1f1b (slow network)", "zb-h1", "zb-h1 (slow network)"}));
  const MetricsRow& row = window.metrics()[3];
  EXPECT_EQ(row.reference, "zb-h1");
  ASSERT_EQ(row.span_delta.size(), 4u);
  for (double delta : row.span_delta) EXPECT_GE(delta, 0);
  EXPECT_GT(row.span_delta[0], 0);  // transfers of 0.5 lengthen device 0's span
}

}  // namespace
}  // namespace zb::view

namespace zb::view {
namespace {

TEST_F(MainWindowTest, AModelPresetDrivesTheCostsAndFollowsP) {
  auto* model = window_->panel()->findChild<QComboBox*>("model");
  auto* hardware = window_->panel()->findChild<QComboBox*>("hardware");
  ASSERT_NE(model, nullptr);
  hardware->setCurrentIndex(hardware->findText("h100-sxm"));
  model->setCurrentIndex(model->findText("gpt-1.5b"));
  auto* tf = window_->panel()->findChild<QDoubleSpinBox*>("t_f");
  const double tf_p4 = tf->value();
  EXPECT_NE(tf_p4, 1.0);
  EXPECT_TRUE(window_->panel()->spec().mem_limit.has_value());
  window_->panel()->findChild<QSpinBox*>("p")->setValue(2);
  EXPECT_GT(tf->value(), 1.5 * tf_p4);  // twice the layers per device
  EXPECT_EQ(window_->scene().row_count(), 3 * 2);
  // Back to no model: the derived values stay as plain values.
  model->setCurrentIndex(0);
  EXPECT_FALSE(window_->panel()->model_choice());
}

}  // namespace
}  // namespace zb::view

#include <QAction>
#include <QClipboard>
#include <QHelpEvent>
#include <QToolTip>

namespace zb::view {
namespace {

TEST_F(MainWindowTest, TooltipNamesTheActionUnderTheCursor) {
  TimelineView* view = window_->timeline();
  const auto& layout = view->layout();
  // The first box of zb-h1 (group 1) on device 0 is F0 at [0, 1].
  const BoxItem* target = nullptr;
  for (const BoxItem& box : layout.boxes) {
    if (box.group == 1 && window_->scene().groups()[1].trace.spans[static_cast<std::size_t>(box.span)].device == 0) {
      target = &box;
      break;
    }
  }
  ASSERT_NE(target, nullptr);
  const QPoint at(static_cast<int>(target->rect.x + target->rect.w / 2), static_cast<int>(target->rect.y + target->rect.h / 2));
  QHelpEvent help(QEvent::ToolTip, at, view->mapToGlobal(at));
  QCoreApplication::sendEvent(view, &help);
  const QString tip = QToolTip::text();
  EXPECT_TRUE(tip.startsWith("zb-h1: F0")) << tip.toStdString();
  EXPECT_TRUE(tip.contains("start 0 ms, end 1 ms, duration 1 ms")) << tip.toStdString();
}

TEST_F(MainWindowTest, KeyboardZoomAndCopyingTheMetrics) {
  TimelineView* view = window_->timeline();
  const double fitted = view->viewport().px_per_time();
  view->zoom_by(2);
  EXPECT_NEAR(view->viewport().px_per_time(), 2 * fitted, 1e-9);
  QApplication::clipboard()->clear();
  QAction* copy = nullptr;
  for (QAction* action : window_->findChildren<QAction*>()) {
    if (action->text() == "&Copy Metrics Table") copy = action;
  }
  ASSERT_NE(copy, nullptr);
  copy->trigger();
  EXPECT_TRUE(QApplication::clipboard()->text().contains("zb-h1\teval\tok\t27\t"));
}

}  // namespace
}  // namespace zb::view

#include <atomic>

namespace zb::view {
namespace {

// Dragging a slider with a slow generator selected must not pile up runs: while one runs, only
// the newest request waits, and the result shown is the one for the latest problem.
TEST(MainWindowBackground, RequestsWhileARunIsGoingAreCoalesced) {
  testing::test_app();
  static std::atomic<int> runs{0};
  runs = 0;
  GeneratorRegistry registry = catalog::generators();
  GeneratorInfo slow;
  slow.name = "slow-ilp";
  slow.long_running = true;
  slow.make = [](const Problem& problem) {
    ++runs;
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    return make_zb_h1(problem);
  };
  registry.add(slow);
  MainWindow window(std::move(registry));
  window.set_problem(uniform_spec(4, 8), {"slow-ilp"});
  auto pause = [](int ms) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < until) QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
  };
  auto* tf = window.panel()->findChild<QDoubleSpinBox*>("t_f");
  pause(450);       // the first run starts after the 300 ms debounce
  tf->setValue(2);  // its request waits for the first run
  pause(450);
  tf->setValue(3);  // replaces the waiting request
  ASSERT_TRUE(wait_until([&] { return !window.background_busy(); }, 15000));
  EXPECT_EQ(runs.load(), 2);
  ASSERT_EQ(window.scene().groups().size(), 1u);
  // ZB-H1 at t_f = 3, t_b = t_w = 1, p = 4, m = 8: W cannot fill the gaps, so just check the work.
  EXPECT_DOUBLE_EQ(window.scene().groups()[0].trace.metrics.work, 8 * 5.0);
}

}  // namespace
}  // namespace zb::view

namespace zb::view {
namespace {

TEST_F(MainWindowTest, PerDeviceCostsAreEditableAndFollowP) {
  auto* table = window_->panel()->findChild<QTableWidget*>("per_device_costs");
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->rowCount(), 4);
  EXPECT_EQ(table->item(2, 0)->text(), "1");
  const double span = window_->scene().groups()[1].trace.metrics.span;
  table->item(1, 0)->setText("3");  // device 1's forward three times slower
  EXPECT_EQ(window_->panel()->spec().t_f, (std::vector<double>{1, 3, 1, 1}));
  EXPECT_GT(window_->scene().groups()[1].trace.metrics.span, span);
  table->item(1, 0)->setText("oops");  // rejected, the value stays
  EXPECT_EQ(window_->panel()->spec().t_f, (std::vector<double>{1, 3, 1, 1}));
  EXPECT_EQ(table->item(1, 0)->text(), "3");
  table->item(1, 0)->setText("1");  // all equal again: back to one value
  EXPECT_EQ(window_->panel()->spec().t_f, std::vector<double>{1});
  window_->panel()->findChild<QSpinBox*>("p")->setValue(6);
  EXPECT_EQ(table->rowCount(), 6);
}

}  // namespace
}  // namespace zb::view

namespace zb::view {
namespace {

// The overlapped F&B pair's knobs (zbsim's --overlap and --t-a2a) drive DualPipeV's pairs.
TEST_F(MainWindowTest, OverlapAndAllToAllWidgetsDriveTheProblem) {
  window_->set_problem(uniform_spec(4, 8), {"1f1b", "dualpipe-v"});
  auto group_span = [&](const std::string& label) {
    for (const auto& group : window_->scene().groups()) {
      if (group.label == label) return group.trace.metrics.span;
    }
    ADD_FAILURE() << "no group " << label;
    return 0.0;
  };
  auto* overlap = window_->panel()->findChild<QDoubleSpinBox*>("overlap");
  auto* a2a = window_->panel()->findChild<QDoubleSpinBox*>("t_a2a");
  ASSERT_NE(overlap, nullptr);
  ASSERT_NE(a2a, nullptr);
  const double serial = group_span("dualpipe-v");
  overlap->setValue(1);
  EXPECT_DOUBLE_EQ(window_->panel()->spec().overlap, 1);
  EXPECT_EQ(window_->panel()->findChild<QSlider*>("overlap_slider")->value(), 100);
  EXPECT_LT(group_span("dualpipe-v"), serial);  // a pair now takes max(t_f, t_b), not t_f + t_b
  const double one_f_one_b = group_span("1f1b");
  a2a->setValue(0.25);
  EXPECT_EQ(window_->panel()->spec().t_a2a, std::vector<double>{0.25});
  // 1F1B runs every pass alone: each F and BW waits for its all-to-all.
  EXPECT_GT(group_span("1f1b"), one_f_one_b);
  a2a->setValue(0);
  EXPECT_TRUE(window_->panel()->spec().t_a2a.empty());
  EXPECT_DOUBLE_EQ(group_span("1f1b"), one_f_one_b);
}

// A SimGrid cluster with 0-byte activations warns, as zbsim simulate does; bytes make it go away.
TEST(MainWindowEngines, AClusterWithZeroByteTransfersWarns) {
  testing::test_app();
  const auto engines = viewer_engines(testing::source_path("models/clusters"));
  if (engines.size() < 3) GTEST_SKIP() << "built without SimGrid";
  MainWindow window(catalog::generators(), engines);
  window.set_problem(uniform_spec(4, 8), {"zb-h1"});
  auto* engine = window.panel()->findChild<QComboBox*>("engine");
  EXPECT_TRUE(window.engine_warning().empty());
  engine->setCurrentIndex(1);  // the idealised network: nothing to warn about
  EXPECT_TRUE(window.engine_warning().empty());
  engine->setCurrentIndex(2);  // the first cluster preset
  EXPECT_NE(window.engine_warning().find("0-byte activations"), std::string::npos) << window.engine_warning();
  auto* warning = window.findChild<QLabel*>("engine_warning");
  ASSERT_NE(warning, nullptr);
  EXPECT_FALSE(warning->isHidden());
  EXPECT_EQ(warning->toolTip().toStdString(), window.engine_warning());
  window.panel()->findChild<QDoubleSpinBox*>("bytes_act")->setValue(8 << 20);
  EXPECT_DOUBLE_EQ(window.panel()->spec().bytes_act, 8 << 20);
  EXPECT_TRUE(window.engine_warning().empty());
  EXPECT_TRUE(warning->isHidden());
  window.cancel_background();
}

}  // namespace
}  // namespace zb::view
