// A measured row's transformer: columns first, then what the row's notes state, then inferences,
// each inference flagged.
#include "sim/app/validate/row_model.h"

#include <fmt/format.h>

#include <cmath>
#include <regex>

#include "sim/app/validate/detail/row_cells.h"

namespace zb::validate {

namespace {

// Megatron-LM (and so NeMo and Megatron-DeepSpeed) pads the vocabulary to a multiple of
// --make-vocab-size-divisible-by (128 by default) times the tensor-parallel degree, so that each
// rank's slice of the embedding is aligned (megatron/training/tokenizer: _vocab_size_with_padding).
bool pads_vocabulary(std::string_view framework) {
  return framework.starts_with("nemo") || framework.starts_with("megatron");
}

int padded_vocabulary(int vocab, int tensor) {
  const int multiple = 128 * tensor;
  return (vocab + multiple - 1) / multiple * multiple;
}

// A whole number from the first capture of `pattern` in `text`, or 0.
double first_number(const std::string& text, const std::regex& pattern) {
  std::smatch match;
  return std::regex_search(text, match, pattern) ? std::stod(match[1].str()) : 0;
}

}  // namespace

int layers_from_size(double parameters, int hidden, int vocab, int pp) {
  const double h = hidden;
  const double layers = (parameters - static_cast<double>(vocab) * h) / (12 * h * h);
  const int step = std::max(pp, 1);
  return std::max(step, static_cast<int>(std::lround(layers / step)) * step);
}

RowModel row_model(const MeasuredRow& row, int tensor, std::string_view file) {
  RowModel m;
  const std::string& notes = row.cell("notes");
  const std::string& name = row.cell("model");
  const std::string& framework = row.cell("framework");
  const auto given = [&](std::string_view column) { return whole_cell(row, column, file).value_or(0); };
  m.hidden = given("hidden");
  m.vocab = given("vocab");
  m.seq_len = given("seq_len");
  m.heads = given("heads");
  m.layers = given("layers");
  const int pp = given("pp");
  if (m.heads == 0 && contains(notes, "all NHEADS=64")) {
    m.heads = 64;
    m.assumptions.push_back("heads 64 (the source's later remark: all NHEADS=64)");
  }
  if (m.layers == 0) {
    static const std::regex later_table(R"(NLAYERS=(\d+) for)");
    static const std::regex size(R"(Size (\d+(?:\.\d+)?)B)");
    if (const double stated = first_number(notes, later_table); stated > 0) {
      m.layers = static_cast<int>(stated);
      m.assumptions.push_back(fmt::format("layers {} (a later table of the source)", m.layers));
    } else if (const double billions = first_number(notes, size); billions > 0 && m.hidden > 0 && m.vocab > 0) {
      m.layers = layers_from_size(billions * 1e9, m.hidden, m.vocab, pp);
      m.assumptions.push_back(fmt::format("layers {} (from the size {}B and hidden {}, a multiple of pp)", m.layers,
                                          billions, m.hidden));
    }
  }
  if (m.layers == 0 || m.hidden == 0 || m.heads == 0 || m.vocab == 0 || m.seq_len == 0) {
    m.uncovered = "model shape not given (layers, hidden, heads, vocab and seq_len are needed)";
    return m;
  }
  m.kv_heads = given("kv_heads");
  if (m.kv_heads == 0) m.kv_heads = m.heads;
  m.ffn_hidden = given("ffn_hidden");
  if (m.ffn_hidden == 0) {
    m.ffn_hidden = 4 * m.hidden;
    // A mixture of experts without dense layers never uses it.
    if (given("moe_experts") == 0) m.assumptions.push_back("ffn_hidden 4h (not stated)");
  }

  // The family's variants. Llama and Qwen: SwiGLU, RMSNorm, no biases or dropout, RoPE, untied
  // output layer. GPT (Megatron), BLOOM and Nemotron: LayerNorm, biases, a tied output layer.
  // GPT-OSS (its config.json): SwiGLU experts, RMSNorm, RoPE and an untied output layer, but biases
  // on the attention's and the experts' linear layers.
  const bool gpt_oss = contains_nocase(name, "gpt oss") || contains_nocase(name, "gpt-oss");
  m.swiglu = contains(notes, "SwiGLU") || contains_nocase(name, "llama") || contains_nocase(name, "qwen") ||
             contains_nocase(name, "deepseek") || gpt_oss;
  const bool bloom = contains_nocase(name, "bloom") || contains(notes, "ALiBi");
  nlohmann::json& o = m.object;
  o["name"] = name;
  o["layers"] = m.layers;
  o["hidden"] = m.hidden;
  o["heads"] = m.heads;
  o["kv_heads"] = m.kv_heads;
  static const std::regex head_dim(R"(head_dim (\d+))");
  if (const double d = first_number(notes, head_dim); d > 0 && d * m.heads != m.hidden) o["head_dim"] = static_cast<int>(d);
  o["ffn_hidden"] = m.ffn_hidden;
  // "MLA (q_lora 1536; kv_lora 512; qk 128+64 rope; v 128)" (DeepSeek-V3): latent attention.
  if (contains(notes, "MLA")) {
    static const std::regex q_lora(R"(q_lora (\d+))"), kv_lora(R"(kv_lora (\d+))"), qk(R"(qk (\d+)\+(\d+) rope)"),
        v(R"(; v (\d+))");
    std::smatch widths;
    const double kvl = first_number(notes, kv_lora), dv = first_number(notes, v);
    if (kvl == 0 || dv == 0 || !std::regex_search(notes, widths, qk)) {
      m.uncovered = "multi-head latent attention (MLA) without its ranks and head widths";
      return m;
    }
    o["kv_lora_rank"] = static_cast<int>(kvl);
    o["q_lora_rank"] = static_cast<int>(first_number(notes, q_lora));
    o["head_dim"] = std::stoi(widths[1].str());
    o["rope_head_dim"] = std::stoi(widths[2].str());
    o["v_head_dim"] = static_cast<int>(dv);
    o.erase("kv_heads");
  }
  if (const int experts = given("moe_experts"); experts > 0) {
    if (given("moe_topk") == 0 || given("moe_ffn_hidden") == 0) {
      m.uncovered = "mixture of experts without moe_topk or moe_ffn_hidden";
      return m;
    }
    o["moe_experts"] = experts;
    o["moe_topk"] = given("moe_topk");
    o["moe_shared_experts"] = given("moe_shared_experts");
    o["moe_ffn_hidden"] = given("moe_ffn_hidden");
    // "first 3 layers dense with FFN 18432" (DeepSeek-V3)
    static const std::regex dense(R"(first (\d+) layers dense)");
    if (const double k = first_number(notes, dense); k > 0) o["moe_dense_layers"] = static_cast<int>(k);
    if (contains(notes, "tokendrop")) m.assumptions.push_back("token-dropping routing costed as balanced and dropless");
  }
  // "alternating 128-token sliding-window / full attention" (GPT-OSS): half the layers windowed.
  static const std::regex window(R"((\d+)-token sliding-window)");
  if (const double w = first_number(notes, window); w > 0) {
    o["sliding_window"] = static_cast<int>(w);
    o["sliding_window_share"] = contains(notes, "alternating") ? 0.5 : 1.0;
  } else if (contains(notes, "sliding-window")) {
    m.uncovered = "sliding-window attention without its window size";
    return m;
  }
  o["vocab"] = pads_vocabulary(framework) ? padded_vocabulary(m.vocab, tensor) : m.vocab;
  o["seq_len"] = m.seq_len;
  o["mlp"] = m.swiglu ? "swiglu" : "gelu";
  o["norm"] = m.swiglu ? "rmsnorm" : "layernorm";
  o["bias"] = !m.swiglu || gpt_oss;
  o["dropout"] = !m.swiglu && !bloom;
  o["positions"] = m.swiglu || bloom ? "rope" : "learned";
  o["tied_embeddings"] = !m.swiglu;
  if (contains(notes, "squared-ReLU")) m.assumptions.push_back("squared-ReLU MLP costed as GeLU (two GEMMs, no gate)");
  if (bloom) m.assumptions.push_back("BLOOM: ALiBi costed as RoPE (no position table), no dropout");
  return m;
}

}  // namespace zb::validate
