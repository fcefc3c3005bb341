// The processes of one multi-process run (one pipeline device each) over a transport (MPI).
#include "exec/multiprocess/process_group.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>

#include "exec/runtime/exec_error.h"
#include "sim/support/error.h"

namespace zb::exec {

namespace {

using Clock = std::chrono::steady_clock;

// The group's own frame kinds (the transport's tags).
enum : std::uint8_t {
  kSetup = ProcessGroup::kFirstSetupKind,
  kPing,
  kPong,
  kStart,
  kFailure,    // a rank's failure, sent by that rank (or the one that noticed) to all
  kHeartbeat,
  kDone,       // the sender's last message of an orderly end
  kLeaving,    // the sender's last message when leaving after a failure
  kStop,       // to oneself: the receiver thread ends
};
constexpr int kClockRoundTrips = 16;
constexpr std::uint64_t kFinishKey = ~std::uint64_t{0};

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

template <typename T>
std::vector<std::byte> bytes_of(const T& value) {
  std::vector<std::byte> out(sizeof(T));
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}

template <typename T>
T value_of(const std::vector<std::byte>& body, std::size_t offset = 0) {
  T value{};
  if (body.size() >= offset + sizeof(T)) std::memcpy(&value, body.data() + offset, sizeof(T));
  return value;
}

std::vector<std::byte> text_bytes(std::string_view text) {
  std::vector<std::byte> out(text.size());
  std::memcpy(out.data(), text.data(), text.size());
  return out;
}

std::string text_of(const std::vector<std::byte>& body) {
  return std::string(reinterpret_cast<const char*>(body.data()), body.size());
}

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::clamp(s, 0.0, kLongestTimeoutS)));
}

}  // namespace

ProcessGroup::ProcessGroup(std::unique_ptr<Transport> transport, const GroupOptions& options)
    : transport_(std::move(transport)), options_(options) {
  rank_ = transport_->rank();
  world_ = transport_->world();
  const auto size = static_cast<std::size_t>(world_);
  last_heard_ns_.assign(size, 0);
  done_.assign(size, false);
  leaving_.assign(size, false);
  align_clocks();
  start_threads();
}

ProcessGroup::~ProcessGroup() {
  if (!finished_) stop_threads(/*finalize=*/false);
}

void ProcessGroup::align_clocks() {
  if (world_ == 1) {
    epoch_ = Clock::now();
    return;
  }
  if (rank_ == 0) {
    // Rank 0 pings every rank in turn; each answers with its clock. The offset of the shortest
    // round trip is kept: its reply was read at most half a round trip from the middle.
    std::vector<std::int64_t> offset(static_cast<std::size_t>(world_), 0);
    std::vector<std::int64_t> best(static_cast<std::size_t>(world_), std::numeric_limits<std::int64_t>::max());
    for (int r = 1; r < world_; ++r) {
      for (int i = 0; i < kClockRoundTrips; ++i) {
        const std::int64_t t1 = now_ns();
        transport_->send(r, kPing, {});
        const TransportMessage pong = transport_->receive();
        const std::int64_t t2 = now_ns();
        if (pong.from != r || pong.tag != kPong) {
          throw ExecError(fmt::format("rank 0: while aligning clocks, rank {} sent message kind {} "
                                      "(ranks of different zbexec builds?)", pong.from, pong.tag));
        }
        if (t2 - t1 < best[static_cast<std::size_t>(r)]) {
          best[static_cast<std::size_t>(r)] = t2 - t1;
          offset[static_cast<std::size_t>(r)] = value_of<std::int64_t>(pong.body) - (t1 + t2) / 2;
        }
      }
    }
    const std::int64_t epoch_ns = now_ns();
    epoch_ = Clock::time_point(std::chrono::nanoseconds(epoch_ns));
    for (int r = 1; r < world_; ++r) {
      std::vector<std::byte> start = bytes_of(epoch_ns + offset[static_cast<std::size_t>(r)]);
      const auto error = bytes_of(best[static_cast<std::size_t>(r)]);
      start.insert(start.end(), error.begin(), error.end());
      transport_->send(r, kStart, start);
    }
    return;
  }
  while (true) {
    TransportMessage message = transport_->receive();
    if (message.from == 0 && message.tag == kPing) {
      transport_->send(0, kPong, bytes_of(now_ns()));
    } else if (message.from == 0 && message.tag == kStart) {
      epoch_ = Clock::time_point(std::chrono::nanoseconds(value_of<std::int64_t>(message.body)));
      clock_error_us_ = static_cast<double>(value_of<std::int64_t>(message.body, 8)) / 2000.0;
      return;
    } else {
      // A rank that has started already (its start came first) may send to this one: kept, and
      // delivered once this rank has started too.
      early_.push_back(std::move(message));
    }
  }
}

void ProcessGroup::start_threads() {
  const std::int64_t now = now_ns();
  std::fill(last_heard_ns_.begin(), last_heard_ns_.end(), now);
  for (TransportMessage& message : early_) {
    if (message.from >= 0 && message.from < world_ && message.tag <= 255) {
      deliver(message.from, static_cast<std::uint8_t>(message.tag), std::move(message.body));
    }
  }
  early_.clear();
  receiver_ = std::thread([this] { receive_loop(); });
  if (world_ > 1) {
    heartbeat_ = std::thread([this] { beat(); });
    watchdog_ = std::thread([this] { watch(); });
  }
}

void ProcessGroup::stop_threads(bool finalize) {
  {
    std::lock_guard lock(mutex_);
    stop_beat_ = true;
    changed_.notify_all();
  }
  {
    std::lock_guard heartbeat(heartbeat_mutex_);
    heartbeats_off_ = true;
  }
  if (heartbeat_.joinable()) heartbeat_.join();
  if (receiver_.joinable()) {
    try {
      transport_->send(rank_, kStop, {});
      receiver_.join();
    } catch (const std::exception&) {
      receiver_.detach();  // the transport is broken; the process is about to end
    }
  }
  // The watchdog (and its deadline after a failure) outlives MPI_Finalize: nothing may hang.
  if (finalize) transport_->finalize();
  {
    std::lock_guard lock(mutex_);
    stop_watch_ = true;
    changed_.notify_all();
  }
  if (watchdog_.joinable()) watchdog_.join();
}

void ProcessGroup::receive_loop() {
  while (true) {
    TransportMessage message;
    try {
      message = transport_->receive();
    } catch (const std::exception& error) {
      fail(error.what(), /*tell_others=*/true);
      return;
    }
    if (message.tag == kStop && message.from == rank_) return;
    if (message.from < 0 || message.from >= world_ || message.tag > 255) continue;
    {
      std::lock_guard lock(mutex_);
      last_heard_ns_[static_cast<std::size_t>(message.from)] = now_ns();
    }
    deliver(message.from, static_cast<std::uint8_t>(message.tag), std::move(message.body));
  }
}

std::chrono::milliseconds ProcessGroup::period() const {
  const double limit_s = options_.silence_timeout_s;
  return std::chrono::milliseconds(
      limit_s > 0 ? std::clamp<long long>(static_cast<long long>(limit_s * 1000 / 4), 10, 1000) : 1000);
}

void ProcessGroup::beat() {
  // Heartbeats: to rank 0, and from rank 0 to everyone (each rank is watched by rank 0 and
  // watches rank 0); and the notices of a failure noticed here. The only MPI calls of the
  // watchdog's work, in a thread of their own: an MPI call may be held up behind a device thread
  // that is blocked sending to a stopped rank, and the silence check must go on regardless.
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait_for(lock, period(), [&] { return stop_beat_ || to_tell_.has_value(); });
    std::optional<std::string> tell = std::move(to_tell_);
    to_tell_.reset();
    if (stop_beat_) {
      lock.unlock();
      if (tell) tell_others(*tell);  // a notice is never lost to the end of the group
      break;
    }
    lock.unlock();
    {
      // Under their own lock, so that none follows a rank's last message.
      std::lock_guard heartbeat(heartbeat_mutex_);
      for (int r = 0; r < world_ && !heartbeats_off_; ++r) {
        if (r == rank_ || (rank_ != 0 && r != 0)) continue;
        try {
          transport_->post(r, kHeartbeat, {});
        } catch (const std::exception&) {
          // the receiver reports a broken transport
        }
      }
    }
    if (tell) tell_others(*tell);
    lock.lock();
  }
}

void ProcessGroup::tell_others(const std::string& reason) {
  const auto body = text_bytes(reason);
  for (int r = 0; r < world_; ++r) {
    if (r == rank_) continue;
    try {
      transport_->post(r, kFailure, body);
    } catch (const std::exception&) {
      // the others still hear of it
    }
  }
}

void ProcessGroup::watch() {
  // No MPI calls here (see beat()): silences, and the deadline after a failure.
  const double limit_s = options_.silence_timeout_s;
  const auto period_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(period()).count();
  std::int64_t last_wake = now_ns();
  std::unique_lock lock(mutex_);
  while (!changed_.wait_for(lock, period(), [&] { return stop_watch_; })) {
    const std::int64_t now = now_ns();
    if (failure_ && options_.exit_after_failure_s > 0 &&
        now - failure_at_ns_ > static_cast<std::int64_t>(options_.exit_after_failure_s * 1e9)) {
      // This rank has not left within the deadline (a device thread blocked in a send to a
      // stopped rank never returns): say why and end it; the launcher ends the others.
      std::fprintf(stderr, "zbexec: rank %d: ending now, %g s after: %s\n", rank_,
                   options_.exit_after_failure_s, failure_->c_str());
      std::fflush(stderr);
      transport_->abort_all(1);
    }
    if (limit_s <= 0 || failure_ || failing_) continue;
    // This thread itself was held up far beyond its period (this process was stopped and has
    // been continued, or starved): the others' silence is then ours. Start counting afresh.
    const bool was_held_up = now - last_wake > 2 * period_ns + static_cast<std::int64_t>(limit_s * 0.5e9);
    last_wake = now;
    if (was_held_up) {
      std::fill(last_heard_ns_.begin(), last_heard_ns_.end(), now);
      continue;
    }
    std::string silent;
    for (int r = 0; r < world_ && silent.empty(); ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (r == rank_ || (rank_ != 0 && r != 0) || done_[i] || leaving_[i]) continue;
      const double quiet_s = static_cast<double>(now - last_heard_ns_[i]) / 1e9;
      if (quiet_s > limit_s) {
        silent = fmt::format("rank {} has been silent for {:.0f} s (stopped, hung, or its node is "
                             "unreachable; --silence-timeout {:g})", r, quiet_s, limit_s);
      }
    }
    if (silent.empty()) continue;
    lock.unlock();
    // The verdict at once, on this rank's stderr: its run may not end to print it (see above).
    std::fprintf(stderr, "zbexec: rank %d: %s\n", rank_, silent.c_str());
    std::fflush(stderr);
    fail(silent, /*tell_others=*/true);
    lock.lock();
  }
}

void ProcessGroup::deliver(int from_rank, std::uint8_t kind, std::vector<std::byte> body) {
  std::unique_lock lock(mutex_);
  const auto from = static_cast<std::size_t>(from_rank);
  switch (kind) {
    case kHeartbeat:
      return;
    case kDone:
      done_[from] = true;
      changed_.notify_all();
      return;
    case kLeaving:
      leaving_[from] = true;
      changed_.notify_all();
      return;
    case kFailure:
      lock.unlock();
      fail(text_of(body), /*tell_others=*/false);  // its sender told every rank
      return;
    case kSetup: {
      const auto key = value_of<std::uint64_t>(body);
      body.erase(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(8, body.size())));
      setup_[{from_rank, key}] = std::move(body);
      changed_.notify_all();
      return;
    }
    default:
      break;
  }
  if (kind >= kFirstSetupKind) return;  // a kind of a later version: not ours to guess
  if (!handler_) {
    pending_.emplace_back(from_rank, kind, std::move(body));
    return;
  }
  Handler handler = handler_;
  ++callbacks_running_;
  lock.unlock();
  handler(from_rank, kind, std::move(body));
  lock.lock();
  --callbacks_running_;
  changed_.notify_all();
}

void ProcessGroup::fail(const std::string& reason, bool tell_others) {
  std::unique_lock lock(mutex_);
  if (failure_ || failing_) return;
  failing_ = true;
  failure_ = reason;
  failure_at_ns_ = now_ns();
  if (tell_others) to_tell_ = reason;  // posted by the heartbeat thread, never waiting here
  changed_.notify_all();
  ++callbacks_running_;
  FailureHandler on_failure = on_failure_;
  lock.unlock();
  if (on_failure) on_failure(reason);
  lock.lock();
  --callbacks_running_;
  changed_.notify_all();
}

void ProcessGroup::abandon(const std::string& reason) {
  {
    // A failure already heard here was told to every rank by whoever saw it first; telling this
    // rank's consequence too could reach a third rank before the cause and be reported instead.
    std::lock_guard lock(mutex_);
    if (failure_ || failing_) return;
  }
  const std::string text = fmt::format("rank {}: {}", rank_, reason);
  fail(text, /*tell_others=*/false);
  tell_others(text);  // from this thread, before it may leave (a second notice is ignored)
}

void ProcessGroup::set_handler(Handler handler, FailureHandler on_failure) {
  std::unique_lock lock(mutex_);
  // The receiver may be inside the old handler (its owner is about to go): wait until it returns.
  changed_.wait(lock, [&] { return callbacks_running_ == 0; });
  handler_ = std::move(handler);
  on_failure_ = std::move(on_failure);
  auto pending = std::move(pending_);
  pending_.clear();
  const auto failure = failure_;
  for (auto& [from, kind, body] : pending) handler_(from, kind, std::move(body));
  lock.unlock();
  if (failure && on_failure_) on_failure_(*failure);
}

void ProcessGroup::send_raw(int to_rank, std::uint8_t kind, const std::vector<std::byte>& body) {
  if (to_rank < 0 || to_rank >= world_ || to_rank == rank_) {
    throw ExecError(fmt::format("process group: rank {} cannot send to rank {} (world {})", rank_, to_rank, world_));
  }
  transport_->send(to_rank, kind, body);
}

void ProcessGroup::send(int to_rank, std::uint8_t kind, const std::vector<std::byte>& body) {
  if (kind >= kFirstSetupKind) throw ExecError(fmt::format("process group: frame kind {} is reserved", kind));
  send_raw(to_rank, kind, body);
}

void ProcessGroup::send_setup(int to_rank, std::uint64_t key, const std::vector<std::byte>& body) {
  std::vector<std::byte> frame = bytes_of(key);
  frame.insert(frame.end(), body.begin(), body.end());
  send_raw(to_rank, kSetup, frame);
}

std::vector<std::byte> ProcessGroup::recv_setup(int from_rank, std::uint64_t key) {
  std::unique_lock lock(mutex_);
  const std::pair<int, std::uint64_t> id{from_rank, key};
  if (!changed_.wait_until(lock, Clock::now() + seconds(options_.setup_timeout_s),
                           [&] { return failure_ || setup_.count(id) != 0; })) {
    throw ExecError(fmt::format("rank {}: no word from rank {} within {} s (setup message {:#x})", rank_,
                                from_rank, options_.setup_timeout_s, key));
  }
  if (setup_.count(id) == 0) throw ExecError(*failure_);
  auto node = setup_.extract(id);
  return std::move(node.mapped());
}

void ProcessGroup::barrier(std::uint64_t key) {
  if (world_ == 1) return;
  if (rank_ != 0) {
    send_setup(0, key, {});
    recv_setup(0, key);
    return;
  }
  for (int r = 1; r < world_; ++r) recv_setup(r, key);
  for (int r = 1; r < world_; ++r) send_setup(r, key, {});
}

namespace {

// "line N: 'a' here, 'b' there", or "" when equal.
std::string first_difference(const std::string& here, const std::string& there) {
  std::size_t line = 1;
  std::size_t a = 0;
  std::size_t b = 0;
  while (a < here.size() || b < there.size()) {
    const std::size_t a_end = std::min(here.find('\n', a), here.size());
    const std::size_t b_end = std::min(there.find('\n', b), there.size());
    const std::string_view x(here.data() + a, a_end - a);
    const std::string_view y(there.data() + b, b_end - b);
    if (x != y || (a < here.size()) != (b < there.size())) {
      auto cut = [](std::string_view v) { return std::string(v.substr(0, 120)); };
      return fmt::format("line {}: rank 0 has '{}', it has '{}'", line, cut(x), cut(y));
    }
    a = a_end + 1;
    b = b_end + 1;
    ++line;
  }
  return {};
}

}  // namespace

void ProcessGroup::agree(const std::string& account) {
  const std::uint64_t key = (std::uint64_t{1} << 61) | agreements_++;
  if (world_ == 1) return;
  if (rank_ != 0) {
    send_setup(0, key, text_bytes(account));
    const std::string verdict = text_of(recv_setup(0, key));
    if (!verdict.empty()) throw Disagreement(verdict);
    return;
  }
  std::string verdict;
  for (int r = 1; r < world_; ++r) {
    const std::string difference = first_difference(account, text_of(recv_setup(r, key)));
    if (verdict.empty() && !difference.empty()) {
      verdict = fmt::format("rank {} was started with another run than rank 0 ({}); start every "
                            "rank with the same flags", r, difference);
    }
  }
  for (int r = 1; r < world_; ++r) send_setup(r, key, text_bytes(verdict));
  if (!verdict.empty()) throw Disagreement(verdict);
}

void ProcessGroup::finish() {
  if (finished_) return;
  // Every rank's last message to every other is kDone, and a rank ends once it has one from
  // every other: each pair's messages arrive in order, so nothing sent is still in flight when
  // the transport is finalised. A rank that has said it is done is no longer watched.
  {
    std::lock_guard heartbeat(heartbeat_mutex_);
    heartbeats_off_ = true;
    for (int r = 0; r < world_; ++r) {
      if (r != rank_) send_raw(r, kDone, {});
    }
  }
  {
    std::unique_lock lock(mutex_);
    const auto all_done = [&] {
      for (int r = 0; r < world_; ++r) {
        if (r != rank_ && !done_[static_cast<std::size_t>(r)]) return false;
      }
      return true;
    };
    if (!changed_.wait_until(lock, Clock::now() + seconds(options_.setup_timeout_s),
                             [&] { return failure_ || all_done(); })) {
      throw ExecError(fmt::format("rank {}: the other ranks did not reach the end within {} s", rank_,
                                  options_.setup_timeout_s));
    }
    if (!all_done()) throw ExecError(*failure_);
  }
  stop_threads(/*finalize=*/true);
  finished_ = true;
}

void ProcessGroup::leave(int code, const std::exception& why, double grace_s) {
  if (finished_) return;
  if (dynamic_cast<const Disagreement*>(&why) == nullptr) abandon(why.what());
  {
    std::lock_guard heartbeat(heartbeat_mutex_);
    heartbeats_off_ = true;  // kLeaving is this rank's last message
    for (int r = 0; r < world_; ++r) {
      if (r == rank_) continue;
      try {
        transport_->post(r, kLeaving, {});
      } catch (const std::exception&) {
      }
    }
  }
  bool all_leaving = false;
  {
    std::unique_lock lock(mutex_);
    all_leaving = changed_.wait_until(lock, Clock::now() + seconds(grace_s), [&] {
      for (int r = 0; r < world_; ++r) {
        if (r != rank_ && !leaving_[static_cast<std::size_t>(r)] && !done_[static_cast<std::size_t>(r)]) return false;
      }
      return true;
    });
  }
  if (!all_leaving) transport_->abort_all(code);  // a rank that does not listen: the launcher ends them all
  stop_threads(/*finalize=*/true);
  finished_ = true;
}

}  // namespace zb::exec
