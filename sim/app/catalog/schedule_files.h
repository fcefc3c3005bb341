// Reading schedule files: our text form, our JSON form and PyTorch's pipeline CSV, told apart by
// content, with the shape (p, m, chunks, placement) they carry. The one reader zbsim, zbview and
// zbexec use.
#pragma once

#include <string>
#include <string_view>

#include "sim/core/problem_spec.h"
#include "sim/core/schedule.h"

namespace zb::catalog {

// JSON when the first non-blank character is '{'; PyTorch CSV when the first line starts with a
// cell such as "0F0", "(0F7;7B3)OVERLAP_F_B" or an empty cell; our text form otherwise. The
// schedule's placement and chunks are set where the file states them (a text header, JSON
// fields; a PyTorch CSV always implies both). Throws InputError naming the file. `note`, when
// given, receives what the user should know about the file beyond its schedule (what a PyTorch
// compute_comms CSV held beside compute), or "".
Schedule parse_schedule_file(std::string_view text, const std::string& source, std::string* note = nullptr);
Schedule read_schedule_file(const std::string& path, std::string* note = nullptr);

// Fills the shape of `spec` from the schedule where the spec leaves it open (p, m unset; chunks
// 1; no placement). A shape or placement that contradicts the spec is an InputError naming both.
void apply_schedule_shape(const Schedule& schedule, ProblemSpec& spec, std::string_view source);

// read_schedule_file, then apply_schedule_shape onto `spec`.
Schedule load_schedule_file(const std::string& path, ProblemSpec& spec, std::string* note = nullptr);

}  // namespace zb::catalog
