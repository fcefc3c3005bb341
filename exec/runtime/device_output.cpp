// What one device's worker produces in a run, and its wire form for gathering it at device 0.
#include "exec/runtime/detail/device_output.h"

#include <fmt/format.h>

#include <cmath>

#include "exec/runtime/exec_error.h"

namespace zb::exec {

namespace {

class Decoder {
 public:
  explicit Decoder(const std::vector<double>& values) : values_(values) {}
  double next() {
    if (at_ >= values_.size()) throw ExecError("gathered device output is truncated");
    return values_[at_++];
  }
  std::size_t count() {
    const double value = next();
    if (!(value >= 0) || value != std::floor(value)) {
      throw ExecError(fmt::format("gathered device output: {} is not a count", value));
    }
    return static_cast<std::size_t>(value);
  }
  int integer() { return static_cast<int>(next()); }
  bool done() const { return at_ == values_.size(); }

 private:
  const std::vector<double>& values_;
  std::size_t at_ = 0;
};

}  // namespace

std::vector<double> encode(const DeviceOutput& output) {
  std::vector<double> out;
  out.push_back(static_cast<double>(output.spans.size()));
  for (std::size_t step = 0; step < output.spans.size(); ++step) {
    out.push_back(static_cast<double>(output.spans[step].size()));
    for (const zb::Span& span : output.spans[step]) {
      out.insert(out.end(), {static_cast<double>(span.stream), static_cast<double>(span.pass),
                             static_cast<double>(span.stage), static_cast<double>(span.microbatch),
                             static_cast<double>(span.chunk), span.start, span.end});
    }
    const auto& memory = output.memory_us.at(step);
    out.push_back(static_cast<double>(memory.size()));
    for (const zb::MemoryPoint& point : memory) out.insert(out.end(), {point.time, point.value});
    const DeviceStepOutcome& outcome = output.steps.at(step);
    out.insert(out.end(), {outcome.decision.apply ? 1.0 : 0.0, static_cast<double>(outcome.decision.grad_scale),
                           outcome.decision.grad_norm, outcome.decision.clipped ? 1.0 : 0.0});
    out.insert(out.end(), {outcome.loss_sum, outcome.has_loss ? 1.0 : 0.0,
                           static_cast<double>(outcome.early_steps), static_cast<double>(outcome.rollbacks)});
  }
  out.push_back(output.peak_bytes);
  out.push_back(static_cast<double>(output.stage_weights.size()));
  for (const auto& [stage, layers] : output.stage_weights) {
    out.push_back(stage);
    out.push_back(static_cast<double>(layers.size()));
    for (const auto& layer : layers) {
      for (const auto& param : layer) {
        out.push_back(static_cast<double>(param.size()));
        out.insert(out.end(), param.begin(), param.end());
      }
    }
  }
  return out;
}

DeviceOutput decode_device_output(const std::vector<double>& values, int device) {
  Decoder in(values);
  DeviceOutput output;
  const std::size_t steps = in.count();
  for (std::size_t step = 0; step < steps; ++step) {
    std::vector<zb::Span> spans(in.count());
    for (zb::Span& span : spans) {
      span.device = device;
      span.stream = static_cast<zb::Stream>(in.integer());
      span.pass = static_cast<zb::Pass>(in.integer());
      span.stage = in.integer();
      span.microbatch = in.integer();
      span.chunk = in.integer();
      span.start = in.next();
      span.end = in.next();
    }
    output.spans.push_back(std::move(spans));
    std::vector<zb::MemoryPoint> memory(in.count());
    for (zb::MemoryPoint& point : memory) {
      point.time = in.next();
      point.value = in.next();
    }
    output.memory_us.push_back(std::move(memory));
    DeviceStepOutcome outcome;
    outcome.decision.apply = in.next() != 0;
    outcome.decision.grad_scale = static_cast<float>(in.next());
    outcome.decision.grad_norm = in.next();
    outcome.decision.clipped = in.next() != 0;
    outcome.loss_sum = in.next();
    outcome.has_loss = in.next() != 0;
    outcome.early_steps = in.integer();
    outcome.rollbacks = in.integer();
    output.steps.push_back(outcome);
  }
  output.peak_bytes = in.next();
  const std::size_t stages = in.count();
  for (std::size_t s = 0; s < stages; ++s) {
    const int stage = in.integer();
    ModelWeights layers(in.count());
    for (auto& layer : layers) {
      for (auto& param : layer) {
        param.resize(in.count());
        for (float& value : param) value = static_cast<float>(in.next());
      }
    }
    output.stage_weights.emplace_back(stage, std::move(layers));
  }
  if (!in.done()) throw ExecError("gathered device output has trailing values");
  return output;
}

}  // namespace zb::exec
