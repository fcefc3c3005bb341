// A whole sweep: the points of a shard, resuming an earlier run, appending rows as they finish
// and rewriting both result files in point order; merging the files of several shards.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/app/sweep/grid.h"
#include "sim/app/sweep/row.h"

namespace zb::sweep {

// Shard I of N holds the points i with i % N == I-1 (index is 0-based here).
struct Shard {
  long index = 0;
  long count = 1;

  bool contains(long point) const { return point % count == index; }
  // The points of this shard among `total`, ascending.
  std::vector<long> points(long total) const;
};

// "I/N" with 1 <= I <= N (1-based). InputError naming --shard otherwise.
Shard parse_shard(const std::string& text);

struct RunOptions {
  std::string out;  // the results CSV; the JSON lines go beside it (jsonl_path_for)
  int jobs = 1;
  Shard shard;
  bool resume = false;    // keep the complete rows already in `out` and run only the missing points
  bool progress = false;  // draw a progress bar on stderr
};

struct RunReport {
  long total = 0;                        // points of the grid
  long selected = 0;                     // points of the shard
  long kept = 0;                         // rows kept from an earlier run
  long ran = 0;                          // points run now
  std::map<std::string, long> statuses;  // status -> rows run now
};

// Runs the missing points of the shard and writes `out` and its JSON lines. A resumed run ends
// with the same files as an uninterrupted one. Throws InputError when the rows in `out` belong
// to another grid or shard.
RunReport run(const Grid& grid, const RunOptions& options);

// Parallel workers: 1 to 1024 (InputError naming --jobs otherwise); by default one per core.
void check_jobs(int jobs);
int default_jobs();

// Every point of the grid with `jobs` workers, in point order, without files (the Python module).
std::vector<Row> run_rows(const Grid& grid, int jobs);

// "20 ok, 4 over-limit" (statuses in name order), or "nothing to run".
std::string status_summary(const std::map<std::string, long>& statuses);

// What a merge wrote: the points it holds, of how many the grid has (each JSON line says so;
// -1 for rows of a zbsim before 2026-12 that did not), and those it lacks.
struct Merged {
  long points = 0;
  long grid_points = -1;
  std::vector<long> missing;
};

// Merges the result files of one grid (e.g. its shards) into `out`. Throws InputError, writing
// nothing, when a point of the grid is missing (an unfinished shard, a shard not given, a run cut
// short), naming the first missing points, unless `allow_partial`; or when the files disagree on
// the grid's size.
Merged merge(const std::vector<std::string>& csv_paths, const std::string& out, bool allow_partial = false);

}  // namespace zb::sweep
