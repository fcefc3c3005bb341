// The registry of schedule generators and the checks every generator call goes through.
#include "sim/core/generators/generator_registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/core/offload_pass.h"
#include "sim/core/pass_time.h"
#include "sim/support/error.h"
#include "sim/core/generators/generators.h"

namespace zb {

void GeneratorRegistry::add(GeneratorInfo info) {
  for (auto& existing : generators_) {
    if (existing.name == info.name) {
      existing = std::move(info);
      return;
    }
  }
  generators_.push_back(std::move(info));
}

const GeneratorInfo* GeneratorRegistry::find(std::string_view name) const {
  for (const auto& info : generators_) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

const GeneratorInfo& GeneratorRegistry::get(std::string_view name) const {
  if (const auto* info = find(name)) return *info;
  throw InputError(fmt::format("unknown schedule '{}' (known: {})", name, fmt::join(names(), ", ")));
}

std::vector<std::string> GeneratorRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& info : generators_) out.push_back(info.name);
  return out;
}

namespace {

// PO-H and PO-F: GIS-H's order (groups of ceil(p/2)) with the offload pass on its first chunks.
Schedule pipe_offload(const Problem& problem, int offload_chunks, std::string_view name) {
  return with_offload(problem, make_group_interleaved(problem, (problem.devices + 1) / 2, name), offload_chunks, name);
}

}  // namespace

GeneratorRegistry GeneratorRegistry::with_builtins() {
  GeneratorRegistry registry;
  registry.add({"gpipe", "all forwards, then all fused backwards (memory m*M_B)", ChunkSupport::single, false,
                make_gpipe});
  registry.add({"1f1b", "one forward one backward, fused backward (memory p*M_B)", ChunkSupport::single, false,
                make_1f1b});
  registry.add({"1f1b-i", "Megatron interleaved 1F1B, --chunks >= 2 (m not a multiple of p: PyTorch's flexible rounds)",
                ChunkSupport::multi, false, make_1f1b_interleaved});
  registry.add({"1f1b-i-a2a",
                "interleaved 1F1B with Megatron's EP overlap (overlap_moe_expert_parallel_comm): one more warm-up F, "
                "then each F and the BW after it as one overlapped block that hides their all-to-all, --chunks >= 2",
                ChunkSupport::multi, false, make_1f1b_interleaved_ep_overlap});
  registry.add({"zb-i", "interleaved zero bubble (PyTorch's ScheduleInterleavedZeroBubble), --chunks >= 2, W deferred",
                ChunkSupport::multi, false, make_zb_interleaved});
  registry.add({"gis",
                "PipeOffload's group-interleaved schedule: interleaved, B/W split, microbatches in groups of p; "
                "interleaved 1F1B's bubble at 1F1B's memory (p*M_B), --chunks >= 2",
                ChunkSupport::multi, false, [](const Problem& problem) {
                  return make_group_interleaved(problem, problem.devices, "gis");
                }});
  registry.add({"gis-h",
                "group-interleaved with groups of ceil(p/2): about half of interleaved 1F1B's memory for a little "
                "more bubble, --chunks >= 2",
                ChunkSupport::multi, false, [](const Problem& problem) {
                  return make_group_interleaved(problem, (problem.devices + 1) / 2, "gis-h");
                }});
  registry.add({"po-h",
                "PipeOffload PO-H: gis-h's order with the activations of the first ceil(v/2) chunks offloaded to "
                "host memory where the copies pay (needs --t-offload), --chunks >= 2",
                ChunkSupport::multi, false, [](const Problem& problem) {
                  return pipe_offload(problem, (problem.chunks + 1) / 2, "po-h");
                }});
  registry.add({"po-f",
                "PipeOffload PO-F: as po-h, every chunk's activations offloaded where the copies pay (needs "
                "--t-offload), --chunks >= 2",
                ChunkSupport::multi, false, [](const Problem& problem) {
                  return pipe_offload(problem, problem.chunks, "po-f");
                }});
  registry.add({"zb-h1", "zero bubble H1: B/W split, W deferred (memory p*M_B)", ChunkSupport::single, false,
                make_zb_h1});
  registry.add({"zb-h2", "zero bubble H2: deeper warm-up, W deferred (memory (2p-1)*M_B)", ChunkSupport::single,
                false, make_zb_h2});
  registry.add({"zb-v-h", "handcrafted ZB-V: 2 chunks per device in a V, zero bubble at equal costs (memory p*M_B)",
                ChunkSupport::multi, false, make_zb_v_handcrafted, false, Placement::vshape});
  registry.add({"dualpipe-v",
                "DualPipeV: V placement, F of one chunk overlapped with BW of the other (--overlap, --t-a2a), m >= 2p "
                "(memory p*M_B + M_B/2)",
                ChunkSupport::multi, false, make_dualpipe_v, false, Placement::vshape});
  registry.add({"dualpipe",
                "DualPipe: two model copies (2x parameter memory) on p devices, m/2 microbatches each way, F of one "
                "direction overlapped with BW of the other; p even, m even >= 2p (memory p*M_B + M_B)",
                ChunkSupport::multi, false, make_dualpipe, false, Placement::bidirectional});
  return registry;
}

Schedule generate(const GeneratorRegistry& registry, std::string_view name, const Problem& problem) {
  const GeneratorInfo& info = registry.get(name);
  if (info.chunks == ChunkSupport::single && problem.chunks != 1) {
    throw InputError(fmt::format("{}: runs one chunk per device, got chunks={}", name, problem.chunks));
  }
  if (info.chunks == ChunkSupport::multi && problem.chunks < 2) {
    throw InputError(fmt::format("{}: needs --chunks >= 2, got chunks={}", name, problem.chunks));
  }
  // Only a generator made for it knows that each microbatch runs through one of the two copies.
  if (problem.placement == Placement::bidirectional && info.placement != Placement::bidirectional) {
    throw InputError(fmt::format("{}: placement bidirectional (two model copies, half the microbatches each way) is "
                                 "run by dualpipe only",
                                 name));
  }
  Schedule schedule = problem.t_a2a.empty() ? info.make(problem) : info.make(with_all_to_all_in_compute(problem));
  schedule.name = info.name;
  schedule.placement = problem.placement;
  schedule.chunks = problem.chunks;
  return schedule;
}

}  // namespace zb
