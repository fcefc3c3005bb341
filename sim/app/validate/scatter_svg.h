// The predicted-vs-measured scatter of a validation: tokens/s per GPU on log axes, the y = x line
// and a +-20% band, one colour per source.
#pragma once

#include <string>

#include "sim/app/validate/validation.h"

namespace zb::validate {

// Deterministic SVG text: the rows that count as filled dots, rows left out of the statistics as
// rings.
std::string validation_scatter_svg(const Validation& v);

}  // namespace zb::validate
