// Any schedule file (text, JSON or PyTorch CSV, told by content) reads as a schedule or is an
// InputError; what reads is given its shape, validated, and evaluated when valid.
#include "sim/app/catalog/schedule_files.h"
#include "sim/core/evaluator.h"
#include "sim/core/validator.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return zb::fuzz::only_input_errors([&] {
    const zb::Schedule schedule = zb::catalog::parse_schedule_file(zb::fuzz::text(data, size), "fuzz");
    if (schedule.action_count() > zb::fuzz::kMaxActions) return;
    zb::ProblemSpec spec;
    spec.t_f = {1.0};
    spec.t_b = {1.5};
    spec.t_w = {0.5};
    spec.t_comm = {0.25};
    zb::catalog::apply_schedule_shape(schedule, spec, "fuzz");
    const zb::Problem problem = spec.build("fuzz");
    if (zb::check_schedule(problem, schedule).ok()) zb::evaluate(problem, schedule);
  });
}
