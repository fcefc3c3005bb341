// Formatting of result rows: an aligned table for people, JSON and CSV for scripts.
#include "sim/app/catalog/result_table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string_view>

#include "sim/app/catalog/result_json.h"
#include "sim/support/csv_field.h"
#include "sim/support/error.h"

namespace zb::cli {

Format parse_format(const std::string& text) {
  if (text == "table") return Format::table;
  if (text == "json") return Format::json;
  if (text == "csv") return Format::csv;
  throw InputError(fmt::format("--format: unknown format '{}' (expected table, json or csv)", text));
}

namespace {

double max_of(const std::vector<double>& values) {
  return values.empty() ? 0.0 : *std::max_element(values.begin(), values.end());
}

// Rounding can leave a zero bubble at -1e-16; the table should not print "-0.00%".
double percent(double fraction) {
  const double value = 100 * fraction;
  return std::abs(value) < 5e-3 ? 0.0 : value;
}

std::string join(const std::vector<double>& values) { return fmt::format("{}", fmt::join(values, ";")); }

// The steady-state step times (catalog/engines.h) and a model-driven row's throughput
// (catalog/throughput_extras.h) are columns of the table (the throughput in the normal mode; JSON
// and CSV have both modes); other extras are lines.
constexpr std::string_view kStepTimeKeys[] = {"step_time", "step_time_sync", "step_time_post_validation"};
constexpr std::string_view kThroughputColumns[] = {"samples_per_s_per_gpu", "samples_per_s_per_gpu_sync",
                                                   "samples_per_s_per_gpu_post_validation", "tokens_per_s", "mfu",
                                                   "memory_GB"};

bool is_column(const std::string& key) {
  const auto listed = [&](const auto& keys) {
    return std::find(std::begin(keys), std::end(keys), key) != std::end(keys);
  };
  return listed(kStepTimeKeys) || listed(kThroughputColumns) || key.starts_with("tokens_per_s") ||
         key.starts_with("mfu");
}

std::string describe(const ProblemSpec& spec) {
  auto list = [](const std::vector<double>& values) {
    return values.size() == 1 ? fmt::format("{}", values[0]) : fmt::format("[{}]", fmt::join(values, ","));
  };
  std::string text = fmt::format("p={} m={} chunks={}  t_f={} t_b={} t_w={}", spec.devices, spec.microbatches,
                                 spec.chunks, list(spec.t_f), list(spec.t_b), list(spec.t_w));
  if (!spec.t_bw.empty()) text += fmt::format(" t_bw={}", list(spec.t_bw));
  text += fmt::format(" t_comm={}", list(spec.t_comm));
  if (!spec.t_a2a.empty()) text += fmt::format(" t_a2a={}", list(spec.t_a2a));
  if (spec.overlap > 0) text += fmt::format(" overlap={}", spec.overlap);
  if (!spec.t_offload.empty()) {
    text += fmt::format(" t_offload={}", list(spec.t_offload));
    // PipeOffload's k per device (offload_ratio, problem.h), where the lists line up.
    const std::size_t n = std::max({spec.t_offload.size(), spec.t_f.size(), spec.t_b.size(), spec.t_w.size()});
    const auto at = [n](const std::vector<double>& values, std::size_t i) {
      return values.size() == 1 ? values[0] : values.size() == n ? values[i] : std::nan("");
    };
    std::vector<double> k;
    for (std::size_t i = 0; i < n; ++i) {
      k.push_back(offload_ratio(at(spec.t_offload, i), at(spec.t_f, i), at(spec.t_b, i), at(spec.t_w, i)));
    }
    if (std::all_of(k.begin(), k.end(), [](double value) { return std::isfinite(value); })) {
      text += k.size() == 1 ? fmt::format(" k={:.3g}", k[0]) : fmt::format(" k=[{:.3g}]", fmt::join(k, ","));
    }
  }
  text += fmt::format(" ({})  mem limit {}", time_unit_name(spec.time_unit),
                      spec.mem_limit ? spec.mem_limit->to_string() : "none");
  return text;
}

// Static memory per device and each row's total (static + activation peak), in GB.
std::string memory_lines(const std::vector<catalog::ResultRow>& rows, const ModelMemory& memory,
                         std::size_t name_width) {
  std::string out = fmt::format("memory per GPU (GB; device {:g}, {:g} reserved)\n", memory.device_GB, memory.reserved_GB);
  const auto line = [&](std::string_view label, const std::vector<double>& values) {
    std::string text = fmt::format("  {:<{}}", label, name_width);
    for (const double value : values) text += fmt::format(" {:>7.2f}", value);
    return text + fmt::format("  max {:.2f}\n", max_of(values));
  };
  std::vector<double> params, grads, optimizer, gathered, total;
  for (const auto& device : memory.static_per_device) {
    params.push_back(device.parameters_GB);
    grads.push_back(device.gradients_GB);
    optimizer.push_back(device.optimizer_GB);
    gathered.push_back(device.gathered_GB);
    total.push_back(device.total_GB());
  }
  std::string header = fmt::format("  {:<{}}", "", name_width);
  for (std::size_t d = 0; d < total.size(); ++d) header += fmt::format(" {:>7}", fmt::format("d{}", d));
  out += header + "\n";
  out += line("parameters", params);
  out += line("gradients", grads);
  out += line("optimizer", optimizer);
  if (max_of(gathered) > 0) out += line("gathered", gathered);
  out += line("static", total);
  for (const catalog::ResultRow& row : rows) {
    if (!row.memory_per_device_GB.empty()) out += line(row.schedule + " total", row.memory_per_device_GB);
  }
  return out;
}

}  // namespace

std::string results_text(const ProblemSpec& spec, const std::vector<catalog::ResultRow>& rows, Format format,
                         const ModelMemory* memory) {
  if (format == Format::json) return catalog::results_json(spec, rows, memory).dump(2) + "\n";
  if (format == Format::csv) {
    std::string out = "schedule,status,chunks,makespan,span,work,bubble_rate,peak_memory_max,idle_max,peak_memory,idle";
    std::vector<std::string> extra_keys;
    for (const catalog::ResultRow& row : rows) {
      for (const auto& [key, value] : row.extras) {
        if (std::find(extra_keys.begin(), extra_keys.end(), key) == extra_keys.end()) extra_keys.push_back(key);
      }
    }
    for (const auto& key : extra_keys) out += "," + key;
    if (memory != nullptr) out += ",memory_per_device_GB";
    out += ",reason\n";
    for (const catalog::ResultRow& row : rows) {
      out += fmt::format("{},{},{}", csv_field(row.schedule), row.status, row.chunks);
      if (row.has_metrics) {
        const Metrics& m = row.metrics;
        out += fmt::format(",{},{},{},{},{},{},{},{}", m.makespan, m.span, m.work, m.bubble_rate, max_of(m.peak_memory),
                           max_of(m.idle), join(m.peak_memory), join(m.idle));
      } else {
        out += ",,,,,,,,";
      }
      for (const auto& key : extra_keys) {
        const auto it = std::find_if(row.extras.begin(), row.extras.end(), [&](const auto& e) { return e.first == key; });
        out += it == row.extras.end() ? std::string(",") : fmt::format(",{}", it->second);
      }
      if (memory != nullptr) out += "," + join(row.memory_per_device_GB);
      out += "," + csv_field(row.reason) + "\n";
    }
    return out;
  }
  std::string out = describe(spec) + "\n\n";
  std::size_t name_width = 10;  // schedule names from files can be long paths
  for (const catalog::ResultRow& row : rows) name_width = std::max(name_width, row.schedule.size());
  const auto has = [&](std::string_view key) {
    return std::any_of(rows.begin(), rows.end(), [&](const auto& row) { return catalog::row_extra(row, key).has_value(); });
  };
  const bool step_times = has("step_time");
  out += fmt::format("{:<{}} {:>6} {:>11} {:>11} {:>11} {:>8} {:>9} {:>11}", "schedule", name_width, "chunks",
                     "status", "makespan", "span", "bubble", "peak mem", "idle max");
  if (step_times) out += fmt::format(" {:>11} {:>11} {:>11}", "step time", "sync", "post-valid");
  const bool throughput = has("samples_per_s_per_gpu");
  if (throughput) {
    out += fmt::format(" {:>13} {:>9} {:>10} {:>11} {:>6} {:>7}", "samples/s/GPU", "sync", "post-valid", "tokens/s",
                       "MFU", "mem GB");
  }
  out += '\n';
  for (const catalog::ResultRow& row : rows) {
    out += fmt::format("{:<{}} {:>6} {:>11}", row.schedule, name_width, row.chunks, row.status);
    if (row.has_metrics) {
      const Metrics& m = row.metrics;
      // Peaks in bytes (model-driven and paper scenarios) print whole, not as 4.85e+06.
      out += fmt::format(" {:>11.4f} {:>11.4f} {:>7.2f}% {:>9.10g} {:>11.4f}", m.makespan, m.span, percent(m.bubble_rate),
                         max_of(m.peak_memory), max_of(m.idle));
      for (const std::string_view key : kStepTimeKeys) {
        if (const auto value = catalog::row_extra(row, key)) out += fmt::format(" {:>11.4f}", *value);
      }
      if (const auto samples = catalog::row_extra(row, "samples_per_s_per_gpu")) {
        out += fmt::format(" {:>13.4f} {:>9.4f} {:>10.4f} {:>11.1f} {:>5.1f}%", *samples,
                           catalog::row_extra(row, "samples_per_s_per_gpu_sync").value_or(0),
                           catalog::row_extra(row, "samples_per_s_per_gpu_post_validation").value_or(0),
                           catalog::row_extra(row, "tokens_per_s").value_or(0), 100 * catalog::row_extra(row, "mfu").value_or(0));
        if (const auto memory_GB = catalog::row_extra(row, "memory_GB")) out += fmt::format(" {:>7.2f}", *memory_GB);
      }
    }
    if (!row.reason.empty()) out += "  " + row.reason;
    out += '\n';
  }
  for (const catalog::ResultRow& row : rows) {
    for (const auto& [key, value] : row.extras) {
      if (!is_column(key)) out += fmt::format("{}: {} = {:.6g}\n", row.schedule, key, value);
    }
  }
  if (memory != nullptr) out += memory_lines(rows, *memory, name_width + 6);
  return out;
}

}  // namespace zb::cli
