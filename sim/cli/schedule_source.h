// Where a schedule comes from: a generator by name, or a file (text, JSON or PyTorch CSV).
#pragma once

#include <optional>
#include <string>

#include "generator_registry.h"
#include "problem_spec.h"
#include "schedule.h"

namespace zb::cli {

// The problem a generator runs on. Generators fix their chunk count (single: 1; multi: the given
// v, or 2); when the costs were given per stage the problem cannot be rebuilt for another v, and
// `reason` says so (returns nullopt).
std::optional<ProblemSpec> spec_for_generator(const ProblemSpec& spec, const GeneratorInfo& info, std::string& reason);

// Reads a schedule file (by extension: .csv PyTorch, .json ours, anything else the text form)
// and fills the shape (p, m, chunks, placement) of `spec` from it where the spec leaves it open;
// a shape that contradicts the spec is an InputError.
Schedule load_schedule_file(const std::string& path, ProblemSpec& spec);

}  // namespace zb::cli
