// A tag byte, the payload's size and the payload (see tagged_result.h); native byte order, since
// both ends are this build.
#include "sim/simgrid/detail/tagged_result.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>

#include "sim/support/error.h"

namespace zb::engine {

namespace {

// Message tags: the first byte of a record.
constexpr char kOk = 'O';
constexpr char kScheduleError = 'S';
constexpr char kInputError = 'I';
constexpr char kError = 'E';
constexpr char kOther = 'X';

constexpr std::size_t kHeader = 1 + sizeof(std::uint64_t);

}  // namespace

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

bool is_tagged_record(std::string_view bytes) {
  if (bytes.size() < kHeader) return false;
  std::uint64_t size = 0;
  std::memcpy(&size, bytes.data() + 1, sizeof size);
  return bytes.size() - kHeader == size;
}

std::string untag_result(std::string_view record) {
  std::string payload(record.substr(kHeader));
  switch (record[0]) {
    case kOk: return payload;
    case kScheduleError: throw ScheduleError(payload);
    case kInputError: throw InputError(payload);
    case kError: throw Error(payload);
    default: throw Error(fmt::format("SimGrid engine: internal failure: {}", payload));
  }
}

}  // namespace zb::engine
