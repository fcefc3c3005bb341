// Nsight Systems SQLite exports (see nsys_report.h).
#include "sim/formats/nsys_report.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include "sim/core/limits.h"
#include "sim/support/atomic_file.h"
#include "sim/support/error.h"

namespace zb {

namespace {

constexpr std::string_view kPrefix = "PP:";

// NVTX_EVENTS.eventType of ranges (NvtxPushPopRange, NvtxStartEndRange): marks, domain and
// category names share the table.
constexpr int kPushPopRange = 59;
constexpr int kStartEndRange = 60;

// globalTid and globalPid pack the process and thread ids: pid in bits 24..47, tid in 0..23.
std::int64_t pid_of(std::int64_t global) { return (global >> 24) & 0xFFFFFF; }
std::int64_t tid_of(std::int64_t global) { return global & 0xFFFFFF; }

class Database {
 public:
  explicit Database(const std::string& path) : path_(path) {
    // immutable: no journal, no lock, nothing written; the URI form takes the path as given.
    const std::string uri = "file:" + escaped(path) + "?immutable=1";
    sqlite3* db = nullptr;
    const int opened = sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
    db_.reset(db);
    if (opened != SQLITE_OK) fail("cannot open as SQLite");
    // A file's own SQL (views, triggers, functions in its schema) is never trusted.
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  }

  // Whether `table` exists as a table (a view of that name is refused).
  bool has_table(std::string_view table) {
    bool found = false;
    query("SELECT type FROM sqlite_master WHERE name = ?1", {std::string(table)}, [&](sqlite3_stmt* row) {
      const std::string type = text(row, 0);
      if (type != "table") fail(fmt::format("'{}' is a {}, not a table: not an Nsight Systems export", table, type));
      found = true;
    });
    return found;
  }

  bool has_column(std::string_view table, std::string_view column) {
    bool found = false;
    query(fmt::format("SELECT name FROM pragma_table_info('{}')", table), {}, [&](sqlite3_stmt* row) {
      found = found || text(row, 0) == column;
    });
    return found;
  }

  template <typename Row>
  void query(const std::string& sql, std::initializer_list<std::string> bound, Row&& on_row) {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db_.get(), sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) fail(sqlite3_errmsg(db_.get()));
    const std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> statement(raw, sqlite3_finalize);
    int index = 1;
    for (const std::string& value : bound) {
      sqlite3_bind_text(raw, index++, value.c_str(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    }
    std::size_t rows = 0;
    for (;;) {
      const int step = sqlite3_step(raw);
      if (step == SQLITE_DONE) break;
      if (step != SQLITE_ROW) fail(sqlite3_errmsg(db_.get()));
      if (++rows > static_cast<std::size_t>(kMaxActions) * 10) fail("more rows than a profile of one step holds");
      on_row(raw);
    }
  }

  static std::string text(sqlite3_stmt* row, int column) {
    const unsigned char* value = sqlite3_column_text(row, column);
    return value ? std::string(reinterpret_cast<const char*>(value)) : std::string();
  }
  static bool is_null(sqlite3_stmt* row, int column) { return sqlite3_column_type(row, column) == SQLITE_NULL; }
  static std::int64_t integer(sqlite3_stmt* row, int column) { return sqlite3_column_int64(row, column); }

  [[noreturn]] void fail(std::string_view what) const { throw InputError(fmt::format("{}: {}", path_, what)); }

 private:
  static std::string escaped(const std::string& path) {
    std::string out;
    for (char c : path) {
      if (c == '%' || c == '?' || c == '#') out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
      else out += c;
    }
    return out;
  }

  std::string path_;
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> db_{nullptr, sqlite3_close};
};

void read_metadata(Database& db, NsysReport& report) {
  // The table's name changed between schema versions.
  for (const char* table : {"EXPORT_META_DATA", "META_DATA_EXPORT"}) {
    if (!db.has_table(table)) continue;
    db.query(fmt::format("SELECT name, value FROM {}", table), {}, [&](sqlite3_stmt* row) {
      const std::string name = Database::text(row, 0);
      if (name == "EXPORT_PRODUCT_VERSION") report.nsys_version = Database::text(row, 1);
      if (name == "EXPORT_SCHEMA_VERSION") report.schema_version = Database::text(row, 1);
    });
  }
  if (report.schema_version.empty()) {
    db.fail("no export metadata (EXPORT_META_DATA or META_DATA_EXPORT): not written by nsys export --type sqlite");
  }
}

void read_ranges(Database& db, NsysReport& report) {
  if (!db.has_table("NVTX_EVENTS")) return;
  // A range's text is inline (text) or registered once (textId into StringIds).
  const bool text_ids = db.has_column("NVTX_EVENTS", "textId") && db.has_table("StringIds");
  const std::string sql = fmt::format(
      "SELECT e.start, e.end, e.globalTid, e.text{} FROM NVTX_EVENTS e{} WHERE e.eventType IN ({}, {}) AND e.end "
      "IS NOT NULL ORDER BY e.start",
      text_ids ? ", s.value" : "", text_ids ? " LEFT JOIN StringIds s ON s.id = e.textId" : "", kPushPopRange,
      kStartEndRange);
  db.query(sql, {}, [&](sqlite3_stmt* row) {
    NsysRange range;
    range.start_ns = Database::integer(row, 0);
    range.end_ns = Database::integer(row, 1);
    range.pid = pid_of(Database::integer(row, 2));
    range.tid = tid_of(Database::integer(row, 2));
    range.text = Database::is_null(row, 3) && text_ids ? Database::text(row, 4) : Database::text(row, 3);
    if (range.end_ns < range.start_ns) db.fail(fmt::format("NVTX range '{}' ends before it starts", range.text));
    report.ranges.push_back(std::move(range));
  });
}

void read_kernels(Database& db, NsysReport& report) {
  if (!db.has_table("CUPTI_ACTIVITY_KIND_KERNEL")) return;
  const bool names = db.has_table("StringIds");
  const std::string sql = fmt::format(
      "SELECT k.start, k.end, k.deviceId, k.streamId, k.correlationId, k.globalPid{} FROM CUPTI_ACTIVITY_KIND_KERNEL "
      "k{} ORDER BY k.start",
      names ? ", s.value" : "", names ? " LEFT JOIN StringIds s ON s.id = k.shortName" : "");
  db.query(sql, {}, [&](sqlite3_stmt* row) {
    NsysKernel kernel;
    kernel.start_ns = Database::integer(row, 0);
    kernel.end_ns = Database::integer(row, 1);
    kernel.device = static_cast<int>(std::clamp<std::int64_t>(Database::integer(row, 2), 0, 1 << 20));
    kernel.stream = static_cast<int>(std::clamp<std::int64_t>(Database::integer(row, 3), 0, 1 << 30));
    kernel.correlation = Database::integer(row, 4);
    kernel.pid = pid_of(Database::integer(row, 5));
    if (names) kernel.name = Database::text(row, 6);
    report.kernels.push_back(std::move(kernel));
  });
  if (!db.has_table("CUPTI_ACTIVITY_KIND_RUNTIME")) return;
  db.query("SELECT start, end, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start", {},
           [&](sqlite3_stmt* row) {
             NsysRuntimeCall call;
             call.start_ns = Database::integer(row, 0);
             call.end_ns = Database::integer(row, 1);
             call.pid = pid_of(Database::integer(row, 2));
             call.tid = tid_of(Database::integer(row, 2));
             call.correlation = Database::integer(row, 3);
             report.runtime_calls.push_back(call);
           });
}

}  // namespace

bool is_sqlite_file(std::string_view first_bytes) {
  static constexpr std::string_view kMagic("SQLite format 3\0", 16);
  return first_bytes.substr(0, kMagic.size()) == kMagic;
}

bool is_sqlite_path(const std::string& path) {
  std::error_code error;
  return std::filesystem::is_regular_file(path, error) && is_sqlite_file(read_file_head(path, 16));
}

NsysReport read_nsys_report(const std::string& path) {
  Database db(path);
  NsysReport report;
  report.source = path;
  read_metadata(db, report);
  read_ranges(db, report);
  read_kernels(db, report);
  return report;
}

std::vector<ProfiledRank> nsys_profiled_ranks(const NsysReport& report) {
  // The kernels each thread's runtime calls launched, by thread and time.
  std::unordered_map<std::int64_t, const NsysKernel*> kernel_of;
  for (const NsysKernel& kernel : report.kernels) kernel_of.emplace(kernel.correlation, &kernel);
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<const NsysRuntimeCall*>> calls_of;
  for (const NsysRuntimeCall& call : report.runtime_calls) {
    if (kernel_of.count(call.correlation)) calls_of[{call.pid, call.tid}].push_back(&call);
  }
  // The GPU time of what a range launched: [first kernel start, last kernel end], if any.
  auto device_time = [&](const NsysRange& range) -> std::optional<std::pair<std::int64_t, std::int64_t>> {
    const auto it = calls_of.find({range.pid, range.tid});
    if (it == calls_of.end()) return std::nullopt;
    const auto& calls = it->second;  // by start
    auto call = std::lower_bound(calls.begin(), calls.end(), range.start_ns,
                                 [](const NsysRuntimeCall* c, std::int64_t t) { return c->start_ns < t; });
    std::optional<std::pair<std::int64_t, std::int64_t>> span;
    for (; call != calls.end() && (*call)->start_ns <= range.end_ns; ++call) {
      const NsysKernel& kernel = *kernel_of.at((*call)->correlation);
      if (!span) span = std::pair{kernel.start_ns, kernel.end_ns};
      span->first = std::min(span->first, kernel.start_ns);
      span->second = std::max(span->second, kernel.end_ns);
    }
    return span;
  };
  std::map<std::int64_t, ProfiledRank> by_process;
  for (std::size_t i = 0; i < report.ranges.size(); ++i) {
    const NsysRange& range = report.ranges[i];
    if (std::string_view(range.text).substr(0, kPrefix.size()) != kPrefix) continue;
    ProfiledRank& rank = by_process[range.pid];
    rank.shared_clock = true;  // one session clock for every process of the report
    const auto gpu = device_time(range);
    add_labelled_action(std::string_view(range.text).substr(kPrefix.size()), gpu ? gpu->first : range.start_ns,
                        gpu ? gpu->second : range.end_ns,
                        fmt::format("{}: NVTX range {} ('{}')", report.source, i, range.text.substr(0, 80)), rank);
  }
  if (by_process.empty()) {
    throw InputError(fmt::format(
        "{}: no NVTX range labelled \"PP:\" ({} ranges, {} kernels): not a profile of PyTorch's pipeline runtime (profile "
        "it under torch.autograd.profiler.emit_nvtx(), whose ranges carry the record_function labels)",
        report.source, report.ranges.size(), report.kernels.size()));
  }
  std::vector<ProfiledRank> ranks;
  for (auto& [pid, rank] : by_process) {
    rank.source = by_process.size() > 1 ? fmt::format("{} (process {})", report.source, pid) : report.source;
    number_rank_by_its_stages(rank);
    ranks.push_back(std::move(rank));
  }
  return ranks;
}

}  // namespace zb
