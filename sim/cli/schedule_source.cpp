// Generator problems with the right chunk count, and schedule files with their implied shape.
#include "sim/cli/schedule_source.h"

#include <fmt/format.h>

#include "sim/catalog/schedule_files.h"

namespace zb::cli {

std::optional<ProblemSpec> spec_for_generator(const ProblemSpec& spec, const GeneratorInfo& info, std::string& reason) {
  int chunks = spec.chunks;
  if (info.chunks == ChunkSupport::single) chunks = 1;
  if (info.chunks == ChunkSupport::multi && chunks < 2) chunks = 2;
  if (chunks == spec.chunks) return spec;
  if (!spec.chunk_independent()) {
    reason = fmt::format("needs chunks={}, but the costs are given per stage for chunks={}", chunks, spec.chunks);
    return std::nullopt;
  }
  return spec.with_chunks(chunks);
}

Schedule load_schedule_file(const std::string& path, ProblemSpec& spec) {
  Schedule schedule = catalog::read_schedule_file(path);
  catalog::apply_schedule_shape(schedule, spec, path);
  return schedule;
}

}  // namespace zb::cli
