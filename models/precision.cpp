// The "precision" field.
#include "models/precision.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "models/detail/json_fields.h"
#include "models/errors.h"

namespace zb::models {

std::string_view precision_name(Precision precision) {
  switch (precision) {
    case Precision::bf16: return "bf16";
    case Precision::fp8: return "fp8";
    case Precision::fp8_current: return "fp8-cs";
    case Precision::fp8_rowwise: return "fp8-rowwise";
  }
  return "?";
}

Precision precision_from_json(const nlohmann::json& scenario, std::string_view source) {
  const std::string text = string_field_or(scenario, "precision", source, "bf16");
  if (text == "bf16" || text == "fp16") return Precision::bf16;
  if (text == "fp8") return Precision::fp8;
  if (text == "fp8-cs") return Precision::fp8_current;
  if (text == "fp8-rowwise") return Precision::fp8_rowwise;
  throw InputError(fmt::format("{}: field 'precision' is \"{}\": expected bf16, fp16, fp8, fp8-cs or fp8-rowwise", source,
                               excerpt(text)));
}

}  // namespace zb::models
