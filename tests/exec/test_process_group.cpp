// The process group of multi-process runs, its ranks played by threads of this test (the wire is
// real TCP on localhost either way): joining, ordered frames through rank 0, the setup mailbox,
// agreement on the run, clocks, and what the others hear when a rank vanishes or never comes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <unistd.h>

#include "exec/exec_error.h"
#include "sim/schedule/atomic_file.h"
#include "exec_test_support.h"
#include "exec/process_group.h"
#include "sim/schedule/error.h"

namespace zb::exec {
namespace {

using test::fresh_rendezvous_file;
using test::on_ranks;

Rendezvous rendezvous(const std::string& file, int rank, int world, double timeout_s = 20) {
  Rendezvous r;
  r.rank = rank;
  r.world = world;
  r.file = file;
  r.timeout_s = timeout_s;
  return r;
}

std::vector<std::byte> bytes(int value) {
  std::vector<std::byte> out(sizeof value);
  std::memcpy(out.data(), &value, sizeof value);
  return out;
}

int int_of(const std::vector<std::byte>& body) {
  int value = 0;
  std::memcpy(&value, body.data(), sizeof value);
  return value;
}

TEST(ProcessGroup, RanksJoinAndFramesArriveInOrderThroughTheHub) {
  const std::string file = fresh_rendezvous_file("order");
  constexpr int kWorld = 3;
  constexpr int kFrames = 200;
  // Rank 1 sends numbered frames to rank 2 (forwarded by rank 0) and to rank 0; each receiver
  // records what arrives, in arrival order.
  const auto received = on_ranks<std::vector<int>>(kWorld, [&](int rank) {
    auto group = ProcessGroup::join(rendezvous(file, rank, kWorld));
    EXPECT_EQ(group->rank(), rank);
    EXPECT_EQ(group->world(), kWorld);
    std::mutex mutex;
    std::vector<int> got;
    group->set_handler(
        [&](int from, std::uint8_t kind, std::vector<std::byte> body) {
          EXPECT_EQ(from, 1);
          EXPECT_EQ(kind, 7);
          std::lock_guard lock(mutex);
          got.push_back(int_of(body));
        },
        [](const std::string& reason) { ADD_FAILURE() << "unexpected failure: " << reason; });
    if (rank == 1) {
      for (int i = 0; i < kFrames; ++i) {
        group->send(2, 7, bytes(i));
        group->send(0, 7, bytes(-i));
      }
    }
    group->finish();  // every frame sent before it has arrived after it
    std::lock_guard lock(mutex);
    return got;
  });
  for (int i = 0; i < kFrames; ++i) {
    ASSERT_EQ(received[2].at(static_cast<std::size_t>(i)), i);
    ASSERT_EQ(received[0].at(static_cast<std::size_t>(i)), -i);
  }
  EXPECT_TRUE(received[1].empty());
  EXPECT_FALSE(std::filesystem::exists(file)) << "rank 0 removes the rendezvous file at the end";
}

TEST(ProcessGroup, EpochsAgreeAndSetupMessagesFindTheirReceiver) {
  const std::string file = fresh_rendezvous_file("epoch");
  constexpr int kWorld = 4;
  const auto epochs = on_ranks<std::chrono::steady_clock::time_point>(kWorld, [&](int rank) {
    auto group = ProcessGroup::join(rendezvous(file, rank, kWorld));
    // Every rank sends its rank to its right neighbour, keyed; receives from its left one.
    group->send_setup((rank + 1) % kWorld, 42, bytes(rank * 10));
    EXPECT_EQ(int_of(group->recv_setup((rank + kWorld - 1) % kWorld, 42)), ((rank + kWorld - 1) % kWorld) * 10);
    group->barrier(5);
    group->finish();
    return group->epoch();
  });
  // One process, one steady clock: the aligned epochs differ by the estimate's error only.
  for (int r = 1; r < kWorld; ++r) {
    const auto error = std::chrono::abs(epochs[static_cast<std::size_t>(r)] - epochs[0]);
    EXPECT_LT(error, std::chrono::milliseconds(5)) << "rank " << r;
  }
}

TEST(ProcessGroup, AgreementNamesTheRankAndTheLineThatDiffer) {
  const std::string file = fresh_rendezvous_file("agree");
  constexpr int kWorld = 3;
  const auto errors = on_ranks<std::string>(kWorld, [&](int rank) {
    auto group = ProcessGroup::join(rendezvous(file, rank, kWorld));
    std::string error;
    try {
      group->agree(rank == 2 ? "schedule zb-h1\nsteps 4\n" : "schedule zb-h1\nsteps 3\n");
    } catch (const InputError& e) {
      error = e.what();
    }
    group->agree("the same everywhere");  // a failed agreement leaves the group usable
    group->finish();
    return error;
  });
  for (const auto& error : errors) {
    EXPECT_NE(error.find("rank 2 was started with another run than rank 0"), std::string::npos) << error;
    EXPECT_NE(error.find("line 2: rank 0 has 'steps 3', it has 'steps 4'"), std::string::npos) << error;
  }
}

TEST(ProcessGroup, ARankThatVanishesIsReportedByName) {
  const std::string file = fresh_rendezvous_file("vanish");
  constexpr int kWorld = 3;
  const auto reasons = on_ranks<std::string>(kWorld, [&](int rank) {
    std::promise<std::string> failure;  // outlives the group, whose reader threads report to it
    auto reason = failure.get_future();
    std::once_flag once;
    auto group = ProcessGroup::join(rendezvous(file, rank, kWorld));
    group->set_handler([](int, std::uint8_t, std::vector<std::byte>) {},
                       [&](const std::string& why) { std::call_once(once, [&] { failure.set_value(why); }); });
    group->barrier(1);
    if (rank == 1) {
      group.reset();  // gone without finish(): a crash, as the others see it
      return std::string("gone");
    }
    if (reason.wait_for(std::chrono::seconds(10)) != std::future_status::ready) return std::string("no failure reported");
    const std::string why = reason.get();
    // The mailbox refuses to wait for a broken group.
    EXPECT_THROW(group->recv_setup(1, 9), ExecError);
    return why;
  });
  EXPECT_NE(reasons[0].find("rank 1 disconnected"), std::string::npos) << reasons[0];
  // Rank 2 hears it from the hub (rank 0), whose own disconnection it may see later.
  EXPECT_NE(reasons[2].find("disconnected"), std::string::npos) << reasons[2];
}

TEST(ProcessGroup, JoiningTimesOutNamingTheMissingRanks) {
  const std::string file = fresh_rendezvous_file("timeout");
  const auto errors = on_ranks<std::string>(2, [&](int rank) {
    try {
      // Rank 1 would wait longer: it hears from rank 0 why the join ended.
      ProcessGroup::join(rendezvous(file, rank, 4, rank == 0 ? 1.5 : 20));
    } catch (const ExecError& e) {
      return std::string(e.what());
    }
    return std::string("joined?");
  });
  EXPECT_NE(errors[0].find("after 1.5 s, ranks 2, 3 not joined"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("rank 0 gave up: after 1.5 s, ranks 2, 3 not joined"), std::string::npos) << errors[1];
}

TEST(ProcessGroup, TwoProcessesWithOneRankAreRefused) {
  const std::string file = fresh_rendezvous_file("twice");
  // Ranks 0, 1, 1 and, a second later, 2 of a world of 3: both rank 1s come before the world is
  // complete, one joins and the other is refused by name.
  const std::vector<int> ranks{0, 1, 1, 2};
  const auto outcomes = on_ranks<std::string>(4, [&](int thread) {
    if (thread == 3) std::this_thread::sleep_for(std::chrono::seconds(1));
    try {
      auto group = ProcessGroup::join(rendezvous(file, ranks[static_cast<std::size_t>(thread)], 3, 10));
      group->finish();
      return std::string("joined");
    } catch (const ExecError& e) {
      return std::string(e.what());
    }
  });
  EXPECT_EQ(outcomes[0], "joined");
  EXPECT_EQ(outcomes[3], "joined");
  const std::string& refused = outcomes[1] == "joined" ? outcomes[2] : outcomes[1];
  EXPECT_NE(refused.find("rank 0 refused rank 1: rank 1 joined twice"), std::string::npos)
      << outcomes[1] << " | " << outcomes[2];
}

TEST(ProcessGroup, ARankThatAbandonsTellsEveryoneWhy) {
  const std::string file = fresh_rendezvous_file("abandon");
  const auto errors = on_ranks<std::string>(3, [&](int rank) {
    auto group = ProcessGroup::join(rendezvous(file, rank, 3));
    if (rank == 2) {
      group->abandon("its schedule file is missing");
      return std::string("abandoned");
    }
    try {
      group->barrier(3);  // rank 2 never comes: the failure, not a timeout, ends the wait
    } catch (const ExecError& e) {
      return std::string(e.what());
    }
    return std::string("no failure");
  });
  EXPECT_EQ(errors[0], "rank 2: its schedule file is missing");
  EXPECT_EQ(errors[1], "rank 2: its schedule file is missing");
}

TEST(ProcessGroup, ARankWithAnotherWorldEndsTheJoinAtOnce) {
  const std::string file = fresh_rendezvous_file("world");
  const auto start = std::chrono::steady_clock::now();
  const auto errors = on_ranks<std::string>(3, [&](int rank) {
    if (rank == 2) std::this_thread::sleep_for(std::chrono::milliseconds(300));  // after rank 1
    try {
      ProcessGroup::join(rendezvous(file, rank, rank == 2 ? 4 : 3, 30));
    } catch (const ExecError& e) {
      return std::string(e.what());
    }
    return std::string("joined?");
  });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << "not the 30 s timeout";
  EXPECT_NE(errors[0].find("rank 2 says --world 4 but rank 0 has 3"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("rank 0 gave up: rank 2 says --world 4"), std::string::npos) << errors[1];
  EXPECT_NE(errors[2].find("rank 0 refused rank 2"), std::string::npos) << errors[2];
}

TEST(ProcessGroup, AStrayClientDoesNotHoldUpTheJoin) {
  const std::string file = fresh_rendezvous_file("stray");
  std::atomic<int> joined{0};
  const auto outcomes = on_ranks<std::string>(3, [&](int who) {
    if (who == 2) {
      // Not one of ours: connects to rank 0 and sends half a frame header, then stalls.
      std::optional<nlohmann::json> address;
      while (!address) {
        try {
          address = nlohmann::json::parse(zb::read_file(file));
        } catch (const std::exception&) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
      }
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_port = htons(static_cast<std::uint16_t>((*address)["port"].get<int>()));
      to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) return std::string("no connect");
      ::send(fd, "GET / HT", 8, MSG_NOSIGNAL);
      // Stalls longer than the ranks' join timeout, unless they are through already.
      for (int i = 0; i < 120 && joined < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      ::close(fd);
      return std::string("stray");
    }
    if (who == 1) std::this_thread::sleep_for(std::chrono::milliseconds(500));  // after the stray
    try {
      auto group = ProcessGroup::join(rendezvous(file, who, 2, 9));
      group->finish();
    } catch (const ExecError& e) {
      joined += 2;  // release the stray: the outcome is decided
      return std::string(e.what());
    }
    ++joined;
    return std::string("joined");
  });
  EXPECT_EQ(outcomes[0], "joined");
  EXPECT_EQ(outcomes[1], "joined");
}

TEST(ProcessGroup, RankZeroRemovesOnlyItsOwnRendezvousFile) {
  const std::string file = fresh_rendezvous_file("own");
  {
    auto group = ProcessGroup::join(rendezvous(file, 0, 1));
    // Another run's rank 0 writes the same path while this one runs.
    zb::write_file_atomically(file, R"({"host":"h","port":1,"world":2,"token":"1234"})");
    group->finish();
  }
  EXPECT_TRUE(std::filesystem::exists(file)) << "the other run's file stays";
  std::filesystem::remove(file);
}

TEST(ProcessGroup, RankAndWorldComeFromFlagsOrTheLaunchersEnvironment) {
  EXPECT_EQ(resolve_rendezvous(2, 4, "f").rank, 2);
  ::setenv("SLURM_PROCID", "3", 1);
  ::setenv("SLURM_NTASKS", "8", 1);
  const Rendezvous from_slurm = resolve_rendezvous(std::nullopt, std::nullopt, "f");
  EXPECT_EQ(from_slurm.rank, 3);
  EXPECT_EQ(from_slurm.world, 8);
  EXPECT_EQ(resolve_rendezvous(1, std::nullopt, "f").rank, 1) << "a flag wins over the environment";
  ::setenv("SLURM_PROCID", "x", 1);
  EXPECT_THROW(resolve_rendezvous(std::nullopt, std::nullopt, "f"), InputError);
  ::unsetenv("SLURM_PROCID");
  ::unsetenv("SLURM_NTASKS");
  EXPECT_THROW(resolve_rendezvous(4, 4, "f"), InputError);   // rank outside [0, world)
  EXPECT_THROW(resolve_rendezvous(0, 2, ""), InputError);    // no file
}

}  // namespace
}  // namespace zb::exec
