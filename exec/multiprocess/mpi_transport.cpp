// MPI under multi-process runs: when to use it, and the transport over zbexec's MPI module.
#include "exec/multiprocess/mpi_transport.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <charconv>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "exec/runtime/exec_error.h"
#include "exec/mpi/mpi_module_abi.h"
#include "sim/support/error.h"

namespace zb::exec {

MpiMode parse_mpi_mode(std::string_view text) {
  if (text == "auto") return MpiMode::automatic;
  if (text == "on") return MpiMode::on;
  if (text == "off") return MpiMode::off;
  throw InputError(fmt::format("--mpi '{}': expected auto, on or off", text));
}

std::string mpi_launch_reason(MpiMode mode, const EnvLookup& env) {
  if (mode == MpiMode::off) return {};
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS", "PMI_SIZE"}) {
    const char* value = env(name);
    if (value == nullptr || *value == '\0') continue;
    int size = 0;
    const char* end = value + std::strlen(value);
    const auto [ptr, ec] = std::from_chars(value, end, size);
    if (ec == std::errc() && ptr == end && size > 1) return fmt::format("{}={}", name, value);
  }
  return mode == MpiMode::on ? std::string("--mpi on") : std::string();
}

std::string mpi_module_path() {
  if (const char* path = std::getenv("ZBEXEC_MPI_MODULE"); path != nullptr && *path != '\0') return path;
  char self[PATH_MAX] = {};
  const ssize_t length = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0) return "libzbexec_mpi.so";
  return (std::filesystem::path(std::string(self, static_cast<std::size_t>(length))).parent_path() /
          "libzbexec_mpi.so").string();
}

namespace {

class MpiTransport final : public Transport {
 public:
  explicit MpiTransport(const zb_mpi_api* api) : api_(api) {
    char text[1024] = {};
    api_->describe(text, sizeof text);
    describe_ = text;
  }
  int rank() const override { return api_->rank(); }
  int world() const override { return api_->world(); }
  std::string describe() const override { return describe_; }

  void send(int to_rank, int tag, std::span<const std::byte> body) override {
    char error[512] = {};
    if (api_->send(to_rank, tag, body.data(), body.size(), error, sizeof error) != 0) {
      throw ExecError(fmt::format("rank {}: sending to rank {}: {}", rank(), to_rank, error));
    }
  }

  void post(int to_rank, int tag, std::span<const std::byte> body) override {
    char error[512] = {};
    if (api_->post(to_rank, tag, body.data(), body.size(), error, sizeof error) != 0) {
      throw ExecError(fmt::format("rank {}: sending to rank {}: {}", rank(), to_rank, error));
    }
  }

  TransportMessage receive() override {
    char error[512] = {};
    TransportMessage message;
    std::size_t size = 0;
    void* handle = nullptr;
    if (api_->probe(&message.from, &message.tag, &size, &handle, error, sizeof error) != 0) {
      throw ExecError(fmt::format("rank {}: receiving: {}", rank(), error));
    }
    message.body.resize(size);
    if (api_->take(handle, message.body.data(), size, error, sizeof error) != 0) {
      throw ExecError(fmt::format("rank {}: receiving from rank {}: {}", rank(), message.from, error));
    }
    return message;
  }

  void finalize() override { api_->finalize(); }
  [[noreturn]] void abort_all(int code) override {
    api_->abort_all(code);
    std::_Exit(code);
  }

 private:
  const zb_mpi_api* api_;
  std::string describe_;
};

}  // namespace

std::unique_ptr<Transport> start_mpi(const std::string& reason) {
  const std::string path = mpi_module_path();
  // RTLD_GLOBAL: Open MPI loads its own components with dlopen, and they look up libmpi's
  // symbols in the global scope.
  void* module = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (module == nullptr) {
    throw InputError(fmt::format(
        "this is a multi-process run ({}), but zbexec's MPI module cannot be loaded: {} (it needs "
        "Open MPI's libmpi.so.40, e.g. Debian's libopenmpi-dev; set ZBEXEC_MPI_MODULE to its path, "
        "or run in one process with --mpi off)", reason, ::dlerror()));
  }
  using Entry = const zb_mpi_api* (*)();
  auto entry = reinterpret_cast<Entry>(::dlsym(module, "zb_mpi_module"));
  const zb_mpi_api* api = entry != nullptr ? entry() : nullptr;
  if (api == nullptr || api->abi_version != ZB_MPI_ABI_VERSION) {
    throw InputError(fmt::format("{}: not a zbexec MPI module of this version (interface {})", path,
                                 ZB_MPI_ABI_VERSION));
  }
  char error[1024] = {};
  if (api->init(error, sizeof error) != 0) throw ExecError(fmt::format("MPI ({}): {}", reason, error));
  // The module stays loaded for the life of the process: MPI cannot be unloaded and restarted.
  return std::make_unique<MpiTransport>(api);
}

}  // namespace zb::exec
