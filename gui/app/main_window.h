// zbview's main window: explorer panel | timeline over the metrics table; file opening (menu,
// recent files, drag and drop), exports, and slow generators on a worker thread.
#pragma once

#include <QMainWindow>
#include <QList>
#include <QString>
#include <QStringList>
#include <QUrl>
#include <QTimer>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/generators/generator_registry.h"
#include "sim/core/problem.h"
#include "sim/core/schedule.h"
#include "gui/viewer_core/engines.h"
#include "gui/viewer_core/explorer_run.h"
#include "gui/viewer_core/input_files.h"
#include "gui/viewer_core/metrics_table.h"
#include "gui/viewer_core/timeline_scene.h"

class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace zb::view {

class ExplorerPanel;
class TimelineView;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  // `engines`: what the panel offers besides the evaluator (default: viewer_engines()).
  explicit MainWindow(GeneratorRegistry registry, std::vector<EngineOption> engines = {}, QWidget* parent = nullptr);
  ~MainWindow() override;

  ExplorerPanel* panel() const { return panel_; }
  TimelineView* timeline() const { return view_; }
  QTableWidget* metrics_table() const { return table_; }
  const TimelineScene& scene() const { return scene_; }
  const std::vector<MetricsRow>& metrics() const { return rows_; }
  const GeneratorRegistry& registry() const { return *registry_; }

  // Shows this problem and these schedules, then recomputes.
  void set_problem(const ProblemSpec& spec, const std::vector<std::string>& schedules);
  // Generates and evaluates the panel's schedules (fast ones now, slow ones on a worker thread).
  void recompute();

  // Opens a trace, scenario or schedule file. On a bad file: false, an error dialog (or only
  // last_error() when dialogs are off), and the previous view stays as it was.
  bool open_file(const QString& path);
  // Opens several files at once: the torch.profiler files among them (one per rank) are one run,
  // shown as one trace. On a bad file nothing of them is opened.
  bool open_files(const QStringList& paths);
  // Opens dropped files (what a drop on the window does); returns how many opened.
  int open_urls(const QList<QUrl>& urls);
  QString last_error() const { return last_error_; }
  // The engine's warning for the current problem (catalog::engine_warning), or "".
  const std::string& engine_warning() const { return engine_warning_; }
  void set_dialogs_enabled(bool enabled) { dialogs_enabled_ = enabled; }
  // Removes every trace and schedule file that was opened.
  void clear_files();

  // True while a result of the current problem is still to come from the worker threads.
  bool background_busy() const;
  void cancel_background();

  bool export_png(const QString& path, QString* error);
  bool export_svg(const QString& path, QString* error);

  void set_show_memory(bool show);
  void set_show_arrows(bool show);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  struct LoadedTrace {
    std::string label;
    Trace trace;
    std::optional<double> memory_limit;
  };

  void build_menus();
  void rebuild_scene();
  void fill_table();
  struct BackgroundJob {
    std::string label;     // the result slot it fills
    std::string schedule;  // generator name
    EngineFn engine;       // empty: the evaluator
    Problem problem;       // the problem when it was asked for
    std::uint64_t generation = 0;
  };

  void start_background_jobs();
  void launch(const BackgroundJob& job);
  int outstanding_jobs() const;
  void update_progress();
  void background_done(std::uint64_t generation, RunResult result);
  void show_error(const QString& message);
  void remember_recent(const QString& path);
  void add_input(LoadedInput input);  // one loaded file (or run) into the view
  void rebuild_recent_menu();
  void open_dialog();
  void export_dialog(bool svg);

  std::shared_ptr<const GeneratorRegistry> registry_;
  ExplorerPanel* panel_ = nullptr;
  TimelineView* view_ = nullptr;
  QTableWidget* table_ = nullptr;
  QLabel* status_ = nullptr;
  QLabel* warning_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QMenu* recent_menu_ = nullptr;

  TimelineScene scene_;
  std::vector<MetricsRow> rows_;
  Problem problem_;
  std::vector<RunResult> results_;         // the panel's schedules, in order (pending ones have no trace)
  std::vector<RunResult> custom_results_;  // schedule files evaluated against the panel's problem
  std::vector<Schedule> custom_schedules_;
  std::vector<LoadedTrace> loaded_traces_;
  std::vector<EngineOption> engines_;
  std::vector<BackgroundJob> pending_background_;
  std::uint64_t generation_ = 0;  // bumped by every recompute and cancel; stale results are dropped
  std::map<std::string, int> in_flight_;             // label -> runs on the worker threads (any generation)
  std::map<std::string, BackgroundJob> deferred_;    // label -> the newest request waiting for its run
  int runs_ = 0;                                     // background requests so far (for the status line)
  QTimer background_timer_;       // slow generators start once the sliders rest
  QString last_error_;
  std::string engine_warning_;
  bool dialogs_enabled_ = true;
};

}  // namespace zb::view
