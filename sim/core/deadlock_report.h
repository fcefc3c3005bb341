// The device x step grid that explains where a schedule got stuck.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb {

// position[d]: index of the next action device d could not run (== size when it finished).
// Prints a window of the grid with the stuck action bracketed, "<-- here" and what it waits for.
std::string deadlock_report(const Problem& problem, const Schedule& schedule,
                            const std::vector<std::size_t>& position);

}  // namespace zb
