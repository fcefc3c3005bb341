// zbview: the Qt6 timeline viewer and bubble explorer; `--screenshot OUT.png` renders it headless.
#include <QApplication>
#include <QBuffer>
#include <QImage>
#include <QString>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "gui/app/explorer_panel.h"
#include "gui/app/main_window.h"
#include "gui/app/timeline_view.h"
#include "sim/support/atomic_file.h"
#include "sim/support/error.h"
#include "sim/core/validator.h"
#include "gui/viewer_core/engines.h"
#include "gui/viewer_core/explorer_run.h"
#include "gui/viewer_core/input_files.h"
#include "gui/viewer_core/model_presets.h"
#include "gui/viewer_core/viewer_options.h"
#include "sim/app/catalog/generators.h"
#include "sim/app/catalog/version.h"

namespace {

using namespace zb::view;

bool wants(int argc, char** argv, const char* flag) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], flag) == 0 || std::strncmp(argv[i], flag, std::strlen(flag)) == 0) return true;
  }
  return false;
}

// The schedules shown when none are named: the ones of the paper's comparison that exist here.
std::vector<std::string> default_schedules(const zb::GeneratorRegistry& registry) {
  std::vector<std::string> names;
  for (const char* name : {"1f1b", "zb-h1", "zb-h2", "zb-auto"}) {
    if (registry.find(name)) names.emplace_back(name);
  }
  return names;
}

int run(int argc, char** argv) {
  // --help and headless runs must work without a display: decide before Qt picks a platform.
  if (wants(argc, argv, "--help") || wants(argc, argv, "-h")) {
    std::fputs(viewer_usage().c_str(), stdout);
    return 0;
  }
  if (wants(argc, argv, "--version")) {
    std::printf("zbview %s\n", zb::catalog::version());
    return 0;
  }
  const bool headless = wants(argc, argv, "--screenshot") || wants(argc, argv, "--svg");
  if (headless && !std::getenv("QT_QPA_PLATFORM")) setenv("QT_QPA_PLATFORM", "offscreen", 1);

  QApplication app(argc, argv);
  QApplication::setOrganizationName("zbsim");
  QApplication::setApplicationName("zbview");

  std::vector<std::string> args;
  for (const QString& arg : QApplication::arguments().mid(1)) args.push_back(arg.toStdString());
  const ViewerOptions options = parse_viewer_args(args);
  // Every output before anything is drawn or written: a bad --svg must not leave the PNG written.
  if (options.screenshot) zb::check_writable(*options.screenshot);
  if (options.svg) zb::check_writable(*options.svg);

  zb::ProblemSpec spec = default_problem_spec();
  zb::GeneratorRegistry registry = zb::catalog::generators();
  std::vector<std::string> schedules = default_schedules(registry);
  if (options.scenario) {
    LoadedInput input = load_input_file(*options.scenario);
    if (input.kind != InputKind::scenario) throw zb::InputError(*options.scenario + ": not a scenario file (no \"problem\")");
    spec = input.scenario->spec;
    if (!input.scenario->schedules.empty()) schedules = input.scenario->schedules;
  }
  spec = apply_problem_flags(spec, options);
  if (options.schedules) schedules = split_names(*options.schedules);
  for (const std::string& name : schedules) (void)registry.get(name);  // unknown names: InputError listing known ones
  (void)spec.build("command line");

  MainWindow window(std::move(registry));
  if (options.engine) {
    std::vector<std::string> labels;
    for (const EngineOption& engine : viewer_engines(default_clusters_dir())) labels.push_back(engine.label);
    window.panel()->set_engine_index(find_engine(labels, *options.engine, options.cluster));
  }
  window.set_dialogs_enabled(!headless);
  window.set_show_memory(options.show_memory);
  window.set_show_arrows(options.show_arrows);
  window.resize(options.width_px, options.height_px);
  if (options.model) {
    const ModelChoice choice{*options.model, options.hardware.value_or("h100-sxm"), options.microbatch_size};
    (void)derive_model_costs(spec, choice, {});  // a bad preset name fails here, listing the known ones
    window.panel()->set_model_choice(choice);
    if (!window.panel()->model_choice()) throw zb::InputError("zbview: --model needs zbview built with models/");
  }
  window.set_problem(spec, schedules);

  for (const std::string& file : options.files) {
    // The window draws a schedule that cannot run (with its deadlock report); a picture of one
    // written with exit 0 would hide the error, so headless runs refuse it as zbsim does.
    if (headless) {
      const LoadedInput input = load_input_file(file);
      if (input.kind == InputKind::schedule) {
        try {
          zb::validate(spec_fitting_schedule(spec, *input.schedule).build(file), *input.schedule,
                       zb::MemoryCheck::skip);
        } catch (const zb::InputError& e) {
          throw zb::InputError(file + ": " + e.what());
        }
      }
    }
  }
  // Together, so that the torch.profiler files of one run (a file per rank) become one trace.
  QStringList paths;
  for (const std::string& file : options.files) paths.push_back(QString::fromStdString(file));
  if (!paths.isEmpty() && !window.open_files(paths) && headless) throw zb::InputError(window.last_error().toStdString());

  if (!headless) {
    window.show();
    return QApplication::exec();
  }

  window.show();
  QApplication::processEvents();
  // Slow generators (the ILP) finish before the picture is taken.
  while (window.background_busy()) QApplication::processEvents(QEventLoop::WaitForMoreEvents, 100);
  QApplication::processEvents();
  QString error;
  if (options.screenshot) {
    const QImage image = window.grab().toImage();
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (!image.save(&buffer, "PNG")) throw zb::Error("zbview: could not encode the screenshot");
    zb::write_file_atomically(*options.screenshot, std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
    std::printf("zbview: wrote %s (%dx%d)\n", options.screenshot->c_str(), image.width(), image.height());
  }
  if (options.svg) {
    if (!window.export_svg(QString::fromStdString(*options.svg), &error)) throw zb::InputError(error.toStdString());
    std::printf("zbview: wrote %s\n", options.svg->c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const zb::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zbview: internal error: %s\n", e.what());
    return 1;
  }
}
