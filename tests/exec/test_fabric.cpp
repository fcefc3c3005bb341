// The CPU backend's fabric: in-order channels checked on receipt, deadlock detection, abort.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "exec/cpu/cpu_backend.h"
#include "exec/runtime/exec_error.h"

namespace zb::exec {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string failure_of(CpuBackend& backend, const std::function<void(int)>& body) {
  try {
    backend.run_on_devices(body);
  } catch (const ExecError& error) {
    return error.what();
  }
  return "";
}

TEST(ExecFabric, DeliversInOrderAndChecksTheTag) {
  CpuBackend backend(2);
  std::vector<float> received;
  backend.run_on_devices([&](int d) {
    Device& device = backend.device(d);
    if (d == 0) {
      for (int mb = 0; mb < 3; ++mb) {
        Tensor t = device.alloc(1, 2);
        device.upload(t, std::vector<float>{static_cast<float>(mb), 0.5f});
        backend.fabric().send(0, 1, MessageTag{0, 0, 1, mb}, t);
      }
    } else {
      for (int mb = 0; mb < 3; ++mb) {
        Tensor t = backend.fabric().recv(0, 1, MessageTag{0, 0, 1, mb}, device);
        received.push_back(device.download(t)[0]);
      }
    }
  });
  EXPECT_EQ(received, (std::vector<float>{0, 1, 2}));
}

TEST(ExecFabric, AMismatchedMicrobatchIsAnErrorNamingBoth) {
  CpuBackend backend(2);
  const std::string error = failure_of(backend, [&](int d) {
    if (d == 0) {
      backend.fabric().send(0, 1, MessageTag{0, 0, 1, 1}, backend.device(0).alloc(1, 1));
    } else {
      backend.fabric().recv(0, 1, MessageTag{0, 0, 1, 0}, backend.device(1));
    }
  });
  EXPECT_THAT(error, AllOf(HasSubstr("mismatched message on channel stage 0 -> 1"),
                           HasSubstr("expected the activation of stage 0 -> 1, microbatch 0"),
                           HasSubstr("received the activation of stage 0 -> 1, microbatch 1")));
}

TEST(ExecFabric, ADeadlockIsReportedInsteadOfHanging) {
  CpuBackend backend(3);
  const std::string error = failure_of(backend, [&](int d) {
    if (d == 2) return;  // a device that ends early must not hide the deadlock of the others
    backend.fabric().recv(1 - d, d, MessageTag{0, 1 - d, d, 0}, backend.device(d));
  });
  EXPECT_THAT(error, AllOf(HasSubstr("deadlock"), HasSubstr("device 0 waits for"),
                           HasSubstr("device 1 waits for")));
}

TEST(ExecFabric, AFailureOnOneDeviceStopsTheOthersAndIsTheErrorReported) {
  CpuBackend backend(3);
  const std::string error = failure_of(backend, [&](int d) {
    if (d == 0) throw ExecError("device 0 broke on purpose");
    // The others wait for messages that will never come; the abort must wake them.
    backend.fabric().recv_control(0, d, 42);
  });
  EXPECT_EQ(error, "device 0 broke on purpose");
}

TEST(ExecFabric, ControlMessagesArriveOnceByKey) {
  CpuBackend backend(2);
  std::vector<double> got;
  bool empty_first = false;
  backend.run_on_devices([&](int d) {
    Fabric& fabric = backend.fabric();
    if (d == 1) {
      empty_first = !fabric.try_recv_control(0, 1, control_key(3, 1, ControlKind::verdict)).has_value();
      fabric.send_control(1, 0, 7, {});
      got = fabric.recv_control(0, 1, control_key(3, 1, ControlKind::verdict));
    } else {
      fabric.recv_control(1, 0, 7);  // so that device 1 looked before the message exists
      fabric.send_control(0, 1, control_key(3, 1, ControlKind::verdict), {1.5, 2.5});
    }
  });
  EXPECT_TRUE(empty_first);
  EXPECT_EQ(got, (std::vector<double>{1.5, 2.5}));
  EXPECT_NE(control_key(3, 1, ControlKind::verdict), control_key(3, 1, ControlKind::norm_partial));
  EXPECT_NE(control_key(3, 1, ControlKind::verdict), control_key(1, 3, ControlKind::verdict));
}

}  // namespace
}  // namespace zb::exec
