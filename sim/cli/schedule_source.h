// Where a schedule comes from: a generator by name, or a file (text, JSON or PyTorch CSV).
#pragma once

#include <optional>
#include <string>

#include "sim/schedule/generator_registry.h"
#include "sim/schedule/problem_spec.h"
#include "sim/schedule/schedule.h"

namespace zb::cli {

// The problem a generator runs on. Generators fix their chunk count (single: 1; multi: the given
// v, or 2); when the costs were given per stage the problem cannot be rebuilt for another v, and
// `reason` says so (returns nullopt).
std::optional<ProblemSpec> spec_for_generator(const ProblemSpec& spec, const GeneratorInfo& info, std::string& reason);

// Reads a schedule file (text, JSON or PyTorch CSV, by content) and fills the shape (p, m, chunks,
// placement) of `spec` from it where the spec leaves it open; a shape or placement that
// contradicts the spec is an InputError naming both (catalog/schedule_files.h).
Schedule load_schedule_file(const std::string& path, ProblemSpec& spec);

}  // namespace zb::cli
