// The one way from a model setup to a problem's costs: the problem's shape as the cost model's
// PipelineShape, the stage costs on it, and those costs written into the problem's fields.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "models/cost_model.h"
#include "models/model_setup.h"
#include "models/pipeline_shape.h"
#include "sim/core/problem.h"
#include "sim/core/problem_spec.h"

namespace zb::catalog {

// p, m, the stages' devices, the model copies and the all-reduce's hops of `problem`.
models::PipelineShape pipeline_shape(const Problem& problem);

// Fills the cost fields of `spec` (t_f, t_b, t_w, t_comm, mem_f, mem_b, mem_w, bytes_act,
// t_reduce_hop, t_opt, t_dp_reduce, time_unit = ms, and mem_limit = auto) for its p, chunks and
// placement, except the fields named in `explicit_fields`, which the user gave and which win. With
// one chunk per device the arrays are per device, and a scalar where all devices are equal.
// Returns the stage costs it used.
models::StageCosts apply_model_costs(const models::ModelSetup& setup, ProblemSpec& spec,
                                     const std::set<std::string>& explicit_fields, std::string_view source);

}  // namespace zb::catalog
