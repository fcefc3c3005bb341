// Which GPU a process of a multi-process CUDA run uses: --devices, the launcher's local rank, or
// rank % GPUs (no GPU needed).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "exec/cuda/detail/local_gpu.h"
#include "sim/support/error.h"

namespace zb::exec::cuda {
namespace {

// A fake environment: only the variables given are set.
EnvLookup env_of(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

std::string message_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const InputError& error) {
    return error.what();
  }
  return "(no InputError)";
}

TEST(ProcessGpuFlag, EmptyMeansTheLocalRanksGpuAndCudaGNamesOne) {
  EXPECT_EQ(parse_process_gpu(""), std::nullopt);
  EXPECT_EQ(parse_process_gpu("cuda:3"), 3);
  EXPECT_EQ(parse_process_gpu("cuda:0"), 0);
}

TEST(ProcessGpuFlag, RefusesVirtualDevicesListsAndMalformedText) {
  EXPECT_NE(message_of([] { parse_process_gpu("virtual:4"); }).find("one GPU per process"), std::string::npos);
  EXPECT_NE(message_of([] { parse_process_gpu("virtual:2@1"); }).find("--devices 'virtual:2@1'"), std::string::npos);
  EXPECT_NE(message_of([] { parse_process_gpu("cuda:0,1"); }).find("one GPU per process"), std::string::npos);
  for (const char* text : {"cuda:", "cuda:a", "cuda:-1", "gpu:0", "0"}) {
    EXPECT_THROW(parse_process_gpu(text), InputError) << text;
  }
}

TEST(LocalGpu, TheLaunchersLocalRankInOrder) {
  EXPECT_EQ(local_gpu(5, 4, env_of({{"SLURM_LOCALID", "1"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "2"}, {"LOCAL_RANK", "3"}})), 1);
  EXPECT_EQ(local_gpu(5, 4, env_of({{"OMPI_COMM_WORLD_LOCAL_RANK", "2"}, {"LOCAL_RANK", "3"}})), 2);
  EXPECT_EQ(local_gpu(5, 4, env_of({{"LOCAL_RANK", "3"}})), 3);
}

TEST(LocalGpu, WithoutALauncherRankModuloGpus) {
  EXPECT_EQ(local_gpu(0, 4, env_of({})), 0);
  EXPECT_EQ(local_gpu(6, 4, env_of({})), 2);
  EXPECT_EQ(local_gpu(3, 1, env_of({})), 0);
}

TEST(LocalGpu, OneVisibleGpuIsThisProcesssWhateverTheLocalRank) {
  EXPECT_EQ(local_gpu(3, 1, env_of({{"SLURM_LOCALID", "3"}})), 0);
}

TEST(LocalGpu, RefusesALocalRankBeyondTheGpusAndMalformedValues) {
  const std::string beyond = message_of([] { local_gpu(5, 4, env_of({{"SLURM_LOCALID", "5"}})); });
  EXPECT_NE(beyond.find("local rank 5 (SLURM_LOCALID)"), std::string::npos) << beyond;
  EXPECT_NE(beyond.find("4 GPUs"), std::string::npos) << beyond;
  EXPECT_THROW(local_gpu(0, 4, env_of({{"LOCAL_RANK", "x"}})), InputError);
  EXPECT_THROW(local_gpu(0, 4, env_of({{"LOCAL_RANK", "-1"}})), InputError);
  EXPECT_THROW(local_gpu(0, 0, env_of({})), InputError);
}

}  // namespace
}  // namespace zb::exec::cuda
