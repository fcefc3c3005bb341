// Small pieces every hand-written SVG in the project needs: escaping and round axis steps.
#pragma once

#include <string>
#include <string_view>

namespace zb {

// Text safe inside SVG/XML elements and attribute values.
std::string xml_escape(std::string_view text);

// A round step (1, 2 or 5 times a power of ten) giving about `target` intervals over `range`.
double round_axis_step(double range, int target);

}  // namespace zb
