// The CUDA device's kernels against the CPU device, their determinism, events and memory (GPU).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "exec/cpu/cpu_device.h"
#include "exec/cuda/detail/cuda_backend.h"
#include "tests/exec/cuda/gpu_test_support.h"

namespace zb::exec::cuda {
namespace {

std::vector<float> random_values(std::size_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> out(n);
  for (auto& v : out) v = dist(engine);
  return out;
}

class CudaDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ZB_SKIP_WITHOUT_GPU();
    backend_ = std::make_unique<CudaBackend>(parse_device_set("", 1), CudaOptions{});
  }
  Device& gpu() { return backend_->device(0); }
  Tensor on_gpu(const std::vector<float>& values, int rows, int cols) {
    Tensor t = gpu().alloc(rows, cols);
    gpu().upload(t, values);
    return t;
  }
  Tensor on_cpu(const std::vector<float>& values, int rows, int cols) {
    Tensor t = cpu_.alloc(rows, cols);
    cpu_.upload(t, values);
    return t;
  }
  static void expect_near(const std::vector<float>& a, const std::vector<float>& b, double tolerance) {
    ASSERT_EQ(a.size(), b.size());
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
    EXPECT_LE(worst, tolerance);
  }

  std::unique_ptr<CudaBackend> backend_;
  CpuDevice cpu_{0, CpuDevice::Clock::now()};
};

TEST_F(CudaDeviceTest, AllocIsZeroAndRoundTrips) {
  Tensor t = gpu().alloc(7, 13);
  for (float v : gpu().download(t)) EXPECT_EQ(v, 0.0f);
  const auto values = random_values(91, 1);
  gpu().upload(t, values);
  EXPECT_EQ(gpu().download(t), values);
  Tensor c = gpu().clone(t);
  EXPECT_EQ(gpu().download(c), values);
}

TEST_F(CudaDeviceTest, GemmMatchesTheCpuForEveryTransposeCombination) {
  const int m = 37, n = 53, k = 71;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const auto a = random_values(static_cast<std::size_t>(m * k), 2);
      const auto b = random_values(static_cast<std::size_t>(k * n), 3);
      const auto c0 = random_values(static_cast<std::size_t>(m * n), 4);
      const int ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
      Tensor ga = on_gpu(a, ar, ac), gb = on_gpu(b, br, bc), gc = on_gpu(c0, m, n);
      Tensor ca = on_cpu(a, ar, ac), cb = on_cpu(b, br, bc), cc = on_cpu(c0, m, n);
      gpu().gemm(ta, tb, 0.5f, ga, gb, 1.0f, gc);
      cpu_.gemm(ta, tb, 0.5f, ca, cb, 1.0f, cc);
      SCOPED_TRACE(testing::Message() << "ta=" << ta << " tb=" << tb);
      expect_near(gpu().download(gc), cpu_.download(cc), 1e-4);
    }
  }
}

TEST_F(CudaDeviceTest, Bf16GemmIsCloseAndFp32IsTighter) {
  CudaBackend bf16(parse_device_set("", 1), CudaOptions{Precision::bf16, SmPartition::green, {}});
  Device& g = bf16.device(0);
  const int m = 64, n = 64, k = 256;
  const auto a = random_values(static_cast<std::size_t>(m * k), 5);
  const auto b = random_values(static_cast<std::size_t>(k * n), 6);
  Tensor ga = g.alloc(m, k), gb = g.alloc(k, n), gc = g.alloc(m, n);
  g.upload(ga, a);
  g.upload(gb, b);
  g.gemm(false, false, 1.0f, ga, gb, 0.0f, gc);
  Tensor ca = on_cpu(a, m, k), cb = on_cpu(b, k, n), cc = cpu_.alloc(m, n);
  cpu_.gemm(false, false, 1.0f, ca, cb, 0.0f, cc);
  const auto got = g.download(gc);
  const auto want = cpu_.download(cc);
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want[i]));
  EXPECT_LE(worst, 0.5);   // bf16 operands: ~3 significant digits over k = 256 terms
  EXPECT_GT(worst, 1e-6);  // and really rounded (not silently fp32)
}

TEST_F(CudaDeviceTest, ElementwiseKernelsMatchTheCpu) {
  const int rows = 9, cols = 130;
  const auto x = random_values(static_cast<std::size_t>(rows * cols), 7, 3.0f);
  const auto bias = random_values(static_cast<std::size_t>(cols), 8);
  Tensor gx = on_gpu(x, rows, cols), gbias = on_gpu(bias, 1, cols), gz = gpu().alloc(rows, cols);
  Tensor cx = on_cpu(x, rows, cols), cbias = on_cpu(bias, 1, cols), cz = cpu_.alloc(rows, cols);
  gpu().add_row_vector(gx, gbias);
  cpu_.add_row_vector(cx, cbias);
  expect_near(gpu().download(gx), cpu_.download(cx), 0);
  gpu().gelu_forward(gx, gz);
  cpu_.gelu_forward(cx, cz);
  expect_near(gpu().download(gz), cpu_.download(cz), 1e-5);
  gpu().gelu_backward(gx, gz);
  cpu_.gelu_backward(cx, cz);
  expect_near(gpu().download(gz), cpu_.download(cz), 1e-5);
  gpu().add(gz, gx);
  cpu_.add(cz, cx);
  expect_near(gpu().download(gz), cpu_.download(cz), 1e-5);
  Tensor gs = gpu().alloc(1, cols), cs = cpu_.alloc(1, cols);
  gpu().column_sums(gx, gs);
  cpu_.column_sums(cx, cs);
  expect_near(gpu().download(gs), cpu_.download(cs), 0);  // same order of additions
}

TEST_F(CudaDeviceTest, ReductionsMatchTheCpuAndRepeatBitwise) {
  const std::size_t n = 300001;  // several grid strides, not a multiple of anything
  const auto y = random_values(n, 9);
  const auto t = random_values(n, 10);
  Tensor gy = on_gpu(y, 1, static_cast<int>(n)), gt = on_gpu(t, 1, static_cast<int>(n));
  Tensor gg = gpu().alloc(1, static_cast<int>(n));
  Tensor cy = on_cpu(y, 1, static_cast<int>(n)), ct = on_cpu(t, 1, static_cast<int>(n));
  Tensor cg = cpu_.alloc(1, static_cast<int>(n));
  const double gpu_loss = gpu().mse_loss_and_grad(gy, gt, 0.25f, gg);
  const double cpu_loss = cpu_.mse_loss_and_grad(cy, ct, 0.25f, cg);
  EXPECT_NEAR(gpu_loss, cpu_loss, 1e-9 * cpu_loss);
  expect_near(gpu().download(gg), cpu_.download(cg), 0);
  EXPECT_EQ(gpu().mse_loss_and_grad(gy, gt, 0.25f, gg), gpu_loss);  // bitwise on a rerun
  const double squares = gpu().sum_squares(gy);
  EXPECT_NEAR(squares, cpu_.sum_squares(cy), 1e-9 * squares);
  EXPECT_EQ(gpu().sum_squares(gy), squares);
  gpu().poison(gy, 17);
  EXPECT_TRUE(std::isnan(gpu().sum_squares(gy)));
}

TEST_F(CudaDeviceTest, OptimizerUpdatesMatchTheCpu) {
  const int n = 1000;
  const auto p = random_values(n, 11), g = random_values(n, 12), m = random_values(n, 13, 0.1f);
  auto v = random_values(n, 14, 0.01f);
  for (auto& x : v) x = std::abs(x);
  {
    Tensor gp = on_gpu(p, 1, n), gg = on_gpu(g, 1, n), gm = on_gpu(m, 1, n);
    Tensor cp = on_cpu(p, 1, n), cg = on_cpu(g, 1, n), cm = on_cpu(m, 1, n);
    const SgdUpdate update{0.1f, 0.9f, 0.01f, 0.5f};
    gpu().sgd_update(gp, gg, gm, update);
    cpu_.sgd_update(cp, cg, cm, update);
    expect_near(gpu().download(gp), cpu_.download(cp), 1e-6);
    expect_near(gpu().download(gm), cpu_.download(cm), 1e-6);
  }
  {
    Tensor gp = on_gpu(p, 1, n), gg = on_gpu(g, 1, n), gm = on_gpu(m, 1, n), gv = on_gpu(v, 1, n);
    Tensor cp = on_cpu(p, 1, n), cg = on_cpu(g, 1, n), cm = on_cpu(m, 1, n), cv = on_cpu(v, 1, n);
    AdamWUpdate update;
    update.lr = 1e-2f;
    update.weight_decay = 0.1f;
    update.step = 3;
    gpu().adamw_update(gp, gg, gm, gv, update);
    cpu_.adamw_update(cp, cg, cm, cv, update);
    expect_near(gpu().download(gp), cpu_.download(cp), 1e-6);
    expect_near(gpu().download(gv), cpu_.download(cv), 1e-7);
  }
}

TEST_F(CudaDeviceTest, EventsAreOrderedAndTimeTheWorkBetweenThem) {
  const int n = 1024;
  Tensor a = gpu().alloc(n, n), b = gpu().alloc(n, n), c = gpu().alloc(n, n);
  gpu().clear_events();
  const auto e0 = gpu().record_event();
  for (int i = 0; i < 5; ++i) gpu().gemm(false, false, 1.0f, a, b, 0.0f, c);
  const auto e1 = gpu().record_event();
  gpu().synchronize();
  const double t0 = gpu().event_time_us(e0);
  const double t1 = gpu().event_time_us(e1);
  EXPECT_GT(t1, t0);            // 5 GEMMs of 2 GFLOP each take time
  EXPECT_LT(t1 - t0, 5e6);      // ... but not seconds
  EXPECT_GE(t0, 0.0);
  gpu().clear_events();
  EXPECT_THROW(gpu().event_time_us(e1), ExecError);  // cleared
}

}  // namespace
}  // namespace zb::exec::cuda
