// The flags of the backends other than cpu, as plain values (today: CUDA's --devices, --precision,
// --sm-partition); zbexec's command line fills them (exec/cli/backends.cpp).
#pragma once

#include <string>

namespace zb::exec {

struct BackendFlags {
  std::string devices;  // empty: cuda:0..p-1 (multi-process: the local rank's GPU)
  std::string precision = "fp32";
  std::string sm_partition = "green";
};

}  // namespace zb::exec
