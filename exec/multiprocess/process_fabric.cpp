// The fabric of a multi-process run: pipeline device d is rank d; messages cross the process group.
#include "exec/multiprocess/process_fabric.h"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "exec/runtime/exec_error.h"

namespace zb::exec {

namespace {

enum FrameKind : std::uint8_t { kTensor = 1, kControl = 2, kAbort = 3 };

// Fixed-size little records, written and read field by field (all ranks run the same build).
class Writer {
 public:
  template <typename T>
  Writer& put(T value) {
    const auto* p = reinterpret_cast<const std::byte*>(&value);
    bytes.insert(bytes.end(), p, p + sizeof(T));
    return *this;
  }
  Writer& put_raw(const void* data, std::size_t size) {
    const auto* p = static_cast<const std::byte*>(data);
    bytes.insert(bytes.end(), p, p + size);
    return *this;
  }
  std::vector<std::byte> bytes;
};

class Reader {
 public:
  explicit Reader(const std::vector<std::byte>& bytes) : bytes_(bytes) {}
  template <typename T>
  T get() {
    T value{};
    take(&value, sizeof(T));
    return value;
  }
  void take(void* out, std::size_t size) {
    if (offset_ + size > bytes_.size()) throw ExecError("process fabric: a truncated frame arrived");
    std::memcpy(out, bytes_.data() + offset_, size);
    offset_ += size;
  }

 private:
  const std::vector<std::byte>& bytes_;
  std::size_t offset_ = 0;
};

constexpr std::uint64_t kRunBarrierBit = std::uint64_t{1} << 62;

}  // namespace

ProcessFabric::ProcessFabric(ProcessGroup& group, bool carry_payloads)
    : group_(group), carry_payloads_(carry_payloads) {
  group_.set_handler(
      [this](int from_rank, std::uint8_t kind, std::vector<std::byte> body) {
        on_frame(from_rank, kind, std::move(body));
      },
      [this](const std::string& reason) {
        // A rank vanished or abandoned the run (rank 0 relays that to everyone).
        abort_sent_ = true;
        local_.abort(reason);
      });
}

ProcessFabric::~ProcessFabric() { group_.set_handler(nullptr, nullptr); }

void ProcessFabric::begin_run(int workers) {
  local_.begin_run(workers);
  abort_sent_ = false;
  const std::uint64_t run = ++run_;  // frames of an earlier (failed) run arriving from now on are dropped
  group_.barrier(kRunBarrierBit | run);
}

void ProcessFabric::worker_ended() { local_.worker_ended(); }

void ProcessFabric::send(int from_device, int to_device, const MessageTag& tag, Tensor payload) {
  if (is_local(to_device)) {
    local_.send(from_device, to_device, tag, std::move(payload));
    return;
  }
  const bool with_bytes = carry_payloads_ && payload.size() != 0;
  Writer frame;
  frame.put<std::uint64_t>(run_).put<std::int32_t>(tag.step).put<std::int32_t>(tag.from_stage).put<std::int32_t>(tag.to_stage)
      .put<std::int32_t>(tag.microbatch).put<std::int32_t>(from_device).put<std::int32_t>(to_device)
      .put<std::int32_t>(payload.rows()).put<std::int32_t>(payload.cols()).put<std::uint8_t>(with_bytes ? 1 : 0);
  // The CPU backend's tensors are host memory, written by kernels that have returned.
  if (with_bytes) frame.put_raw(payload.data(), payload.size_bytes());
  send_frame(to_device, kTensor, frame.bytes);
}

void ProcessFabric::send_frame(int to_rank, std::uint8_t kind, const std::vector<std::byte>& body) {
  try {
    group_.send(to_rank, kind, body);
  } catch (const ExecError&) {
    // A lost connection has a cause that this rank's reader learns a moment later (an abort
    // frame, a vanished rank): report that rather than the symptom.
    for (int i = 0; i < 100; ++i) {
      if (auto reason = local_.abort_reason()) throw ExecError(*reason);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    throw;
  }
}

Tensor ProcessFabric::recv(int from_device, int to_device, const MessageTag& expected, Device& device) {
  return local_.recv(from_device, to_device, expected, device);
}

void ProcessFabric::send_control(int from_device, int to_device, std::uint64_t key,
                                 std::vector<double> values) {
  if (is_local(to_device)) {
    local_.send_control(from_device, to_device, key, std::move(values));
    return;
  }
  Writer frame;
  frame.put<std::uint64_t>(run_).put<std::int32_t>(from_device).put<std::int32_t>(to_device).put<std::uint64_t>(key)
      .put<std::uint64_t>(values.size());
  frame.put_raw(values.data(), values.size() * sizeof(double));
  send_frame(to_device, kControl, frame.bytes);
}

std::vector<double> ProcessFabric::recv_control(int from_device, int to_device, std::uint64_t key) {
  return local_.recv_control(from_device, to_device, key);
}

std::optional<std::vector<double>> ProcessFabric::try_recv_control(int from_device, int to_device,
                                                                   std::uint64_t key) {
  return local_.try_recv_control(from_device, to_device, key);
}

void ProcessFabric::abort(const std::string& reason) {
  local_.abort(reason);
  if (abort_sent_.exchange(true)) return;
  tell_others(fmt::format("rank {}: {}", group_.rank(), reason));
}

void ProcessFabric::tell_others(const std::string& text) {
  std::vector<std::byte> body(text.size());
  std::memcpy(body.data(), text.data(), text.size());
  for (int r = 0; r < group_.world(); ++r) {
    if (r == group_.rank()) continue;
    try {
      group_.send(r, kAbort, body);
    } catch (const ExecError&) {
      // that rank is gone already; the others still hear of it
    }
  }
}

void ProcessFabric::on_frame(int from_rank, std::uint8_t kind, std::vector<std::byte> body) {
  try {
    Reader in(body);
    if ((kind == kTensor || kind == kControl) && in.get<std::uint64_t>() != run_) return;
    switch (kind) {
      case kTensor: {
        MessageTag tag;
        tag.step = in.get<std::int32_t>();
        tag.from_stage = in.get<std::int32_t>();
        tag.to_stage = in.get<std::int32_t>();
        tag.microbatch = in.get<std::int32_t>();
        const int from_device = in.get<std::int32_t>();
        const int to_device = in.get<std::int32_t>();
        const int rows = in.get<std::int32_t>();
        const int cols = in.get<std::int32_t>();
        const bool with_bytes = in.get<std::uint8_t>() != 0;
        Tensor payload(nullptr, rows, cols);
        if (with_bytes) {
          const std::size_t count = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
          std::shared_ptr<float> storage(new float[count], std::default_delete<float[]>());
          in.take(storage.get(), count * sizeof(float));
          payload = Tensor(std::move(storage), rows, cols);
        }
        local_.send(from_device, to_device, tag, std::move(payload));
        return;
      }
      case kControl: {
        const int from_device = in.get<std::int32_t>();
        const int to_device = in.get<std::int32_t>();
        const auto key = in.get<std::uint64_t>();
        std::vector<double> values(in.get<std::uint64_t>());
        in.take(values.data(), values.size() * sizeof(double));
        local_.send_control(from_device, to_device, key, std::move(values));
        return;
      }
      case kAbort:
        abort_sent_ = true;  // the others heard it from the rank that failed
        local_.abort(std::string(reinterpret_cast<const char*>(body.data()), body.size()));
        return;
      default:
        local_.abort(fmt::format("rank {} sent a frame of unknown kind {}", from_rank, kind));
    }
  } catch (const std::exception& error) {
    // A message for a run that has already failed here; the failure is reported already.
    local_.abort(fmt::format("message from rank {}: {}", from_rank, error.what()));
  }
}

}  // namespace zb::exec
