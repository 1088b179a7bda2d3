// CollisionPipeline on batched worlds: contacts equal the narrow phase applied to the geom
// poses computed independently from qpos (free and hinge bodies, offset geoms), materials and
// ids, the capacity overflow rule, determinism across thread counts and batch sizes, fp32,
// unsupported pairs, capacity estimates, input errors, and CUDA parity (needs a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "collision_test_util.hpp"
#include "contact_readback.hpp"
#include "sap/collision.hpp"
#include "sap/model_builder.hpp"

using namespace sap;
using namespace sap::test;

namespace {

// Ground plane + moving bodies, each with one geom offset in its body frame.
struct BodyGeom {
  int type;
  Vec3d size;
  double stiffness = 1e5, friction = 1.0, dissipation = 0.01, margin = 0.01;
  bool hinge = false;  // hinge about body y at the body origin (else a free joint)
};

const Vec3d kGeomOffset{0.02, -0.03, 0.01};
const Quatd kGeomQuat{0.9, 0.1, -0.3, 0.2};  // normalized by the builder

Model make_scene(const std::vector<BodyGeom>& bodies, bool offset_geoms = true) {
  ModelBuilder b;
  GeomSpec ground;
  ground.name = "ground";
  ground.type = kGeomPlane;
  ground.stiffness = HUGE_VAL;  // rigid ground: the combined k is the body's
  ground.friction = 0.8;
  ground.dissipation = 0.0;
  ground.margin = 0.005;
  b.add_geom(0, ground);
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    BodySpec bs;
    bs.name = "body" + std::to_string(i);
    bs.pos = {0.1 * double(i), 0, 0.2};
    bs.inertia_from_geoms = true;
    const int id = b.add_body(bs);
    JointSpec j;
    j.name = "joint" + std::to_string(i);
    j.type = bodies[i].hinge ? kJointHinge : kJointFree;
    j.axis = {0, 1, 0};
    b.add_joint(id, j);
    GeomSpec g;
    g.name = "geom" + std::to_string(i);
    g.type = bodies[i].type;
    g.size = bodies[i].size;
    if (offset_geoms) {
      g.pos = kGeomOffset;
      g.quat = kGeomQuat;
    }
    g.stiffness = bodies[i].stiffness;
    g.friction = bodies[i].friction;
    g.dissipation = bodies[i].dissipation;
    g.margin = bodies[i].margin;
    b.add_geom(id, g);
  }
  return b.finalize();
}

const std::vector<BodyGeom> kMixed = {{kGeomSphere, {0.12, 0, 0}, 2e5, 0.5, 0.02},
                                      {kGeomCapsule, {0.06, 0.15, 0}, 1e5, 1.0, 0.01},
                                      {kGeomBox, {0.15, 0.1, 0.08}, 3e5, 0.6, 0.03},
                                      {kGeomBox, {0.1, 0.1, 0.1}, 1e5, 0.9, 0.0},
                                      {kGeomCapsule, {0.05, 0.2, 0}, 4e5, 0.3, 0.02, 0.0, true}};

// Random configurations: bodies crowded near the ground so that most pairs touch.
std::vector<double> random_qpos(const Model& m, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> q = m.qpos0;
  for (int j = 0; j < m.njnt; ++j) {
    double* qj = q.data() + m.jnt_qposadr[static_cast<std::size_t>(j)];
    if (m.jnt_type[static_cast<std::size_t>(j)] == kJointFree) {
      qj[0] = 0.25 * u(rng);
      qj[1] = 0.25 * u(rng);
      qj[2] = 0.12 + 0.12 * u(rng);
      Eigen::Quaterniond r(random_rotation(rng));
      qj[3] = r.w(), qj[4] = r.x(), qj[5] = r.y(), qj[6] = r.z();
    } else {
      qj[0] = 3.0 * u(rng);
    }
  }
  return q;
}

// Geom world frames from qpos, computed here with Eigen (free joints: pose from qpos; hinges:
// body_pos/body_quat then the rotation about the joint axis at the body origin).
std::vector<Shape> geom_shapes(const Model& m, const std::vector<double>& q) {
  std::vector<V3> bp(static_cast<std::size_t>(m.nbody), V3::Zero());
  std::vector<M3> bR(static_cast<std::size_t>(m.nbody), M3::Identity());
  for (int b = 1; b < m.nbody; ++b) {
    const std::size_t ib = static_cast<std::size_t>(b);
    const int j = m.body_jntadr[ib];
    const double* qj = q.data() + m.jnt_qposadr[static_cast<std::size_t>(j)];
    if (m.jnt_type[static_cast<std::size_t>(j)] == kJointFree) {
      bp[ib] = V3(qj[0], qj[1], qj[2]);
      bR[ib] = Eigen::Quaterniond(qj[3], qj[4], qj[5], qj[6]).normalized().toRotationMatrix();
    } else {
      const double* p = &m.body_pos[3 * ib];
      const double* bq = &m.body_quat[4 * ib];
      const double* ax = &m.jnt_axis[3 * static_cast<std::size_t>(j)];
      bp[ib] = V3(p[0], p[1], p[2]);
      bR[ib] = Eigen::Quaterniond(bq[0], bq[1], bq[2], bq[3]).toRotationMatrix() *
               Eigen::AngleAxisd(qj[0] - m.jnt_qpos0[static_cast<std::size_t>(j)], V3(ax[0], ax[1], ax[2]))
                   .toRotationMatrix();
    }
  }
  std::vector<Shape> s;
  for (int g = 0; g < m.ngeom; ++g) {
    const std::size_t ig = static_cast<std::size_t>(g), ib = static_cast<std::size_t>(m.geom_bodyid[ig]);
    const double* gp = &m.geom_pos[3 * ig];
    const double* gq = &m.geom_quat[4 * ig];
    Shape sh;
    sh.type = m.geom_type[ig];
    sh.pos = bp[ib] + bR[ib] * V3(gp[0], gp[1], gp[2]);
    sh.rot = bR[ib] * Eigen::Quaterniond(gq[0], gq[1], gq[2], gq[3]).toRotationMatrix();
    sh.size = V3(m.geom_size[3 * ig], m.geom_size[3 * ig + 1], m.geom_size[3 * ig + 2]);
    s.push_back(sh);
  }
  return s;
}

bool bitwise_equal(const HostContact& a, const HostContact& b) { return std::memcmp(&a, &b, sizeof(a)) == 0; }

State make_state(const Model& m, const std::vector<std::vector<double>>& qpos, Backend b = Backend::CPU) {
  State s(m, static_cast<int>(qpos.size()), b);
  for (std::size_t w = 0; w < qpos.size(); ++w) s.qpos.world_from_host(static_cast<int>(w), qpos[w].data());
  return s;
}

}  // namespace

TEST(CollisionPipeline, MatchesNarrowPhaseOnIndependentPoses) {
  const Model m = make_scene(kMixed);
  ASSERT_EQ(m.npair, 15);  // ground with 5 bodies, and the 10 body pairs
  std::mt19937 rng(3);
  const int nworld = 24;
  std::vector<std::vector<double>> q;
  for (int w = 0; w < nworld; ++w) q.push_back(random_qpos(m, rng));
  Context ctx(Backend::CPU, 2);
  CollisionPipeline pipe(m, ctx, nworld);
  Contacts contacts(nworld, estimate_contact_capacity(m), Backend::CPU);
  pipe.collide(make_state(m, q), contacts);
  EXPECT_EQ(pipe.last_dropped_total(), 0);
  int total = 0;
  for (int w = 0; w < nworld; ++w) {
    SCOPED_TRACE("world " + std::to_string(w));
    const auto got = world_contacts(contacts, w);
    const auto shapes = geom_shapes(m, q[static_cast<std::size_t>(w)]);
    std::size_t i = 0;
    for (int p = 0; p < m.npair; ++p) {  // pair order, no pruning in the reference
      const int g0 = m.pair_geom0[static_cast<std::size_t>(p)], g1 = m.pair_geom1[static_cast<std::size_t>(p)];
      const std::size_t i0 = static_cast<std::size_t>(g0), i1 = static_cast<std::size_t>(g1);
      const double margin = m.geom_margin[i0] + m.geom_margin[i1];
      for (const Contact& e : collide(shapes[i0], shapes[i1], margin)) {
        ASSERT_LT(i, got.size());
        const HostContact& c = got[i++];
        EXPECT_EQ(c.geom[0], g0);
        EXPECT_EQ(c.geom[1], g1);
        EXPECT_EQ(c.body[0], m.geom_bodyid[i0]);
        EXPECT_EQ(c.body[1], m.geom_bodyid[i1]);
        EXPECT_NEAR(c.phi, e.phi, 1e-9);
        EXPECT_LT((V3(c.x0[0], c.x0[1], c.x0[2]) - e.x0).norm(), 1e-9);
        EXPECT_LT((V3(c.x1[0], c.x1[1], c.x1[2]) - e.x1).norm(), 1e-9);
        EXPECT_LT((V3(c.normal[0], c.normal[1], c.normal[2]) - e.n).norm(), 1e-9);
        // Material: series stiffness (the rigid ground contributes nothing), k0 and k1 kept,
        // tau0 + tau1, and 2 mu0 mu1 / (mu0 + mu1).
        const double k0 = m.geom_stiffness[i0], k1 = m.geom_stiffness[i1];
        const double kc = std::isinf(k0) ? k1 : k0 * k1 / (k0 + k1);
        EXPECT_DOUBLE_EQ(c.stiffness[0], kc);
        EXPECT_EQ(c.stiffness[1], k0);
        EXPECT_EQ(c.stiffness[2], k1);
        EXPECT_DOUBLE_EQ(c.dissipation, m.geom_dissipation[i0] + m.geom_dissipation[i1]);
        const double mu0 = m.geom_friction[i0], mu1 = m.geom_friction[i1];
        EXPECT_DOUBLE_EQ(c.friction, 2 * mu0 * mu1 / (mu0 + mu1));
      }
    }
    EXPECT_EQ(i, got.size());
    total += static_cast<int>(got.size());
  }
  EXPECT_GT(total, 4 * nworld) << "the scene should be crowded";
}

TEST(CollisionPipeline, OverflowKeepsTheDeepestAndCountsTheDropped) {
  const std::vector<BodyGeom> boxes = {{kGeomBox, {0.2, 0.2, 0.05}},
                                       {kGeomBox, {0.2, 0.2, 0.05}},
                                       {kGeomBox, {0.2, 0.2, 0.05}},
                                       {kGeomSphere, {0.1, 0, 0}}};
  const Model m = make_scene(boxes, false);
  std::mt19937 rng(5);
  const int nworld = 6, cap = 5;
  std::vector<std::vector<double>> q;
  for (int w = 0; w < nworld; ++w) {
    std::vector<double> qw = random_qpos(m, rng);
    for (int j = 0; j < m.njnt; ++j) {  // spread the boxes out, sink them a little, tilt slightly
      double* qj = qw.data() + m.jnt_qposadr[static_cast<std::size_t>(j)];
      qj[0] = 0.6 * j;
      qj[2] = w == 0 || j == 3 ? 1.0 : 0.05 - 0.002 * (w + 1) - 0.003 * j;  // world 0: all in the air
      const Eigen::Quaterniond r(rot_axis(V3(0.3 * w, 1, 0.2 * j), 0.005 * (w + j)));
      qj[3] = r.w(), qj[4] = r.x(), qj[5] = r.y(), qj[6] = r.z();
    }
    q.push_back(qw);
  }
  Context ctx(Backend::CPU, 3);
  CollisionPipeline pipe(m, ctx, nworld);
  const State s = make_state(m, q);
  Contacts all(nworld, 64, Backend::CPU), capped(nworld, cap, Backend::CPU);
  pipe.collide(s, all);
  EXPECT_EQ(pipe.last_dropped_total(), 0);
  pipe.collide(s, capped);
  long long expected_dropped = 0;
  for (int w = 0; w < nworld; ++w) {
    SCOPED_TRACE("world " + std::to_string(w));
    const auto full = world_contacts(all, w);
    const auto kept = world_contacts(capped, w);
    // Expected: the `cap` smallest (phi, generation rank), listed in generation order.
    std::vector<std::size_t> order(full.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return full[a].phi < full[b].phi; });
    order.resize(std::min<std::size_t>(order.size(), cap));
    std::sort(order.begin(), order.end());
    ASSERT_EQ(kept.size(), order.size());
    for (std::size_t i = 0; i < kept.size(); ++i) EXPECT_TRUE(bitwise_equal(kept[i], full[order[i]])) << "slot " << i;
    const int dropped = static_cast<int>(full.size() - kept.size());
    EXPECT_EQ(capped.dropped_host()[static_cast<std::size_t>(w)], dropped);
    expected_dropped += dropped;
    if (w == 0) EXPECT_EQ(full.size(), 0u);
    if (w > 0) EXPECT_EQ(full.size(), 12u) << "3 boxes x 4 corners (the sphere stays clear)";
  }
  EXPECT_EQ(expected_dropped, 7 * (nworld - 1));
  EXPECT_EQ(pipe.last_dropped_total(), expected_dropped);
  // Zero capacity: every contact is dropped.
  Contacts none(nworld, 0, Backend::CPU);
  pipe.collide(s, none);
  EXPECT_EQ(pipe.last_dropped_total(), 12 * (nworld - 1));
}

// Contacts of every world (and the dropped counts) from one pipeline on `threads` CPU threads,
// with teams of `lanes` emulated lanes when lanes > 0 (0: the one-lane CPU team).
struct BatchContacts {
  std::vector<std::vector<HostContact>> contacts;
  std::vector<int> dropped;
};
BatchContacts collide_batch(const Model& m, const std::vector<std::vector<double>>& qs, int cap, int threads,
                            int lanes = 0) {
  Context ctx(Backend::CPU, threads, lanes);
  CollisionPipeline pipe(m, ctx, static_cast<int>(qs.size()));
  Contacts c(static_cast<int>(qs.size()), cap, Backend::CPU);
  pipe.collide(make_state(m, qs), c);
  BatchContacts r;
  for (int w = 0; w < static_cast<int>(qs.size()); ++w) r.contacts.push_back(world_contacts(c, w));
  r.dropped = c.dropped_host();
  return r;
}

void expect_same_contacts(const BatchContacts& a, const BatchContacts& b, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(a.dropped, b.dropped);
  ASSERT_EQ(a.contacts.size(), b.contacts.size());
  for (std::size_t w = 0; w < a.contacts.size(); ++w) {
    ASSERT_EQ(a.contacts[w].size(), b.contacts[w].size()) << "world " << w;
    for (std::size_t i = 0; i < a.contacts[w].size(); ++i)
      EXPECT_TRUE(bitwise_equal(a.contacts[w][i], b.contacts[w][i])) << "world " << w << " slot " << i;
  }
}

TEST(CollisionPipeline, DeterministicAcrossThreadsAndBatchSizes) {
  const Model m = make_scene(kMixed);
  std::mt19937 rng(9);
  const int nworld = 13;
  std::vector<std::vector<double>> q;
  for (int w = 0; w < nworld; ++w) q.push_back(random_qpos(m, rng));
  const int cap = 6;  // small enough to overflow in some worlds: the replacement path too
  const BatchContacts ref = collide_batch(m, q, cap, 1);
  long long overflow = 0;
  for (int d : ref.dropped) overflow += d;
  EXPECT_GT(overflow, 0);
  for (int threads : {2, 3, 4}) expect_same_contacts(collide_batch(m, q, cap, threads), ref, std::to_string(threads) + " threads");
  // Batch invariance: each world alone gives the same contacts as inside the batch.
  for (int w : {0, 5, 12}) {
    const BatchContacts alone = collide_batch(m, {q[static_cast<std::size_t>(w)]}, cap, 2);
    EXPECT_EQ(alone.dropped[0], ref.dropped[static_cast<std::size_t>(w)]);
    ASSERT_EQ(alone.contacts[0].size(), ref.contacts[static_cast<std::size_t>(w)].size());
    for (std::size_t i = 0; i < alone.contacts[0].size(); ++i)
      EXPECT_TRUE(bitwise_equal(alone.contacts[0][i], ref.contacts[static_cast<std::size_t>(w)][i]));
  }
}

// A team collides a world a chunk of pairs at a time, one pair per lane, each lane writing its
// contacts at its prefix-sum offset and, past the capacity, replacing in generation order one
// lane at a time. Whatever the team (2 and 3 lanes: many chunks; 32: one warp; 33: a partial
// second warp, which takes no pair), the contacts, their order and the dropped counts are those
// of the one-lane loop over pairs, bit for bit, with and without overflow.
TEST(CollisionPipeline, EmulatedTeamsKeepThePairOrder) {
  std::vector<BodyGeom> bodies = kMixed;
  bodies.insert(bodies.end(), kMixed.begin(), kMixed.end());
  const Model m = make_scene(bodies);
  ASSERT_EQ(m.npair, 55);  // more pairs than a warp's lanes: two chunks of 32
  std::mt19937 rng(21);
  const int nworld = 5;
  std::vector<std::vector<double>> q;
  for (int w = 0; w < nworld; ++w) q.push_back(random_qpos(m, rng));
  for (int cap : {7, 64}) {
    const BatchContacts ref = collide_batch(m, q, cap, 1);
    long long overflow = 0, total = 0;
    for (int w = 0; w < nworld; ++w) {
      overflow += ref.dropped[static_cast<std::size_t>(w)];
      total += static_cast<long long>(ref.contacts[static_cast<std::size_t>(w)].size());
    }
    if (cap == 7) EXPECT_GT(overflow, 0);
    else EXPECT_EQ(overflow, 0);
    EXPECT_GT(total, 2 * nworld);
    for (int lanes : {2, 3, 32, 33})
      expect_same_contacts(collide_batch(m, q, cap, 2, lanes), ref,
                           "capacity " + std::to_string(cap) + ", " + std::to_string(lanes) + " lanes");
  }
}

// Free bodies above a ground plane, each with the geoms `geoms` (positions in the body frame).
Model make_multi_geom_bodies(int nbody, const std::vector<GeomSpec>& geoms) {
  ModelBuilder b;
  GeomSpec ground;
  ground.type = kGeomPlane;
  ground.margin = 0.005;
  b.add_geom(0, ground);
  for (int i = 0; i < nbody; ++i) {
    BodySpec bs;
    bs.name = "body" + std::to_string(i);
    bs.pos = {0.3 * double(i), 0, 0.3};
    bs.inertia_from_geoms = true;
    const int id = b.add_body(bs);
    JointSpec j;
    j.name = "joint" + std::to_string(i);
    j.type = kJointFree;
    b.add_joint(id, j);
    for (GeomSpec g : geoms) {
      g.margin += 0.004 * double(i);  // margins differ per pair: a group's bound takes the largest
      b.add_geom(id, g);
    }
  }
  return b.finalize();
}

// A body's geoms come in groups per body pair (nine pairs for bodies of three geoms), which the
// one-lane fp64 collision tests by one sphere per body pair first (the body-pair broad phase).
// Its contacts must be those of the pair-by-pair loop (an emulated team runs that loop), bit for
// bit, in crowded random poses.
TEST(CollisionPipeline, BodyPairBroadPhaseKeepsEveryContact) {
  GeomSpec sphere, capsule, box;
  sphere.type = kGeomSphere;
  sphere.size = {0.05, 0, 0};
  sphere.pos = {0.09, 0.02, 0};
  capsule.type = kGeomCapsule;
  capsule.size = {0.03, 0.08, 0};
  capsule.pos = {-0.06, 0, 0.04};
  capsule.quat = {0.8, 0.6, 0, 0};
  box.type = kGeomBox;
  box.size = {0.04, 0.03, 0.02};
  box.pos = {0, -0.07, -0.03};
  box.quat = {0.9, 0.1, -0.3, 0.2};
  const int nbody = 4;
  const Model m = make_multi_geom_bodies(nbody, {sphere, capsule, box});
  {
    Context ctx(Backend::CPU, 1);
    const CollisionPipeline pipe(m, ctx, 1);
    ASSERT_EQ(pipe.active_pair_count(), 3 * nbody + 9 * nbody * (nbody - 1) / 2);
    EXPECT_EQ(pipe.body_pair_group_count(), nbody * (nbody - 1) / 2);  // the plane's pairs: untested groups
  }
  std::mt19937 rng(5);
  std::vector<std::vector<double>> q;
  for (int w = 0; w < 40; ++w) q.push_back(random_qpos(m, rng));
  const BatchContacts one_lane = collide_batch(m, q, 64, 1);
  long long total = 0;
  for (const auto& c : one_lane.contacts) total += static_cast<long long>(c.size());
  EXPECT_GT(total, 200);
  expect_same_contacts(collide_batch(m, q, 64, 1, 2), one_lane, "one lane (broad phase) vs 2 lanes (pair loop)");
  // Past the capacity: the same replacements of the shallowest and the same dropped counts.
  const BatchContacts small = collide_batch(m, q, 5, 1);
  long long dropped = 0;
  for (int d : small.dropped) dropped += d;
  EXPECT_GT(dropped, 0);
  expect_same_contacts(collide_batch(m, q, 5, 1, 2), small, "capacity 5: one lane (broad phase) vs 2 lanes");
}

// The group bound is tight where the geoms that stand for two bodies and the pair that touches
// lie on one line: dumbbells (two spheres of radius r at x = -a, +a; the first stands for its
// body) facing each other, the second turned half a turn, so that the inner spheres meet at a
// centre distance X = 2 a + 2 r + margin while the stand-ins are 4 a + 2 r + margin apart, the
// group's bound. Slid through that distance in 1 um steps, the one-lane loop finds every contact
// of the pair loop: a bound 2e-5 too small loses the first ones.
TEST(CollisionPipeline, BodyPairBroadPhaseBoundIsTight) {
  const double a = 0.1, r = 0.04;
  GeomSpec left, right;
  left.type = right.type = kGeomSphere;
  left.size = right.size = {r, 0, 0};
  left.pos = {-a, 0, 0};
  right.pos = {a, 0, 0};
  const Model m = make_multi_geom_bodies(2, {left, right});
  {
    Context ctx(Backend::CPU, 1);
    const CollisionPipeline pipe(m, ctx, 1);
    ASSERT_EQ(pipe.body_pair_group_count(), 1);
  }
  const double margin = 0.004;  // body 1's geoms: 0.004 (the pair's detection distance)
  const double X = 2 * a + 2 * r + margin;
  std::vector<std::vector<double>> q;
  for (int k = -100; k <= 100; ++k) {
    std::vector<double> qs = m.qpos0;
    const double pose[2][7] = {{0, 0, 0.5, 1, 0, 0, 0}, {X + 1e-6 * k, 0, 0.5, 0, 0, 0, 1}};
    for (int i = 0; i < 2; ++i)
      std::copy(pose[i], pose[i] + 7, qs.data() + m.jnt_qposadr[static_cast<std::size_t>(i)]);
    q.push_back(qs);
  }
  const BatchContacts one_lane = collide_batch(m, q, 8, 1);
  int touching = 0;
  for (const auto& c : one_lane.contacts) touching += c.empty() ? 0 : 1;
  EXPECT_GE(touching, 95);  // the closer half
  EXPECT_LE(touching, 106);
  expect_same_contacts(collide_batch(m, q, 8, 1, 2), one_lane, "one lane (broad phase) vs 2 lanes (pair loop)");
}

// The analytic-only kernel runs exactly when no pair needs the convex solvers: kMixed (plane,
// spheres, capsules, boxes) has none; a cylinder among them brings GJK/EPA in. The contacts of
// the analytic-only kernel are checked against the full narrow phase by
// MatchesNarrowPhaseOnIndependentPoses (kMixed) and AnalyticFormReproducesExactlyTheAnalyticPairs.
TEST(CollisionPipeline, ChoosesTheAnalyticKernelWhenNoPairNeedsConvexSolvers) {
  Context ctx(Backend::CPU, 1);
  EXPECT_FALSE(CollisionPipeline(make_scene(kMixed), ctx, 1).uses_convex_solvers());
  std::vector<BodyGeom> with_cylinder = kMixed;
  with_cylinder.push_back({kGeomCylinder, {0.1, 0.1, 0}, 1e5, 0.5, 0.0});
  EXPECT_TRUE(CollisionPipeline(make_scene(with_cylinder), ctx, 1).uses_convex_solvers());
}

TEST(CollisionPipeline, Fp32MatchesFp64) {
  const Model m = make_scene(kMixed);
  std::mt19937 rng(21);
  const int nworld = 32;
  std::vector<std::vector<double>> q;
  for (int w = 0; w < nworld; ++w) q.push_back(random_qpos(m, rng));
  Context ctx(Backend::CPU, 2);
  CollisionPipeline p64(m, ctx, nworld, Precision::F64), p32(m, ctx, nworld, Precision::F32);
  EXPECT_EQ(p32.precision(), Precision::F32);
  Contacts c64(nworld, 64, Backend::CPU), c32(nworld, 64, Backend::CPU);
  const State s = make_state(m, q);
  p64.collide(s, c64);
  p32.collide(s, c32);
  int same = 0, total = 0;
  for (int w = 0; w < nworld; ++w) {
    const auto a = world_contacts(c64, w), b = world_contacts(c32, w);
    ++total;
    if (a.size() != b.size()) continue;  // a contact at the margin edge or a feature switch
    bool ok = true;
    for (std::size_t i = 0; i < a.size(); ++i) {
      ok = ok && a[i].geom[0] == b[i].geom[0] && a[i].geom[1] == b[i].geom[1] && std::abs(a[i].phi - b[i].phi) < 1e-5;
      for (int k = 0; k < 3; ++k) ok = ok && std::abs(a[i].x1[k] - b[i].x1[k]) < 1e-4;
    }
    same += ok ? 1 : 0;
  }
  EXPECT_GE(same, total - 1) << "fp32 contacts should match fp64 in (nearly) every world";
}

TEST(CollisionPipeline, UnsupportedPairsAreCountedAndReported) {
  // Cylinders collide with everything (collision_manifold.hpp): no unsupported pair here.
  const Model m = make_scene(
      {{kGeomCylinder, {0.1, 0.05, 0}}, {kGeomSphere, {0.1, 0, 0}}, {kGeomCylinder, {0.1, 0.1, 0}}});
  Context ctx(Backend::CPU, 1);
  CollisionPipeline pipe(m, ctx, 1);
  EXPECT_EQ(m.npair, 6);
  EXPECT_EQ(pipe.unsupported_pair_count(), 0);
  EXPECT_EQ(pipe.active_pair_count(), 6);
  // A heightfield on a moving body against the ground plane has no narrow phase: counted,
  // described, and never collided.
  const Model hm = [] {
    ModelBuilder b;
    GeomSpec ground;
    ground.name = "ground";
    ground.type = kGeomPlane;
    b.add_geom(0, ground);
    HfieldSpec hs;
    hs.name = "terrain";
    hs.nrow = hs.ncol = 3;
    hs.size = {1, 1, 0.1, 0.05};
    hs.data.assign(9, 0.5);
    BodySpec bs;
    bs.mass = 1;
    bs.inertia = {0.1, 0.1, 0.1, 0, 0, 0};
    const int id = b.add_body(bs);
    JointSpec j;
    j.type = kJointFree;
    b.add_joint(id, j);
    GeomSpec g;
    g.name = "tile";
    g.type = kGeomHfield;
    g.dataid = b.add_hfield(hs);
    b.add_geom(id, g);
    return b.finalize();
  }();
  CollisionPipeline hp(hm, ctx, 1);
  EXPECT_EQ(hm.npair, 1);
  EXPECT_EQ(hp.unsupported_pair_count(), 1);
  EXPECT_EQ(hp.active_pair_count(), 0);
  ASSERT_EQ(hp.warnings().size(), 1u);
  EXPECT_NE(hp.warnings()[0].find("'ground' (plane)"), std::string::npos) << hp.warnings()[0];
  EXPECT_NE(hp.warnings()[0].find("'tile' (hfield)"), std::string::npos) << hp.warnings()[0];
  // A cylinder on the ground still collides (upright: the 3-point tripod).
  const Model flat = [] {
    ModelBuilder b;
    GeomSpec ground;
    ground.type = kGeomPlane;
    b.add_geom(0, ground);
    BodySpec bs;
    bs.inertia_from_geoms = true;
    const int id = b.add_body(bs);
    JointSpec j;
    j.type = kJointFree;
    b.add_joint(id, j);
    GeomSpec g;
    g.type = kGeomCylinder;
    g.size = {0.1, 0.05, 0};
    g.margin = 0.01;
    b.add_geom(id, g);
    return b.finalize();
  }();
  CollisionPipeline pf(flat, ctx, 1);
  EXPECT_EQ(pf.unsupported_pair_count(), 0);
  Contacts c(1, estimate_contact_capacity(flat), Backend::CPU);
  pf.collide(make_state(flat, {{0.3, 0.2, 0.05 - 0.002, 1, 0, 0, 0}}), c);
  const auto got = world_contacts(c, 0);
  ASSERT_EQ(got.size(), 3u);
  for (const auto& h : got) EXPECT_NEAR(h.phi, -0.002, 1e-12);
}

TEST(CollisionPipeline, ContactCapacityEstimate) {
  const Model m = make_scene({{kGeomBox, {0.1, 0.1, 0.1}},
                              {kGeomBox, {0.1, 0.1, 0.1}},
                              {kGeomCapsule, {0.05, 0.1, 0}},
                              {kGeomSphere, {0.1, 0, 0}},
                              {kGeomCylinder, {0.1, 0.1, 0}}});
  // ground: box 4 + box 4 + capsule 2 + sphere 1 + cylinder 4 = 15
  // box-box 8, box-capsule 2 x 2, box-sphere 1 x 2, capsule-sphere 1 -> 15; the cylinder with
  // box, box, capsule, sphere (GJK/EPA manifold, <= 4 each) -> 16
  EXPECT_EQ(estimate_contact_capacity(m), 46);
  EXPECT_EQ(estimate_contact_capacity(m, 20), 20);
}

TEST(CollisionPipeline, RejectsMismatchedInputs) {
  const Model m = make_scene(kMixed);
  Context ctx(Backend::CPU, 1);
  CollisionPipeline pipe(m, ctx, 3);
  State s3(m, 3, Backend::CPU), s2(m, 2, Backend::CPU);
  s3.reset(m);
  Contacts c3(3, 8, Backend::CPU), c2(2, 8, Backend::CPU);
  EXPECT_THROW(pipe.collide(s2, c3), std::invalid_argument);
  EXPECT_THROW(pipe.collide(s3, c2), std::invalid_argument);
  EXPECT_NO_THROW(pipe.collide(s3, c3));
  EXPECT_THROW(CollisionPipeline(m, ctx, 0), std::invalid_argument);
}

TEST(CollisionPipeline, CudaMatchesCpu) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: the CUDA collision parity test needs a GPU";
  const Model m = make_scene(kMixed);
  std::mt19937 rng(17);
  const int nworld = 257;
  std::vector<std::vector<double>> q;
  for (int w = 0; w < nworld; ++w) q.push_back(random_qpos(m, rng));
  for (Precision p : {Precision::F64, Precision::F32}) {
    SCOPED_TRACE(p == Precision::F64 ? "fp64" : "fp32");
    Context cpu(Backend::CPU, 2), gpu(Backend::CUDA);
    CollisionPipeline pc(m, cpu, nworld, p), pg(m, gpu, nworld, p);
    const int cap = 8;  // overflow in some worlds exercises the replacement path on both
    Contacts cc(nworld, cap, Backend::CPU), cg(nworld, cap, Backend::CUDA);
    pc.collide(make_state(m, q), cc);
    pg.collide(make_state(m, q, Backend::CUDA), cg);
    // Same count, same order, values within tolerance. nvcc contracts a * b + c into FMAs and
    // g++ does not, so results differ in the last bits: in fp64 that never moves a discrete
    // choice; in fp32 a face/edge or margin decision within rounding of its threshold may
    // flip in a rare world.
    const double tol = p == Precision::F64 ? 1e-9 : 2e-4;
    const auto nc = cc.counts_host(), ng = cg.counts_host(), dc = cc.dropped_host(), dg = cg.dropped_host();
    int mismatched = 0;
    for (int w = 0; w < nworld; ++w) {
      const auto a = world_contacts(cc, w), b = world_contacts(cg, w);
      bool ok = a.size() == b.size() && dc[static_cast<std::size_t>(w)] == dg[static_cast<std::size_t>(w)];
      for (std::size_t i = 0; ok && i < a.size(); ++i) {
        ok = a[i].geom[0] == b[i].geom[0] && a[i].geom[1] == b[i].geom[1] && std::abs(a[i].phi - b[i].phi) < tol &&
             a[i].stiffness[0] == b[i].stiffness[0] && a[i].friction == b[i].friction;
        for (int k = 0; k < 3; ++k)
          ok = ok && std::abs(a[i].x0[k] - b[i].x0[k]) < tol && std::abs(a[i].x1[k] - b[i].x1[k]) < tol &&
               std::abs(a[i].normal[k] - b[i].normal[k]) < 10 * tol;
      }
      mismatched += ok ? 0 : 1;
    }
    if (p == Precision::F64) {
      EXPECT_EQ(nc, ng);
      EXPECT_EQ(dc, dg);
      EXPECT_EQ(pg.last_dropped_total(), pc.last_dropped_total());
      EXPECT_EQ(mismatched, 0);
    } else {
      EXPECT_LE(mismatched, nworld / 50) << "fp32 CUDA contacts differ from the CPU in too many worlds";
    }
  }
}
