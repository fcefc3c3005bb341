// zbexec run: train for a few steps with a schedule; --verify, --predict, trace files.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <boost/program_options.hpp>

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "exec/runtime/backend.h"
#include "exec/calibration/calibrate.h"
#include "exec/cli/cli_common.h"
#include "exec/cli/commands.h"
#include "exec/cli/backends.h"
#include "exec/runtime/engine.h"
#include "exec/calibration/predict.h"
#include "exec/multiprocess/mpi_transport.h"
#include "exec/multiprocess/process_group.h"
#include "exec/multiprocess/startup_watchdog.h"
#include "exec/runtime/reference.h"
#include "sim/app/catalog/generators.h"
#include "sim/cli/common/problem_flags.h"
#include "sim/app/catalog/schedule_files.h"
#include "sim/support/atomic_file.h"
#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/core/problem_spec.h"
#include "sim/core/schedule.h"
#include "sim/formats/trace_json.h"
#include "sim/formats/trace_writers.h"

namespace po = boost::program_options;

namespace zb::exec::cli {

namespace {

struct RunFlags {
  ShapeFlags shape;
  std::string schedule = "1f1b";
  std::string schedule_file;
  std::string mem_limit;
  std::vector<double> t_offload;  // --t-offload; empty: half a forward
  int steps = 3;
  std::string optimizer = "adamw";
  float lr = 1e-3f;
  float momentum = 0.9f;
  float weight_decay = 0.01f;
  double clip = 1.0;
  std::string mode = "sync";
  std::string inject;
  std::string trace_path, chrome_path, svg_path;
  std::string calibration_path;
  bool verify = false;
  bool predict = false;
  int repeats = 5;
  bool concurrent_calibration = false;
  // A multi-process run (one process per pipeline device, launched by mpirun or srun).
  std::string mpi = "auto";
  double silence_timeout = 60;
  double setup_timeout = 300;
};

std::string describe_step(int step, const StepReport& report, SyncMode mode) {
  std::string line = fmt::format("step {}: loss {:.6f}  grad-norm {:.4f}", step, report.loss,
                                 report.decision.grad_norm);
  if (!report.decision.apply) line += "  [skipped: non-finite gradient]";
  if (report.decision.clipped) line += fmt::format("  [clipped x{:.4f}]", report.decision.grad_scale);
  if (mode == SyncMode::post_validation) {
    line += fmt::format("  (early steps {}, rolled back {})", report.early_steps, report.rollbacks);
  }
  return line;
}

// The options of `zbexec run` (the problem flags as zbsim's, the backend's, the run's own, the
// multi-process ones), each bound to its field of `flags` or `backend_flags`.
po::options_description run_options(RunFlags& flags, BackendFlags& backend_flags) {
  po::options_description options("zbexec run options");
  options.add_options()("help,h", "show this help");
  add_shape_options(options, flags.shape);
  // For the memory-aware generators, and where the offload pass places copies (po-h, po-f).
  constexpr std::string_view kPlanning[] = {"mem_limit", "t_offload"};
  zb::cli::add_problem_flags(options, kPlanning);
  add_backend_options(options, backend_flags);
  options.add_options()
      ("schedule", po::value(&flags.schedule)->default_value("1f1b"),
       ("generator name: " + zb::catalog::generator_list()).c_str())
      ("schedule-file", po::value(&flags.schedule_file), "run this schedule instead of a generator: text or JSON form, or a PyTorch pipeline CSV (by content); its shape replaces --p/--m/--chunks, and its placement, when it states one, must agree with --placement")
      ("steps", po::value(&flags.steps)->default_value(3), "training steps")
      ("optimizer", po::value(&flags.optimizer)->default_value("adamw"), "adamw | sgd (with momentum)")
      ("lr", po::value(&flags.lr)->default_value(1e-3f, "0.001"), "learning rate")
      ("momentum", po::value(&flags.momentum)->default_value(0.9f, "0.9"), "SGD momentum")
      ("weight-decay", po::value(&flags.weight_decay)->default_value(0.01f, "0.01"), "weight decay (decoupled for AdamW)")
      ("clip", po::value(&flags.clip)->default_value(1.0), "clip gradients to this global norm (0: off)")
      ("mode", po::value(&flags.mode)->default_value("sync"), "sync | post-validation")
      ("inject-nonfinite", po::value(&flags.inject), "STEP:STAGE: poison a gradient of STAGE in STEP")
      ("trace", po::value(&flags.trace_path), "write the last step's measured trace (our JSON)")
      ("chrome", po::value(&flags.chrome_path), "write every measured step as a Chrome trace (Perfetto, DevTools)")
      ("svg", po::value(&flags.svg_path), "write it as an SVG timeline")
      ("verify", po::bool_switch(&flags.verify), "also train the single-device reference; fail unless max |dw| = 0")
      ("predict", po::bool_switch(&flags.predict), "compare measured spans with the evaluator's prediction from a calibration")
      ("calibration", po::value(&flags.calibration_path), "scenario from 'zbexec calibrate' (default with --predict: calibrate now)")
      ("repeats", po::value(&flags.repeats)->default_value(5), "timed calibration rounds for --predict (interleaved, robust estimate; zbexec calibrate --help)")
      ("concurrent-calibration", po::bool_switch(&flags.concurrent_calibration), "calibrate for --predict with all devices measuring at once (see zbexec calibrate --concurrent)");
  po::options_description processes("multi-process runs under MPI (mpirun -np P zbexec run ..., srun --mpi=pmix: rank R runs pipeline device R; see exec/README.md)");
  processes.add_options()
      ("mpi", po::value(&flags.mpi)->default_value("auto"), "auto: one rank of an MPI job when launched by mpirun -np N or srun --mpi=pmix with N > 1 (rank = pipeline device, N = --p), else one process with a thread per device; on: always MPI (e.g. mpirun -np 1); off: never")
      ("silence-timeout", po::value(&flags.silence_timeout)->default_value(60), "fail the run on every rank when a rank sends no heartbeat for this many seconds (stopped, hung, or its node unreachable), naming it; 0: never")
      ("setup-timeout", po::value(&flags.setup_timeout)->default_value(300), "seconds a rank waits for the others at agreement, barriers and the end (at most 1e6); MPI's own start-up "
       "(MPI_Init) ends the rank 5 s after it, when a rank of the job never started");
  options.add(processes);
  return options;
}

// The run's shape where the schedule decides it; returns the schedule file's schedule, if one.
// A schedule file (text, JSON or PyTorch CSV, as zbsim reads them) carries its shape: p, m and
// chunks come from it, and its placement, when stated, must agree with an explicit --placement.
// A generator made for one placement (the V schedules: two chunks in a V) brings it, and a
// multi-chunk generator (1f1b-i, zb-i) runs at 2 chunks, when --chunks is not given. This is not
// the catalog's spec_shaped_for_generator, which zbsim's rows use: that one also forces a
// single-chunk generator to 1 chunk and a multi-chunk one to at least 2 when --chunks is given, and
// gives a V generator its placement over an explicit --placement; zbexec runs the shape asked for
// and lets the generator say why it cannot.
std::optional<zb::Schedule> shape_from_schedule(RunFlags& flags, const po::variables_map& values,
                                                zb::Placement& placement) {
  if (!flags.schedule_file.empty()) {
    zb::ProblemSpec file_shape;
    if (!flags.shape.placement.empty()) file_shape.placement = placement;
    zb::Schedule schedule = zb::catalog::load_schedule_file(flags.schedule_file, file_shape);
    flags.shape.devices = file_shape.devices;
    flags.shape.microbatches = file_shape.microbatches;
    flags.shape.chunks = file_shape.chunks;
    placement = file_shape.resolved_placement();
    return schedule;
  }
  if (const auto& info = zb::catalog::generators().get(flags.schedule); !values.count("chunks")) {
    if (info.placement && !values.count("placement")) {
      flags.shape.chunks = 2;
      placement = *info.placement;
    } else if (info.chunks == zb::ChunkSupport::multi) {
      flags.shape.chunks = 2;
      if (!values.count("placement")) placement = zb::Placement::interleaved;
    }
  }
  return std::nullopt;
}

// The executor's options from the flags, each checked; and the output files checked writable
// before the run and any write.
ExecOptions checked_exec_options(const RunFlags& flags) {
  ExecOptions exec_options;
  exec_options.model = flags.shape.model;
  exec_options.steps = flags.steps;
  exec_options.mode = parse_sync_mode(flags.mode);
  exec_options.optimizer.kind = parse_optimizer_kind(flags.optimizer);
  exec_options.optimizer.lr = flags.lr;
  exec_options.optimizer.momentum = flags.momentum;
  exec_options.optimizer.weight_decay = flags.weight_decay;
  exec_options.optimizer.clip_norm = flags.clip;
  exec_options.optimizer.validate();
  if (!flags.inject.empty()) exec_options.inject_nonfinite = parse_injection(flags.inject);
  if (flags.steps < 1) throw InputError(fmt::format("--steps {}: need at least 1", flags.steps));
  // A NaN would compare false everywhere and turn the watchdog off; a negative wait fails at once;
  // a wait past what a clock's nanoseconds hold (1e300) would overflow into one that fails at once.
  if (!(flags.silence_timeout >= 0) || !(flags.silence_timeout <= kLongestTimeoutS)) {
    throw InputError(fmt::format("--silence-timeout {}: expected seconds from 0 to {:g} (0: never)",
                                 flags.silence_timeout, kLongestTimeoutS));
  }
  if (!(flags.setup_timeout > 0) || !(flags.setup_timeout <= kLongestTimeoutS)) {
    throw InputError(fmt::format("--setup-timeout {}: expected seconds above 0, at most {:g}", flags.setup_timeout,
                                 kLongestTimeoutS));
  }
  check_shape(flags.shape);
  for (const std::string* output : {&flags.trace_path, &flags.chrome_path, &flags.svg_path}) {
    if (!output->empty()) zb::check_writable(*output);  // all outputs before the run and any write
  }
  return exec_options;
}

// MPI starts before the backend exists (the backend's devices run on the group's clock): the
// group when this process is one rank of an MPI job, else nothing.
void join_mpi_job(const RunFlags& flags, std::unique_ptr<ProcessGroup>& group) {
  const std::string reason = mpi_launch_reason(parse_mpi_mode(flags.mpi));
  if (reason.empty()) return;
  if (flags.predict && flags.calibration_path.empty()) {
    throw InputError("--predict in a multi-process run needs --calibration FILE (calibrate in one "
                     "process: zbexec calibrate ... --out FILE)");
  }
  GroupOptions group_options;
  group_options.silence_timeout_s = flags.silence_timeout;
  group_options.setup_timeout_s = flags.setup_timeout;
  // A rank that cannot end its run after a failure (a send to a stopped rank never returns)
  // exits this long after it: past the 3 s in which the others leave with it.
  group_options.exit_after_failure_s = 5;
  // MPI_Init and the group's first exchange: the group's own timeouts say who is missing once
  // MPI runs; before that only this watchdog ends a wait for a rank that never started.
  const StartupWatchdog watchdog(flags.setup_timeout + 5,
                                 fmt::format("zbexec run: error: MPI start-up did not finish within {:g} s (--setup-timeout "
                                             "+ 5): a rank of the job never started, or stopped before MPI_Init; "
                                             "check every rank's log\n",
                                             flags.setup_timeout + 5));
  group = std::make_unique<ProcessGroup>(start_mpi(reason), group_options);
  if (group->world() != flags.shape.devices) {
    throw InputError(fmt::format("the MPI job has {} ranks but --p is {}: a multi-process run has "
                                 "one rank per pipeline device", group->world(), flags.shape.devices));
  }
  fmt::print("rank {} of {}: {}; clock aligned to rank 0 within {:.0f} us\n", group->rank(),
             group->world(), group->describe(), group->clock_error_us());
  std::fflush(stdout);
}

// The problem's costs: from a calibration file, from a calibration made now (--predict), or unit.
struct RunCosts {
  zb::ProblemSpec spec;
  std::optional<Calibration> calibration;  // when calibrated in this run: its spread goes with the error
  std::optional<CalibrationNoise> noise;   // the spread and outliers of the calibration, from either
};

// The problem: its shape from the flags; its costs from a calibration when predicting (the
// memory-aware generators then also see real memory), unit costs otherwise.
RunCosts run_costs(const RunFlags& flags, zb::Placement placement, const ExecOptions& exec_options, Backend& backend) {
  const ShapeFlags& shape = flags.shape;
  RunCosts costs;
  zb::ProblemSpec& spec = costs.spec;
  if (!flags.calibration_path.empty()) {
    CalibrationFile file = read_calibration_file(flags.calibration_path);
    spec = std::move(file.spec);
    costs.noise = std::move(file.noise);
    if (spec.devices != shape.devices || spec.chunks != shape.chunks) {
      throw InputError(fmt::format("--calibration {}: calibrated for p = {}, chunks = {}, but the run "
                                   "has p = {}, chunks = {}", flags.calibration_path, spec.devices,
                                   spec.chunks, shape.devices, shape.chunks));
    }
  } else if (flags.predict) {
    CalibrationOptions calibration_options;
    calibration_options.model = shape.model;
    calibration_options.devices = shape.devices;
    calibration_options.chunks = shape.chunks;
    calibration_options.placement = placement;
    calibration_options.microbatches = shape.microbatches;
    calibration_options.repeats = flags.repeats;
    calibration_options.concurrent = flags.concurrent_calibration;
    calibration_options.optimizer = exec_options.optimizer;
    costs.calibration = calibrate(backend, calibration_options);
    spec = costs.calibration->spec;
  } else {
    spec.devices = shape.devices;
    spec.chunks = shape.chunks;
    spec.t_f = {1.0};
    spec.t_b = {1.0};
    spec.t_w = {1.0};
  }
  spec.microbatches = shape.microbatches;
  spec.placement = placement;
  if (!flags.mem_limit.empty()) spec.mem_limit = zb::MemoryLimit::parse(flags.mem_limit, "--mem-limit");
  // Where po-h and po-f place their copies: --t-offload, else half a forward (k = 1/3 at these
  // costs; the copies' placement, never the results, depends on it).
  if (!flags.t_offload.empty()) {
    spec.t_offload = flags.t_offload;
  } else if (!spec.t_f.empty()) {
    spec.t_offload = {spec.t_f.front() / 2};
  }
  return costs;
}

// Every rank of an MPI job must run the same thing: one flag a line, so that a difference is
// named by its flag; then the schedule itself.
void agree_on_run(ProcessGroup& group, const RunFlags& flags, const std::string& description,
                  const zb::Schedule& schedule) {
  group.agree(fmt::format("run {}\n--seed {}\n--lr {}\n--momentum {}\n--weight-decay {}\n--clip {}\n"
                          "--inject-nonfinite '{}'\n--verify {}\n--mem-limit '{}'\nschedule:\n{}",
                          description, flags.shape.model.seed, flags.lr, flags.momentum, flags.weight_decay,
                          flags.clip, flags.inject, flags.verify, flags.mem_limit, zb::to_text(schedule)));
}

// The steps' losses, then the last step's span, bubble rate and peak activation memory per device.
void print_steps(const ExecResult& result, SyncMode mode, const zb::Trace& last) {
  for (std::size_t k = 0; k < result.steps.size(); ++k) {
    fmt::print("{}\n", describe_step(static_cast<int>(k), result.steps[k], mode));
  }
  fmt::print("last step: span {:.3f} ms, bubble rate {:.1f}%, peak activation memory per device:",
             last.metrics.span, 100.0 * last.metrics.bubble_rate);
  for (double bytes : result.peak_activation_bytes) fmt::print(" {:.2f} MiB", bytes / (1024.0 * 1024.0));
  fmt::print("\n");
}

// The evaluator's prediction from the calibration against the measured steps, printed; returns
// the predicted step, drawn beside the measured last step.
zb::Trace report_prediction(const zb::Problem& problem, const zb::Schedule& schedule, const ExecOptions& exec_options,
                            const ExecResult& result, RunCosts& costs, const zb::Trace& last) {
  PredictionReport report =
      compare_prediction(problem, schedule, exec_options, result.traces, result.step_origins_ms);
  if (costs.calibration) {
    costs.noise = CalibrationNoise{costs.calibration->relative_spread(problem), costs.calibration->outliers};
  }
  if (costs.noise) {
    report.calibration_spread = costs.noise->spread;
    report.calibration_outliers = costs.noise->outliers;
  }
  fmt::print("\npredicted (evaluator on the calibration) vs measured:\n{}", format_prediction(report));
  zb::Trace predicted = zb::evaluate(problem, schedule);  // one step
  predicted.meta.problem_json = last.meta.problem_json;
  return predicted;
}

// The trace files asked for: the last step (our JSON), every step on one clock (Chrome), the SVG.
void write_trace_files(const RunFlags& flags, const ExecResult& result, const std::vector<zb::LabeledTrace>& labeled,
                       const zb::Trace& last) {
  if (!flags.trace_path.empty()) {
    zb::write_file_atomically(flags.trace_path, zb::to_json(last).dump(1) + "\n");
    fmt::print("trace written: {}\n", flags.trace_path);
  }
  if (!flags.chrome_path.empty()) {
    // Every step on one clock, so that the steady state and the steps' skew are visible.
    zb::Trace all_steps = all_steps_trace(result);
    all_steps.meta.problem_json = last.meta.problem_json;
    std::vector<zb::LabeledTrace> chrome = labeled;
    chrome.front().trace = &all_steps;
    zb::write_file_atomically(flags.chrome_path, zb::to_chrome_trace(chrome));
    fmt::print("chrome trace written: {}\n", flags.chrome_path);
  }
  if (!flags.svg_path.empty()) {
    zb::write_file_atomically(flags.svg_path, zb::to_svg(labeled));
    fmt::print("svg timeline written: {}\n", flags.svg_path);
  }
}

// --verify: the reference runs on device 0 of the same backend (the same kernels, all layers on
// one device); 0 when its weights and losses equal the pipeline's, else 1.
int verify_against_reference(Backend& backend, const RunFlags& flags, const zb::Problem& problem,
                             const ExecOptions& exec_options, const ExecResult& result) {
  const ReferenceResult reference =
      run_reference(backend.device(0), flags.shape.model, exec_options.optimizer, problem.microbatches,
                    flags.steps, exec_options.inject_nonfinite, problem.stages());
  const double diff = max_abs_difference(result.weights, reference.weights);
  bool losses_equal = true;
  for (std::size_t k = 0; k < reference.steps.size(); ++k) {
    losses_equal = losses_equal && reference.steps[k].loss == result.steps[k].loss;
  }
  fmt::print("verify: single-device reference ({} layers, microbatches in order, same optimizer): "
             "max |dw| = {:g}, losses {}\n",
             flags.shape.model.layers, diff, losses_equal ? "equal" : "DIFFERENT");
  if (diff != 0 || !losses_equal) {
    fmt::print(stderr, "zbexec run: verification failed: the pipeline's weights differ from the reference\n");
    return 1;
  }
  return 0;
}

// `group` is the caller's: on a failure the caller tells the other ranks why, after the backend
// (which uses the group) is gone.
int run_and_report(int argc, char** argv, std::unique_ptr<ProcessGroup>& group) {
  RunFlags flags;
  BackendFlags backend_flags;
  const po::options_description options = run_options(flags, backend_flags);
  const auto values = parse_or_help(argc, argv, options, "usage: zbexec run [options]",
                                    "zbexec run --backend cpu --schedule zb-h1 --p 4 --m 8 --layers 8 --hidden 256 --steps 3 --verify");
  if (!values) return 0;
  if (values->count("mem-limit")) flags.mem_limit = (*values)["mem-limit"].as<std::string>();
  if (values->count("t-offload")) {
    flags.t_offload = zb::parse_number_list((*values)["t-offload"].as<std::string>(), "--t-offload");
  }
  zb::Placement placement = resolve_shape(flags.shape, *values);
  const std::optional<zb::Schedule> from_file = shape_from_schedule(flags, *values, placement);
  const ShapeFlags& shape = flags.shape;
  ExecOptions exec_options = checked_exec_options(flags);
  join_mpi_job(flags, group);
  const std::unique_ptr<Backend> backend = make_backend(shape.backend, shape.devices, backend_flags, group.get());
  RunCosts costs = run_costs(flags, placement, exec_options, *backend);
  const zb::Problem problem = costs.spec.build("zbexec run");

  const zb::Schedule schedule =
      from_file ? *from_file : zb::generate(zb::catalog::generators(), flags.schedule, problem);
  label_actions(*backend, schedule);  // NVTX ranges F3, B3, W3, F3.1 in Nsight Systems (CUDA)

  const std::string description = fmt::format(
      "schedule {}, p={} m={} v={} ({}), backend {}, {} layers x hidden {}, microbatch {}, {} {}, {} steps",
      schedule.name, problem.devices, problem.microbatches, problem.chunks,
      zb::placement_name(problem.placement), backend->name(), shape.model.layers, shape.model.hidden,
      shape.model.microbatch_size, flags.optimizer, flags.mode, flags.steps);
  if (group) {
    exec_options.gather_weights = flags.verify;
    agree_on_run(*group, flags, description, schedule);
  }
  if (!group || group->rank() == 0) fmt::print("zbexec run: {}\n", description);
  std::fflush(stdout);
  const ExecResult result = run_schedule(*backend, problem, schedule, exec_options);
  if (group) group->finish();  // every result is at rank 0 now: the others may go
  if (!result.gathered) {
    fmt::print("rank {}: ran device {} for {} steps; rank 0 reports the results\n", group->rank(),
               group->rank(), flags.steps);
    return 0;
  }
  zb::Trace last = result.traces.back();
  last.meta.problem_json = zb::to_json(costs.spec).dump();
  print_steps(result, exec_options.mode, last);

  std::optional<zb::Trace> predicted;
  if (flags.predict || !flags.calibration_path.empty()) {
    predicted = report_prediction(problem, schedule, exec_options, result, costs, last);
  }
  std::vector<zb::LabeledTrace> labeled{{fmt::format("{} measured ({})", schedule.name, backend->name()), &last}};
  if (predicted) labeled.push_back({fmt::format("{} predicted (eval)", schedule.name), &*predicted});
  write_trace_files(flags, result, labeled, last);
  if (flags.verify) return verify_against_reference(*backend, flags, problem, exec_options, result);
  return 0;
}

}  // namespace

int run_run(int argc, char** argv) {
  std::unique_ptr<ProcessGroup> group;
  try {
    return run_and_report(argc, argv, group);
  } catch (const std::exception& error) {
    if (!group) throw;
    // A rank of an MPI job: it says why it leaves, the others hear it (and leave with it), and
    // every rank ends within seconds even when one does not listen (leave: an exit without
    // MPI_Finalize then, and the launcher ends the job).
    const int code = dynamic_cast<const InputError*>(&error) != nullptr ? 2 : 1;
    fmt::print(stderr, "zbexec run: rank {}: {}: {}\n", group->rank(), code == 2 ? "error" : "failure", error.what());
    std::fflush(stderr);
    group->leave(code, error);
    return code;
  }
}

}  // namespace zb::exec::cli
