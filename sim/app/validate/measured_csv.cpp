// The measured table through libcsv (RFC 4180: quoted cells with commas, quotes and line breaks).
#include "sim/app/validate/measured_csv.h"

#include <csv.h>
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "sim/support/error.h"
#include "sim/support/atomic_file.h"

namespace zb::validate {

const std::vector<std::string> kMeasuredColumns = {
    "id",        "source",   "model",       "layers",  "hidden",         "heads",
    "kv_heads",  "ffn_hidden", "vocab",     "seq_len", "moe_experts",    "moe_topk",
    "moe_shared_experts",    "moe_ffn_hidden",          "gpu",
    "gpus",      "nodes_gpus_per_node",     "interconnect", "framework", "precision",
    "gbs",       "mbs",      "tp",          "pp",      "vp",             "cp",
    "ep",        "dp",       "fsdp",        "sequence_parallel",      "recompute",      "schedule",
    "step_time_s", "tokens_per_s_per_gpu",  "model_tflops_per_gpu",      "mfu",
    "notes"};

const std::string& MeasuredRow::cell(std::string_view column) const {
  const auto found = cells.find(column);
  if (found == cells.end()) throw Error(fmt::format("measured row at line {}: no column '{}'", line, column));
  return found->second;
}

namespace {

// What libcsv's callbacks build: records of cells, each with the line it starts on.
struct Records {
  std::vector<std::vector<std::string>> cells;
  std::vector<int> lines;
  std::vector<std::string> current;
  int line = 1;  // where the next record starts

  static void on_cell(void* text, std::size_t size, void* self) {
    static_cast<Records*>(self)->current.emplace_back(static_cast<const char*>(text), size);
  }
  static void on_record(int, void* self) {
    auto& records = *static_cast<Records*>(self);
    int breaks = 0;  // line breaks inside quoted cells
    for (const std::string& cell : records.current) breaks += static_cast<int>(std::count(cell.begin(), cell.end(), '\n'));
    records.cells.push_back(std::move(records.current));
    records.lines.push_back(records.line);
    records.current.clear();
    records.line += 1 + breaks;
  }
};

}  // namespace

MeasuredTable parse_measured_csv(std::string_view text, const std::string& source) {
  Records records;
  // Leading comment lines are the file's provenance, not data.
  while (!text.empty() && text.front() == '#') {
    const std::size_t end = text.find('\n');
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    ++records.line;
  }
  csv_parser parser;
  if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI) != 0) throw Error("libcsv: cannot initialise a parser");
  const std::size_t parsed = csv_parse(&parser, text.data(), text.size(), Records::on_cell, Records::on_record, &records);
  const bool ok = parsed == text.size() && csv_fini(&parser, Records::on_cell, Records::on_record, &records) == 0;
  const std::string error = ok ? "" : csv_strerror(csv_error(&parser));
  csv_free(&parser);
  if (!ok) throw InputError(fmt::format("{}: not CSV near line {}: {}", source, records.line, error));
  if (records.cells.empty()) throw InputError(fmt::format("{}: no header line (expected the columns {}, ...)", source, kMeasuredColumns.front()));

  const std::vector<std::string>& header = records.cells.front();
  for (const std::string& column : kMeasuredColumns) {
    if (std::find(header.begin(), header.end(), column) == header.end()) {
      throw InputError(fmt::format("{}:{}: column '{}' missing (tests/data/measured/README.md lists the columns)", source,
                                   records.lines.front(), column));
    }
  }
  MeasuredTable table;
  table.path = source;
  std::set<std::string, std::less<>> ids;
  for (std::size_t r = 1; r < records.cells.size(); ++r) {
    const auto& cells = records.cells[r];
    const int line = records.lines[r];
    if (cells.size() == 1 && cells.front().empty()) continue;  // a blank line
    if (cells.size() != header.size()) {
      throw InputError(fmt::format("{}:{}: {} cells, the header has {}", source, line, cells.size(), header.size()));
    }
    MeasuredRow row;
    row.line = line;
    for (std::size_t c = 0; c < header.size(); ++c) row.cells.emplace(header[c], cells[c]);
    if (row.id().empty()) throw InputError(fmt::format("{}:{}: column 'id' is empty", source, line));
    if (!ids.insert(row.id()).second) {
      throw InputError(fmt::format("{}:{}: column 'id': '{}' is a duplicate (ids name rows)", source, line, excerpt(row.id())));
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

MeasuredTable read_measured_csv(const std::string& path) { return parse_measured_csv(read_file(path), path); }

}  // namespace zb::validate
