// Bounded derivative-free fits (NLopt's Subplex: the loss has the steps of tile and wave
// quantisation, so no gradient), source-balanced so that one large source does not decide alone.
#include "sim/app/validate/calibration.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlopt.hpp>
#include <set>

#include "sim/app/validate/row_prediction.h"
#include "sim/support/error.h"
#include "sim/support/parallel_for.h"

namespace zb::validate {

namespace {

constexpr int kParameters = static_cast<int>(std::size(models::kEfficiencyFields));
// A row the model cannot predict at some efficiencies costs as much as a prediction off by e.
constexpr double kFailedRowLoss = 1.0;

// The efficiencies in models::kEfficiencyFields' order: the fit's parameters.
std::array<double, kParameters> as_array(const models::Efficiencies& e) {
  std::array<double, kParameters> a{};
  for (int i = 0; i < kParameters; ++i) a[i] = e.*models::kEfficiencyFields[i].member;
  return a;
}

models::Efficiencies from_array(const std::array<double, kParameters>& a) {
  models::Efficiencies e;
  for (int i = 0; i < kParameters; ++i) e.*models::kEfficiencyFields[i].member = a[i];
  return e;
}

// Parameters scaled to [0, 1] within their bounds, so that one step size suits all six.
models::Efficiencies from_unit(const std::vector<double>& x, const EfficiencyBounds& b) {
  const auto low = as_array(b.low), high = as_array(b.high);
  std::array<double, kParameters> a{};
  for (int i = 0; i < kParameters; ++i) a[i] = low[i] + std::clamp(x[i], 0.0, 1.0) * (high[i] - low[i]);
  return from_array(a);
}

std::vector<double> to_unit(const models::Efficiencies& e, const EfficiencyBounds& b) {
  const auto low = as_array(b.low), high = as_array(b.high), v = as_array(e);
  std::vector<double> x(kParameters);
  for (int i = 0; i < kParameters; ++i) x[i] = std::clamp((v[i] - low[i]) / (high[i] - low[i]), 0.0, 1.0);
  return x;
}

std::vector<RowResult> predict_all(const std::vector<const PreparedRow*>& rows, const PredictionSettings& settings,
                                   int jobs) {
  std::vector<RowResult> out(rows.size());
  parallel_for(rows.size(), jobs, [&](std::size_t i) { out[i] = predict_row(*rows[i], settings); });
  return out;
}

// Each source's rows weigh 1 in all, so the loss is the mean over sources of their mean |log error|.
double balanced_loss(const std::vector<const PreparedRow*>& rows, const std::vector<RowResult>& results) {
  std::map<std::string, std::pair<double, int>> by_source;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const RowResult& r = results[i];
    const double loss = r.covered() ? std::abs(std::log(*r.predicted / *r.measured)) : kFailedRowLoss;
    auto& [sum, n] = by_source[rows[i]->result.source];
    sum += loss;
    ++n;
  }
  double total = 0;
  for (const auto& [source, sum_n] : by_source) total += sum_n.first / sum_n.second;
  return by_source.empty() ? 0 : total / static_cast<double>(by_source.size());
}

std::vector<RowResult> predict_at(const std::vector<const PreparedRow*>& rows, const std::vector<double>& x,
                                  const CalibrationOptions& options) {
  PredictionSettings settings;
  settings.efficiencies = from_unit(x, options.bounds);
  return predict_all(rows, settings, options.jobs);
}

// The parameters some row's prediction depends on: moved from `start` to the far bound, they change
// a prediction. The others (attention's fraction without a flash-attention row, alignment where
// every dimension is aligned) the rows say nothing about.
std::vector<int> informed_parameters(const std::vector<const PreparedRow*>& rows, const std::vector<double>& start,
                                     const CalibrationOptions& options) {
  const std::vector<RowResult> base = predict_at(rows, start, options);
  std::vector<int> informed;
  for (int i = 0; i < kParameters; ++i) {
    std::vector<double> probe = start;
    probe[i] = start[i] > 0.5 ? 0 : 1;
    const std::vector<RowResult> moved = predict_at(rows, probe, options);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      if (moved[r].predicted != base[r].predicted) {
        informed.push_back(i);
        break;
      }
    }
  }
  return informed;
}

struct Objective {
  const std::vector<const PreparedRow*>* rows;
  const CalibrationOptions* options;
  std::string label;
  std::vector<double> start;  // every parameter, in unit coordinates
  std::vector<int> free;      // the ones searched (x's coordinates)
  int evaluations = 0;

  std::vector<double> full(const std::vector<double>& x) const {
    std::vector<double> all = start;
    for (std::size_t i = 0; i < free.size(); ++i) all[free[i]] = x[i];
    return all;
  }
};

double objective(const std::vector<double>& x, std::vector<double>&, void* data) {
  auto& o = *static_cast<Objective*>(data);
  PredictionSettings settings;
  settings.efficiencies = from_unit(o.full(x), o.options->bounds);
  const double loss = balanced_loss(*o.rows, predict_all(*o.rows, settings, o.options->jobs));
  ++o.evaluations;
  if (o.options->progress) o.options->progress(o.label, o.evaluations);
  return loss;
}

ArchitectureFit fit(const std::string& architecture, const std::string& preset,
                    const std::vector<const PreparedRow*>& rows, const CalibrationOptions& options,
                    const std::string& label) {
  ArchitectureFit out;
  out.architecture = architecture;
  out.preset = preset;
  std::set<std::string> sources;
  for (const PreparedRow* row : rows) {
    out.rows.push_back(row->result.id);
    sources.insert(row->result.source);
  }
  out.sources.assign(sources.begin(), sources.end());
  // From the roofline (the fit's only prior), moved inside the bounds; what no row depends on stays there.
  Objective data{&rows, &options, label, to_unit(models::Efficiencies{}, options.bounds), {}};
  data.free = informed_parameters(rows, data.start, options);
  for (int i = 0; i < kParameters; ++i) {
    if (std::find(data.free.begin(), data.free.end(), i) == data.free.end()) out.not_informed.emplace_back(models::kEfficiencyFields[i].name);
  }
  std::vector<double> x;
  for (const int i : data.free) x.push_back(data.start[i]);
  out.values = from_unit(data.start, options.bounds);
  if (x.empty()) {
    std::vector<double> none;
    out.loss = objective(x, none, &data);
    out.evaluations = data.evaluations;
    return out;
  }
  nlopt::opt optimizer(nlopt::LN_SBPLX, static_cast<unsigned>(x.size()));
  optimizer.set_lower_bounds(std::vector<double>(x.size(), 0.0));
  optimizer.set_upper_bounds(std::vector<double>(x.size(), 1.0));
  optimizer.set_min_objective(objective, &data);
  optimizer.set_maxeval(options.max_evaluations);
  optimizer.set_xtol_rel(1e-4);
  optimizer.set_initial_step(0.1);
  double loss = 0;
  try {
    optimizer.optimize(x, loss);
  } catch (const nlopt::roundoff_limited&) {  // the best point so far stands
  }
  out.values = from_unit(data.full(x), options.bounds);
  out.loss = optimizer.last_optimum_value();
  out.evaluations = data.evaluations;
  return out;
}

// Fits per architecture on all its rows (what a preset with few or no rows of its own is predicted
// with), and per preset where it has kPresetFitRows rows and its architecture has other presets'.
std::vector<ArchitectureFit> fit_architectures(const std::vector<const PreparedRow*>& rows,
                                               const CalibrationOptions& options, const std::string& label) {
  std::map<std::string, std::map<std::string, std::vector<const PreparedRow*>>> by_preset;
  std::map<std::string, std::vector<const PreparedRow*>> by_architecture;
  for (const PreparedRow* row : rows) {
    by_preset[row->architecture][row->hardware].push_back(row);
    by_architecture[row->architecture].push_back(row);
  }
  std::vector<ArchitectureFit> fits;
  for (const auto& [architecture, presets] : by_preset) {
    for (const auto& [preset, subset] : presets) {
      if (presets.size() > 1 && subset.size() >= kPresetFitRows) {
        fits.push_back(fit(architecture, preset, subset, options, fmt::format("{} ({})", label, preset)));
      }
    }
    fits.push_back(fit(architecture, "", by_architecture[architecture], options,
                       fmt::format("{} ({})", label, architecture)));
  }
  return fits;
}

// The fit a row is predicted with: its preset's, else its architecture's; null for neither.
const ArchitectureFit* fit_for(const std::vector<ArchitectureFit>& fits, const PreparedRow& row) {
  for (const ArchitectureFit& f : fits) {
    if (f.preset == row.hardware) return &f;
  }
  for (const ArchitectureFit& f : fits) {
    if (f.preset.empty() && f.architecture == row.architecture) return &f;
  }
  return nullptr;
}

// Relative errors of `rows` predicted with `fits` (the roofline for an architecture without one).
std::vector<double> errors_with(const std::vector<const PreparedRow*>& rows, const std::vector<ArchitectureFit>& fits,
                                int jobs, std::vector<std::string>* unfitted = nullptr) {
  std::vector<double> errors(rows.size(), 0);
  std::vector<bool> ok(rows.size(), false);
  std::set<std::string> missing;
  parallel_for(rows.size(), jobs, [&](std::size_t i) {
    PredictionSettings settings;
    if (const ArchitectureFit* found = fit_for(fits, *rows[i])) settings.efficiencies = found->values;
    else settings.cost_model = models::CostModel::roofline;
    const RowResult r = predict_row(*rows[i], settings);
    if (r.covered()) {
      errors[i] = r.error();
      ok[i] = true;
    }
  });
  for (const PreparedRow* row : rows) {
    if (!fit_for(fits, *row)) missing.insert(row->architecture);
  }
  if (unfitted) unfitted->assign(missing.begin(), missing.end());
  std::vector<double> kept;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (ok[i]) kept.push_back(errors[i]);
  }
  return kept;
}

}  // namespace

Calibration calibrate(const MeasuredTable& table, const CalibrationOptions& options) {
  if (options.jobs < 1) throw InputError(fmt::format("--jobs: {} (expected 1 or more)", options.jobs));
  if (options.max_evaluations < 1) {
    throw InputError(fmt::format("--evaluations: {} (expected 1 or more)", options.max_evaluations));
  }
  Calibration c;
  c.path = table.path;
  std::vector<PreparedRow> prepared(table.rows.size());
  parallel_for(table.rows.size(), options.jobs, [&](std::size_t i) { prepared[i] = prepare_row(table.rows[i], table.path); });
  // The rows that count and that the roofline predicts (a row it cannot run gives nothing to fit).
  std::vector<const PreparedRow*> rows;
  std::vector<const PreparedRow*> all;
  for (const PreparedRow& p : prepared) {
    if (p.scenario && p.result.excluded.empty() && !p.architecture.empty()) all.push_back(&p);
  }
  PredictionSettings roofline;
  roofline.cost_model = models::CostModel::roofline;
  const std::vector<RowResult> at_roofline = predict_all(all, roofline, options.jobs);
  std::vector<double> roofline_errors;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (!at_roofline[i].covered()) continue;
    rows.push_back(all[i]);
    roofline_errors.push_back(at_roofline[i].error());
  }
  if (rows.empty()) throw InputError(fmt::format("{}: no row to fit on (zbsim validate lists why)", table.path));
  c.rows = static_cast<int>(rows.size());
  c.roofline = summarize_errors(roofline_errors);
  c.fits = fit_architectures(rows, options, "all sources");
  c.fitted = summarize_errors(errors_with(rows, c.fits, options.jobs));

  std::set<std::string> sources;
  for (const PreparedRow* row : rows) sources.insert(row->result.source);
  std::vector<double> pooled;
  for (const std::string& source : sources) {
    std::vector<const PreparedRow*> training, held_out;
    for (const PreparedRow* row : rows) (row->result.source == source ? held_out : training).push_back(row);
    HeldOutSource fold;
    fold.source = source;
    if (!training.empty()) fold.fits = fit_architectures(training, options, "without " + source);
    const std::vector<double> errors = errors_with(held_out, fold.fits, options.jobs, &fold.unfitted);
    fold.errors = summarize_errors(errors);
    pooled.insert(pooled.end(), errors.begin(), errors.end());
    c.folds.push_back(std::move(fold));
  }
  c.cross_validated = summarize_errors(pooled);
  return c;
}

namespace {

std::string scope_of(const ArchitectureFit& f) { return f.preset.empty() ? f.architecture : f.preset; }

std::string efficiencies_text(const models::Efficiencies& e) {
  return fmt::format(
      "GEMM {:.3f}, attention {:.3f}, memory {:.3f}, kernel {:.1f} us, collectives {:.3f}, misaligned GEMM {:.3f}",
      e.gemm_sustained_fraction, e.attention_sustained_fraction, e.memory_sustained_fraction, e.kernel_overhead_us,
      e.collective_efficiency, e.misaligned_gemm_fraction);
}

std::string summary_text(const ErrorSummary& s) {
  return fmt::format("n {:>3}  median |e| {:>5.1f}%  p90 |e| {:>5.1f}%  median e {:>+6.1f}%", s.n, 100 * s.median_abs,
                     100 * s.p90_abs, 100 * s.median);
}

}  // namespace

std::string calibration_table(const Calibration& c) {
  std::string t = fmt::format("zbsim calibrate-model: {} ({} rows that count and are predicted)\n\n", c.path, c.rows);
  t += "fitted on every source (source-balanced mean |log(predicted / measured)|):\n";
  for (const ArchitectureFit& f : c.fits) {
    t += fmt::format("  {:<14} {}  ({} rows of {}; loss {:.4f} after {} evaluations)\n", scope_of(f),
                     efficiencies_text(f.values), f.rows.size(), fmt::join(f.sources, ", "), f.loss, f.evaluations);
    if (!f.not_informed.empty()) {
      t += fmt::format("  {:<14} not informed by these rows (the roofline's value): {}\n", "",
                       fmt::join(f.not_informed, ", "));
    }
  }
  t += fmt::format("\nerror of tokens/s per GPU, e = predicted / measured - 1:\n");
  t += fmt::format("  roofline (uncalibrated)       {}\n", summary_text(c.roofline));
  t += fmt::format("  fitted, in sample             {}\n", summary_text(c.fitted));
  t += fmt::format("  leave-one-source-out, pooled  {}\n", summary_text(c.cross_validated));
  t += "\nleave-one-source-out: each source predicted with efficiencies fitted on the others\n";
  for (const HeldOutSource& fold : c.folds) {
    t += fmt::format("  {:<6} {}\n", fold.source, summary_text(fold.errors));
    for (const ArchitectureFit& f : fold.fits) {
      t += fmt::format("         fitted without it: {:<14} {}\n", scope_of(f), efficiencies_text(f.values));
    }
    for (const std::string& a : fold.unfitted) {
      t += fmt::format("         no other source has {} rows: predicted with the roofline\n", a.empty() ? "?" : a);
    }
  }
  return t;
}

nlohmann::json calibration_file(const Calibration& c, const ArchitectureFit& f) {
  nlohmann::json file = {{"architecture", f.architecture},
          {"fitted_on", fmt::format("{} rows of {} ({}): {}", f.rows.size(), c.path, fmt::join(f.sources, ", "),
                                    fmt::join(f.rows, " "))},
          {"cross_validation",
           fmt::format("leave-one-source-out over all {} rows: median |e| {:.1f}%, p90 |e| {:.1f}% (in sample: median "
                       "{:.1f}%, p90 {:.1f}%; roofline: median {:.1f}%)",
                       c.cross_validated.n, 100 * c.cross_validated.median_abs, 100 * c.cross_validated.p90_abs,
                       100 * c.fitted.median_abs, 100 * c.fitted.p90_abs, 100 * c.roofline.median_abs)},
          {"command", fmt::format("zbsim calibrate-model --measured {}", c.path)}};
  models::write_efficiencies(f.values, file);
  if (!f.preset.empty()) file["preset"] = f.preset;
  file["not_informed"] = f.not_informed;
  return file;
}

nlohmann::json calibration_json(const Calibration& c) {
  nlohmann::json out;
  out["measured"] = c.path;
  out["rows"] = c.rows;
  out["roofline"] = error_summary_json(c.roofline);
  out["fitted"] = error_summary_json(c.fitted);
  out["cross_validated"] = error_summary_json(c.cross_validated);
  out["architectures"] = nlohmann::json::array();
  for (const ArchitectureFit& f : c.fits) {
    out["architectures"].push_back({{"architecture", f.architecture}, {"preset", f.preset}, {"loss", f.loss},
                                    {"evaluations", f.evaluations},
                                    {"calibration", calibration_file(c, f)}});
  }
  out["folds"] = nlohmann::json::array();
  for (const HeldOutSource& fold : c.folds) {
    nlohmann::json fits = nlohmann::json::array();
    for (const ArchitectureFit& f : fold.fits) {
      nlohmann::json fit{{"architecture", f.architecture}, {"preset", f.preset}};
      models::write_efficiencies(f.values, fit);
      fits.push_back(fit);
    }
    out["folds"].push_back({{"held_out", fold.source}, {"errors", error_summary_json(fold.errors)}, {"fits", fits},
                            {"predicted_with_roofline", fold.unfitted}});
  }
  return out;
}

}  // namespace zb::validate
