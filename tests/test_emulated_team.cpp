// The emulated-team executor itself (include/sap/backend/launch_emu.hpp): barriers order
// memory, reductions give every lane the same bits in CUDA's combination order, shared memory
// is per team, divergent barriers and failing lanes become errors naming the kernel, and the
// team-cooperative Cholesky (lane = row, the form only a GPU takes) matches the one-lane form
// and takes one warp sync per two columns.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <atomic>
#include <random>

#include "kernels/cholesky.hpp"
#include "kernels/cholesky_worlds.hpp"
#include "sap/backend/launch_cpu.hpp"
#include "sap/backend/launch_emu.hpp"

using namespace sap;

namespace {

EmuExec exec_with(int lanes, int teams = 2) {
  EmuExec e;
  e.lanes = lanes;
  e.teams = teams;
  e.barrier_timeout_s = 60;
  return e;
}

const std::vector<int> kLanes = {1, 2, 3, 31, 32, 33, 64, 100};

// Each lane writes its slot, syncs, then reads its neighbour's: without the barrier the value
// could be stale (and ThreadSanitizer would report the race).
struct NeighbourKernel {
  int* out;  // nworld x lanes
  int lanes;
  template <class Team>
  void operator()(int w, Team& team) const {
    int* slot = reinterpret_cast<int*>(team.shared_mem());
    slot[team.rank()] = 1000 * w + team.rank();
    team.sync();
    out[w * lanes + team.rank()] = slot[(team.rank() + 1) % team.size()];
    team.sync();
  }
};

TEST(EmulatedTeam, SyncOrdersSharedMemoryPerTeam) {
  for (int n : kLanes) {
    EmuExec e = exec_with(n, 3);
    const int nworld = 7;
    std::vector<int> out(static_cast<std::size_t>(nworld * n), -1);
    for_each_world_team(e, nworld, sizeof(int) * static_cast<std::size_t>(n), NeighbourKernel{out.data(), n});
    for (int w = 0; w < nworld; ++w)
      for (int l = 0; l < n; ++l)
        EXPECT_EQ(out[static_cast<std::size_t>(w * n + l)], 1000 * w + (l + 1) % n) << "lanes " << n << " world " << w;
  }
}

// CUDA's order: a shuffle-down tree (offsets 16, 8, 4, 2, 1) within each warp, then the warp
// partials left to right. Written out here independently of the executor.
template <class S>
S cuda_order_sum(const std::vector<S>& x) {
  const int n = static_cast<int>(x.size());
  S total{};
  for (int w0 = 0; w0 < n; w0 += 32) {
    const int width = std::min(32, n - w0);
    std::vector<S> lane(x.begin() + w0, x.begin() + w0 + width);
    for (int off = 16; off > 0; off /= 2) {
      std::vector<S> next = lane;
      for (int l = 0; l < width; ++l)
        if (l + off < width)
          next[static_cast<std::size_t>(l)] = lane[static_cast<std::size_t>(l)] +
                                              lane[static_cast<std::size_t>(l + off)];
      lane = next;
    }
    total = w0 == 0 ? lane[0] : total + lane[0];
  }
  return total;
}

struct ReduceKernel {
  const double* in;  // lanes values
  double* sum_out;   // nworld x lanes
  float* fsum_out;
  double* max_out;
  int* count_out;
  int lanes;
  template <class Team>
  void operator()(int w, Team& team) const {
    const double x = in[team.rank()] * (w + 1);
    const int i = w * lanes + team.rank();
    sum_out[i] = team.reduce_sum(x);
    fsum_out[i] = team.reduce_sum(static_cast<float>(x));
    max_out[i] = team.reduce_max(x);
    count_out[i] = team.reduce_sum(team.rank() % 3 == 0 ? 1 : 0);
  }
};

TEST(EmulatedTeam, ReductionsAreIdenticalOnEveryLaneInCudaOrder) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int n : kLanes) {
    std::vector<double> in(static_cast<std::size_t>(n));
    for (double& x : in) x = u(rng) * std::pow(10.0, static_cast<int>(rng() % 12) - 6);  // wide range: order matters
    const int nworld = 3;
    const std::size_t total = static_cast<std::size_t>(nworld * n);
    std::vector<double> sum(total), mx(total);
    std::vector<float> fsum(total);
    std::vector<int> count(total);
    EmuExec e = exec_with(n);
    for_each_world_team(e, nworld, 0, ReduceKernel{in.data(), sum.data(), fsum.data(), mx.data(), count.data(), n});
    for (int w = 0; w < nworld; ++w) {
      std::vector<double> xs(in);
      std::vector<float> fs(in.size());
      for (std::size_t l = 0; l < xs.size(); ++l) {
        xs[l] *= (w + 1);
        fs[l] = static_cast<float>(xs[l]);
      }
      const double expect = cuda_order_sum(xs);
      const float fexpect = cuda_order_sum(fs);
      for (int l = 0; l < n; ++l) {
        const std::size_t i = static_cast<std::size_t>(w * n + l);
        EXPECT_EQ(sum[i], expect) << "lanes " << n << " lane " << l;  // bitwise
        EXPECT_EQ(fsum[i], fexpect) << "lanes " << n << " lane " << l;
        EXPECT_EQ(mx[i], *std::max_element(xs.begin(), xs.end()));
        EXPECT_EQ(count[i], (n + 2) / 3);
      }
    }
  }
}

// A lane that calls sync() when the others do not (e.g. a barrier inside `if (rank == 0)`).
struct DivergentSyncKernel {
  template <class Team>
  void operator()(int, Team& team) const {
    if (team.rank() == 0) team.sync();
  }
};

// A lane that returns early while the others meet at a barrier.
struct EarlyReturnKernel {
  template <class Team>
  void operator()(int w, Team& team) const {
    if (w == 1 && team.rank() == team.size() - 1) return;
    team.sync();
  }
};

// A barrier in a loop whose trip count differs between lanes.
struct LoopDivergenceKernel {
  template <class Team>
  void operator()(int, Team& team) const {
    for (int k = 0; k < 3 + (team.rank() == team.size() - 1 ? 1 : 0); ++k) team.sync();
  }
};

template <class F>
std::string launch_error(int lanes, const F& f, int nworld = 3) {
  EmuExec e = exec_with(lanes);
  try {
    for_each_world_team(e, nworld, 0, f);
  } catch (const std::runtime_error& err) {
    return err.what();
  }
  return "";
}

TEST(EmulatedTeam, DivergentSyncIsAnErrorNamingTheKernel) {
  for (int n : {2, 3, 32, 33}) {
    const std::string a = launch_error(n, DivergentSyncKernel{});
    EXPECT_NE(a.find("DivergentSyncKernel"), std::string::npos) << a;
    EXPECT_NE(a.find("divergent sync()"), std::string::npos) << a;
    EXPECT_NE(a.find("lanes {0} wait at barrier #1"), std::string::npos) << a;

    const std::string b = launch_error(n, EarlyReturnKernel{});
    EXPECT_NE(b.find("EarlyReturnKernel"), std::string::npos) << b;
    EXPECT_NE(b.find("world 1"), std::string::npos) << b;
    EXPECT_NE(b.find("have finished it"), std::string::npos) << b;

    const std::string c = launch_error(n, LoopDivergenceKernel{});
    EXPECT_NE(c.find("barrier #4"), std::string::npos) << c;
  }
  // One lane has no one to diverge from.
  EXPECT_EQ(launch_error(1, DivergentSyncKernel{}), "");
}

struct ThrowingKernel {
  template <class Team>
  void operator()(int w, Team& team) const {
    team.sync();
    if (w == 2 && team.rank() == 1) throw std::runtime_error("boom");
    team.sync();
  }
};

TEST(EmulatedTeam, AnErrorInOneLaneEndsTheLaunchWithoutHanging) {
  const std::string e = launch_error(33, ThrowingKernel{}, 5);
  EXPECT_NE(e.find("ThrowingKernel"), std::string::npos) << e;
  EXPECT_NE(e.find("world 2, lane 1: boom"), std::string::npos) << e;
}

struct CountingKernel {
  template <class Team>
  void operator()(int w, Team& team) const {
    for (int k = 0; k < w; ++k) team.sync();
    (void)team.reduce_sum(1.0);  // one warp collective; three block barriers in a team of > 32 lanes
  }
};

// A team of <= 32 lanes is one warp: its sync() is a warp sync and its reductions are shuffles
// (no block barrier). A larger team's sync() is a block barrier and a reduction takes three.
TEST(EmulatedTeam, CountsBarriersWarpSyncsAndCollectivesPerKernel) {
  for (int n : {5, 32, 33, 64}) {
    EmuRuntime rt;
    EmuExec e = exec_with(n);
    e.runtime = &rt;
    for_each_world_team(e, 4, 0, CountingKernel{});
    std::atomic<int> hits{0};
    parallel_for(e, 3, 4, [&](int, int) { ++hits; });
    EXPECT_EQ(hits.load(), 12);
    const std::vector<EmuKernelStats> s = rt.stats();
    ASSERT_EQ(s.size(), 2u);
    const EmuKernelStats& k = s[0].team ? s[0] : s[1];
    EXPECT_NE(k.kernel.find("CountingKernel"), std::string::npos) << k.kernel;
    EXPECT_EQ(k.worlds, 4);
    EXPECT_EQ(k.collectives, 4) << n;
    if (n <= 32) {
      EXPECT_EQ(k.barriers, 0) << n;
      EXPECT_EQ(k.max_barriers_per_world, 0) << n;
      EXPECT_EQ(k.warp_syncs, 0 + 1 + 2 + 3) << n;
      EXPECT_EQ(k.max_warp_syncs_per_world, 3) << n;
    } else {
      EXPECT_EQ(k.barriers, (0 + 1 + 2 + 3) + 4 * 3) << n;
      EXPECT_EQ(k.max_barriers_per_world, 3 + 3) << n;
      EXPECT_EQ(k.warp_syncs, 0) << n;
    }
  }
}

// A 12-byte value: broadcast and shuffles move any trivially copyable type (CUDA: word by word).
struct Triple {
  float a;
  int b;
  float c;
};

struct ShuffleKernel {
  const double* in;  // lanes values
  int lanes;
  double* bcast;     // nworld x lanes x 3 (sources 0, lanes / 2, lanes - 1)
  Triple* tbcast;    // nworld x lanes (source lanes - 1)
  double* down;      // nworld x lanes x 3 (offsets 1, 5, 16)
  double* xr;        // nworld x lanes x 3 (masks 1, 7, 16)
  template <class Team>
  void operator()(int w, Team& team) const {
    const int r = team.rank(), n = team.size();
    const double x = in[r] * (w + 1);
    const std::size_t i = static_cast<std::size_t>(w * lanes + r);
    const int srcs[3] = {0, n / 2, n - 1}, offs[3] = {1, 5, 16}, masks[3] = {1, 7, 16};
    for (int k = 0; k < 3; ++k) bcast[3 * i + k] = team.broadcast(x, srcs[k]);
    tbcast[i] = team.broadcast(Triple{static_cast<float>(x), 1000 * w + r, -static_cast<float>(r)}, n - 1);
    for (int k = 0; k < 3; ++k) down[3 * i + k] = team.shfl_down(x, offs[k]);
    for (int k = 0; k < 3; ++k) xr[3 * i + k] = team.shfl_xor(x, masks[k]);
  }
};

// Written out independently: __shfl_down_sync / __shfl_xor_sync within each warp of 32 (width
// the warp's existing lanes), the caller's own value when the source lane is outside its warp.
double shfl_expect(const std::vector<double>& x, int l, int src_in_warp) {
  const int n = static_cast<int>(x.size()), base = l - l % 32, width = std::min(32, n - base);
  return src_in_warp >= 0 && src_in_warp < width ? x[static_cast<std::size_t>(base + src_in_warp)]
                                                  : x[static_cast<std::size_t>(l)];
}

TEST(EmulatedTeam, BroadcastAndShufflesMatchAnIndependentOrderOnEveryLane) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int n : kLanes) {
    std::vector<double> in(static_cast<std::size_t>(n));
    for (double& x : in) x = u(rng);
    const int nworld = 3;
    const std::size_t total = static_cast<std::size_t>(nworld * n);
    std::vector<double> bcast(3 * total), down(3 * total), xr(3 * total);
    std::vector<Triple> tb(total);
    EmuRuntime rt;
    EmuExec e = exec_with(n);
    e.runtime = &rt;
    for_each_world_team(e, nworld, 0, ShuffleKernel{in.data(), n, bcast.data(), tb.data(), down.data(), xr.data()});
    for (int w = 0; w < nworld; ++w) {
      std::vector<double> xs(in);
      for (double& x : xs) x *= (w + 1);
      const int srcs[3] = {0, n / 2, n - 1}, offs[3] = {1, 5, 16}, masks[3] = {1, 7, 16};
      for (int l = 0; l < n; ++l) {
        const std::size_t i = static_cast<std::size_t>(w * n + l);
        for (int k = 0; k < 3; ++k) {
          EXPECT_EQ(bcast[3 * i + k], xs[static_cast<std::size_t>(srcs[k])]) << "lanes " << n << " lane " << l;
          EXPECT_EQ(down[3 * i + k], shfl_expect(xs, l, l % 32 + offs[k])) << "lanes " << n << " lane " << l;
          EXPECT_EQ(xr[3 * i + k], shfl_expect(xs, l, (l % 32) ^ masks[k])) << "lanes " << n << " lane " << l;
        }
        EXPECT_EQ(tb[i].a, static_cast<float>(xs[static_cast<std::size_t>(n - 1)]));
        EXPECT_EQ(tb[i].b, 1000 * w + n - 1);
        EXPECT_EQ(tb[i].c, -static_cast<float>(n - 1));
      }
    }
    // 4 broadcasts and 6 shuffles per world: one collective each; a team of more than one warp
    // broadcasts through shared memory between two block barriers, shuffles stay in the warp.
    const EmuKernelStats k = rt.stats()[0];
    EXPECT_EQ(k.collectives, 10 * nworld) << n;
    EXPECT_EQ(k.barriers, n <= 32 ? 0 : 4 * 2 * nworld) << n;
    EXPECT_EQ(k.warp_syncs, 0) << n;
  }
  // The one-lane CPU team: the source is the lane itself, every shuffle source is outside.
  CpuTeam cpu(nullptr);
  const std::vector<double> one = {0.25};
  std::vector<double> b(3), d(3), x(3);
  std::vector<Triple> t(1);
  ShuffleKernel{one.data(), 1, b.data(), t.data(), d.data(), x.data()}(0, cpu);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(b[static_cast<std::size_t>(k)], 0.25);
    EXPECT_EQ(d[static_cast<std::size_t>(k)], 0.25);
    EXPECT_EQ(x[static_cast<std::size_t>(k)], 0.25);
  }
}

// Lanes meeting at different kinds of team operation (a sync() against a shuffle) diverge.
struct MixedOpsKernel {
  template <class Team>
  void operator()(int, Team& team) const {
    if (team.rank() == 0) team.sync();
    else (void)team.shfl_down(1.0, 1);
  }
};

TEST(EmulatedTeam, DifferentTeamOperationsAreDivergent) {
  for (int n : {2, 32, 64}) {
    const std::string e = launch_error(n, MixedOpsKernel{});
    EXPECT_NE(e.find("MixedOpsKernel"), std::string::npos) << e;
    EXPECT_NE(e.find("divergent team operations"), std::string::npos) << e;
  }
}

// dot_range_last (a lane's dot product whose last term is still in a register) gives the bits of
// dot_range on the stored values for every start and length: the chain of the last term
// depends on the length modulo four.
TEST(EmulatedTeam, DotRangeLastMatchesDotRangeBitwise) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x(40), y(40);
  int differ_if_misplaced = 0;
  for (int trial = 0; trial < 200; ++trial) {
    for (auto& v : x) v = u(rng) * std::exp(4 * u(rng));
    for (auto& v : y) v = u(rng) * std::exp(4 * u(rng));
    for (int p0 = 0; p0 < 5; ++p0)
      for (int p1 = p0 + 1; p1 <= 30; ++p1) {
        const double xl = x[p1 - 1], yl = y[p1 - 1];
        std::vector<double> xs = x, ys = y;
        xs[p1 - 1] = std::nan("");  // the stored last entries must not be read
        ys[p1 - 1] = std::nan("");
        const double want = dot_range(x.data(), y.data(), p0, p1);
        EXPECT_EQ(dot_range_last(xs.data(), ys.data(), p0, p1, xl, yl), want) << p0 << " " << p1;
        // The test can tell chains apart: the last term summed into s0 instead of s3 would differ.
        if ((p1 - p0) % 4 == 0) {
          double s[4] = {0, 0, 0, 0};
          for (int p = p0; p < p1 - 1; ++p) s[(p - p0) % 4] += x[p] * y[p];
          s[0] += xl * yl;
          differ_if_misplaced += ((s[0] + s[1]) + (s[2] + s[3])) != want;
        }
      }
  }
  EXPECT_GT(differ_if_misplaced, 100);
}

// interleaved_sums (several sums in one pass, the Newton loop's) gives each sum the bits of its
// own interleaved_sum pass, for every start and length.
TEST(EmulatedTeam, InterleavedSumsMatchSeparatePassesBitwise) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x(40), y(40);
  int orders_differ = 0;
  for (int trial = 0; trial < 100; ++trial) {
    for (auto& v : x) v = u(rng) * std::exp(4 * u(rng));
    for (auto& v : y) v = u(rng) * std::exp(4 * u(rng));
    for (int p0 = 0; p0 < 5; ++p0)
      for (int p1 = p0; p1 <= 30; ++p1) {
        double got[3];
        interleaved_sums<double, 3>(p0, p1, [&](int p, double* t) {
          t[0] = x[p] * y[p];
          t[1] = x[p] * x[p];
          t[2] = y[p] - x[p];
        }, got);
        EXPECT_EQ(got[0], interleaved_sum<double>(p0, p1, [&](int p) { return x[p] * y[p]; })) << p0 << " " << p1;
        EXPECT_EQ(got[1], interleaved_sum<double>(p0, p1, [&](int p) { return x[p] * x[p]; })) << p0 << " " << p1;
        EXPECT_EQ(got[2], interleaved_sum<double>(p0, p1, [&](int p) { return y[p] - x[p]; })) << p0 << " " << p1;
        double serial = 0;  // the test can tell orders apart
        for (int p = p0; p < p1; ++p) serial += x[p] * y[p];
        orders_differ += serial != got[0];
      }
  }
  EXPECT_GT(orders_differ, 100);
}

// The Cholesky factor and solve with N lanes (lane = row: pivot on every lane, solved entries
// broadcast) against one lane (row form) on matrices with the envelope structure of A and H:
// block-diagonal trees coupled by a contact.
struct CholeskyKernel {
  const double* a_in;  // nworld x n x n
  double* factor;      // nworld x n x n
  double* x;           // nworld x n (b on entry)
  int* first;          // nworld x n
  int* ok;
  int n;
  template <class Team>
  void operator()(int w, Team& team) const {
    double* a = factor + w * n * n;
    cholesky_load<double>(team, a_in + w * n * n, a, n, n);
    const bool good = cholesky_factor<double>(team, a, n, n, first + w * n);
    if (good) cholesky_solve<double>(team, a, x + w * n, n, n, first + w * n);
    if (team.rank() == 0) ok[w] = good;
    team.sync();
  }
};

// nworld SPD matrices of size n: two trees (dofs [0, n0) and [n0, n)) with dense blocks, coupled
// through dofs n0 - 1 and n0 + 7 in every world but the first; right-hand sides b.
void envelope_systems(int n, int n0, int nworld, std::vector<double>& a, std::vector<double>& b) {
  std::mt19937 rng(3 + n);
  std::normal_distribution<double> g(0, 1);
  a.assign(static_cast<std::size_t>(nworld * n * n), 0.0);
  b.assign(static_cast<std::size_t>(nworld * n), 0.0);
  for (int w = 0; w < nworld; ++w) {
    Eigen::MatrixXd m = Eigen::MatrixXd::Zero(n, n);
    for (auto [lo, hi] : {std::pair{0, n0}, std::pair{n0, n}}) {
      Eigen::MatrixXd r(hi - lo, hi - lo);
      for (int i = 0; i < r.size(); ++i) r.data()[i] = g(rng);
      m.block(lo, lo, hi - lo, hi - lo) = r * r.transpose() + (hi - lo) * Eigen::MatrixXd::Identity(hi - lo, hi - lo);
    }
    if (w > 0) m(n0 + 7, n0 - 1) = m(n0 - 1, n0 + 7) = 0.5;
    for (int i = 0; i < n; ++i) {
      b[static_cast<std::size_t>(w * n + i)] = g(rng);
      for (int j = 0; j < n; ++j) a[static_cast<std::size_t>(w * n * n + i * n + j)] = m(i, j);
    }
  }
}

TEST(EmulatedTeam, TeamCholeskyMatchesTheOneLaneForm) {
  // n = 23 < 32 (one row per lane of a warp), n = 44, 45 (two rows on some lanes of a warp; a
  // last step of two columns or of one); n = 100 >= kCholeskyRowOrderMin: one lane factors in row
  // order (cholesky_factor_rows), the teams in column order, bitwise alike.
  static_assert(kCholeskyRowOrderMin <= 100, "n = 100 takes the one lane's row order");
  for (auto [n, n0] : {std::pair{23, 10}, std::pair{44, 20}, std::pair{45, 20}, std::pair{100, 40}}) {
    const int nworld = 3;
    std::vector<double> a, b;
    envelope_systems(n, n0, nworld, a, b);
    auto run = [&](auto exec, std::vector<double>& x, std::vector<double>& l) {
      x = b;
      l.assign(a.size(), 0.0);
      std::vector<int> first(static_cast<std::size_t>(nworld * n)), ok(static_cast<std::size_t>(nworld));
      for_each_world_team(exec, nworld, 0, CholeskyKernel{a.data(), l.data(), x.data(), first.data(), ok.data(), n});
      for (int o : ok) EXPECT_TRUE(o);
    };
    std::vector<std::vector<char>> scratch;
    CpuExec cpu;
    cpu.scratch = &scratch;
    std::vector<double> x1, l1;
    run(cpu, x1, l1);
    for (int lanes : {2, 3, 32, 33, 64}) {
      std::vector<double> xn, ln;
      run(exec_with(lanes), xn, ln);
      EXPECT_EQ(ln, l1) << "n " << n << " lanes " << lanes << ": each factor entry is computed by one lane in a fixed order";
      // The forward sweep sums in another order (cholesky_solve): |dx| <= 2 gamma_n cond |x|, far
      // inside this bound for these well-conditioned matrices.
      for (std::size_t i = 0; i < x1.size(); ++i)
        EXPECT_NEAR(xn[i], x1[i], 1e-13 * (1 + std::abs(x1[i]))) << "n " << n << " lanes " << lanes << " entry " << i;
    }
    // And the solution solves the system.
    for (int w = 0; w < nworld; ++w) {
      const Eigen::Map<const Eigen::MatrixXd> m(a.data() + w * n * n, n, n);
      const Eigen::Map<const Eigen::VectorXd> xw(x1.data() + w * n, n), bw(b.data() + w * n, n);
      EXPECT_LT((m * xw - bw).norm(), 1e-12 * bw.norm());
    }
  }
}

// The CPU's worlds in SIMD lanes (kernels/cholesky_worlds.hpp): 1 .. kWorldLanes systems with one
// envelope factored and solved together give each system bitwise the one-lane factor and solve's
// solution; systems whose envelopes differ, or with a pivot that is not positive, are refused and
// left as they were (the caller then solves each alone).
// n >= kCholeskyRowOrderMin: the one lane factors in row order and the in-place load reads the
// sources row by row (load_world_lanes_reversed_large), bitwise as for small n.
template <class S>
void expect_world_lanes_as_one_lane(int n = 23, int n0 = 10) {
  const int nworld = 6;  // worlds 1 .. 5 coupled alike; world 0 has another envelope
  std::vector<double> a, b;
  envelope_systems(n, n0, nworld, a, b);
  auto system = [&](int w) {  // lower triangle (ld = n), then the right-hand side
    std::vector<S> sys(static_cast<std::size_t>(n * n + n), S(0));
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j <= i; ++j) sys[static_cast<std::size_t>(i * n + j)] = S(a[static_cast<std::size_t>(w * n * n + i * n + j)]);
      sys[static_cast<std::size_t>(n * n + i)] = S(b[static_cast<std::size_t>(w * n + i)]);
    }
    return sys;
  };
  auto alone = [&](int w) {
    std::vector<S> sys = system(w);
    std::vector<int> first(static_cast<std::size_t>(n));
    CpuTeam team;
    EXPECT_TRUE(cholesky_factor<S>(team, sys.data(), n, n, first.data()));
    cholesky_solve<S>(team, sys.data(), sys.data() + n * n, n, n, first.data());
    return std::vector<S>(sys.begin() + n * n, sys.end());
  };
  std::vector<typename WorldLanes<S>::V> lanes(static_cast<std::size_t>(n * n + n));
  std::vector<int> first(static_cast<std::size_t>(n));
  for (int count = 1; count <= kWorldLanes; ++count) {
    std::vector<std::vector<S>> sys;
    S* ptr[kWorldLanes];
    for (int k = 0; k < count; ++k) sys.push_back(system(1 + k));
    for (int k = 0; k < count; ++k) ptr[k] = sys[static_cast<std::size_t>(k)].data();
    ASSERT_TRUE(cholesky_factor_solve_worlds<S>(ptr, count, n, n, lanes.data(), first.data())) << count;
    for (int k = 0; k < count; ++k)
      EXPECT_EQ(std::vector<S>(sys[static_cast<std::size_t>(k)].begin() + n * n, sys[static_cast<std::size_t>(k)].end()),
                alone(1 + k))
          << count << " systems, lane " << k << ": the one-lane arithmetic, bitwise";
  }
  // Refused, untouched: another envelope beside (world 0: no coupling), a negative pivot.
  std::vector<std::vector<S>> sys = {system(1), system(0)};
  S* ptr[kWorldLanes] = {sys[0].data(), sys[1].data()};
  EXPECT_FALSE(cholesky_factor_solve_worlds<S>(ptr, 2, n, n, lanes.data(), first.data()));
  EXPECT_EQ(sys[0], system(1));
  EXPECT_EQ(sys[1], system(0));
  sys = {system(1), system(2), system(3)};
  sys[2][static_cast<std::size_t>(5 * n + 5)] = S(-1);
  for (int k = 0; k < 3; ++k) ptr[k] = sys[static_cast<std::size_t>(k)].data();
  EXPECT_FALSE(cholesky_factor_solve_worlds<S>(ptr, 3, n, n, lanes.data(), first.data()));
  EXPECT_EQ(sys[0], system(1));
  // Loaded in place from fp64 matrices (the Newton solve's H): the lanes and the envelope that
  // loading their cholesky_load_reversed copies gives; another envelope beside refused.
  for (int count = 2; count <= kWorldLanes; ++count) {
    std::vector<std::vector<S>> rev;
    const double* src[kWorldLanes];
    S* rp[kWorldLanes];
    for (int k = 0; k < count; ++k) {
      src[k] = a.data() + (1 + k) * n * n;
      rev.emplace_back(static_cast<std::size_t>(n * n), S(0));
      CpuTeam team;
      cholesky_load_reversed<S>(team, src[k], rev.back().data(), n, n);
    }
    for (int k = 0; k < count; ++k) rp[k] = rev[static_cast<std::size_t>(k)].data();
    std::vector<typename WorldLanes<S>::V> via_copies(lanes.size()), in_place(lanes.size());
    std::vector<int> first_copies(static_cast<std::size_t>(n)), first_in_place(static_cast<std::size_t>(n));
    ASSERT_TRUE(load_world_lanes<S>(rp, count, n, n, via_copies.data(), first_copies.data()));
    ASSERT_TRUE(load_world_lanes_reversed<S>(src, count, n, n, in_place.data(), first_in_place.data()));
    EXPECT_EQ(first_copies, first_in_place) << count;
    for (int i = 0; i < n; ++i)
      for (int j = first_copies[static_cast<std::size_t>(i)]; j <= i; ++j)
        for (int l = 0; l < kWorldLanes; ++l)
          EXPECT_EQ(via_copies[static_cast<std::size_t>(i * n + j)][l], in_place[static_cast<std::size_t>(i * n + j)][l])
              << count << " matrices, entry (" << i << ", " << j << ") lane " << l;
  }
  const double* mixed[kWorldLanes] = {a.data() + n * n, a.data()};
  EXPECT_FALSE(load_world_lanes_reversed<S>(mixed, 2, n, n, lanes.data(), first.data()));
}

TEST(EmulatedTeam, WorldLanesSolveAsOneLane) {
  expect_world_lanes_as_one_lane<float>();
  expect_world_lanes_as_one_lane<double>();
  static_assert(kCholeskyRowOrderMin <= 100, "n = 100 takes the large forms");
  expect_world_lanes_as_one_lane<float>(100, 40);
  expect_world_lanes_as_one_lane<double>(100, 40);
}

// fp64 lanes factor and solve in AVX registers where the processor has AVX2 (the test above then
// checks that form against the one-lane arithmetic): the baseline form (two SSE registers per
// operation) must give the same bits, so that a machine without AVX2 computes what this one does.
TEST(EmulatedTeam, WorldLanesFp64BaselineFormIsTheDispatchedOnes) {
  const int n = 23, n0 = 10, nworld = 5;
  std::vector<double> a, b;
  envelope_systems(n, n0, nworld, a, b);
  using V = WorldLanes<double>::V;
  // 32-byte aligned, as the executor's scratch (64): the AVX2 form needs it (cholesky_worlds.hpp).
  const std::size_t count = static_cast<std::size_t>(n * n + n);
  std::vector<char> dispatched_store(count * sizeof(V) + 64);
  V* dispatched = reinterpret_cast<V*>(dispatched_store.data() + (64 - reinterpret_cast<std::uintptr_t>(dispatched_store.data()) % 64) % 64);
  std::vector<V> baseline(count);
  std::vector<int> first(static_cast<std::size_t>(n));
  const double* src[kWorldLanes] = {a.data() + n * n, a.data() + 2 * n * n, a.data() + 3 * n * n, a.data() + 4 * n * n};
  ASSERT_TRUE(load_world_lanes_reversed<double>(src, kWorldLanes, n, n, dispatched, first.data()));
  for (int i = 0; i < n; ++i)
    for (int l = 0; l < kWorldLanes; ++l) dispatched[static_cast<std::size_t>(n * n + i)][l] = b[static_cast<std::size_t>((1 + l) * n + i)];
  std::copy(dispatched, dispatched + count, baseline.begin());
  ASSERT_TRUE(cholesky_factor_lanes<double>(dispatched, n, n, first.data()));
  cholesky_solve_lanes<double>(dispatched, dispatched + n * n, n, n, first.data());
  ASSERT_TRUE(cholesky_factor_lanes_in<double>(baseline.data(), n, n, first.data()));
  cholesky_solve_lanes_in<double>(baseline.data(), baseline.data() + n * n, n, n, first.data());
  for (int i = 0; i < n; ++i)
    for (int j = first[static_cast<std::size_t>(i)]; j <= i; ++j)
      for (int l = 0; l < kWorldLanes; ++l)
        ASSERT_EQ(dispatched[static_cast<std::size_t>(i * n + j)][l], baseline[static_cast<std::size_t>(i * n + j)][l])
            << "factor entry (" << i << ", " << j << ") lane " << l << (lanes_avx2_for(dispatched, dispatched) ? " (AVX2)" : " (baseline)");
  for (int i = 0; i < n; ++i)
    for (int l = 0; l < kWorldLanes; ++l)
      ASSERT_EQ(dispatched[static_cast<std::size_t>(n * n + i)][l], baseline[static_cast<std::size_t>(n * n + i)][l]) << i;
  if (!lanes_avx2_for(dispatched, dispatched)) std::printf("no AVX2 here: both calls took the baseline form\n");
}

// The synchronisation the team Cholesky needs in one warp: the load 1, the factor
// ceil(n / 2) + 2 (the envelope, one per step of two columns, the closing one), none inside
// the solve but its closing one, and the kernel's own: ceil(n / 2) + 5 warp syncs in all; each
// sweep of the solve broadcasts every solved entry once: 2 n collectives; no block barrier.
TEST(EmulatedTeam, TeamCholeskyTakesOneWarpSyncPerTwoColumns) {
  for (int lanes : {8, 32}) {
    for (int n : {44, 45}) {
      const int nworld = 2;
      std::vector<double> a, b;
      envelope_systems(n, 20, nworld, a, b);
      std::vector<double> x = b, l(a.size(), 0.0);
      std::vector<int> first(static_cast<std::size_t>(nworld * n)), ok(static_cast<std::size_t>(nworld));
      EmuRuntime rt;
      EmuExec e = exec_with(lanes);
      e.runtime = &rt;
      for_each_world_team(e, nworld, 0, CholeskyKernel{a.data(), l.data(), x.data(), first.data(), ok.data(), n});
      const std::vector<EmuKernelStats> s = rt.stats();
      ASSERT_EQ(s.size(), 1u);
      EXPECT_EQ(s[0].barriers, 0) << lanes;
      EXPECT_EQ(s[0].max_warp_syncs_per_world, (n + 1) / 2 + 5) << "lanes " << lanes << " n " << n;
      EXPECT_EQ(s[0].warp_syncs, nworld * ((n + 1) / 2 + 5)) << "lanes " << lanes << " n " << n;
      EXPECT_EQ(s[0].collectives, nworld * 2 * n) << "lanes " << lanes << " n " << n;
    }
  }
}

// A matrix that is not positive definite fails on every lane alike (no divergent sync), whether
// the bad pivot is the first or the second column of a step: world w breaks column 4 + w.
TEST(EmulatedTeam, TeamCholeskyFailsOnEveryLaneAtABadPivot) {
  const int n = 23, nworld = 3;
  std::vector<double> a, b;
  envelope_systems(n, 10, nworld, a, b);
  for (int w = 0; w < nworld; ++w) {
    const int c = 4 + w;  // A[c][c] = 0 with a coupling to c - 1: the pivot of column c is negative
    a[static_cast<std::size_t>(w * n * n + c * n + c)] = 0;
  }
  std::vector<std::vector<char>> scratch;
  CpuExec cpu;
  cpu.scratch = &scratch;
  for (int lanes : {1, 2, 3, 32, 33}) {
    std::vector<double> x = b, l(a.size(), 0.0);
    std::vector<int> first(static_cast<std::size_t>(nworld * n)), ok(static_cast<std::size_t>(nworld), 1);
    const CholeskyKernel k{a.data(), l.data(), x.data(), first.data(), ok.data(), n};
    EmuExec emu = exec_with(lanes);
    if (lanes == 1) for_each_world_team(cpu, nworld, 0, k);
    else for_each_world_team(emu, nworld, 0, k);
    for (int w = 0; w < nworld; ++w) EXPECT_EQ(ok[static_cast<std::size_t>(w)], 0) << "lanes " << lanes << " world " << w;
  }
}

}  // namespace
