// The transformer a measured row trained, as a scenario's inline "model" object: the shape from
// the columns (or, where a source left it out, from its notes or its model size), the family's
// variants (MLP, norm, biases, positions, embeddings) from the model name, the notes and the
// framework, the vocabulary padded as the framework pads it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sim/app/validate/measured_csv.h"

namespace zb::validate {

struct RowModel {
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  int ffn_hidden = 0;
  int vocab = 0;  // as the row gives it (before padding)
  int seq_len = 0;
  bool swiglu = false;
  nlohmann::json object;                 // the scenario's "model" (vocabulary padded)
  std::vector<std::string> assumptions;  // what was not in the row's columns
  std::string uncovered;                 // why the row cannot be described ("" when it can)
};

// `tensor` is the row's tp (the padding multiple depends on it); `file` names the table in errors.
RowModel row_model(const MeasuredRow& row, int tensor, std::string_view file);

// The layers of a model given only by its size in parameters (BLOOM's topology search printed
// "Size 200B" but not NLAYERS, which its authors "tweaked to fit PP"): the multiple of `pp`
// nearest to (size - V h) / (12 h^2), the layers a GPT block of 12 h^2 parameters gives.
int layers_from_size(double parameters, int hidden, int vocab, int pp);

}  // namespace zb::validate
