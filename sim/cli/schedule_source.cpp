// Generator problems with the right chunk count, and schedule files with their implied shape.
#include "schedule_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "atomic_file.h"
#include "error.h"
#include "pytorch_csv.h"

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

namespace {

void fill_shape(ProblemSpec& spec, const std::string& path, int devices, int microbatches, int chunks,
                std::optional<Placement> placement) {
  auto take = [&](int& field, int value, const char* name) {
    if (field == 0 || (field == 1 && std::string_view(name) == "chunks")) {
      field = value;
    } else if (field != value) {
      throw InputError(fmt::format("{}: the schedule has {}={} but the problem says {}", path, name, value, field));
    }
  };
  take(spec.devices, devices, "p");
  take(spec.microbatches, microbatches, "m");
  take(spec.chunks, chunks, "chunks");
  if (placement && !spec.placement) spec.placement = placement;
}

}  // namespace

Schedule load_schedule_file(const std::string& path, ProblemSpec& spec) {
  const std::string text = read_file(path);
  if (path.ends_with(".csv")) {
    ImportedSchedule imported = parse_pytorch_csv(text, path);
    fill_shape(spec, path, imported.devices, imported.microbatches, imported.chunks, imported.placement);
    return std::move(imported.schedule);
  }
  Schedule schedule;
  if (path.ends_with(".json")) {
    try {
      schedule = schedule_from_json(nlohmann::json::parse(text), path);
    } catch (const nlohmann::json::parse_error& e) {
      throw InputError(fmt::format("{}: malformed JSON: {}", path, e.what()));
    }
  } else {
    schedule = parse_schedule_text(text, path);
  }
  int microbatches = 0;
  int chunks = 1;
  for (const auto& list : schedule.devices) {
    for (const Action& action : list) {
      microbatches = std::max(microbatches, action.microbatch + 1);
      chunks = std::max(chunks, action.chunk + 1);
    }
  }
  fill_shape(spec, path, schedule.device_count(), microbatches, chunks, std::nullopt);
  if (schedule.name.empty()) schedule.name = path;
  return schedule;
}

}  // namespace zb::cli
