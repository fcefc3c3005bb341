// Without COIN-OR CBC: zb-ilp is unavailable (the heuristic still builds).
#include "sim/schedule/error.h"
#include "sim/solver/ilp_model.h"
#include "sim/solver/ilp_solver.h"

namespace zb {

bool ilp_available() { return false; }

MipOutcome solve_mip(const IlpModel&, const MipSettings&) {
  throw Error("zb-ilp: this build has no COIN-OR CBC (Debian: coinor-libcbc-dev)");
}

}  // namespace zb
