// The processes of one multi-process run and the wire between them (TCP, a star around rank 0).
#include "exec/process_group.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <limits>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <tuple>

#include "exec/exec_error.h"
#include "exec/launcher_env.h"
#include "sim/schedule/atomic_file.h"
#include "sim/schedule/error.h"

namespace zb::exec {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kMagic = 0x7a626578;  // "zbex"
// The group's own frame kinds (handshake, setup mailbox, orderly end).
enum : std::uint8_t {
  kSetup = ProcessGroup::kFirstSetupKind,
  kGoodbye,
  kHello,
  kAccept,
  kReject,
  kPing,
  kPong,
  kStart,
  kFailure,  // a rank's failure, relayed by rank 0 to all
  kHeartbeat,
};
constexpr int kClockRoundTrips = 16;

struct FrameHeader {
  std::uint32_t magic = kMagic;
  std::uint8_t kind = 0;
  std::uint8_t unused[3] = {};
  std::int32_t from = 0;
  std::int32_t to = 0;
  std::uint64_t length = 0;
};
static_assert(sizeof(FrameHeader) == 24);

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

std::string errno_text() { return std::strerror(errno); }

// The whole buffer or false (the peer closed or the connection broke).
bool write_all(int fd, const void* data, std::size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool read_all(int fd, void* data, std::size_t size) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::recv(fd, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Waits until fd is readable or the deadline passes.
bool wait_readable(int fd, Clock::time_point deadline) {
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

struct Frame {
  FrameHeader header;
  std::vector<std::byte> body;
};

bool read_frame(int fd, Frame& frame, std::uint64_t max_body = std::numeric_limits<std::uint64_t>::max()) {
  if (!read_all(fd, &frame.header, sizeof frame.header)) return false;
  if (frame.header.magic != kMagic || frame.header.length > max_body) return false;
  frame.body.resize(frame.header.length);
  return frame.body.empty() || read_all(fd, frame.body.data(), frame.body.size());
}

// Handshake frames are small; a peer that sends something else is not one of ours.
constexpr std::uint64_t kMaxHandshakeBody = 4096;

// Bounds every receive on fd (0: none). During the handshake a peer that stalls, even in the
// middle of a frame, is dropped instead of waited for; the run's readers wait without bound.
void receive_timeout(int fd, std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

// A handshake frame by the deadline (the socket's receive timeout bounds a frame that stops
// half-way).
bool read_frame_until(int fd, Frame& frame, Clock::time_point deadline) {
  return wait_readable(fd, deadline) && read_frame(fd, frame, kMaxHandshakeBody);
}

constexpr std::chrono::milliseconds kHandshakeStall{5000};

bool write_frame_raw(int fd, std::uint8_t kind, int from, int to, const std::vector<std::byte>& body) {
  FrameHeader header;
  header.kind = kind;
  header.from = from;
  header.to = to;
  header.length = body.size();
  return write_all(fd, &header, sizeof header) && (body.empty() || write_all(fd, body.data(), body.size()));
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

struct RendezvousFile {
  std::string host;
  std::vector<std::string> addresses;  // rank 0's IPv4 addresses, tried when `host` does not resolve
  int port = 0;
  int world = 0;
  std::uint64_t token = 0;
};

std::optional<RendezvousFile> read_rendezvous_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  try {
    const auto object = nlohmann::json::parse(zb::read_file(path));
    RendezvousFile file;
    file.host = object.at("host").get<std::string>();
    file.addresses = object.value("addresses", std::vector<std::string>{});
    file.port = object.at("port").get<int>();
    file.world = object.at("world").get<int>();
    file.token = std::stoull(object.at("token").get<std::string>(), nullptr, 16);
    return file;
  } catch (const std::exception&) {
    return std::nullopt;  // being replaced, or not ours yet: read again
  }
}

int listen_socket(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw ExecError("rendezvous: socket(): " + errno_text());
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  const auto port_flag = first_env_index({"ZBEXEC_PORT"});
  address.sin_port = htons(static_cast<std::uint16_t>(port_flag ? port_flag->value : 0));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, 128) != 0) {
    const std::string why = errno_text();
    ::close(fd);
    throw ExecError("rendezvous: rank 0 cannot listen: " + why);
  }
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  port = ntohs(address.sin_port);
  return fd;
}

// A connected socket to host:port, or -1 (refused, unreachable: the caller tries again).
int connect_to(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

void no_delay(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // small frames go at once
}

// Every IPv4 address of this machine's interfaces that are up, loopback last.
std::vector<std::string> this_addresses() {
  std::vector<std::string> addresses;
  std::vector<std::string> loopback;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return {"127.0.0.1"};
  for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET || (a->ifa_flags & IFF_UP) == 0) continue;
    char text[INET_ADDRSTRLEN] = {};
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    if (::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text) == nullptr) continue;
    ((a->ifa_flags & IFF_LOOPBACK) != 0 ? loopback : addresses).emplace_back(text);
  }
  ::freeifaddrs(list);
  addresses.insert(addresses.end(), loopback.begin(), loopback.end());
  return addresses;
}

std::string this_host() {
  if (const char* host = std::getenv("ZBEXEC_HOST"); host != nullptr && *host != '\0') return host;
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

}  // namespace

struct ProcessGroup::Connection {
  int fd = -1;
  int peer = 0;
  std::mutex write_mutex;
  std::atomic<std::int64_t> last_heard_ns{0};  // any frame from the peer counts
};

Rendezvous resolve_rendezvous(std::optional<int> rank, std::optional<int> world, std::string file) {
  auto from_env = [](std::initializer_list<const char*> names) -> std::optional<int> {
    if (const auto found = first_env_index(names)) return found->value;
    return std::nullopt;
  };
  if (!rank) rank = from_env({"SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"});
  if (!world) world = from_env({"SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"});
  if (file.empty()) throw InputError("--rendezvous FILE is needed for a multi-process run (a path every rank can read)");
  if (!rank) throw InputError("--rank: not given and no launcher variable (SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK) is set");
  if (!world) throw InputError("--world: not given and no launcher variable (SLURM_NTASKS, OMPI_COMM_WORLD_SIZE, PMI_SIZE) is set");
  if (*world < 1) throw InputError(fmt::format("--world {}: need at least 1 process", *world));
  if (*rank < 0 || *rank >= *world) throw InputError(fmt::format("--rank {}: must be in [0, {})", *rank, *world));
  Rendezvous rendezvous;
  rendezvous.rank = *rank;
  rendezvous.world = *world;
  rendezvous.file = std::move(file);
  return rendezvous;
}

ProcessGroup::ProcessGroup(int rank, int world, double timeout_s)
    : rank_(rank), world_(world), timeout_s_(timeout_s), said_goodbye_(static_cast<std::size_t>(world), false) {}

std::unique_ptr<ProcessGroup> ProcessGroup::join(const Rendezvous& rendezvous) {
  std::unique_ptr<ProcessGroup> group(new ProcessGroup(rendezvous.rank, rendezvous.world, rendezvous.timeout_s));
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(rendezvous.timeout_s));
  const int world = rendezvous.world;
  if (rendezvous.rank == 0) {
    group->accept_ranks(rendezvous, deadline);
  } else {
    group->connect_to_rank0(rendezvous, deadline);
  }
  group->start_readers();
  if (rendezvous.silence_timeout_s > 0 && world > 1) {
    group->heartbeat_ = std::thread([g = group.get(), limit = rendezvous.silence_timeout_s] { g->watch(limit); });
  }
  return group;
}

// Rank 0: publish the address, take every other rank's hello and clock pings, then start all.
void ProcessGroup::accept_ranks(const Rendezvous& rendezvous, Clock::time_point deadline) {
  const int world = rendezvous.world;
  connections_.resize(static_cast<std::size_t>(world));
  int port = 0;
  const int listener = listen_socket(port);
  std::random_device random;
  const std::uint64_t token = (static_cast<std::uint64_t>(random()) << 32) ^ random();
  nlohmann::json object{{"host", this_host()}, {"addresses", this_addresses()}, {"port", port},
                        {"world", world}, {"token", fmt::format("{:016x}", token)}};
  zb::write_file_atomically(rendezvous.file, object.dump() + "\n");
  file_ = rendezvous.file;
  token_ = token;
  // Rank 0 gives up: the ranks that joined hear why (not only that rank 0 went away).
  auto give_up = [&](const std::string& why) {
    ::close(listener);
    for (int r = 1; r < world; ++r) {
      if (connections_[static_cast<std::size_t>(r)]) {
        write_frame_raw(connections_[static_cast<std::size_t>(r)]->fd, kReject, 0, r, text_bytes(why));
      }
    }
    throw ExecError("rendezvous: " + why);
  };
  std::vector<std::string> refusals;  // of ranks that may still come right
  int joined = 1;
  while (joined < world) {
    if (!wait_readable(listener, deadline)) {
      std::vector<int> missing;
      for (int r = 1; r < world; ++r) {
        if (!connections_[static_cast<std::size_t>(r)]) missing.push_back(r);
      }
      give_up(fmt::format("after {} s, rank{} {} not joined (file {}){}", rendezvous.timeout_s,
                          missing.size() == 1 ? "" : "s", fmt::join(missing, ", "), rendezvous.file,
                          refusals.empty() ? "" : fmt::format("; refused: {}", fmt::join(refusals, "; "))));
    }
    const int fd = ::accept(listener, nullptr, nullptr);
    if (fd < 0) continue;
    no_delay(fd);
    receive_timeout(fd, kHandshakeStall);
    const auto handshake_deadline = std::min(deadline, Clock::now() + std::chrono::seconds(10));
    Frame hello;
    if (!read_frame_until(fd, hello, handshake_deadline) || hello.header.kind != kHello) {
      ::close(fd);  // not one of ours
      continue;
    }
    const int peer = hello.header.from;
    const auto peer_world = value_of<std::int32_t>(hello.body, 0);
    const auto peer_token = value_of<std::uint64_t>(hello.body, 8);
    std::string refusal;
    bool launch_is_broken = false;  // no later arrival can complete this run
    if (peer_token != token) {
      refusal = "stale rendezvous file (its token is from another run)";
    } else if (peer_world != world) {
      refusal = fmt::format("rank {} says --world {} but rank 0 has {}", peer, peer_world, world);
      launch_is_broken = true;
    } else if (peer <= 0 || peer >= world) {
      refusal = fmt::format("rank {} is outside [1, {})", peer, world);
      launch_is_broken = true;
    } else if (connections_[static_cast<std::size_t>(peer)]) {
      refusal = fmt::format("rank {} joined twice (two processes with the same --rank)", peer);
      refusals.push_back(refusal);
    }
    if (!refusal.empty()) {
      write_frame_raw(fd, kReject, 0, peer, text_bytes(refusal));
      ::close(fd);
      if (launch_is_broken) give_up(refusal);
      continue;
    }
    write_frame_raw(fd, kAccept, 0, peer, {});
    // The joining rank measures its clock against ours: answer its pings with our time.
    bool clock_done = true;
    for (int i = 0; i < kClockRoundTrips && clock_done; ++i) {
      Frame ping;
      clock_done = read_frame_until(fd, ping, handshake_deadline) && ping.header.kind == kPing &&
                   write_frame_raw(fd, kPong, 0, peer, bytes_of(now_ns()));
    }
    if (!clock_done) {
      ::close(fd);  // it went away mid-handshake; it may come back
      continue;
    }
    receive_timeout(fd, std::chrono::milliseconds(0));
    auto connection = std::make_unique<Connection>();
    connection->fd = fd;
    connection->peer = peer;
    connections_[static_cast<std::size_t>(peer)] = std::move(connection);
    ++joined;
  }
  ::close(listener);
  const std::int64_t epoch_ns = now_ns();
  epoch_ = Clock::time_point(std::chrono::nanoseconds(epoch_ns));
  for (int r = 1; r < world; ++r) {
    write_frame_raw(connections_[static_cast<std::size_t>(r)]->fd, kStart, 0, r, bytes_of(epoch_ns));
  }
}

// The other ranks: find rank 0 through the file, say hello, align the clock, wait for the start.
void ProcessGroup::connect_to_rank0(const Rendezvous& rendezvous, Clock::time_point deadline) {
  const int world = rendezvous.world;
  int fd = -1;
  std::string last_problem = "the file does not exist yet";
  while (fd < 0) {
    if (Clock::now() > deadline) {
      throw ExecError(fmt::format("rendezvous: rank {} could not join rank 0 within {} s ({}; file {})",
                                  rendezvous.rank, rendezvous.timeout_s, last_problem, rendezvous.file));
    }
    const auto file = read_rendezvous_file(rendezvous.file);
    if (!file) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    fd = connect_to(file->host, file->port);
    // A host name that does not resolve here (a container's, say): rank 0's addresses instead.
    for (std::size_t i = 0; fd < 0 && i < file->addresses.size(); ++i) fd = connect_to(file->addresses[i], file->port);
    if (fd < 0) {
      last_problem = fmt::format("cannot connect to rank 0 at {}:{}: it is not running yet, or this "
                                 "run's ranks have all joined already (a rank started twice?)",
                                 file->host, file->port);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    no_delay(fd);
    receive_timeout(fd, kHandshakeStall);
    std::vector<std::byte> hello = bytes_of(static_cast<std::int32_t>(world));
    hello.resize(8);
    const auto token = bytes_of(file->token);
    hello.insert(hello.end(), token.begin(), token.end());
    Frame reply;
    if (!write_frame_raw(fd, kHello, rendezvous.rank, 0, hello) ||
        !read_frame_until(fd, reply, std::min(deadline, Clock::now() + std::chrono::seconds(10)))) {
      ::close(fd);
      fd = -1;
      last_problem = fmt::format("{}:{} did not answer", file->host, file->port);
      continue;
    }
    if (reply.header.kind == kReject) {
      ::close(fd);
      fd = -1;
      const std::string why = text_of(reply.body);
      if (why.starts_with("stale")) {  // rank 0 of this run has not rewritten the file yet
        last_problem = why;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        continue;
      }
      throw ExecError(fmt::format("rendezvous: rank 0 refused rank {}: {}", rendezvous.rank, why));
    }
  }
  // Offset of rank 0's clock from ours, from the round trip with the least delay.
  std::int64_t best_rtt = std::numeric_limits<std::int64_t>::max();
  std::int64_t offset = 0;
  for (int i = 0; i < kClockRoundTrips; ++i) {
    const std::int64_t t1 = now_ns();
    Frame pong;
    if (!write_frame_raw(fd, kPing, rendezvous.rank, 0, {}) || !read_frame_until(fd, pong, deadline) ||
        pong.header.kind != kPong) {
      ::close(fd);
      throw ExecError(fmt::format("rendezvous: rank {} lost rank 0 while aligning clocks", rendezvous.rank));
    }
    const std::int64_t t2 = now_ns();
    if (t2 - t1 < best_rtt) {
      best_rtt = t2 - t1;
      offset = value_of<std::int64_t>(pong.body) - (t1 + t2) / 2;
    }
  }
  Frame start;
  const bool started = read_frame_until(fd, start, deadline);
  if (started && start.header.kind == kReject) {
    ::close(fd);
    throw ExecError(fmt::format("rendezvous: rank 0 gave up: {}", text_of(start.body)));
  }
  if (!started || start.header.kind != kStart) {
    ::close(fd);
    throw ExecError(fmt::format("rendezvous: rank {} joined but rank 0 never started (within {} s)",
                                rendezvous.rank, rendezvous.timeout_s));
  }
  receive_timeout(fd, std::chrono::milliseconds(0));
  epoch_ = Clock::time_point(std::chrono::nanoseconds(value_of<std::int64_t>(start.body) - offset));
  clock_error_us_ = static_cast<double>(best_rtt) / 2000.0;
  auto connection = std::make_unique<Connection>();
  connection->fd = fd;
  connection->peer = 0;
  connections_.push_back(std::move(connection));
}

void ProcessGroup::watch(double silence_timeout_s) {
  const auto period = std::chrono::milliseconds(std::clamp<long long>(
      static_cast<long long>(silence_timeout_s * 1000 / 4), 10, 1000));
  const auto limit_ns = static_cast<std::int64_t>(silence_timeout_s * 1e9);
  std::unique_lock lock(mutex_);
  while (!changed_.wait_for(lock, period, [&] { return stop_heartbeat_; })) {
    lock.unlock();
    const std::int64_t now = now_ns();
    for (auto& connection : connections_) {
      if (!connection) continue;
      // Only when the socket has room and no one else is writing: a heartbeat never waits.
      pollfd p{connection->fd, POLLOUT, 0};
      if (std::unique_lock write(connection->write_mutex, std::try_to_lock);
          write.owns_lock() && ::poll(&p, 1, 0) == 1 && (p.revents & POLLOUT) != 0) {
        write_frame_raw(connection->fd, kHeartbeat, rank_, connection->peer, {});
      }
      const double silent_s = static_cast<double>(now - connection->last_heard_ns) / 1e9;
      if (now - connection->last_heard_ns > limit_ns) {
        fail(fmt::format("rank {} has been silent for {:.0f} s (stopped, hung, or its node is "
                         "unreachable; --silence-timeout {:g})", connection->peer, silent_s, silence_timeout_s));
      }
    }
    lock.lock();
    if (failure_) break;
  }
}

void ProcessGroup::stop_heartbeat() {
  {
    std::lock_guard lock(mutex_);
    stop_heartbeat_ = true;
    changed_.notify_all();
  }
  if (heartbeat_.joinable()) heartbeat_.join();
}

ProcessGroup::~ProcessGroup() {
  stop_heartbeat();
  {
    std::lock_guard lock(mutex_);
    finishing_ = true;  // closing our end is not another rank's failure
  }
  for (auto& connection : connections_) {
    if (connection) ::shutdown(connection->fd, SHUT_RDWR);
  }
  for (auto& reader : readers_) reader.join();
  for (auto& connection : connections_) {
    if (connection) ::close(connection->fd);
  }
  remove_file();
}

void ProcessGroup::remove_file() {
  if (file_.empty()) return;
  // Only while it is still ours: another run's rank 0 may have written its own since.
  const auto current = read_rendezvous_file(file_);
  if (current && current->token == token_) {
    std::error_code ignored;
    std::filesystem::remove(file_, ignored);
  }
  file_.clear();
}

void ProcessGroup::start_readers() {
  for (auto& connection : connections_) {
    if (!connection) continue;
    connection->last_heard_ns = now_ns();
    readers_.emplace_back([this, c = connection.get()] { read_loop(*c); });
  }
}

void ProcessGroup::read_loop(Connection& connection) {
  while (true) {
    Frame frame;
    if (!read_frame(connection.fd, frame)) {
      std::unique_lock lock(mutex_);
      const bool expected = finishing_ || said_goodbye_[static_cast<std::size_t>(connection.peer)];
      lock.unlock();
      if (!expected) {
        fail(fmt::format("rank {} disconnected before the end of the run (it exited or crashed)",
                         connection.peer));
      }
      return;
    }
    connection.last_heard_ns = now_ns();
    if (frame.header.kind == kHeartbeat) continue;
    const int to = frame.header.to;
    if (to != rank_) {
      // Rank 0 forwards between the other ranks; the order per sender and receiver is kept.
      if (rank_ == 0 && to > 0 && to < world_ && connections_[static_cast<std::size_t>(to)]) {
        try {
          write_frame(*connections_[static_cast<std::size_t>(to)], frame.header.from, to,
                      frame.header.kind, frame.body);
        } catch (const ExecError&) {
          // the receiver is gone; its own connection's reader reports that
        }
      }
      continue;
    }
    deliver(frame.header.from, frame.header.kind, std::move(frame.body));
  }
}

void ProcessGroup::deliver(int from_rank, std::uint8_t kind, std::vector<std::byte> body) {
  std::unique_lock lock(mutex_);
  if (kind == kGoodbye) {
    said_goodbye_[static_cast<std::size_t>(from_rank)] = true;
    changed_.notify_all();
    return;
  }
  if (kind == kFailure) {
    lock.unlock();
    fail(text_of(body));  // rank 0 passes it on to the others
    return;
  }
  if (kind == kSetup) {
    const auto key = value_of<std::uint64_t>(body);
    body.erase(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(8, body.size())));
    setup_[{from_rank, key}] = std::move(body);
    changed_.notify_all();
    return;
  }
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

void ProcessGroup::fail(const std::string& reason) {
  std::unique_lock lock(mutex_);
  if (failure_ || failing_) return;
  failing_ = true;
  ++callbacks_running_;
  lock.unlock();
  if (rank_ == 0) {
    // The hub tells everyone, so that a rank learns the root cause instead of only, later, that
    // the hub has gone; before its own waits end (and it may exit).
    const auto body = text_bytes(reason);
    for (int r = 1; r < world_; ++r) {
      if (!connections_[static_cast<std::size_t>(r)]) continue;
      try {
        write_frame(*connections_[static_cast<std::size_t>(r)], 0, r, kFailure, body);
      } catch (const ExecError&) {
        // that one is gone too
      }
    }
  }
  lock.lock();
  failure_ = reason;
  changed_.notify_all();
  FailureHandler on_failure = on_failure_;
  lock.unlock();
  if (on_failure) on_failure(reason);
  lock.lock();
  --callbacks_running_;
  changed_.notify_all();
}

void ProcessGroup::abandon(const std::string& reason) {
  const std::string text = fmt::format("rank {}: {}", rank_, reason);
  if (rank_ == 0) {
    fail(text);
    return;
  }
  try {
    write_frame(*connections_.at(0), rank_, 0, kFailure, text_bytes(text));
  } catch (const ExecError&) {
    // rank 0 is gone already; the others hear of that from it... or notice
  }
}

void ProcessGroup::set_handler(Handler handler, FailureHandler on_failure) {
  std::unique_lock lock(mutex_);
  // A reader may be inside the old handler (its owner is about to go): wait until it returns.
  changed_.wait(lock, [&] { return callbacks_running_ == 0; });
  handler_ = std::move(handler);
  on_failure_ = std::move(on_failure);
  auto pending = std::move(pending_);
  pending_.clear();
  const auto failure = failure_;
  // Readers deliver straight to the handler from now on; these came first. (A reader that read
  // a frame before the handler was set has already queued it under the lock.)
  for (auto& [from, kind, body] : pending) handler_(from, kind, std::move(body));
  lock.unlock();
  if (failure && on_failure_) on_failure_(*failure);
}

ProcessGroup::Connection& ProcessGroup::route_to(int rank) {
  if (rank < 0 || rank >= world_ || rank == rank_) {
    throw ExecError(fmt::format("process group: rank {} cannot send to rank {} (world {})", rank_, rank, world_));
  }
  return *connections_[rank_ == 0 ? static_cast<std::size_t>(rank) : 0];
}

void ProcessGroup::write_frame(Connection& connection, int from_rank, int to_rank, std::uint8_t kind,
                               const std::vector<std::byte>& body) {
  std::lock_guard lock(connection.write_mutex);
  if (!write_frame_raw(connection.fd, kind, from_rank, to_rank, body)) {
    throw ExecError(fmt::format("rank {}: the connection to rank {} is lost", rank_, connection.peer));
  }
}

void ProcessGroup::send(int to_rank, std::uint8_t kind, const std::vector<std::byte>& body) {
  if (kind >= kFirstSetupKind) throw ExecError(fmt::format("process group: frame kind {} is reserved", kind));
  write_frame(route_to(to_rank), rank_, to_rank, kind, body);
}

void ProcessGroup::send_setup(int to_rank, std::uint64_t key, const std::vector<std::byte>& body) {
  std::vector<std::byte> frame = bytes_of(key);
  frame.insert(frame.end(), body.begin(), body.end());
  write_frame(route_to(to_rank), rank_, to_rank, kSetup, frame);
}

std::vector<std::byte> ProcessGroup::recv_setup(int from_rank, std::uint64_t key) {
  std::unique_lock lock(mutex_);
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s_));
  const std::pair<int, std::uint64_t> id{from_rank, key};
  if (!changed_.wait_until(lock, deadline, [&] { return failure_ || setup_.count(id) != 0; })) {
    throw ExecError(fmt::format("rank {}: no word from rank {} within {} s (setup message {:#x})", rank_,
                                from_rank, timeout_s_, key));
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
    if (!verdict.empty()) throw InputError(verdict);
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
  if (!verdict.empty()) throw InputError(verdict);
}

void ProcessGroup::finish() {
  barrier(~std::uint64_t{0});
  stop_heartbeat();  // every rank is here: no more silences to watch
  remove_file();  // everyone has joined long ago
  // Every frame of the run has arrived (it was sent before the barrier, on the same ordered
  // connections): say goodbye, close our sending side and wait for the peers to do the same.
  for (auto& connection : connections_) {
    if (!connection) continue;
    write_frame(*connection, rank_, connection->peer, kGoodbye, {});
    ::shutdown(connection->fd, SHUT_WR);
  }
  for (auto& reader : readers_) reader.join();
  readers_.clear();
}

}  // namespace zb::exec
