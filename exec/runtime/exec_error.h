// Runtime failures of the executor (a device, step and action are always named in the message).
#pragma once

#include "sim/support/error.h"

namespace zb::exec {

// A failure while a schedule runs: a kernel error, a mismatched message, a deadlock, an abort.
class ExecError : public zb::Error {
 public:
  using zb::Error::Error;
};

}  // namespace zb::exec
