// The measured tokens/s/GPU of a row, and whether it is a target of the statistics.
#include "sim/app/validate/measured_target.h"

#include <fmt/format.h>

#include <array>
#include <regex>

#include "sim/app/validate/detail/row_cells.h"
#include "sim/support/error.h"

namespace zb::validate {

double flops_per_token_sc21(const RowModel& m) {
  const double L = m.layers, h = m.hidden, s = m.seq_len, V = m.vocab;
  return 96 * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
}

double flops_per_token_megatron(const RowModel& m) {
  const double L = m.layers, h = m.hidden, s = m.seq_len, V = m.vocab;
  const double kv_fraction = static_cast<double>(m.kv_heads) / m.heads;
  const double gated = m.swiglu ? 1.5 : 1.0;
  return 12 * L * h * h * ((1 + kv_fraction + s / h) + (m.ffn_hidden / h) * gated + V / (2 * L * h));
}

double flops_per_token_nemo(const RowModel& m) {
  const double L = m.layers, h = m.hidden, s = m.seq_len, V = m.vocab;
  const double kv = static_cast<double>(m.kv_heads) / m.heads * h;
  const double attention = 2 * h * h + 2 * h * kv;  // Q and output projection, K and V
  const double mlp = (m.swiglu ? 3 : 2) * h * m.ffn_hidden;
  return 6 * L * (attention + mlp) + 6 * h * V + 12 * L * h * s;
}

namespace {

// The FLOP formula each source of tests/data/measured/README.md used for its TFLOP/s column
// (its caveat 2; checked there against the rows that give both TFLOP/s and tokens/s).
struct SourceFormula {
  std::string_view source;
  std::string_view name;
  double (*flops_per_token)(const RowModel&);
};
constexpr std::array<SourceFormula, 7> kFormulas = {{
    {"S2b", "SC21 Eq. 3", flops_per_token_sc21},
    {"S5a", "SC21 Eq. 3 (BLOOM's 4*2 coefficient)", flops_per_token_sc21},
    {"S5b", "SC21 Eq. 3 (BLOOM's 4*2 coefficient)", flops_per_token_sc21},
    {"S2a", "Megatron-LM model FLOPs", flops_per_token_megatron},
    {"S2c", "Megatron-LM model FLOPs", flops_per_token_megatron},
    {"S1b", "NeMo model FLOPs", flops_per_token_nemo},
    {"S1c", "NeMo model FLOPs", flops_per_token_nemo},
}};

// Rows the table itself marks: a re-print, a second report of one run, a known-bad run, numbers
// that look swapped (README caveats 7 and 8). Matched on the notes' wording.
std::string exclusion(const std::string& notes) {
  static const std::regex reprint(R"(same configuration and values as (\w+))");
  static const std::regex same_run(R"(same [^;]*run as (\w+))");
  std::smatch match;
  if (std::regex_search(notes, match, reprint)) return fmt::format("re-prints {}", match[1].str());
  if (std::regex_search(notes, match, same_run)) return fmt::format("the run of {} again", match[1].str());
  if (contains(notes, "not a validation target")) return "a known-bad run (not a validation target)";
  if (contains(notes, "look swapped")) return "its step time and TFLOP/s look swapped";
  return "";
}

}  // namespace

MeasuredTarget measured_target(const MeasuredRow& row, const RowModel& model, std::string_view file) {
  MeasuredTarget target;
  target.excluded = exclusion(row.cell("notes"));
  if (const auto tokens = number_cell(row, "tokens_per_s_per_gpu", file); tokens && *tokens > 0) {
    target.tokens_per_s_per_gpu = tokens;
    target.how = "tokens_per_s_per_gpu";
    return target;
  }
  const auto step = number_cell(row, "step_time_s", file);
  const auto gbs = whole_cell(row, "gbs", file);
  const auto gpus = whole_cell(row, "gpus", file);
  if (step && *step > 0 && gbs && gpus && *gpus > 0 && model.seq_len > 0) {
    target.tokens_per_s_per_gpu = static_cast<double>(*gbs) * model.seq_len / (*step * *gpus);
    target.how = "gbs x seq_len / (step_time_s x gpus)";
    return target;
  }
  const auto tflops = number_cell(row, "model_tflops_per_gpu", file);
  if (!tflops || *tflops <= 0) {
    target.missing = "no tokens/s, step time or TFLOP/s";
    return target;
  }
  const std::string& source = row.cell("source");
  const auto formula = std::find_if(kFormulas.begin(), kFormulas.end(), [&](const SourceFormula& f) { return f.source == source; });
  if (formula == kFormulas.end() || model.layers == 0) {
    target.missing = fmt::format("only TFLOP/s, and no FLOP formula is known for source '{}'", excerpt(source));
    return target;
  }
  target.tokens_per_s_per_gpu = *tflops * 1e12 / formula->flops_per_token(model);
  target.how = fmt::format("TFLOP/s / FLOPs per token ({})", formula->name);
  return target;
}

}  // namespace zb::validate
