// Collision pipeline: narrow phase of plane/sphere/capsule/cylinder pairs against analytic
// answers, properties of every pair type on random poses (rigid-motion invariance, swap
// symmetry, witnesses on surfaces, exact distance when separated), material rules, and the
// batched pipeline (pruning, capacity overflow, determinism, F32, CUDA parity).
// Box pairs with known answers: test_collision_box.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "collision_test_util.hpp"
#include "sap/collision.hpp"
#include "sap/model_builder.hpp"

using namespace sap;
using namespace sap::test;

namespace {

constexpr double kTol = 1e-9;
const int kTrials = std::getenv("SAP_COLLISION_TRIALS") ? std::atoi(std::getenv("SAP_COLLISION_TRIALS")) : 400;

const V3 ez(0, 0, 1), ex(1, 0, 0), ey(0, 1, 0);

}  // namespace

// ---- material ---------------------------------------------------------------------------------

TEST(CollisionMaterial, CombinationRules) {
  EXPECT_DOUBLE_EQ(combine_stiffness(1e5, 1e5), 5e4);  // series springs
  EXPECT_DOUBLE_EQ(combine_stiffness(2.0, 6.0), 12.0 / 8.0);
  EXPECT_DOUBLE_EQ(combine_stiffness(HUGE_VAL, 3e4), 3e4);  // rigid side: the other one
  EXPECT_DOUBLE_EQ(combine_stiffness(3e4, HUGE_VAL), 3e4);
  EXPECT_TRUE(std::isinf(combine_stiffness(HUGE_VAL, HUGE_VAL)));
  EXPECT_DOUBLE_EQ(combine_dissipation(0.01, 0.03), 0.04);  // tau0 + tau1
  EXPECT_DOUBLE_EQ(combine_friction(0.5, 1.0), 2 * 0.5 * 1.0 / 1.5);
  EXPECT_DOUBLE_EQ(combine_friction(0.7, 0.7), 0.7);  // equal materials keep mu
  EXPECT_DOUBLE_EQ(combine_friction(0.0, 0.8), 0.0);
  EXPECT_DOUBLE_EQ(combine_friction(0.0, 0.0), 0.0);
}

// ---- plane pairs ----------------------------------------------------------------------------

TEST(CollisionPlane, SphereKnownAnswers) {
  const double r = 0.5, margin = 0.01;
  for (double h : {0.5, 0.505, 0.1, -0.7}) {  // touching, inside the margin, overlap, submerged
    SCOPED_TRACE(h);
    const V3 c(0.3, -0.2, h);
    expect_contacts(plane(), sphere(c, r), margin, {along(V3(0.3, -0.2, 0), V3(0.3, -0.2, h - r), ez)});
  }
  expect_contacts(plane(), sphere(V3(0, 0, 0.52), r), margin, {});  // beyond the margin
  expect_contacts(plane(), sphere(V3(0, 0, 0.5), r), 0.0, {});      // touching without margin: phi = 0 is not < 0
}

TEST(CollisionPlane, CapsuleFlatGivesTwoTiltedGivesOne) {
  const double r = 0.1, hl = 0.4;
  const M3 flat = rot_axis(ey, M_PI / 2);  // axis along x
  for (double gap : {0.0, 0.004, -0.05}) {
    SCOPED_TRACE(gap);
    const double z = r + gap;
    expect_contacts(plane(), capsule(V3(0, 0, z), flat, r, hl), 0.01,
                    {along(V3(-hl, 0, 0), V3(-hl, 0, gap), ez), along(V3(hl, 0, 0), V3(hl, 0, gap), ez)});
  }
  expect_contacts(plane(), capsule(V3(0, 0, r + 0.02), flat, r, hl), 0.01, {});
  // Tilted by 30 degrees: the lower end sphere is 0.02 above the plane, the upper one far.
  const double a = M_PI / 6;
  const M3 tilt = rot_axis(ey, M_PI / 2 - a);  // axis (cos a, 0, sin a)
  const V3 c(0.2, 0.1, r + hl * std::sin(a) + 0.02);
  const V3 low = c - hl * V3(std::cos(a), 0, std::sin(a));
  expect_contacts(plane(), capsule(c, tilt, r, hl), 0.05,
                  {along(V3(low.x(), low.y(), 0), V3(low.x(), low.y(), 0.02), ez)});
}

TEST(CollisionPlane, CylinderUprightLyingTilted) {
  const double r = 0.3, hl = 0.2;
  // Upright on its end face: a tripod on the bottom rim.
  {
    const auto got = collide(plane(), cylinder(V3(1, 2, hl), M3::Identity(), r, hl), 0.01);
    ASSERT_EQ(got.size(), 3u);
    for (const auto& c : got) {
      EXPECT_NEAR(c.phi, 0, kTol);
      EXPECT_NEAR((c.x1 - V3(1, 2, 0)).norm(), r, kTol);
      EXPECT_LT((c.n - ez).norm(), kTol);
    }
    EXPECT_NEAR((got[0].x1 - got[1].x1).norm(), r * std::sqrt(3.0), 1e-9);  // 120 degrees apart
    EXPECT_NEAR((got[1].x1 - got[2].x1).norm(), r * std::sqrt(3.0), 1e-9);
  }
  // Lying on its side: the two lowest rim points (line contact).
  expect_contacts(plane(), cylinder(V3(0, 0, r - 0.003), rot_axis(ex, M_PI / 2), r, hl), 0.01,
                  {along(V3(0, -hl, 0), V3(0, -hl, -0.003), ez), along(V3(0, hl, 0), V3(0, hl, -0.003), ez)});
  // Tilted by 0.3 rad about x: one rim point, the lowest one, below the plane.
  const double th = 0.3;
  const V3 c(0, 0, hl * std::cos(th) + r * std::sin(th) - 0.01);
  const V3 low = c - hl * V3(0, -std::sin(th), std::cos(th)) - r * V3(0, std::cos(th), std::sin(th));
  EXPECT_NEAR(low.z(), -0.01, 1e-12);
  expect_contacts(plane(), cylinder(c, rot_axis(ex, th), r, hl), 0.02, {along(V3(low.x(), low.y(), 0), low, ez)});
}

// ---- sphere and capsule pairs ---------------------------------------------------------------

TEST(CollisionSphere, SphereSphereKnownAnswers) {
  const double r0 = 0.3, r1 = 0.2, margin = 0.01;
  const V3 u = V3(1, -2, 0.5).normalized(), c0(0.1, 0.2, 0.3);
  for (double gap : {0.0, 0.006, -0.3}) {
    SCOPED_TRACE(gap);
    const V3 c1 = c0 + (r0 + r1 + gap) * u;
    expect_contacts(sphere(c0, r0), sphere(c1, r1), margin, {along(c0 + r0 * u, c1 - r1 * u, u)});
  }
  expect_contacts(sphere(c0, r0), sphere(c0 + 0.52 * u, r1), margin, {});
}

TEST(CollisionSphere, ConcentricSpheresUseFallbackNormal) {
  const auto got = collide(sphere(V3(1, 1, 1), 0.3), sphere(V3(1, 1, 1), 0.2), 0.0);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_NEAR(got[0].phi, -0.5, kTol);
  EXPECT_NEAR(got[0].n.norm(), 1.0, kTol);
}

TEST(CollisionSphere, SphereCapsuleSideAndEnd) {
  const double rs = 0.2, rc = 0.1, hl = 0.5, margin = 0.01;
  const Shape cap = capsule(V3::Zero(), M3::Identity(), rc, hl);  // axis z
  for (double gap : {0.0, 0.008, -0.15}) {
    SCOPED_TRACE(gap);
    // Beside the axis: closest axis point (0, 0, 0.2); normal from the sphere to the capsule is -x.
    const V3 c(rs + rc + gap, 0, 0.2);
    expect_contacts(sphere(c, rs), cap, margin, {along(c - rs * ex, V3(rc, 0, 0.2), -ex)});
    // Beyond the +z end: closest axis point is the end (0, 0, hl).
    const V3 d = V3(0, 0, hl) + (rs + rc + gap) * V3(1, 0, 1).normalized();
    const V3 n = -V3(1, 0, 1).normalized();
    expect_contacts(sphere(d, rs), cap, margin, {along(d + rs * n, V3(0, 0, hl) - rc * n, n)});
  }
  expect_contacts(sphere(V3(0.32, 0, 0), rs), cap, margin, {});
}

TEST(CollisionCapsule, CrossingParallelAndCollinear) {
  const double r0 = 0.1, r1 = 0.15, margin = 0.01;
  const M3 along_x = rot_axis(ey, M_PI / 2), along_y = rot_axis(ex, M_PI / 2);
  for (double gap : {0.0, 0.009, -0.12}) {
    SCOPED_TRACE(gap);
    const double d = r0 + r1 + gap;
    // Crossing at right angles: one contact on the common perpendicular.
    expect_contacts(capsule(V3::Zero(), along_x, r0, 0.5), capsule(V3(0.1, 0.2, d), along_y, r1, 0.5), margin,
                    {along(V3(0.1, 0, r0), V3(0.1, 0, d - r1), ez)});
    // Parallel, overlapping over x in [-0.2, 0.5]: a line contact at both ends of the overlap.
    expect_contacts(capsule(V3::Zero(), along_x, r0, 0.5), capsule(V3(0.3, 0, d), along_x, r1, 0.5), margin,
                    {along(V3(-0.2, 0, r0), V3(-0.2, 0, d - r1), ez), along(V3(0.5, 0, r0), V3(0.5, 0, d - r1), ez)});
    // Collinear, end to end: one contact along the axis.
    expect_contacts(capsule(V3::Zero(), along_x, r0, 0.5), capsule(V3(1.0 + d, 0, 0), along_x, r1, 0.5), margin,
                    {along(V3(0.5 + r0, 0, 0), V3(0.5 + d - r1, 0, 0), ex)});
  }
  expect_contacts(capsule(V3::Zero(), along_x, r0, 0.5), capsule(V3(0, 0, 0.27), along_y, r1, 0.5), margin, {});
}

// The host's early rejection of capsule pairs (capsule_lines_apart: the axes' lines farther apart
// than r0 + r1 + margin) drops only pairs whose segments' narrow phase has no contact: on random
// poses around the contact distance, every rejected pair gives none, and at the boundary (crossing
// axes, closest points inside both segments: the lines' distance is the segments') a pair just
// inside gives its contact and is kept, one clearly outside is rejected.
TEST(CollisionCapsule, LinesBoundRejectsOnlyPairsWithoutContact) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0, 1);
  int rejected = 0, touching = 0;
  for (int k = 0; k < 200000; ++k) {
    const Shape a = capsule(V3::Zero(), random_rotation(rng), 0.02 + 0.1 * u(rng), 0.4 * u(rng));
    const V3 offset = V3(u(rng) - 0.5, u(rng) - 0.5, u(rng) - 0.5) * (0.6 * u(rng));
    const Shape b = capsule(offset, random_rotation(rng), 0.02 + 0.1 * u(rng), 0.4 * u(rng));
    const double margin = 0.01 * u(rng);
    ContactGeom<double> out[kMaxPairContacts];
    const int n = collide_capsule_segments(frame(a), frame(b), margin, out);
    touching += n > 0;
    if (capsule_lines_apart(frame(a), frame(b), margin)) {
      ++rejected;
      ASSERT_EQ(n, 0) << "pair " << k << ": rejected with a contact";
    }
    ASSERT_EQ(collide_capsule_capsule(frame(a), frame(b), margin, out), n) << k;
  }
  EXPECT_GT(rejected, 20000);
  EXPECT_GT(touching, 20000);
  const double r0 = 0.05, r1 = 0.07, margin = 0.004, reach = r0 + r1 + margin;
  const M3 along_x = rot_axis(ey, M_PI / 2), along_y = rot_axis(ex, M_PI / 2);
  for (double rel : {-1e-9, -1e-12}) {  // inside: the contact is found and the pair kept
    const Shape a = capsule(V3::Zero(), along_x, r0, 0.3), b = capsule(V3(0.05, -0.02, reach * (1 + rel)), along_y, r1, 0.3);
    ContactGeom<double> out[kMaxPairContacts];
    EXPECT_FALSE(capsule_lines_apart(frame(a), frame(b), margin)) << rel;
    EXPECT_EQ(collide_capsule_capsule(frame(a), frame(b), margin, out), 1) << rel;
  }
  const Shape a = capsule(V3::Zero(), along_x, r0, 0.3), b = capsule(V3(0.05, -0.02, reach * (1 + 1e-6)), along_y, r1, 0.3);
  EXPECT_TRUE(capsule_lines_apart(frame(a), frame(b), margin));
}

// ---- properties on random poses, every pair type --------------------------------------------

namespace {

Shape random_shape(int type, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.1, 0.6);
  const M3 R = random_rotation(rng);
  switch (type) {
    case kGeomPlane: return plane(V3::Zero(), R);
    case kGeomSphere: return sphere(V3::Zero(), u(rng));
    case kGeomCapsule: return capsule(V3::Zero(), R, 0.5 * u(rng), u(rng));
    case kGeomCylinder: return cylinder(V3::Zero(), R, u(rng), u(rng));
    default: return box(V3::Zero(), R, V3(u(rng), u(rng), u(rng)));
  }
}

double rbound(const Shape& s) { return geom_bounding_radius(s.type, {s.size[0], s.size[1], s.size[2]}); }

// Places b near a: at a random direction, at a distance between deep overlap and just out of
// reach, so that the pair is sampled in overlap, in the margin band and beyond.
void place_near(const Shape& a, Shape& b, std::mt19937& rng) {
  std::normal_distribution<double> g(0, 1);
  std::uniform_real_distribution<double> u(0.2, 1.15);
  const V3 dir = V3(g(rng), g(rng), g(rng)).normalized();
  if (a.type == kGeomPlane) {
    const V3 n = a.rot.col(2);
    b.pos = a.pos + (u(rng) * 1.2 - 0.2) * rbound(b) * n + 0.3 * (dir - dir.dot(n) * n);
  } else {
    b.pos = a.pos + u(rng) * (rbound(a) + rbound(b)) * dir;
  }
}

struct PairType {
  int t0, t1;
};
const PairType kPairs[] = {{kGeomPlane, kGeomSphere},   {kGeomPlane, kGeomCapsule},   {kGeomPlane, kGeomBox},
                           {kGeomPlane, kGeomCylinder}, {kGeomSphere, kGeomSphere},   {kGeomSphere, kGeomCapsule},
                           {kGeomSphere, kGeomBox},     {kGeomCapsule, kGeomCapsule}, {kGeomCapsule, kGeomBox},
                           {kGeomBox, kGeomBox}};

}  // namespace

class CollisionProperties : public ::testing::TestWithParam<PairType> {};

TEST_P(CollisionProperties, RandomPoses) {
  const PairType pt = GetParam();
  std::mt19937 rng(1000 + 17 * pt.t0 + pt.t1);
  const double margin = 0.05;
  int ncontact = 0, nseparated = 0, noverlap = 0, nband = 0, nf32_disagree = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    Shape a = random_shape(pt.t0, rng), b = random_shape(pt.t1, rng);
    a.pos = V3(0.3, -0.1, 0.2);
    place_near(a, b, rng);
    const auto got = collide(a, b, margin);
    ASSERT_LE(got.size(), static_cast<std::size_t>(pair_max_contacts(pt.t0, pt.t1)));
    ncontact += static_cast<int>(got.size());
    for (const Contact& c : got) {
      EXPECT_NEAR(c.n.norm(), 1.0, 1e-12);
      EXPECT_NEAR(c.phi, (c.x1 - c.x0).dot(c.n), 1e-12);
      EXPECT_LT(c.phi, margin);
      EXPECT_LT(surface_distance(a, c.x0), 1e-9) << "x0 not on geom 0";
      EXPECT_LT(surface_distance(b, c.x1), 1e-9) << "x1 not on geom 1";
    }
    // Separated shapes: the deepest contact is the exact distance, certified by its witnesses
    // (|x1 - x0| = phi) and the slab of width phi between the shapes along its normal; no
    // contact when the distance exceeds the margin. Cylinders are skipped (no reference).
    if (pt.t1 != kGeomCylinder) {
      const double d = convex_distance(a, b);
      const Contact* deepest = nullptr;
      for (const Contact& c : got)
        if (!deepest || c.phi < deepest->phi) deepest = &c;
      if (d > 1e-6) {
        ++nseparated;
        if (d < margin - 1e-4) {
          ++nband;
          ASSERT_NE(deepest, nullptr) << "distance " << d << " within the margin but no contact";
        }
        if (deepest) {
          EXPECT_GT(deepest->phi, -1e-9);
          EXPECT_LT((deepest->x1 - deepest->x0).norm() - deepest->phi, 1e-9) << "witnesses farther apart than phi";
          EXPECT_GT(support_gap(a, b, deepest->n), deepest->phi - 1e-9) << "phi is not the distance";
        } else {
          EXPECT_GT(d, margin - 1e-4) << "no contact at distance " << d;
        }
      } else if (d < 1e-10 && deepest) {
        ++noverlap;
        EXPECT_LT(deepest->phi, 1e-9) << "overlapping shapes need a non-positive phi";
      }
    }
    // A common rigid motion of both shapes moves the contacts with it.
    const Rigid T = random_rigid(rng);
    const auto moved = collide(T.shape(a), T.shape(b), margin);
    ASSERT_EQ(moved.size(), got.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      const Contact e = T.contact(got[i]);
      EXPECT_NEAR(moved[i].phi, e.phi, 1e-9);
      EXPECT_LT((moved[i].n - e.n).norm(), 1e-8);
      EXPECT_LT((moved[i].x0 - e.x0).norm(), 1e-8);
      EXPECT_LT((moved[i].x1 - e.x1).norm(), 1e-8);
    }
    // Swapping the geoms mirrors the normal and swaps the witnesses. For pairs of different
    // types collide_geoms mirrors by construction, so only same-type pairs test the geometry.
    const auto swapped = pt.t0 == pt.t1 ? collide(b, a, margin) : std::vector<Contact>{};
    if (pt.t0 == pt.t1) ASSERT_EQ(swapped.size(), got.size());
    for (std::size_t i = 0; i < swapped.size(); ++i) {
      EXPECT_NEAR(swapped[i].phi, got[i].phi, 1e-9);
      EXPECT_LT((swapped[i].n + got[i].n).norm(), 1e-8);
      EXPECT_LT((swapped[i].x0 - got[i].x1).norm(), 1e-8);
      EXPECT_LT((swapped[i].x1 - got[i].x0).norm(), 1e-8);
    }
    // fp32 narrow phase agrees with fp64 to single precision, except where a feature choice
    // (face/edge, which corners) sits within fp32 rounding of its threshold.
    const auto f32 = collide_f(a, b, margin);
    bool agree = f32.size() == got.size();
    for (std::size_t i = 0; agree && i < got.size(); ++i)
      agree = std::abs(f32[i].phi - got[i].phi) < 1e-4 && (f32[i].x0 - got[i].x0).norm() < 1e-4 &&
              (f32[i].x1 - got[i].x1).norm() < 1e-4 && (f32[i].n - got[i].n).norm() < 1e-3;
    nf32_disagree += agree ? 0 : 1;
  }
  EXPECT_LT(nf32_disagree, kTrials / 100) << "fp32 narrow phase disagrees with fp64 too often";
  EXPECT_GT(ncontact, 100) << "the sampling should produce contacts";
  if (pt.t1 != kGeomCylinder) EXPECT_GT(nseparated, 20);
  std::printf(
      "%s-%s: %d contacts, %d separated, %d in the margin band, %d overlapping with contacts, %d fp32 disagreements\n",
      geom_type_name(pt.t0), geom_type_name(pt.t1), ncontact, nseparated, nband, noverlap, nf32_disagree);
}

INSTANTIATE_TEST_SUITE_P(AllPairs, CollisionProperties, ::testing::ValuesIn(kPairs),
                         [](const ::testing::TestParamInfo<PairType>& info) {
                           return std::string(geom_type_name(info.param.t0)) + "_" + geom_type_name(info.param.t1);
                         });

// The collision kernel launched for models whose pairs are all analytic compiles the narrow
// phase without the convex solvers (collide_ordered<S, false>). pair_is_analytic must say
// exactly which pairs that form reproduces: on random poses, an analytic pair's contacts are
// bit-identical in both forms, and every other pair (cylinder with sphere, capsule, box or
// another cylinder) finds contacts that the analytic form does not.
TEST(CollisionKernelForms, AnalyticFormReproducesExactlyTheAnalyticPairs) {
  const int types[] = {kGeomPlane, kGeomSphere, kGeomCapsule, kGeomBox, kGeomCylinder};
  for (int t0 : types)
    for (int t1 : types) {
      if (t1 < t0 || t1 == kGeomPlane) continue;  // ordered; plane-plane has no narrow phase
      SCOPED_TRACE(std::string(geom_type_name(t0)) + "-" + geom_type_name(t1));
      std::mt19937 rng(77 + 8 * t0 + t1);
      int ncontact = 0, nmissed = 0;
      for (int trial = 0; trial < 300; ++trial) {
        Shape a = random_shape(t0, rng), b = random_shape(t1, rng);
        place_near(a, b, rng);
        ContactGeom<double> full[kMaxPairContacts], analytic[kMaxPairContacts];
        const int nf = collide_ordered<double, true>(t0, frame(a), t1, frame(b), 0.05, full);
        const int na = collide_ordered<double, false>(t0, frame(a), t1, frame(b), 0.05, analytic);
        ncontact += nf;
        if (na != nf || std::memcmp(full, analytic, sizeof(ContactGeom<double>) * static_cast<std::size_t>(nf)) != 0)
          ++nmissed;
      }
      EXPECT_GT(ncontact, 50) << "the sampling should produce contacts";
      if (pair_is_analytic(t0, t1)) EXPECT_EQ(nmissed, 0);
      else EXPECT_GT(nmissed, 0) << "classified as needing the convex solvers, but the analytic form agrees";
    }
}
