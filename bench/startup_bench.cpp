// Whole-process times of zbsim commands against another zbsim binary (e.g. main's build), in
// paired, interleaved runs: per round each command runs once under each binary, which goes first
// alternating, so drift and the machine's other load hit both alike. Prints a table of medians
// (wall clock, and the CPU time the process used, which the load of a shared machine inflates
// less) and their ratio, and whether the two binaries printed the same bytes.
//
//   ./bench/zb_bench_startup --baseline /work/main/build/sim/cli/zbsim [--runs 40] [--zbsim PATH]
//   ./bench/zb_bench_startup --baseline OTHER --only help,export    # a subset of the cases
#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

struct Case {
  std::string name;
  std::vector<std::string> args;  // after the binary
};

// The paper's 1.5B costs (Qi et al., table 1 setup), which the official comparison uses too.
std::vector<std::string> paper_problem(int p, int m, const char* limit) {
  return {"--p", std::to_string(p), "--m", std::to_string(m), "--tf", "18.522", "--tb", "18.086", "--tw", "9.337",
          "--tcomm", "0.601", "--mem-limit", limit};
}

std::vector<Case> default_cases() {
  std::vector<Case> cases{{"help", {"--help"}}};
  auto add_export = [&](std::string name, int p, int m, const char* limit) {
    std::vector<std::string> args{"export", "--schedule", "zb-auto", "--to", "text"};
    for (std::string& arg : paper_problem(p, m, limit)) args.push_back(std::move(arg));
    cases.push_back({std::move(name), std::move(args)});
  };
  add_export("export", 32, 256, "1p");
  for (const auto& [p, m] : {std::pair{16, 128}, std::pair{32, 256}, std::pair{64, 512}}) {
    for (const char* limit : {"1p", "2p"}) add_export(fmt::format("zb-auto p{} m{} {}", p, m, limit), p, m, limit);
  }
  return cases;
}

struct Sample {
  double wall_s = 0;  // spawn to reaped
  double cpu_s = 0;   // user + system time of the process
};

// Runs `binary args` with stdout into `out_fd` (or /dev/null) and stderr to /dev/null; nullopt
// when it did not exit with 0.
std::optional<Sample> run_once(const std::string& binary, const std::vector<std::string>& args, int out_fd) {
  std::vector<char*> argv{const_cast<char*>(binary.c_str())};
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (out_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  }
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  const auto start = Clock::now();
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return std::nullopt;
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0) {
  }
  Sample sample;
  sample.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  auto seconds = [](const timeval& time) { return static_cast<double>(time.tv_sec) + 1e-6 * static_cast<double>(time.tv_usec); };
  sample.cpu_s = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  return sample;
}

// What a command prints, through a temporary file (outputs can be megabytes).
std::string output_of(const std::string& binary, const std::vector<std::string>& args) {
  char path[] = "/tmp/zb_bench_startup-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return {};
  unlink(path);
  std::string bytes;
  if (run_once(binary, args, fd)) {
    lseek(fd, 0, SEEK_SET);
    char buffer[65536];
    for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) bytes.append(buffer, static_cast<std::size_t>(n));
  }
  close(fd);
  return bytes;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

std::vector<std::string> split(std::string_view text) {
  std::vector<std::string> parts;
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    parts.emplace_back(text.substr(at, comma - at));
    at = comma + 1;
  }
  return parts;
}

[[noreturn]] void usage(const char* message) {
  std::fprintf(stderr,
               "zb_bench_startup: %s\nusage: zb_bench_startup --baseline ZBSIM [--zbsim ZBSIM] [--runs N] "
               "[--only NAME,...]\n",
               message);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string ours = ZBSIM_PATH;
  std::string baseline;
  int runs = 40;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) usage(fmt::format("{} needs a value", flag).c_str());
    const char* value = argv[++i];
    if (flag == "--baseline") {
      baseline = value;
    } else if (flag == "--zbsim") {
      ours = value;
    } else if (flag == "--runs") {
      runs = std::atoi(value);
      if (runs < 1) usage("--runs must be >= 1");
    } else if (flag == "--only") {
      only = split(value);
    } else {
      usage(fmt::format("unknown flag {}", flag).c_str());
    }
  }
  if (baseline.empty()) usage("--baseline is required");
  std::vector<Case> cases;
  for (Case& one : default_cases()) {
    const bool wanted = only.empty() || std::any_of(only.begin(), only.end(), [&](const std::string& name) {
                          return one.name == name || one.name.starts_with(name + " ");
                        });
    if (wanted) cases.push_back(std::move(one));
  }
  if (cases.empty()) usage("--only matches no case");

  std::vector<std::vector<Sample>> ours_s(cases.size()), baseline_s(cases.size());
  // What any process costs here (fork, exec, exit): /bin/true, timed in the same rounds.
  std::vector<Sample> floor_s;
  for (int round = 0; round < runs; ++round) {
    if (const std::optional<Sample> sample = run_once("/bin/true", {}, -1)) floor_s.push_back(*sample);
    for (std::size_t c = 0; c < cases.size(); ++c) {
      for (int turn = 0; turn < 2; ++turn) {
        const bool ours_now = (turn == 0) == (round % 2 == 0);
        const std::string& binary = ours_now ? ours : baseline;
        const std::optional<Sample> sample = run_once(binary, cases[c].args, -1);
        if (!sample) {
          std::fprintf(stderr, "zb_bench_startup: %s failed on '%s'\n", binary.c_str(), cases[c].name.c_str());
          return 1;
        }
        (ours_now ? ours_s : baseline_s)[c].push_back(*sample);
      }
    }
  }

  fmt::print("ours:     {}\nbaseline: {}\n{} paired runs per case, interleaved; medians in ms per process\n", ours,
             baseline, runs);
  auto median_ms = [](const std::vector<Sample>& samples, double Sample::*field) {
    std::vector<double> values;
    for (const Sample& sample : samples) values.push_back(sample.*field * 1e3);
    return values.empty() ? 0.0 : median(values);
  };
  fmt::print("process floor (/bin/true): {:.2f} ms wall, {:.2f} ms cpu\n\n", median_ms(floor_s, &Sample::wall_s),
             median_ms(floor_s, &Sample::cpu_s));
  fmt::print("{:<22} {:>9} {:>9} {:>7}   {:>9} {:>9} {:>7}  {}\n", "case", "wall ours", "baseline", "ratio", "cpu ours",
             "baseline", "ratio", "same output");
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const double wall = median_ms(ours_s[c], &Sample::wall_s);
    const double wall_base = median_ms(baseline_s[c], &Sample::wall_s);
    const double cpu = median_ms(ours_s[c], &Sample::cpu_s);
    const double cpu_base = median_ms(baseline_s[c], &Sample::cpu_s);
    const bool same = output_of(ours, cases[c].args) == output_of(baseline, cases[c].args);
    fmt::print("{:<22} {:>9.2f} {:>9.2f} {:>6.1f}x   {:>9.2f} {:>9.2f} {:>6.1f}x  {}\n", cases[c].name, wall, wall_base,
               wall_base / wall, cpu, cpu_base, cpu_base / cpu, same ? "yes" : "NO");
  }
  return 0;
}
