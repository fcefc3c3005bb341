// The interface of libzbsim_cbc.so, the CBC backend of zb-ilp (ilp_cbc.cpp): loaded
// (module_loader.h) only when a solve needs CBC, so that the command line starts without COIN-OR's
// libraries.
#pragma once

#include <string>

#include "sim/support/module_loader.h"
#include "sim/solver/detail/ilp_model.h"
#include "sim/solver/ilp_solver.h"

namespace zb {

inline constexpr const char* kCbcModuleFile = "zbsim_cbc";  // lib....so
inline constexpr const char* kCbcModuleName = "cbc";

struct CbcModule {
  ModuleHeader header;
  // Solves `model` in this process, CBC aiming at `time_limit_s` of wall clock. False with the
  // message in `error` when CBC threw (no exception leaves the module).
  bool (*solve)(const IlpModel& model, double time_limit_s, const MipSettings& settings, MipOutcome& outcome,
                std::string& error);
};

}  // namespace zb
