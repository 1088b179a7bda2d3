// Rollout API (issue 13; docs/rollouts.md): subset resets, snapshots, step(n), controls from
// pointers, observation views and DLPack, per-world parameters, retry with step halving,
// counters, energy. CPU backend (CI); a CUDA variant runs where a device is present.
#include <gtest/gtest.h>
#if __has_include(<dlpack/dlpack.h>)
#include <dlpack/dlpack.h>
#define SAP_TEST_DLPACK 1
#endif

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "sap/dynamics.hpp"
#include "sap/model_builder.hpp"
#include "sap/simulator.hpp"

using namespace sap;

namespace {

Scene scene_named(const std::string& name, double qpos_std = 0, double qvel_std = 0) {
  Scene s = load_scene(std::string(SAP_SOURCE_DIR) + "/scenes/" + name + ".json");
  s.perturbation.qpos_std = qpos_std;
  s.perturbation.qvel_std = qvel_std;
  s.perturbation.seed = 7;
  return s;
}

SimulatorOptions opts(int nworld, Backend b = Backend::CPU) {
  SimulatorOptions o;
  o.nworld = nworld;
  o.backend = b;
  o.threads = 2;
  return o;
}

std::vector<double> world_state(Simulator& s, int w) {
  std::vector<double> x = s.state().qpos.world_to_host(w), v = s.state().qvel.world_to_host(w);
  x.insert(x.end(), v.begin(), v.end());
  return x;
}

bool bit_equal(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// Backends this binary checks: CPU always, CUDA where a device is present.
std::vector<Backend> backends() {
  std::vector<Backend> b{Backend::CPU};
  if (cuda_device_count() > 0) b.push_back(Backend::CUDA);
  return b;
}

}  // namespace

TEST(Rollout, SubsetResetIsBitIdenticalToFreshWorldsAndLeavesOthersUntouched) {
  for (Backend be : backends()) {
    const Scene sc = scene_named("box_stack_5", 0.01, 0.05);
    const int nw = 5;
    Simulator a(sc, opts(nw, be)), fresh(sc, opts(nw, be)), plain(sc, opts(nw, be));
    for (int k = 0; k < 20; ++k) a.step(), plain.step();
    const std::vector<int> idx{1, 3};
    a.reset(WorldSelection::indices(idx));
    for (int w : idx) {
      EXPECT_TRUE(bit_equal(world_state(a, w), world_state(fresh, w))) << "reset world " << w;
      EXPECT_FALSE(bit_equal(world_state(a, w), world_state(plain, w))) << "the test needs a moving world " << w;
    }
    a.step(15);
    fresh.step(15);
    plain.step(15);
    for (int w = 0; w < nw; ++w) {
      const bool was_reset = w == 1 || w == 3;
      EXPECT_TRUE(bit_equal(world_state(a, w), world_state(was_reset ? fresh : plain, w)))
          << "world " << w << (was_reset ? " (reset)" : " (untouched)") << " on " << backend_name(be);
    }
    // uint8 mask: same result as the index list
    Simulator b(sc, opts(nw, be));
    for (int k = 0; k < 20; ++k) b.step();
    std::vector<std::uint8_t> mask{0, 1, 0, 1, 0};
    b.reset(WorldSelection::mask(mask.data(), nw));
    b.step(15);
    for (int w = 0; w < nw; ++w) EXPECT_TRUE(bit_equal(world_state(a, w), world_state(b, w))) << w;
  }
}

TEST(Rollout, ResetRejectsBadSelections) {
  Simulator s(scene_named("sphere_on_ground"), opts(3));
  EXPECT_THROW(s.reset(WorldSelection::indices(std::vector<int>{0, 3})), std::out_of_range);
  EXPECT_THROW(s.reset(WorldSelection::mask(std::vector<int>{1, 0})), std::invalid_argument);
  EXPECT_THROW(s.reset(WorldSelection::all(), ResetOptions{ResetOptions::Source::Keyframe, 2}), std::out_of_range);
  std::vector<int> dev{0};
  EXPECT_THROW(s.reset(WorldSelection::indices(dev.data(), 1, Memory::Device)), std::invalid_argument);
}

TEST(Rollout, ResetNoiseIsSeededAndKeepsQuaternionsUnit) {
  const Scene sc = scene_named("box_stack_5");
  const int nw = 4;
  Simulator a(sc, opts(nw)), b(sc, opts(nw));
  ResetOptions r;
  r.qpos_noise = 0.05;
  r.qvel_noise = 0.2;
  r.seed = 42;
  a.reset(WorldSelection::all(), r);
  b.reset(WorldSelection::all(), r);
  for (int w = 0; w < nw; ++w) EXPECT_TRUE(bit_equal(world_state(a, w), world_state(b, w)));
  EXPECT_FALSE(bit_equal(world_state(a, 0), world_state(a, 1)));  // per-world noise
  r.seed = 43;
  b.reset(WorldSelection::all(), r);
  EXPECT_FALSE(bit_equal(world_state(a, 0), world_state(b, 0)));
  const Model& m = sc.model;
  for (int j = 0; j < m.njnt; ++j)
    if (m.jnt_type[static_cast<std::size_t>(j)] == kJointFree) {
      const std::vector<double> q = a.state().qpos.world_to_host(2);
      const double* qq = q.data() + m.jnt_qposadr[static_cast<std::size_t>(j)] + 3;
      EXPECT_NEAR(qq[0] * qq[0] + qq[1] * qq[1] + qq[2] * qq[2] + qq[3] * qq[3], 1.0, 1e-12);
    }
}

TEST(Rollout, ResetToKeyframeAndCallerStates) {
  const Scene sc = scene_named("sphere_on_ground");
  const Model& m = sc.model;
  const int nw = 3;
  Simulator s(sc, opts(nw));
  std::vector<double> key = sc.qpos0, vel(static_cast<std::size_t>(m.nv), 0.0);
  key[2] += 0.5;
  vel[0] = 1.25;
  const int k = s.add_keyframe(key, vel);
  ResetOptions r;
  r.source = ResetOptions::Source::Keyframe;
  r.keyframe = k;
  s.reset(WorldSelection::indices(std::vector<int>{2}), r);
  EXPECT_EQ(s.state().qpos.world_to_host(2), key);
  EXPECT_EQ(s.state().qvel.world_to_host(2), vel);
  EXPECT_EQ(s.state().qpos.world_to_host(0), sc.qpos0);
  // caller states: world-major arrays of every world, only the selected rows read
  std::vector<double> q(static_cast<std::size_t>(nw * m.nq)), v(static_cast<std::size_t>(nw * m.nv));
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = 0.001 * double(i);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = -0.01 * double(i);
  r = ResetOptions{};
  r.source = ResetOptions::Source::States;
  r.qpos = q.data();
  r.qvel = v.data();
  s.reset(WorldSelection::indices(std::vector<int>{1}), r);
  EXPECT_EQ(s.state().qpos.world_to_host(1), std::vector<double>(q.begin() + m.nq, q.begin() + 2 * m.nq));
  EXPECT_EQ(s.state().qvel.world_to_host(1), std::vector<double>(v.begin() + m.nv, v.begin() + 2 * m.nv));
  EXPECT_EQ(s.state().qpos.world_to_host(2), key);
}

TEST(Rollout, SnapshotRestoreContinuesBitIdentically) {
  for (Backend be : backends()) {
    const Scene sc = scene_named("box_stack_5", 0.01, 0.05);
    const int nw = 4;
    Simulator s(sc, opts(nw, be));
    s.step(10);
    Snapshot snap = s.save();
    s.step(12);
    std::vector<std::vector<double>> after(nw);
    for (int w = 0; w < nw; ++w) after[static_cast<std::size_t>(w)] = world_state(s, w);
    s.restore(snap);
    EXPECT_DOUBLE_EQ(s.time(), snap.time());
    s.step(12);
    for (int w = 0; w < nw; ++w) EXPECT_TRUE(bit_equal(world_state(s, w), after[static_cast<std::size_t>(w)])) << w;
    // restore a subset: only world 2 rewinds
    s.step(3);
    std::vector<double> w0 = world_state(s, 0);
    s.restore(snap, WorldSelection::indices(std::vector<int>{2}));
    EXPECT_TRUE(bit_equal(world_state(s, 0), w0));
    Simulator ref(sc, opts(nw, be));
    ref.step(10);
    EXPECT_TRUE(bit_equal(world_state(s, 2), world_state(ref, 2)));
    // save a subset into an existing snapshot: the other worlds of the snapshot are kept
    s.save(snap, WorldSelection::indices(std::vector<int>{0}));
    s.restore(snap);
    EXPECT_TRUE(bit_equal(world_state(s, 0), w0));
    EXPECT_TRUE(bit_equal(world_state(s, 1), world_state(ref, 1)));
  }
}

TEST(Rollout, StepNEqualsNSingleSteps) {
  for (Backend be : backends()) {
    const Scene sc = scene_named("pd_arm", 0.05);
    Simulator a(sc, opts(3, be)), b(sc, opts(3, be));
    std::vector<double> u(static_cast<std::size_t>(3 * sc.model.nu));
    for (std::size_t i = 0; i < u.size(); ++i) u[i] = 0.3 * std::sin(double(i));
    a.set_control(u);
    b.set_control(u);
    a.step(7);
    for (int k = 0; k < 7; ++k) b.step();
    a.step(7);  // a second replay (CUDA: the cached graph)
    for (int k = 0; k < 7; ++k) b.step();
    for (int w = 0; w < 3; ++w) EXPECT_TRUE(bit_equal(world_state(a, w), world_state(b, w))) << w;
    EXPECT_NEAR(a.time(), b.time(), 1e-15);
    EXPECT_THROW(a.step(0), std::invalid_argument);
  }
}

// Constant scene schedules (franka_cube holds its keyframe's controls) are written once, not
// before every step: they must still hold after step(n) (a CUDA graph) and after a restore that
// overwrote the control arrays (here with a snapshot's zeros, saved before the first step),
// exactly as the same controls given by set_control.
TEST(Rollout, ConstantSceneControlsHoldThroughStepNAndRestore) {
  for (Backend be : backends()) {
    const Scene sc = scene_named("franka_cube");
    const int nw = 2, nu = sc.model.nu;
    ASSERT_GT(nu, 0);
    std::vector<double> u;
    bool nonzero = false;
    for (int w = 0; w < nw; ++w)
      for (const ControlSchedule& c : sc.controls) {
        ASSERT_EQ(c.kind, ControlSchedule::Kind::Constant);
        u.push_back(c.value);
        nonzero = nonzero || c.value != 0;
      }
    ASSERT_TRUE(nonzero) << "the test needs a schedule that differs from the zeroed arrays";
    Simulator a(sc, opts(nw, be)), b(sc, opts(nw, be));
    b.set_control(u);
    Snapshot zeros = a.save(), zeros_b = b.save();  // control arrays still zero in a
    a.step();
    b.step();
    a.step(3);
    b.step(3);
    for (int w = 0; w < nw; ++w) EXPECT_TRUE(bit_equal(world_state(a, w), world_state(b, w))) << w;
    a.restore(zeros);
    b.restore(zeros_b);
    a.step();
    b.step();
    a.step(4);
    b.step(4);
    for (int w = 0; w < nw; ++w) EXPECT_TRUE(bit_equal(world_state(a, w), world_state(b, w))) << w;
  }
}

TEST(Rollout, PointerControlsEqualVectorControls) {
  const Scene sc = scene_named("pd_arm");
  const int nw = 3, nu = sc.model.nu;
  std::vector<double> u(static_cast<std::size_t>(nw * nu));
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = 0.25 * std::cos(1.7 * double(i));
  Simulator ref(sc, opts(nw)), p64(sc, opts(nw)), p32(sc, opts(nw)), view(sc, opts(nw)), ref32(sc, opts(nw));
  ref.set_control(u);
  // fp64 with a stride of nu + 2 (padding per world)
  const int stride = nu + 2;
  std::vector<double> padded(static_cast<std::size_t>(nw * stride), 99.0);
  for (int w = 0; w < nw; ++w)
    for (int i = 0; i < nu; ++i) padded[static_cast<std::size_t>(w * stride + i)] = u[static_cast<std::size_t>(w * nu + i)];
  p64.set_control(padded.data(), DType::F64, Memory::Host, stride);
  // fp32: equals the vector API given the fp32-rounded values
  std::vector<float> f(u.begin(), u.end());
  std::vector<double> u32(f.begin(), f.end());
  p32.set_control(f.data(), DType::F32);
  ref32.set_control(u32);
  // writable view
  ArrayView cv = view.control_view();
  ASSERT_EQ(cv.shape[0], nw);
  ASSERT_EQ(cv.shape[1], nu);
  for (int w = 0; w < nw; ++w)
    for (int i = 0; i < nu; ++i)
      static_cast<double*>(cv.data)[w * cv.strides[0] + i * cv.strides[1]] = u[static_cast<std::size_t>(w * nu + i)];
  for (Simulator* s : {&ref, &p64, &p32, &view, &ref32}) s->step(5);
  for (int w = 0; w < nw; ++w) {
    EXPECT_TRUE(bit_equal(world_state(ref, w), world_state(p64, w))) << w;
    EXPECT_TRUE(bit_equal(world_state(ref, w), world_state(view, w))) << w;
    EXPECT_TRUE(bit_equal(world_state(ref32, w), world_state(p32, w))) << w;
  }
  EXPECT_FALSE(bit_equal(world_state(ref, 0), world_state(p32, 0)));  // fp32 rounding is visible
  EXPECT_THROW(ref.set_control(padded.data(), DType::F64, Memory::Host, nu - 1), std::invalid_argument);
  EXPECT_THROW(ref.set_control(padded.data(), DType::F64, Memory::Device), std::invalid_argument);
}

#if SAP_TEST_DLPACK
TEST(Rollout, DLPackTensorsHaveDocumentedShapeDtypeStridesDevice) {
  const Scene sc = scene_named("box_stack_5");
  const Model& m = sc.model;
  const int nw = 3;
  Simulator s(sc, opts(nw));
  struct Case {
    ArrayView v;
    std::vector<int64_t> shape;
    uint8_t code, bits;
  };
  const std::vector<Case> cases{
      {s.qpos_view(), {nw, m.nq}, kDLFloat, 64},
      {s.qvel_view(), {nw, m.nv}, kDLFloat, 64},
      {s.control_view(), {nw, m.nu}, kDLFloat, 64},
      {s.body_pos_view(), {nw, m.nbody, 3}, kDLFloat, 64},
      {s.body_quat_view(), {nw, m.nbody, 4}, kDLFloat, 64},
      {s.contact_force_view(), {nw, m.nbody, 3}, kDLFloat, 64},
      {s.contact_flag_view(), {nw, m.nbody}, kDLInt, 32},
  };
  for (const Case& c : cases) {
    DLManagedTensor* t = c.v.to_dlpack();
    ASSERT_NE(t, nullptr);
    const DLTensor& d = t->dl_tensor;
    EXPECT_EQ(d.data, c.v.data);
    EXPECT_EQ(d.device.device_type, kDLCPU);
    ASSERT_EQ(d.ndim, static_cast<int>(c.shape.size()));
    int64_t expect_stride = 1;
    for (int i = d.ndim - 1; i >= 0; --i) {  // C-contiguous, strides in elements
      EXPECT_EQ(d.shape[i], c.shape[static_cast<std::size_t>(i)]);
      EXPECT_EQ(d.strides[i], expect_stride);
      expect_stride *= d.shape[i];
    }
    EXPECT_EQ(d.dtype.code, c.code);
    EXPECT_EQ(d.dtype.bits, c.bits);
    EXPECT_EQ(d.dtype.lanes, 1);
    EXPECT_EQ(d.byte_offset, 0u);
    t->deleter(t);
  }
  // views keep their pointer across steps (zero-copy tensors stay valid)
  const void* q = s.qpos_view().data;
  s.step(2);
  EXPECT_EQ(q, s.qpos_view().data);
  EXPECT_EQ(static_cast<const double*>(q)[0], s.state().qpos.world_to_host(0)[0]);
}
#endif

TEST(Rollout, BodyPosesAreThoseOfTheCurrentState) {
  const Scene sc = scene_named("pd_arm", 0.2);
  const Model& m = sc.model;
  Simulator s(sc, opts(2));
  ArrayView pos = s.body_pos_view();  // tracked from now on: updated after every step
  s.step(3);
  DynamicsEvaluator ev(m);
  for (int w = 0; w < 2; ++w) {
    ev.compute(s.state().qpos.world_to_host(w).data());
    const double* p = static_cast<const double*>(pos.data) + w * pos.strides[0];
    const std::vector<double> quat = s.body_quat(w);
    for (int b = 0; b < m.nbody; ++b) {
      for (int k = 0; k < 3; ++k) EXPECT_NEAR(p[3 * b + k], ev.body_pos(b)[k], 1e-12) << w << " " << b;
      const Eigen::Quaterniond e = ev.body_quat(b);
      const double sgn = (quat[4 * b] * e.w() < 0) ? -1 : 1;
      EXPECT_NEAR(sgn * quat[4 * b], e.w(), 1e-12);
      EXPECT_NEAR(sgn * quat[4 * b + 1], e.x(), 1e-12);
    }
  }
}

TEST(Rollout, ContactForceAndFlagsOfARestingSphere) {
  const Scene sc = scene_named("sphere_on_ground");
  const Model& m = sc.model;
  Simulator s(sc, opts(2));
  ArrayView f = s.contact_force_view(), fl = s.contact_flag_view();
  s.step(400);
  int sphere = -1;
  for (int b = 1; b < m.nbody; ++b) sphere = b;  // the last body is the sphere
  double mass = 0;
  for (int b = 1; b < m.nbody; ++b) mass += m.body_mass[static_cast<std::size_t>(b)];
  const double* fz = static_cast<const double*>(f.data) + 3 * sphere;
  EXPECT_NEAR(fz[2], mass * 9.81, 0.02 * mass * 9.81);
  EXPECT_EQ(static_cast<const int*>(fl.data)[sphere], 1);
}

TEST(Rollout, PerWorldContactScaleChangesOnlyItsWorld) {
  const Scene sc = scene_named("box_on_incline");
  const int nw = 3;
  Simulator plain(sc, opts(nw)), dr(sc, opts(nw));
  std::vector<double> scale(3 * nw, 1.0);
  scale[3 * 1 + 0] = 0.0;  // world 1: frictionless
  dr.set_world_params(WorldParam::ContactScale, scale.data());
  plain.step(100);
  dr.step(100);
  EXPECT_TRUE(bit_equal(world_state(plain, 0), world_state(dr, 0)));
  EXPECT_TRUE(bit_equal(world_state(plain, 2), world_state(dr, 2)));
  EXPECT_FALSE(bit_equal(world_state(plain, 1), world_state(dr, 1)));
  // the frictionless box moves farther than the others
  auto moved = [&](Simulator& s, int w) {
    const std::vector<double> q = s.state().qpos.world_to_host(w);
    return std::hypot(q[0] - sc.qpos0[0], q[1] - sc.qpos0[1]);
  };
  EXPECT_GT(moved(dr, 1), moved(dr, 0) + 1e-3);
  dr.clear_world_params();
}

// The dissipation factor also scales the Hunt-Crossley d of the similar/lagged approximations
// (which do not read tau_d): a sphere dropped with factor 0 rebounds higher than with factor 1.
TEST(Rollout, PerWorldContactDissipationScalesHuntCrossley) {
  const Scene sc = scene_named("sphere_on_ground");
  SimulatorOptions o = opts(2);
  o.override_solver = true;
  o.solver = sc.solver;
  o.solver.contact_approximation = ContactApproximation::Similar;
  Simulator s(sc, o);
  std::vector<double> q = sc.qpos0, qa;
  q[2] += 0.2;
  for (int w = 0; w < 2; ++w) qa.insert(qa.end(), q.begin(), q.end());
  ResetOptions r;
  r.source = ResetOptions::Source::States;
  r.qpos = qa.data();
  s.reset(WorldSelection::all(), r);
  const std::vector<double> scale{1.0, 1.0, 1.0, 1.0, 1.0, 0.0};  // world 1: no dissipation
  s.set_world_params(WorldParam::ContactScale, scale.data());
  double vmax[2] = {0, 0};
  for (int k = 0; k < 400; ++k) {
    s.step();
    for (int w = 0; w < 2; ++w) vmax[w] = std::max(vmax[w], s.state().qvel.world_to_host(w)[2]);  // rebound
  }
  EXPECT_GT(vmax[1], 1.2 * vmax[0]);
}

TEST(Rollout, EnergyOfAFallingSphere) {
  const Scene sc = scene_named("sphere_on_ground");
  const Model& m = sc.model;
  Simulator s(sc, opts(1));
  std::vector<double> q = sc.qpos0, v(static_cast<std::size_t>(m.nv), 0.0);
  q[2] += 1.0;
  v[0] = 2.0;
  ResetOptions r;
  r.source = ResetOptions::Source::States;
  r.qpos = q.data();
  r.qvel = v.data();
  s.reset(WorldSelection::all(), r);
  double mass = 0;
  for (int b = 1; b < m.nbody; ++b) mass += m.body_mass[static_cast<std::size_t>(b)];
  const WorldEnergy e = s.energy()[0];
  EXPECT_NEAR(e.kinetic, 0.5 * mass * 4.0, 1e-9);
  EXPECT_NEAR(e.gravity, mass * 9.81 * q[2], 1e-6 * mass);
  EXPECT_EQ(e.spring, 0.0);
}

// box_stack_5 with velocity noise and max_iterations = 6: in the first step some worlds hit the
// iteration limit; with retry, some of them are rescued by 2^k sub-steps (found by a scan of
// seeds/caps; the test asserts the mix it needs, so a change of solver behaviour shows up as a
// failure here rather than as a vacuous pass).
TEST(Rollout, RetryRescuesFailingWorldsAndLeavesOthersBitIdentical) {
  Scene sc = scene_named("box_stack_5", 0, 0.5);
  sc.perturbation.seed = 3;
  const int nw = 8;
  SimulatorOptions o = opts(nw);
  o.override_solver = true;
  o.solver = sc.solver;
  o.solver.max_iterations = 6;
  Simulator plain(sc, o);
  o.retry.depth = 4;
  Simulator retry(sc, o);
  plain.step();
  retry.step();
  const std::vector<int> st = plain.solver().world_status();
  const WorldCounters c = retry.counters();
  int untouched = 0, rescued = 0;
  for (int w = 0; w < nw; ++w) {
    const std::size_t i = static_cast<std::size_t>(w);
    EXPECT_EQ(c.retries[i] > 0, (st[i] & kStatusIterationLimit) != 0) << "world " << w;
    if (c.retries[i] == 0) {
      ++untouched;
      EXPECT_TRUE(bit_equal(world_state(plain, w), world_state(retry, w))) << "world " << w;
    } else if (c.rescued[i] > 0) {
      ++rescued;
      EXPECT_EQ(c.failures[i], 0);
      EXPECT_FALSE(bit_equal(world_state(plain, w), world_state(retry, w))) << "world " << w;
    } else {
      EXPECT_EQ(c.failures[i], 1);
      EXPECT_TRUE(bit_equal(world_state(plain, w), world_state(retry, w)))  // kept the full step's outcome
          << "world " << w;
    }
  }
  EXPECT_GE(untouched, 1);
  EXPECT_GE(rescued, 1);
  EXPECT_EQ(plain.counters().retries, std::vector<int>(nw, 0));
  // failures accumulate until the world's reset
  const std::vector<int> failed = retry.failed_worlds_since_reset();
  ASSERT_FALSE(failed.empty());
  retry.reset(WorldSelection::indices(std::vector<int>{failed[0]}));
  EXPECT_EQ(retry.counters().failures[static_cast<std::size_t>(failed[0])], 0);
  // auto reset: worlds that still fail restart from their initial state
  o.retry.auto_reset = true;
  Simulator ar(sc, o), fresh(sc, opts(nw));
  ar.step();
  for (int w : failed) EXPECT_TRUE(bit_equal(world_state(ar, w), world_state(fresh, w))) << w;
}

TEST(Rollout, CudaBackendVariants) {
  if (cuda_device_count() == 0)
    GTEST_SKIP() << "no CUDA device: the rollout tests that loop over backends() (subset reset, snapshots, "
                    "step(n) with CUDA graph replay) ran on the CPU backend only";
  SUCCEED() << "the backend loops above included CUDA";
}

// ---- per-world model parameters (mass/inertia scale, actuator gains, gravity)

namespace {
// One hinge about x through the body's com (no gravity torque), inertia I about the axis, no
// armature or damping, a position actuator (kp, kd, gear 1) with target ctrl.
Scene pd_hinge_scene(double inertia, double kp, double kd) {
  ModelBuilder b;
  BodySpec bs;
  bs.name = "rotor";
  bs.mass = 1.0;
  bs.inertia = {inertia, inertia, inertia, 0, 0, 0};
  const int id = b.add_body(bs);
  JointSpec j;
  j.type = kJointHinge;
  j.axis = {1, 0, 0};
  const int jid = b.add_joint(id, j);
  ActuatorSpec a;
  a.type = kActPosition;
  a.joint = jid;
  a.kp = kp;
  a.kd = kd;
  b.add_actuator(a);
  Scene sc;
  sc.name = "pd_hinge";
  sc.model = b.finalize();
  sc.dt = 0.01;
  sc.qpos0.assign(static_cast<std::size_t>(sc.model.nq), 0.0);
  sc.qvel0.assign(static_cast<std::size_t>(sc.model.nv), 0.0);
  return sc;
}

// The model of `sc` with the per-world parameters applied by hand (the reference).
Scene scaled_scene(Scene sc, double mass_scale, std::array<double, 3> gains, const double* gravity) {
  Model& m = sc.model;
  for (double& x : m.body_mass) x *= mass_scale;
  for (double& x : m.body_inertia) x *= mass_scale;
  for (double& x : m.actuator_kp) x *= gains[0];
  for (double& x : m.actuator_kd) x *= gains[1];
  for (double& x : m.actuator_gear) x *= gains[2];
  if (gravity)
    for (std::size_t k = 0; k < 3; ++k) m.gravity[k] = gravity[k];
  return sc;
}
}  // namespace

// A world with its own gravity falls with that acceleration; the others are bit-identical to a
// simulator without parameters; a world given the model's gravity shares the model (no slot);
// the energy diagnostic uses each world's gravity.
TEST(Rollout, PerWorldGravityFallsWithItsAcceleration) {
  const Scene sc = scene_named("sphere_on_ground");
  const Model& m = sc.model;
  const int nw = 3, N = 100;  // 0.2 s of free fall from 1 m above the rest pose: no contact
  Simulator plain(sc, opts(nw)), dr(sc, opts(nw));
  std::vector<double> q = sc.qpos0;
  q[2] += 1.0;
  ResetOptions r;
  r.source = ResetOptions::Source::States;
  std::vector<double> qa;
  for (int w = 0; w < nw; ++w) qa.insert(qa.end(), q.begin(), q.end());
  r.qpos = qa.data();
  plain.reset(WorldSelection::all(), r);
  dr.reset(WorldSelection::all(), r);
  std::vector<double> g(3 * nw);
  for (int w = 0; w < nw; ++w)
    for (int k = 0; k < 3; ++k) g[3 * static_cast<std::size_t>(w) + k] = m.gravity[static_cast<std::size_t>(k)];
  g[3 * 1 + 2] = 0.5 * m.gravity[2];  // world 1: half gravity
  dr.set_world_params(WorldParam::Gravity, g.data());
  EXPECT_EQ(dr.world_param_slots(), 1);  // world 2 gives the model's gravity: shares the model
  EXPECT_EQ(dr.world_params(WorldParam::Gravity), g);
  plain.step(N);
  dr.step(N);
  EXPECT_TRUE(bit_equal(world_state(plain, 0), world_state(dr, 0)));
  EXPECT_TRUE(bit_equal(world_state(plain, 2), world_state(dr, 2)));
  // From rest: v_n = n h g and midpoint positions (the default), drop after N steps = g (N h)^2 / 2.
  const double h = sc.dt;
  for (int w : {0, 1}) {
    const double gz = g[3 * static_cast<std::size_t>(w) + 2];
    const double drop = dr.state().qpos.world_to_host(w)[2] - q[2];
    EXPECT_NEAR(drop, gz * h * h * N * N / 2, 1e-9) << "world " << w;
    EXPECT_NEAR(dr.state().qvel.world_to_host(w)[2], gz * h * N, 1e-9) << "world " << w;
  }
  double mass = 0;
  for (int b = 1; b < m.nbody; ++b) mass += m.body_mass[static_cast<std::size_t>(b)];
  const std::vector<WorldEnergy> e = dr.energy();
  for (int w = 0; w < nw; ++w) {
    const double z = dr.state().qpos.world_to_host(w)[2];
    EXPECT_NEAR(e[static_cast<std::size_t>(w)].gravity, -mass * g[3 * static_cast<std::size_t>(w) + 2] * z,
                1e-6 * mass)
        << "world " << w;
  }
  // cleared: every world reads the model again
  dr.clear_world_params();
  EXPECT_EQ(dr.world_param_slots(), 0);
  EXPECT_TRUE(dr.world_params(WorldParam::Gravity).empty());
}

// Mass scale on a PD-driven hinge: the implicit PD step v' = (I v + h Kp (q* - q)) /
// (I + h Kd + h^2 Kp), q' = q + h (v + v') / 2 with I scaled by the world's factor predicts the response;
// the other worlds are bit-identical to a simulator without parameters.
TEST(Rollout, PerWorldMassScaleChangesThePdResponseAsPredicted) {
  const double I = 0.02, kp = 4.0, kd = 0.1, target = 1.0;
  const Scene sc = pd_hinge_scene(I, kp, kd);
  const int nw = 3, N = 60;
  Simulator plain(sc, opts(nw)), dr(sc, opts(nw));
  const std::vector<double> scale{1.0, 4.0, 1.0};
  dr.set_world_params(WorldParam::MassScale, scale.data());
  EXPECT_EQ(dr.world_param_slots(), 1);
  const std::vector<double> ctrl(nw, target);
  plain.set_control(ctrl);
  dr.set_control(ctrl);
  const double h = sc.dt;
  std::vector<double> qp(nw, 0.0), vp(nw, 0.0);
  double max_err = 0;
  for (int k = 0; k < N; ++k) {
    plain.step();
    dr.step();
    for (int w = 0; w < nw; ++w) {
      const std::size_t i = static_cast<std::size_t>(w);
      const double Iw = scale[i] * I;
      const double v1 = (Iw * vp[i] + h * kp * (target - qp[i])) / (Iw + h * kd + h * h * kp);
      qp[i] += 0.5 * h * (vp[i] + v1);  // midpoint position integration (the default)
      vp[i] = v1;
      max_err = std::max(max_err, std::abs(dr.state().qpos.world_to_host(w)[0] - qp[i]));
    }
  }
  EXPECT_LT(max_err, 1e-6);
  EXPECT_TRUE(bit_equal(world_state(plain, 0), world_state(dr, 0)));
  EXPECT_TRUE(bit_equal(world_state(plain, 2), world_state(dr, 2)));
  // the heavier world (omega = sqrt(Kp / 4I), half the frequency) is still overshooting at 0.6 s
  EXPECT_GT(dr.state().qpos.world_to_host(1)[0], dr.state().qpos.world_to_host(0)[0] + 0.3);
}

// Every kind against a model scaled by hand: a world with parameters is bit-identical to the same
// world of a simulator built from the scaled model (so kinematics, free motion, contact and PD
// rows all read the world's values), the others to a simulator without parameters. box_stack_5
// (contacts between free bodies) for mass and gravity, pd_arm (PD actuators, gravity) for gains.
// On the CPU, on emulated GPU teams and on CUDA where a device is present.
TEST(Rollout, PerWorldParamsEqualAModelScaledByHand) {
  // CPU; CPU with emulated GPU teams of 8 lanes (the wrapper inside team kernels); CUDA if present.
  struct Variant {
    Backend backend;
    int lanes;
  };
  std::vector<Variant> variants{{Backend::CPU, 0}, {Backend::CPU, 8}};
  if (cuda_device_count() > 0) variants.push_back({Backend::CUDA, 0});
  for (const Variant& var : variants) {
    SCOPED_TRACE(std::string(var.backend == Backend::CUDA ? "CUDA" : "CPU") + " lanes " + std::to_string(var.lanes));
    auto o = [&](int nw) {
      SimulatorOptions so = opts(nw, var.backend);
      so.emulated_lanes = var.lanes;
      return so;
    };
    {
      const Scene sc = scene_named("box_stack_5", 0.0, 0.0);
      const int nw = 3, N = var.lanes > 0 ? 8 : 60;
      const double grav[3] = {0.5, 0.0, -7.0};
      Simulator plain(sc, o(nw)), dr(sc, o(nw)), heavy(scaled_scene(sc, 3.0, {1, 1, 1}, nullptr), o(nw)),
          tilted(scaled_scene(sc, 1.0, {1, 1, 1}, grav), o(nw));
      std::vector<double> ms{1.0, 3.0, 1.0}, g;
      for (int w = 0; w < nw; ++w)
        for (std::size_t k = 0; k < 3; ++k) g.push_back(w == 2 ? grav[k] : sc.model.gravity[k]);
      dr.set_world_params(WorldParam::MassScale, ms.data());
      dr.set_world_params(WorldParam::Gravity, g.data());
      EXPECT_EQ(dr.world_param_slots(), 2);
      for (Simulator* s : {&plain, &dr, &heavy, &tilted}) s->step(N);
      EXPECT_TRUE(bit_equal(world_state(plain, 0), world_state(dr, 0)));
      EXPECT_TRUE(bit_equal(world_state(heavy, 1), world_state(dr, 1)));
      EXPECT_TRUE(bit_equal(world_state(tilted, 2), world_state(dr, 2)));
      EXPECT_FALSE(bit_equal(world_state(plain, 2), world_state(dr, 2)));
    }
    {
      const Scene sc = scene_named("pd_arm");
      const int nw = 3, N = var.lanes > 0 ? 20 : 200;
      const std::array<double, 3> gains{2.0, 0.5, 1.5};
      Simulator plain(sc, o(nw)), dr(sc, o(nw)), ref(scaled_scene(sc, 1.0, gains, nullptr), o(nw));
      std::vector<double> gv(3 * nw, 1.0);
      for (std::size_t k = 0; k < 3; ++k) gv[3 + k] = gains[k];
      dr.set_world_params(WorldParam::ActuatorGainScale, gv.data());
      for (Simulator* s : {&plain, &dr, &ref}) s->step(N);  // scene schedules drive the actuators
      EXPECT_TRUE(bit_equal(world_state(plain, 0), world_state(dr, 0)));
      EXPECT_TRUE(bit_equal(world_state(plain, 2), world_state(dr, 2)));
      EXPECT_TRUE(bit_equal(world_state(ref, 1), world_state(dr, 1)));
      EXPECT_FALSE(bit_equal(world_state(plain, 1), world_state(dr, 1)));
    }
  }
}

TEST(Rollout, WorldParamsValidation) {
  Simulator s(scene_named("pd_arm"), opts(2));
  std::vector<double> v(6, 1.0);
  EXPECT_THROW(s.set_world_params(WorldParam::MassScale, v.data(), Memory::Device), std::invalid_argument);
  EXPECT_THROW(s.set_world_params(WorldParam::MassScale, nullptr), std::invalid_argument);
  v[1] = 0.0;
  EXPECT_THROW(s.set_world_params(WorldParam::MassScale, v.data()), std::invalid_argument);
  v[1] = -1.0;
  EXPECT_THROW(s.set_world_params(WorldParam::ActuatorGainScale, v.data()), std::invalid_argument);
  v[1] = std::nan("");
  EXPECT_THROW(s.set_world_params(WorldParam::Gravity, v.data()), std::invalid_argument);
  EXPECT_EQ(s.world_param_slots(), 0);  // a rejected array changes nothing
  v.assign(6, 1.0);
  s.set_world_params(WorldParam::MassScale, v.data());  // all default: no slot
  EXPECT_EQ(s.world_param_slots(), 0);
  EXPECT_EQ(world_param_count(WorldParam::MassScale), 1);
  EXPECT_EQ(world_param_count(WorldParam::ActuatorGainScale), 3);
}

// SimulatorOptions::device: the CPU backend has only device 0; a CUDA device index must exist.
TEST(Rollout, DeviceIndexIsValidated) {
  const Scene s = scene_named("box_stack_5");
  SimulatorOptions o = opts(2);
  o.device = 1;
  try {
    Simulator sim(s, o);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("CPU backend"), std::string::npos) << e.what();
  }
  if (cuda_device_count() == 0) return;  // the CUDA half needs a device
  o.backend = Backend::CUDA;
  o.device = cuda_device_count();
  EXPECT_THROW(Simulator(s, o), std::invalid_argument);
  o.device = 0;
  Simulator ok(s, o);
  EXPECT_EQ(ok.device(), 0);
}

// One Simulator per CUDA device in one process: the same worlds on two devices step alike
// (bit for bit on devices of one model), each simulator's methods on its own device.
TEST(Rollout, OneSimulatorPerCudaDevice) {
  if (cuda_device_count() < 2)
    GTEST_SKIP() << "needs two CUDA devices (" << cuda_device_count() << " visible): a Simulator per device";
  const Scene s = scene_named("box_stack_5", 1e-3, 1e-2);
  SimulatorOptions o0 = opts(16, Backend::CUDA), o1 = o0;
  o1.device = 1;
  Simulator a(s, o0), b(s, o1);
  a.reset();
  b.reset();
  for (int k = 0; k < 5; ++k) {  // interleaved: each call must find its own device
    a.step(10);
    b.step(10);
  }
  for (int w = 0; w < 16; ++w) EXPECT_TRUE(bit_equal(world_state(a, w), world_state(b, w))) << "world " << w;
  EXPECT_EQ(a.qpos_view().device_id(), 0);
  EXPECT_EQ(b.qpos_view().device_id(), 1);
}
