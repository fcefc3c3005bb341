// One table of the problem's fields: each field's scenario key, command-line flag and help, and
// how it is read (from a flag's text or a scenario's JSON value) and written. zbsim's and
// zbview's problem flags and the scenario reader and writer are all made from it, so a new field
// is one row here.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/problem_spec.h"

namespace zb {

struct ProblemField {
  enum class Kind { integer, numbers, number, placement, mem_limit, time_unit };

  std::string_view key;   // scenario JSON and sweep axes: "t_f"
  std::string_view flag;  // command line, without the dashes: "tf"
  std::string_view help;
  Kind kind;
  int ProblemSpec::*integer = nullptr;                  // Kind::integer
  std::vector<double> ProblemSpec::*numbers = nullptr;  // Kind::numbers
  double ProblemSpec::*number = nullptr;                // Kind::number

  // `context` names where the value came from ("--tf", "s.json: field 't_f'") in errors.
  void set_from_text(ProblemSpec& spec, std::string_view text, const std::string& context) const;
  void set_from_json(ProblemSpec& spec, const nlohmann::json& value, const std::string& context) const;
  // Writes the field into a scenario object; fields left unset (no t_bw, no limit, no bytes) are
  // left out.
  void write_json(const ProblemSpec& spec, nlohmann::json& out) const;
};

// In the order scenario files and --help list them: p, m, chunks, placement, t_f, t_b, t_w,
// t_bw, t_comm, t_a2a, overlap, a2a_overlap, comm_sm_share, mem_f, mem_b, mem_w, mem_limit, bytes_act, time_unit, t_opt,
// t_reduce_hop.
std::span<const ProblemField> problem_fields();

// By scenario key, or nullptr.
const ProblemField* find_problem_field(std::string_view key);

// "p, m, chunks, ..." for messages that list the known fields.
std::string problem_field_keys();

}  // namespace zb
