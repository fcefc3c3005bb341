// zbview's main window (see main_window.h).
#include "gui/app/main_window.h"

#include <QAction>
#include <QApplication>
#include <QBuffer>
#include <QClipboard>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QKeySequence>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTableWidget>
#include <QThreadPool>
#include <QUrl>

#include <algorithm>

#include <fmt/format.h>

#include "gui/app/explorer_panel.h"
#include "gui/app/qt_colour.h"
#include "gui/app/timeline_view.h"
#include "sim/support/atomic_file.h"
#include "sim/support/error.h"
#include "gui/viewer_core/input_files.h"
#include "gui/viewer_core/model_presets.h"

namespace zb::view {

namespace {

constexpr int kRecentFiles = 8;
constexpr int kBackgroundDelayMs = 300;
// The status of a result slot whose background run has not come back yet.
constexpr const char* kRunning = "running...";

QTableWidgetItem* cell(const QString& text, bool number = false) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
  if (number) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

QString number(const std::optional<double>& value, const char* format = "{:.4g}") {
  return value ? qstr(fmt::format(fmt::runtime(format), *value)) : QString();
}

// Writes an export atomically; false with the reason in `error`.
bool write_bytes(const QString& path, const QByteArray& bytes, QString* error) {
  try {
    write_file_atomically(path.toStdString(), std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
  } catch (const Error& e) {
    if (error) *error = qstr(e.what());
    return false;
  }
  return true;
}

}  // namespace

MainWindow::MainWindow(GeneratorRegistry registry, std::vector<EngineOption> engines, QWidget* parent)
    : QMainWindow(parent),
      registry_(std::make_shared<const GeneratorRegistry>(std::move(registry))),
      engines_(engines.empty() ? viewer_engines(default_clusters_dir()) : std::move(engines)) {
  setWindowTitle("zbview");
  setAcceptDrops(true);

  std::vector<std::string> engine_labels;
  for (const EngineOption& engine : engines_) engine_labels.push_back(engine.label);
  panel_ = new ExplorerPanel(registry_->names(), engine_labels);
  auto* panel_scroll = new QScrollArea;
  panel_scroll->setWidget(panel_);
  panel_scroll->setWidgetResizable(true);
  panel_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  panel_scroll->setMinimumWidth(panel_->sizeHint().width() + 20);

  view_ = new TimelineView;
  view_->setObjectName("timeline");
  view_->set_scene(&scene_);
  auto* view_scroll = new QScrollArea;
  view_scroll->setWidget(view_);
  view_scroll->setWidgetResizable(true);
  view_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  view_scroll->setFrameShape(QFrame::NoFrame);

  table_ = new QTableWidget(0, 8);
  table_->setObjectName("metrics");
  table_->setHorizontalHeaderLabels(
      {"schedule", "engine", "status", "span", "bubble rate", "peak memory", "step time", "span difference per device"});
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->verticalHeader()->setVisible(false);
  table_->setAlternatingRowColors(true);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);

  auto* right = new QSplitter(Qt::Vertical);
  right->addWidget(view_scroll);
  right->addWidget(table_);
  right->setStretchFactor(0, 1);
  right->setStretchFactor(1, 0);
  right->setSizes({700, 150});  // the timeline first; the table shows about five rows
  table_->setMinimumHeight(80);

  auto* main = new QSplitter(Qt::Horizontal);
  main->addWidget(panel_scroll);
  main->addWidget(right);
  main->setStretchFactor(0, 0);
  main->setStretchFactor(1, 1);
  setCentralWidget(main);

  status_ = new QLabel;
  progress_ = new QProgressBar;
  progress_->setRange(0, 0);  // busy indicator: the solver reports no fraction done
  progress_->setMaximumWidth(160);
  progress_->setVisible(false);
  cancel_ = new QPushButton("Cancel");
  cancel_->setObjectName("cancel");
  cancel_->setVisible(false);
  connect(cancel_, &QPushButton::clicked, this, [this] { cancel_background(); });
  warning_ = new QLabel;
  warning_->setObjectName("engine_warning");
  warning_->setStyleSheet("QLabel { color: #b02020; }");
  warning_->setVisible(false);
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(warning_);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_);

  background_timer_.setSingleShot(true);
  background_timer_.setInterval(kBackgroundDelayMs);
  connect(&background_timer_, &QTimer::timeout, this, [this] { start_background_jobs(); });

  connect(panel_, &ExplorerPanel::changed, this, [this] { recompute(); });
  connect(panel_, &ExplorerPanel::message, this, [this](const QString& text) { status_->setText(text); });

  build_menus();
  resize(1400, 900);
}

MainWindow::~MainWindow() {
  // Results of jobs still running are dropped (they hold no pointer to this window).
  ++generation_;
}

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu("&File");
  QAction* open = file->addAction("&Open...", this, [this] { open_dialog(); });
  open->setShortcut(QKeySequence::Open);
  recent_menu_ = file->addMenu("Open &Recent");
  rebuild_recent_menu();
  file->addAction("&Close Opened Files", this, [this] { clear_files(); });
  file->addSeparator();
  QAction* copy = file->addAction("&Copy Metrics Table", this, [this] {
    QApplication::clipboard()->setText(qstr(to_tsv(rows_)));
    status_->setText("metrics copied as tab-separated text");
  });
  copy->setShortcut(QKeySequence::Copy);
  file->addAction("Export &PNG...", this, [this] { export_dialog(false); });
  QAction* svg = file->addAction("Export &SVG...", this, [this] { export_dialog(true); });
  svg->setEnabled(TimelineView::svg_supported());
  file->addSeparator();
  QAction* quit = file->addAction("&Quit", qApp, &QApplication::closeAllWindows);
  quit->setShortcut(QKeySequence::Quit);

  QMenu* view = menuBar()->addMenu("&View");
  QAction* fit = view->addAction("&Fit to Window", this, [this] { view_->fit_to_window(); });
  fit->setShortcut(QKeySequence("F"));
  QAction* zoom_in = view->addAction("Zoom &In", this, [this] { view_->zoom_by(1.5); });
  zoom_in->setShortcuts({QKeySequence::ZoomIn, QKeySequence("+")});
  QAction* zoom_out = view->addAction("Zoom &Out", this, [this] { view_->zoom_by(1 / 1.5); });
  zoom_out->setShortcuts({QKeySequence::ZoomOut, QKeySequence("-")});
  view->addSeparator();
  QAction* memory = view->addAction("Show &Memory");
  memory->setCheckable(true);
  memory->setChecked(true);
  connect(memory, &QAction::toggled, this, [this](bool on) { set_show_memory(on); });
  QAction* arrows = view->addAction("Show &Communication");
  arrows->setCheckable(true);
  connect(arrows, &QAction::toggled, this, [this](bool on) { set_show_arrows(on); });

  QMenu* help = menuBar()->addMenu("&Help");
  help->addAction("&Controls", this, [this] {
    QMessageBox::information(this, "zbview",
                             "Wheel: zoom about the cursor (Shift+wheel scrolls)\n"
                             "Drag: pan\nDouble-click or F: fit to window\n"
                             "Hover a box: action, start, end, duration\n"
                             "Drop trace, scenario or schedule files onto the window to open them.");
  });
}

void MainWindow::set_show_memory(bool show) { view_->set_show_memory(show); }
void MainWindow::set_show_arrows(bool show) { view_->set_show_arrows(show); }

void MainWindow::set_problem(const ProblemSpec& spec, const std::vector<std::string>& schedules) {
  panel_->set_spec(spec);
  panel_->set_selected_schedules(schedules);
  recompute();
}

void MainWindow::recompute() {
  ProblemSpec spec = panel_->spec();
  Problem problem;
  try {
    if (const auto choice = panel_->model_choice()) {
      spec = derive_model_costs(spec, *choice, panel_->explicit_fields());
      panel_->show_derived(spec);
    }
    problem = spec.build("explorer");
  } catch (const Error& e) {
    // A problem that does not build (e.g. per-stage arrays of the wrong length) keeps the last view.
    status_->setText(qstr(e.what()));
    return;
  }
  problem_ = problem;
  ++generation_;
  background_timer_.stop();
  pending_background_.clear();
  deferred_.clear();  // requests for the previous problem never need to run

  results_.clear();
  const auto engine_index = static_cast<std::size_t>(panel_->engine_index());
  const EngineOption* engine = engine_index < engines_.size() && !engines_[engine_index].is_evaluator()
                                   ? &engines_[engine_index]
                                   : nullptr;
  // A cluster run the user should not trust as it stands (0-byte transfers): said beside the
  // status line for as long as it holds, with zbsim simulate's words.
  engine_warning_ = engine ? view::engine_warning(*engine, spec) : std::string();
  warning_->setText(engine_warning_.empty() ? QString() : "warning: the cluster's transfers carry 0 bytes (hover)");
  warning_->setToolTip(qstr(engine_warning_));
  warning_->setVisible(!engine_warning_.empty());
  auto queue = [this](std::string label, const std::string& schedule, EngineFn run, const Problem& on) {
    RunResult pending;
    pending.name = label;
    pending.error = kRunning;
    results_.push_back(std::move(pending));
    pending_background_.push_back({std::move(label), schedule, std::move(run), on, generation_});
    ++runs_;
  };
  for (const std::string& name : panel_->selected_schedules()) {
    // Each generator runs at its own chunk count and placement, as in zbsim compare (1f1b at one
    // chunk beside zb-v-h's V); a spec that cannot be reshaped leaves the generator to say why.
    Problem shaped;
    try {
      std::string reason;
      const auto at_shape = spec_for_schedule(spec, registry_->get(name), panel_->model_choice(),
                                              panel_->explicit_fields(), reason);
      if (!at_shape) throw InputError(reason);
      shaped = at_shape->build("explorer");
    } catch (const Error& e) {
      // As zbsim compare's "unsupported" row: the schedule cannot run on this problem, and says why.
      RunResult unsupported;
      unsupported.name = name;
      unsupported.error = e.what();
      results_.push_back(std::move(unsupported));
      continue;
    }
    if (registry_->get(name).long_running) {
      queue(name, name, {}, shaped);
    } else {
      results_.push_back(run_generator(*registry_, name, shaped));
    }
    // The other engine's run of the same schedule goes right under the evaluator's.
    if (engine) queue(name + " (" + engine->label + ")", name, engine->run, shaped);
  }
  custom_results_.clear();
  for (const Schedule& schedule : custom_schedules_) {
    RunResult result = run_schedule(problem_, schedule);
    result.name = schedule.name + " (file)";
    custom_results_.push_back(std::move(result));
  }
  status_->setText(qstr(fmt::format("p={} m={} v={}", problem_.devices, problem_.microbatches, problem_.chunks)));
  if (!pending_background_.empty()) background_timer_.start();
  update_progress();
  setWindowTitle(qstr(fmt::format("zbview: p={} m={} v={}", problem_.devices, problem_.microbatches, problem_.chunks)));
  rebuild_scene();
}

void MainWindow::start_background_jobs() {
  for (BackgroundJob& job : pending_background_) {
    // One run per label at a time: while an older run (even a stale one, which cannot be stopped)
    // is still going, the newest request waits and replaces any request already waiting, so
    // dragging a slider never piles up solver runs.
    if (in_flight_.count(job.label)) {
      deferred_[job.label] = std::move(job);
    } else {
      launch(job);
    }
  }
  pending_background_.clear();
  update_progress();
}

void MainWindow::launch(const BackgroundJob& job) {
  ++in_flight_[job.label];
  QPointer<MainWindow> self(this);
  auto registry = registry_;
  QThreadPool::globalInstance()->start([self, registry, job] {
    RunResult result = run_generator(*registry, job.schedule, job.problem, job.engine);
    result.name = job.label;
    // Delivered on the UI thread; the QPointer is checked there, where the window lives.
    QMetaObject::invokeMethod(
        qApp,
        [self, generation = job.generation, result]() mutable {
          if (self) self->background_done(generation, std::move(result));
        },
        Qt::QueuedConnection);
  });
}

void MainWindow::background_done(std::uint64_t generation, RunResult result) {
  const std::string label = result.name;
  if (auto it = in_flight_.find(label); it != in_flight_.end() && --it->second <= 0) in_flight_.erase(it);
  if (generation == generation_) {
    for (RunResult& slot : results_) {
      if (slot.name == label && !slot.trace && slot.error == kRunning) slot = result;
    }
    rebuild_scene();
  }  // else: the problem changed or the user cancelled; the result is dropped
  if (auto waiting = deferred_.find(label); waiting != deferred_.end() && !in_flight_.count(label)) {
    const BackgroundJob job = std::move(waiting->second);
    deferred_.erase(waiting);
    launch(job);
  }
  update_progress();
}

int MainWindow::outstanding_jobs() const {
  return static_cast<int>(std::count_if(results_.begin(), results_.end(),
                                        [](const RunResult& slot) { return !slot.trace && slot.error == kRunning; }));
}

bool MainWindow::background_busy() const { return outstanding_jobs() > 0; }

void MainWindow::update_progress() {
  const int outstanding = outstanding_jobs();
  progress_->setVisible(outstanding > 0);
  cancel_->setVisible(outstanding > 0);
  const std::string shape = fmt::format("p={} m={} v={}", problem_.devices, problem_.microbatches, problem_.chunks);
  if (outstanding > 0) {
    status_->setText(qstr(fmt::format("{}   running {} job(s) in the background...", shape, outstanding)));
  } else if (!in_flight_.empty() || runs_ > 0) {
    status_->setText(qstr(fmt::format("{}   background jobs done", shape)));
  }
}

void MainWindow::cancel_background() {
  ++generation_;
  background_timer_.stop();
  pending_background_.clear();
  deferred_.clear();
  for (RunResult& slot : results_) {
    if (!slot.trace && slot.error == kRunning) slot.error = "cancelled";
  }
  update_progress();
  rebuild_scene();
}

void MainWindow::rebuild_scene() {
  scene_.clear();
  std::vector<MetricsRow> failed;
  // What the user opened comes first (it is what they came for), then the explorer's schedules.
  for (const LoadedTrace& loaded : loaded_traces_) {
    TraceGroup group = make_group(loaded.label, loaded.trace, loaded.memory_limit);
    group.from_file = true;
    scene_.add(std::move(group));
  }
  for (const auto* list : {&custom_results_, &results_}) {
    for (const RunResult& result : *list) {
      if (result.trace) {
        TraceGroup group = make_group(result.name, *result.trace, result.memory_limit);
        group.from_file = list == &custom_results_;
        if (panel_->model_choice()) group.memory_unit = "GB";  // the model's memory is in GB (models/cost_model.h)
        scene_.add(std::move(group));
      } else {
        failed.push_back(failed_row(result.name, result.error));
      }
    }
  }
  rows_ = metrics_rows(scene_);
  rows_.insert(rows_.end(), failed.begin(), failed.end());
  view_->scene_changed();
  fill_table();
}

void MainWindow::fill_table() {
  table_->setRowCount(static_cast<int>(rows_.size()));
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    const MetricsRow& row = rows_[i];
    const int r = static_cast<int>(i);
    const QString unit = row.time_unit.empty() ? QString() : " " + qstr(row.time_unit);
    QTableWidgetItem* label = cell(qstr(row.label));
    label->setToolTip(qstr(row.label));
    table_->setItem(r, 0, label);
    table_->setItem(r, 1, cell(qstr(row.engine)));
    QTableWidgetItem* status = cell(qstr(row.status));
    status->setToolTip(qstr(row.status));
    if (row.status != "ok") status->setForeground(QColor(0xB0, 0x20, 0x20));
    table_->setItem(r, 2, status);
    table_->setItem(r, 3, cell(row.span ? number(row.span) + unit : QString(), true));
    table_->setItem(r, 4, cell(row.bubble_rate ? number(percent(*row.bubble_rate), "{:.2f}") + " %" : QString(), true));
    table_->setItem(r, 5, cell(row.peak_memory ? qstr(format_amount(*row.peak_memory)) : QString(), true));
    table_->setItem(r, 6, cell(row.step_time ? number(row.step_time) + unit : QString(), true));
    QTableWidgetItem* difference = cell(qstr(difference_text(row)));
    difference->setToolTip(difference->text());
    table_->setItem(r, 7, difference);
  }
  table_->resizeColumnsToContents();
  // Long file labels ("trace (torch.profiler, a.json + 3 more)") are elided, not allowed to push the
  // difference column out of sight; the tooltip has them whole.
  constexpr int kLabelColumnMax = 240;
  table_->setColumnWidth(0, std::min(table_->columnWidth(0), kLabelColumnMax));
  table_->horizontalHeader()->setStretchLastSection(true);
}

bool MainWindow::open_file(const QString& path) { return open_files({path}); }

bool MainWindow::open_files(const QStringList& paths) {
  std::vector<std::string> files;
  for (const QString& path : paths) files.push_back(path.toStdString());
  std::vector<LoadedInput> inputs;
  try {
    inputs = load_input_files(files);
  } catch (const Error& e) {
    show_error(qstr(e.what()));
    return false;
  }
  std::string notes;
  for (const LoadedInput& input : inputs) {
    if (!input.note.empty()) notes += "   " + input.note;
  }
  for (LoadedInput& input : inputs) add_input(std::move(input));
  for (const QString& path : paths) remember_recent(path);
  status_->setText("opened " + paths.join(", ") + qstr(notes));
  return true;
}

void MainWindow::add_input(LoadedInput input) {
  switch (input.kind) {
    case InputKind::trace: {
      const std::string label = trace_label(*input.trace, input.source);
      loaded_traces_.push_back({label, std::move(*input.trace), input.trace_memory_limit});
      rebuild_scene();
      break;
    }
    case InputKind::scenario: {
      std::vector<std::string> schedules = input.scenario->schedules;
      if (schedules.empty()) schedules = panel_->selected_schedules();
      panel_->set_model_choice(std::nullopt);  // a scenario's costs are final (model-driven ones already derived)
      set_problem(input.scenario->spec, schedules);
      break;
    }
    case InputKind::schedule: {
      const ProblemSpec spec = spec_fitting_schedule(panel_->spec(), *input.schedule);
      custom_schedules_.push_back(std::move(*input.schedule));
      panel_->set_spec(spec);
      recompute();
      break;
    }
  }
}

void MainWindow::clear_files() {
  custom_schedules_.clear();
  custom_results_.clear();
  loaded_traces_.clear();
  rebuild_scene();
}

void MainWindow::show_error(const QString& message) {
  last_error_ = message;
  status_->setText(message.section('\n', 0, 0));
  if (!dialogs_enabled_) return;
  auto* box = new QMessageBox(QMessageBox::Warning, "zbview: cannot open file", message, QMessageBox::Ok, this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();  // window-modal without a nested event loop: the view stays as it was behind it
}

void MainWindow::remember_recent(const QString& path) {
  QSettings settings("zbsim", "zbview");
  QStringList recent = settings.value("recent_files").toStringList();
  const QString absolute = QFileInfo(path).absoluteFilePath();
  recent.removeAll(absolute);
  recent.prepend(absolute);
  while (recent.size() > kRecentFiles) recent.removeLast();
  settings.setValue("recent_files", recent);
  rebuild_recent_menu();
}

void MainWindow::rebuild_recent_menu() {
  recent_menu_->clear();
  const QStringList recent = QSettings("zbsim", "zbview").value("recent_files").toStringList();
  for (const QString& path : recent) {
    recent_menu_->addAction(path, this, [this, path] { open_file(path); });
  }
  recent_menu_->setEnabled(!recent.isEmpty());
}

void MainWindow::open_dialog() {
  const QStringList paths = QFileDialog::getOpenFileNames(
      this, "Open trace, scenario, schedule or PyTorch CSV", QString(),
      "zbsim files (*.json *.txt *.sched *.csv);;Trace or scenario JSON (*.json);;Schedule text (*.txt *.sched);;"
      "PyTorch pipeline CSV (*.csv);;All files (*)");
  if (!paths.isEmpty()) open_files(paths);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  open_urls(event->mimeData()->urls());
  event->acceptProposedAction();
}

int MainWindow::open_urls(const QList<QUrl>& urls) {
  QStringList paths;
  for (const QUrl& url : urls) {
    if (!url.isLocalFile()) {
      show_error(QString("%1: only local files can be opened").arg(url.toString()));
      continue;
    }
    paths.push_back(url.toLocalFile());
  }
  if (paths.isEmpty()) return 0;
  return open_files(paths) ? static_cast<int>(paths.size()) : 0;
}

bool MainWindow::export_png(const QString& path, QString* error) {
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  if (!view_->render_image().save(&buffer, "PNG")) {
    if (error) *error = "could not encode the PNG";
    return false;
  }
  return write_bytes(path, bytes, error);
}

bool MainWindow::export_svg(const QString& path, QString* error) {
  const QByteArray bytes = view_->render_svg();
  if (bytes.isEmpty()) {
    if (error) *error = "zbview was built without Qt6 Svg";
    return false;
  }
  return write_bytes(path, bytes, error);
}

void MainWindow::export_dialog(bool svg) {
  const QString path = QFileDialog::getSaveFileName(this, svg ? "Export SVG" : "Export PNG", QString(),
                                                    svg ? "SVG (*.svg)" : "PNG (*.png)");
  if (path.isEmpty()) return;
  QString error;
  if (!(svg ? export_svg(path, &error) : export_png(path, &error))) {
    QMessageBox::warning(this, "zbview: export failed", error);
  } else {
    status_->setText("exported " + path);
  }
}

}  // namespace zb::view
