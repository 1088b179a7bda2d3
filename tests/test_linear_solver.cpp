// linear_solver = reference (Eigen's LLT between the launches of the split Newton loop) against
// our envelope Cholesky inside the fused solve, on every scene and the humanoid/G1/Panda
// models, every preset: one step from the same states. The two Newton loops run the same
// arithmetic except the factorisation, so each stops within its own tolerance of the same
// minimiser: velocities within the bound of backend_parity.hpp (r-based, no setup slack
// needed but kept), statuses and contact counts equal; Newton iteration counts may differ by
// one where the fp32 linear solve (approx32) rounds the direction differently.
// Also: the split path on the emulated executor (its kernels at 33 lanes), and option parsing.
#include <gtest/gtest.h>

#include "backend_parity.hpp"
#include "launch/reference_solve.hpp"
#include "scene_cases.hpp"

using namespace sap;
using namespace sap::testing;

namespace {

SimulatorOptions options(const Scene& scene, const std::string& preset, LinearSolver solver, int lanes = 0) {
  return parity_options(scene, preset, lanes, solver);
}

class ReferenceSolve : public ::testing::TestWithParam<std::string> {};

TEST_P(ReferenceSolve, AgreesWithOurCholesky) {
  const std::string name = GetParam();
  const Scene scene = load_named(name);
  for (const char* preset : {"approx64", "approx32", "drake"}) {
    Simulator ours(scene, options(scene, preset, LinearSolver::Cholesky));
    Simulator ref(scene, options(scene, preset, LinearSolver::Reference));
    const bool f32_solve = ours.solver().config().contact_linear_solve_precision == Precision::F32;
    const double eps = setup_epsilon(ours.solver().config());
    const int warmup = warmup_steps(scene);
    for (int k = 0; k <= warmup; ++k) {
      if (k == 0 || k == warmup) {
        copy_state(ours, ref);
        Simulator probe(scene, options(scene, preset, LinearSolver::Cholesky));
        copy_state(ours, probe);
        probe.step();
        ref.step();
        expect_step_agrees(record_step(probe), record_step(ref), scene.model.nq, eps,
                           name + " " + preset + (k == 0 ? " initial" : " warm"), f32_solve ? 1 : 0);
      }
      if (k < warmup) ours.step();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Scenes, ReferenceSolve, ::testing::ValuesIn(kSceneCases),
                         [](const auto& info) { return info.param; });

// The split kernels with many lanes: reference solve on emulated teams vs the fused one-lane solve.
TEST(ReferenceSolve, SplitLoopOnEmulatedTeams) {
  for (const std::string name : {"box_stack_5", "pd_arm", "humanoid"}) {
    const Scene scene = load_named(name);
    Simulator ours(scene, options(scene, "approx64", LinearSolver::Cholesky));
    Simulator split(scene, options(scene, "approx64", LinearSolver::Reference, 33));
    for (int k = 0; k < 5; ++k) {
      ours.step();
      copy_state(ours, split);
    }
    Simulator probe(scene, options(scene, "approx64", LinearSolver::Cholesky));
    copy_state(ours, probe);
    probe.step();
    split.step();
    expect_step_agrees(record_step(probe), record_step(split), scene.model.nq, setup_epsilon(ours.solver().config()),
                       name + " split loop, 33 lanes");
  }
}

TEST(ReferenceSolve, OptionByName) {
  SolverOptions o;
  EXPECT_EQ(o.resolve().linear_solver, LinearSolver::Cholesky);
  set_solver_option(o, "linear_solver", "reference");
  EXPECT_EQ(o.resolve().linear_solver, LinearSolver::Reference);
  EXPECT_STREQ(to_string(LinearSolver::Reference), "reference");
  try {
    set_solver_option(o, "linear_solver", "lu");
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cholesky or reference"), std::string::npos) << e.what();
  }
}

// A non-SPD system is reported as a factorisation failure of that world, as with ours.
TEST(ReferenceSolve, NotPositiveDefiniteIsReported) {
  const int n = 3, ld = 4;
  std::vector<double> buf(static_cast<std::size_t>(ld * (ld + 1)), 0.0);
  const double h[3][3] = {{1, 0, 0}, {2, 1, 0}, {0, 0, 1}};  // lower triangle of an indefinite matrix
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) buf[static_cast<std::size_t>(i * ld + j)] = h[i][j];
  EXPECT_FALSE(llt_solve_in_place<double>(buf.data(), n, ld));
  buf.assign(buf.size(), 0.0);
  for (int i = 0; i < n; ++i) buf[static_cast<std::size_t>(i * ld + i)] = 2.0;
  for (int i = 0; i < n; ++i) buf[static_cast<std::size_t>(ld * ld + i)] = 4.0;
  EXPECT_TRUE(llt_solve_in_place<double>(buf.data(), n, ld));
  EXPECT_DOUBLE_EQ(buf[static_cast<std::size_t>(ld * ld)], 2.0);
}

}  // namespace
