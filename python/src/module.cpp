// The Python module zbsim (its compiled part, _zbsim): binding code only. Every function calls
// the owner the CLI calls (sim/app/catalog, sim/app/plan, sim/app/sweep, sim/solver, sim/core) and hands back the
// JSON the CLI prints or writes, as plain dicts and lists; see python/README.md.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "interruptible.h"
#include "json_objects.h"
#include "problem_arguments.h"
#include "models/hardware.h"
#include "sim/app/catalog/comparison.h"
#include "sim/app/catalog/engines.h"
#include "sim/app/catalog/frontier_curves.h"
#include "sim/app/catalog/generators.h"
#include "sim/app/plan/plan_json.h"
#include "sim/app/plan/plan_search.h"
#include "sim/app/catalog/result_json.h"
#include "sim/app/catalog/scenario_input.h"
#include "sim/app/catalog/schedule_files.h"
#include "sim/app/catalog/single_run.h"
#include "sim/app/catalog/solve_row.h"
#include "sim/app/catalog/version.h"
#include "sim/app/catalog/trace_files.h"
#include "sim/support/atomic_file.h"
#include "sim/support/error.h"
#include "sim/support/json_text.h"
#include "sim/formats/pytorch_csv.h"
#include "sim/formats/trace_json.h"
#include "sim/formats/trace_writers.h"
#include "sim/core/validator.h"
#include "sim/app/sweep/grid.h"
#include "sim/app/sweep/run.h"

namespace py = pybind11;

namespace zb::python {

namespace {

std::string path_of(const py::handle& path) {
  return py::module_::import("os").attr("fspath")(path).cast<std::string>();
}

// None, one name, or a list of names.
std::optional<std::vector<std::string>> names_of(const py::object& names) {
  if (names.is_none()) return std::nullopt;
  if (py::isinstance<py::str>(names)) return std::vector<std::string>{names.cast<std::string>()};
  try {
    return names.cast<std::vector<std::string>>();
  } catch (const py::cast_error&) {
    throw py::type_error(fmt::format("expected a name or a list of names, got {}", py::repr(names).cast<std::string>()));
  }
}

// A schedule dict in our JSON form (what schedule() and read_schedule() return).
Schedule schedule_of(const py::handle& object) {
  if (!py::isinstance<py::dict>(object)) {
    throw py::type_error("a schedule is a dict in zbsim's JSON form (as schedule() and read_schedule() return)");
  }
  return schedule_from_json(json_from_python(object, "schedule"), "schedule");
}

Trace trace_of(const py::handle& object) {
  if (!py::isinstance<py::dict>(object)) {
    throw py::type_error("a trace is a dict in zbsim's trace JSON form (as simulate() and read_trace() return)");
  }
  return trace_from_json(json_from_python(object, "trace"), "trace");
}

// One trace dict, or a list of them, labelled by their schedule names.
std::vector<Trace> traces_of(const py::handle& object) {
  std::vector<Trace> traces;
  if (py::isinstance<py::dict>(object)) {
    traces.push_back(trace_of(object));
  } else {
    for (const py::handle item : object) traces.push_back(trace_of(item));
  }
  return traces;
}

std::vector<LabeledTrace> labelled(const std::vector<Trace>& traces) {
  std::vector<LabeledTrace> out;
  for (const Trace& trace : traces) out.push_back({trace.meta.schedule, &trace});
  return out;
}

// The format a file name suggests when none is given.
bool ends_with(const std::string& text, std::string_view tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

py::list compare(const py::object& schedules, const py::object& scenario_arg, const py::kwargs& fields) {
  const Scenario scenario = scenario_from_arguments(scenario_arg, fields, "compare");
  const auto chosen = names_of(schedules);
  nlohmann::json rows;
  {
    py::gil_scoped_release release;
    // The CLI's rows, memory per device of a model-driven scenario included (one owner).
    rows = catalog::results_json(scenario.spec, catalog::compare_schedules(scenario, chosen).rows,
                                 scenario.memory ? &*scenario.memory : nullptr)["results"];
  }
  return python_from_json(rows);
}

py::dict simulate(const py::object& schedule, const py::object& schedule_file, const std::string& engine_name,
                  const py::object& cluster, int steps, double rollback_rate, bool verbose, const py::object& scenario_arg,
                  const py::kwargs& fields, const char* function) {
  const Scenario scenario = scenario_from_arguments(scenario_arg, fields, function);
  catalog::EngineOptions engine;
  engine.engine = engine_name;
  if (!cluster.is_none()) engine.cluster = path_of(cluster);
  engine.steps = steps;
  engine.rollback_rate = rollback_rate;
  engine.verbose = verbose;
  std::optional<std::string> name;
  std::optional<catalog::GivenSchedule> given;
  if (!schedule.is_none() && !schedule_file.is_none()) {
    throw py::type_error(fmt::format("{}(): give either schedule or schedule_file, not both", function));
  }
  if (py::isinstance<py::str>(schedule)) {
    name = schedule.cast<std::string>();
  } else if (!schedule.is_none()) {
    given = catalog::GivenSchedule{schedule_of(schedule), "schedule"};
  } else if (!schedule_file.is_none()) {
    const std::string path = path_of(schedule_file);
    given = catalog::GivenSchedule{catalog::read_schedule_file(path), path};
  }
  nlohmann::json result;
  {
    py::gil_scoped_release release;
    const catalog::SingleRun run = catalog::run_single(scenario, name, given, engine);
    result = {{"problem", to_json(run.spec)}, {"result", catalog::to_json(run.row)}, {"trace", to_json(run.trace)}};
  }
  return python_from_json(result);
}

py::dict schedule(const std::string& name, const py::object& scenario_arg, const py::kwargs& fields) {
  Scenario scenario = scenario_from_arguments(scenario_arg, fields, "schedule");
  catalog::default_unit_costs(scenario.spec);
  nlohmann::json json;
  {
    py::gil_scoped_release release;
    const catalog::NamedSchedule named = catalog::generate_named(name, scenario);
    validate(named.problem, named.schedule, MemoryCheck::skip);
    json = to_json(named.schedule);
  }
  return python_from_json(json);
}

py::list actions(const py::dict& schedule_dict) {
  const Schedule schedule = schedule_of(schedule_dict);
  py::list rows;
  for (int d = 0; d < schedule.device_count(); ++d) {
    const auto& list = schedule.devices[static_cast<std::size_t>(d)];
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Action& action = list[i];
      py::dict row;
      row["device"] = d;
      row["step"] = i;
      row["pass"] = std::string(pass_name(action.pass));
      row["microbatch"] = action.microbatch;
      row["chunk"] = action.chunk;
      row["overlap_next"] = action.overlap_next;
      row["token"] = to_token(action);
      rows.append(row);
    }
  }
  return rows;
}

// text | json | pytorch-csv | pytorch-csv-comms (with PyTorch's communication actions); PyTorch's
// CSVs need the problem (stages from the placement).
std::string format_schedule(const py::dict& schedule_dict, const std::string& format, const py::object& scenario_arg,
                            const py::kwargs& fields) {
  const Schedule schedule = schedule_of(schedule_dict);
  if (format == "text") return to_text(schedule);
  if (format == "json") return to_json(schedule).dump(2) + "\n";
  if (format != "pytorch-csv" && format != "pytorch-csv-comms") {
    throw InputError(fmt::format(
        "format: unknown schedule format '{}' (expected text, json, pytorch-csv or pytorch-csv-comms)", format));
  }
  Scenario scenario = scenario_from_arguments(scenario_arg, fields, "format_schedule");
  catalog::default_unit_costs(scenario.spec);
  catalog::apply_schedule_shape(schedule, scenario.spec, "schedule");
  const Problem problem = scenario.spec.build(scenario.source);
  validate(problem, schedule, MemoryCheck::skip);
  return to_pytorch_csv(problem, schedule,
                        format == "pytorch-csv" ? PytorchCsvForm::compute_only : PytorchCsvForm::compute_comms);
}

std::string schedule_format_for(const std::string& path, const py::object& format) {
  if (!format.is_none()) return format.cast<std::string>();
  if (ends_with(path, ".json")) return "json";
  if (ends_with(path, ".csv")) return "pytorch-csv";
  return "text";
}

std::string format_trace(const py::object& traces_arg, const std::string& format) {
  const std::vector<Trace> traces = traces_of(traces_arg);
  if (format == "trace") {
    if (traces.size() != 1) throw InputError("format 'trace': our trace JSON holds one trace");
    return to_json(traces.front()).dump() + "\n";
  }
  if (format == "chrome") return to_chrome_trace(labelled(traces));
  if (format == "svg") return to_svg(labelled(traces));
  throw InputError(fmt::format("format: unknown trace format '{}' (expected trace, chrome or svg)", format));
}

std::string trace_format_for(const std::string& path, const py::object& format) {
  if (!format.is_none()) return format.cast<std::string>();
  if (ends_with(path, ".svg")) return "svg";
  if (ends_with(path, ".chrome.json")) return "chrome";
  return "trace";
}

// The spans as columns named as in the trace's spans, numpy arrays when numpy is there
// (pandas.DataFrame takes either).
py::dict trace_columns(const py::dict& trace_dict) {
  const Trace trace = trace_of(trace_dict);
  py::list device, stream, kind, stage, microbatch, chunk, start, end;
  for (const Span& span : trace.spans) {
    device.append(span.device);
    stream.append(std::string(stream_name(span.stream)));
    kind.append(std::string(pass_name(span.pass)));
    stage.append(span.stage);
    microbatch.append(span.microbatch);
    chunk.append(span.chunk);
    start.append(span.start);
    end.append(span.end);
  }
  py::dict columns;
  py::object numpy;
  try {
    numpy = py::module_::import("numpy");
  } catch (const py::error_already_set&) {
    numpy = py::none();
  }
  auto column = [&](const char* name, const py::list& values, const char* dtype) {
    columns[name] = numpy.is_none() ? py::object(values) : numpy.attr("asarray")(values, py::arg("dtype") = dtype);
  };
  column("device", device, "int32");
  column("stream", stream, "str");
  column("kind", kind, "str");
  column("stage", stage, "int32");
  column("microbatch", microbatch, "int32");
  column("chunk", chunk, "int32");
  column("start", start, "float64");
  column("end", end, "float64");
  return columns;
}

py::dict solve(std::int64_t node_limit, double time_limit, int threads, const py::object& scenario_arg, const py::kwargs& fields) {
  const Scenario scenario = scenario_from_arguments(scenario_arg, fields, "solve");
  const bool limit_given = gives_field(fields, "mem_limit");
  nlohmann::json result;
  {
    py::gil_scoped_release release;
    const Problem problem = scenario.spec.build(scenario.source);
    IlpOptions ilp;
    ilp.node_limit = node_limit;
    ilp.time_limit_s = time_limit;
    ilp.threads = threads;
    const catalog::SolveRun run = catalog::solve_row(problem, ilp, limit_given ? "--mem-limit" : scenario.source);
    result = {{"problem", to_json(scenario.spec)},
              {"result", catalog::to_json(run.row)},
              {"schedule", to_json(run.result.schedule)}};
  }
  return python_from_json(result);
}

py::dict frontier(double from, double to, double step, bool ilp, double time_limit, const py::object& placements,
                  const py::object& scenario_arg, const py::kwargs& fields) {
  const Scenario scenario = scenario_from_arguments(scenario_arg, fields, "frontier");
  FrontierOptions options;
  options.from_times_p = from;
  options.to_times_p = to;
  options.step_times_p = step;
  options.with_ilp = ilp;
  options.ilp_time_limit_s = time_limit;
  const auto chosen = names_of(placements);
  nlohmann::json result;
  {
    py::gil_scoped_release release;
    result = catalog::frontier_json(scenario.spec, catalog::frontier_curves(scenario.spec, scenario.source, chosen, options));
  }
  return python_from_json(result);
}

// The rows of the sweep's JSON-lines file, one dict per point in point order.
py::list sweep_grid(const py::object& grid_arg, std::optional<int> jobs_arg) {
  const sweep::Grid grid = py::isinstance<py::dict>(grid_arg)
                               ? sweep::grid_from_json(ordered_json_from_python(grid_arg, "grid"), "grid", "")
                               : sweep::load_grid(path_of(grid_arg));
  const int jobs = jobs_arg ? *jobs_arg : sweep::default_jobs();
  sweep::check_jobs(jobs);
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  run_interruptibly([&] {
    for (const sweep::Row& row : sweep::run_rows(grid, jobs)) rows.push_back(parse_ordered_json(row.json_line, "row"));
  });
  return python_from_json(rows);
}

// The object `zbsim recommend --format json` prints, for the same flags.
py::dict recommend(const std::string& model, const std::string& cluster, int global_batch, const std::string& hardware,
                   std::optional<int> seq, std::optional<int> gpus, int top, std::optional<int> jobs, bool simgrid,
                   const std::string& cost_model) {
  plan::PlanQuery query;
  query.model = model;
  query.cluster = cluster;
  query.hardware = hardware;
  query.global_batch = global_batch;
  query.seq_len = seq;
  query.gpus = gpus;
  if (top < 1) throw InputError(fmt::format("top: {} (expected 1 or more)", top));
  query.top = top;
  query.jobs = jobs ? *jobs : sweep::default_jobs();
  query.confirm_simgrid = simgrid;
  const std::optional<models::CostModel> chosen = models::cost_model_from_name(cost_model);
  if (!chosen) throw InputError(fmt::format("cost_model: '{}' (expected calibrated or roofline)", cost_model));
  query.cost_model = *chosen;
  nlohmann::json result;
  run_interruptibly([&] { result = plan::plan_search_json(plan::search_plans(query)); });
  return python_from_json(result);
}

void translate_errors(std::exception_ptr error) {
  try {
    if (error) std::rethrow_exception(error);
  } catch (const InputError& e) {
    PyErr_SetString(PyExc_ValueError, e.what());  // bad input: what zbsim reports with exit code 2
  } catch (const nlohmann::json::exception& e) {
    PyErr_SetString(PyExc_ValueError, e.what());  // a field of the wrong JSON type inside a reader
  } catch (const Error& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
}

}  // namespace

}  // namespace zb::python

PYBIND11_MODULE(_zbsim, m) {
  using namespace zb;
  using namespace zb::python;
  m.doc() = "zbsim: pipeline-parallel schedules (Zero Bubble and friends) from Python.";
  py::register_exception_translator(&translate_errors);
  m.attr("__version__") = catalog::version();

  m.def("generators", [] { return catalog::generators().names(); }, "The schedule names this build offers.");
  m.def("engines", &catalog::engine_names, "The engines this build has: eval, and simgrid when built.");

  m.def(
      "problem",
      [](const py::object& scenario_arg, const py::kwargs& fields) {
        const Scenario scenario = scenario_from_arguments(scenario_arg, fields, "problem");
        scenario.spec.build(scenario.source);
        return python_from_json(to_json(scenario.spec));
      },
      py::arg("scenario") = py::none(),
      "The problem as a scenario's 'problem' object, checked: problem(p=4, m=8, tf=1, tb=1, tw=1).");

  m.def("compare", &compare, py::arg("schedules") = py::none(), py::arg("scenario") = py::none(),
        "The rows of `zbsim compare --format json` (its 'results'): one dict per schedule.");

  m.def(
      "simulate",
      [](const py::object& schedule, const py::object& schedule_file, const std::string& engine, const py::object& cluster,
         int steps, double rollback_rate, bool verbose, const py::object& scenario_arg, const py::kwargs& fields) {
        return simulate(schedule, schedule_file, engine, cluster, steps, rollback_rate, verbose, scenario_arg, fields,
                        "simulate");
      },
      py::arg("schedule") = py::none(), py::arg("schedule_file") = py::none(), py::arg("engine") = "eval",
      py::arg("cluster") = py::none(), py::arg("steps") = catalog::EngineOptions{}.steps,
      py::arg("rollback_rate") = catalog::EngineOptions{}.rollback_rate, py::arg("verbose") = false,
      py::arg("scenario") = py::none(),
      "One schedule (a name, a schedule dict, or schedule_file) through an engine: "
      "{'problem', 'result' (the row of `zbsim simulate --format json`), 'trace'}.");
  m.def(
      "evaluate",
      [](const py::object& schedule, const py::object& schedule_file, const py::object& scenario_arg,
         const py::kwargs& fields) {
        const catalog::EngineOptions defaults;
        return simulate(schedule, schedule_file, "eval", py::none(), defaults.steps, defaults.rollback_rate, false,
                        scenario_arg, fields, "evaluate");
      },
      py::arg("schedule") = py::none(), py::arg("schedule_file") = py::none(), py::arg("scenario") = py::none(),
      "simulate() with the evaluator.");

  m.def("schedule", &schedule, py::arg("name"), py::arg("scenario") = py::none(),
        "The schedule a generator makes, in zbsim's JSON form; costs default to 1.");
  m.def("actions", &actions, py::arg("schedule"),
        "A schedule's actions as records: device, step, pass, microbatch, chunk, overlap_next, token.");
  m.def(
      "read_schedule", [](const py::object& path) { return python_from_json(to_json(catalog::read_schedule_file(path_of(path)))); },
      py::arg("path"), "A schedule file (text, JSON or PyTorch CSV, told apart by content) as a schedule dict.");
  m.def(
      "parse_schedule",
      [](const std::string& text, const std::string& source) {
        return python_from_json(to_json(catalog::parse_schedule_file(text, source)));
      },
      py::arg("text"), py::arg("source") = "schedule", "Schedule text (any of the three forms) as a schedule dict.");
  m.def("format_schedule", &format_schedule, py::arg("schedule"), py::arg("format") = "text",
        py::arg("scenario") = py::none(), "A schedule as text, json, pytorch-csv or pytorch-csv-comms (PyTorch's take the problem's fields).");
  m.def(
      "write_schedule",
      [](const py::dict& schedule, const py::object& path, const py::object& format, const py::object& scenario_arg,
         const py::kwargs& fields) {
        const std::string file = path_of(path);
        write_file_atomically(file, format_schedule(schedule, schedule_format_for(file, format), scenario_arg, fields));
      },
      py::arg("schedule"), py::arg("path"), py::arg("format") = py::none(), py::arg("scenario") = py::none(),
      "Writes a schedule (format from the name when not given: .json, .csv for PyTorch, else text).");

  m.def(
      "read_trace",
      [](const py::object& paths) {
        std::vector<std::string> files;
        if (py::isinstance<py::str>(paths) || py::hasattr(paths, "__fspath__")) {
          files.push_back(path_of(paths));
        } else {
          for (const py::handle path : paths) files.push_back(path_of(path));
        }
        return python_from_json(to_json(catalog::read_trace_files(files)));
      },
      py::arg("paths"),
      "A trace file as a trace dict: ours (zbsim simulate --trace, zbexec run --trace), or the torch.profiler "
      "files of one PyTorch pipeline run (a list, one per rank), told apart by content.");
  m.def("format_trace", &format_trace, py::arg("traces"), py::arg("format") = "trace",
        "One trace (or a list, for chrome and svg) as trace JSON, a Chrome trace or an SVG timeline.");
  m.def(
      "write_trace",
      [](const py::object& traces, const py::object& path, const py::object& format) {
        const std::string file = path_of(path);
        write_file_atomically(file, format_trace(traces, trace_format_for(file, format)));
      },
      py::arg("traces"), py::arg("path"), py::arg("format") = py::none(),
      "Writes traces (format from the name when not given: .svg, .chrome.json, else our trace JSON).");
  m.def("trace_columns", &trace_columns, py::arg("trace"),
        "A trace's spans as columns (numpy arrays when numpy is installed): pandas.DataFrame(trace_columns(t)).");

  m.def("solve", &solve, py::arg("node_limit") = IlpOptions{}.node_limit, py::arg("time_limit") = 30.0, py::arg("threads") = 1, py::arg("scenario") = py::none(),
        "zb-ilp under the memory limit: {'problem', 'result' (the row of `zbsim solve --format json`), 'schedule'}.");
  m.def("frontier", &frontier, py::arg("from_") = 1.0, py::arg("to") = 3.0, py::arg("step") = 0.125,
        py::arg("ilp") = false, py::arg("time_limit") = FrontierOptions{}.ilp_time_limit_s, py::arg("placements") = py::none(),
        py::arg("scenario") = py::none(), "The object `zbsim frontier --format json` prints.");
  m.def("recommend", &recommend, py::arg("model"), py::arg("cluster"), py::arg("global_batch"), py::arg("hardware") = "",
        py::arg("seq") = py::none(), py::arg("gpus") = py::none(), py::arg("top") = 10, py::arg("jobs") = py::none(),
        py::arg("simgrid") = true, py::arg("cost_model") = "calibrated",
        "The fastest training plans that fit: the object `zbsim recommend --format json` prints (top, pareto, search counts).");
  m.def("sweep", &sweep_grid, py::arg("grid"), py::arg("jobs") = py::none(),
        "Every point of a grid (a file or a dict in the grid file's form): the rows of the sweep's JSON lines.");
}
