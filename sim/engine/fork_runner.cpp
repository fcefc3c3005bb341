// A simulation in a forked child (child_process.h), its exception carried back as a tagged message.
#include "sim/engine/fork_runner.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>

#include "sim/schedule/child_process.h"
#include "sim/schedule/error.h"

namespace zb::engine {

namespace {

// Message tags: the first byte of what the child writes.
constexpr char kOk = 'O';
constexpr char kScheduleError = 'S';
constexpr char kInputError = 'I';
constexpr char kError = 'E';
constexpr char kOther = 'X';

// The child's side: the tag and the payload, or the exception's type and message.
std::string tagged_result(const std::function<std::string()>& body) {
  char tag = kOk;
  std::string payload;
  try {
    payload = body();
  } catch (const ScheduleError& error) {
    tag = kScheduleError;
    payload = error.what();
  } catch (const InputError& error) {
    tag = kInputError;
    payload = error.what();
  } catch (const Error& error) {
    tag = kError;
    payload = error.what();
  } catch (const std::exception& error) {
    tag = kOther;
    payload = error.what();
  } catch (...) {
    tag = kOther;
    payload = "unknown exception";
  }
  const std::uint64_t size = payload.size();
  std::string record(1, tag);
  record.append(reinterpret_cast<const char*>(&size), sizeof size);
  return record + payload;
}

}  // namespace

std::string simulate_in_child(const std::function<std::string()>& body, bool quiet) {
  // No exit handlers, no static destructors: SimGrid's teardown is not needed in a throwaway child.
  const ChildResult child = zb::run_in_child([&](int fd) { return write_all(fd, tagged_result(body)) ? 0 : 1; }, quiet);
  const std::string& bytes = child.bytes;
  constexpr std::size_t kHeader = 1 + sizeof(std::uint64_t);
  std::uint64_t size = 0;
  if (bytes.size() >= kHeader) std::memcpy(&size, bytes.data() + 1, sizeof size);
  if (bytes.size() < kHeader || bytes.size() != kHeader + size) {
    if (child.end == ChildResult::End::signalled) {
      throw Error(fmt::format("SimGrid engine: the simulation process {}; rerun with --verbose to see SimGrid's messages",
                              child.describe()));
    }
    throw Error(fmt::format("SimGrid engine: the simulation process {} without a complete result", child.describe()));
  }
  std::string payload = bytes.substr(kHeader);
  switch (bytes[0]) {
    case kOk: return payload;
    case kScheduleError: throw ScheduleError(payload);
    case kInputError: throw InputError(payload);
    case kError: throw Error(payload);
    default: throw Error(fmt::format("SimGrid engine: internal failure: {}", payload));
  }
}

}  // namespace zb::engine
