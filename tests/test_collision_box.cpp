// Box narrow phase against analytic answers: plane-box (flat 4 corners, edge 2, corner 1),
// sphere-box (face, edge, corner, center inside), capsule-box (lying on a face, overhanging,
// standing, along an edge, end at a corner, sunk), box-box (stacked 4, same-size stacked 4,
// edge-edge 1, corner-face 1, corner-corner within the margin, overlap). Each configuration is
// checked as given and moved by random rigid motions (the answers move with it).
#include <gtest/gtest.h>

#include <cmath>

#include "collision_test_util.hpp"

using namespace sap;
using namespace sap::test;

namespace {

constexpr double kTol = 1e-9;

Contact mirrored(const Contact& c) { return {c.x1, c.x0, -c.n, c.phi}; }

const V3 ex(1, 0, 0), ey(0, 1, 0), ez(0, 0, 1);

std::vector<V3> corners(const Shape& b) {
  std::vector<V3> c;
  for (int i = 0; i < 8; ++i)
    c.push_back(b.pos + b.rot * V3((i & 1) ? b.size[0] : -b.size[0], (i & 2) ? b.size[1] : -b.size[1],
                                   (i & 4) ? b.size[2] : -b.size[2]));
  return c;
}

// Rotation taking the corner direction `half` of a box to -z (that corner points down).
M3 corner_down(const V3& half) { return Eigen::Quaterniond::FromTwoVectors(half.normalized(), -ez).toRotationMatrix(); }

}  // namespace

// ---- plane-box --------------------------------------------------------------------------------

TEST(CollisionPlaneBox, FlatGivesFourCorners) {
  const V3 half(0.3, 0.2, 0.1);
  for (double gap : {0.0, 0.005, -0.02}) {
    SCOPED_TRACE(gap);
    const Shape b = box(V3(0.4, -0.3, half.z() + gap), rot_axis(ez, 0.7), half);
    std::vector<Contact> expected;
    for (const V3& c : corners(b))
      if (c.z() < half.z()) expected.push_back(along(V3(c.x(), c.y(), 0), c, ez));  // the 4 bottom corners
    ASSERT_EQ(expected.size(), 4u);
    expect_contacts(plane(), b, 0.01, expected);
  }
  expect_contacts(plane(), box(V3(0, 0, 0.12), M3::Identity(), half), 0.01, {});
}

TEST(CollisionPlaneBox, EdgeGivesTwoCornerGivesOne) {
  const V3 half(0.3, 0.2, 0.1);
  // On an edge (45 degrees about x): the two corners of the bottom edge.
  const M3 R = rot_axis(ex, M_PI / 4);
  const double low = (half.y() + half.z()) * std::sqrt(0.5);  // depth of the edge below the center
  const Shape b = box(V3(0, 0, low - 0.004), R, half);
  std::vector<Contact> expected;
  for (const V3& c : corners(b))
    if (c.z() < 0) expected.push_back(along(V3(c.x(), c.y(), 0), c, ez));
  ASSERT_EQ(expected.size(), 2u);
  EXPECT_NEAR(expected[0].phi, -0.004, 1e-12);
  expect_contacts(plane(), b, 0.01, expected);
  // On a corner: one contact.
  const Shape c = box(V3(0, 0, half.norm() + 0.003), corner_down(half), half);
  const V3 tip = c.pos - half.norm() * ez;
  expect_contacts(plane(), c, 0.01, {along(V3(tip.x(), tip.y(), 0), tip, ez)});
}

TEST(CollisionPlaneBox, ThinBoxWithLargeMarginKeepsTheFourLowest) {
  const V3 half(0.3, 0.2, 0.01);  // all 8 corners within a 0.05 margin
  const Shape b = box(V3(0, 0, half.z()), M3::Identity(), half);
  std::vector<Contact> expected;
  for (const V3& c : corners(b))
    if (c.z() < 1e-12) expected.push_back(along(V3(c.x(), c.y(), 0), c, ez));
  expect_contacts(plane(), b, 0.05, expected);
}

// ---- sphere-box -------------------------------------------------------------------------------

TEST(CollisionSphereBox, FaceEdgeCornerInside) {
  const V3 half(0.3, 0.2, 0.1);
  const Shape b = box(V3::Zero(), M3::Identity(), half);
  const double r = 0.05, margin = 0.01;
  for (double gap : {0.0, 0.007, -0.02}) {
    SCOPED_TRACE(gap);
    const V3 face(0.1, 0.05, 0.1), edge(0.3, 0.05, 0.1), corner(0.3, 0.2, 0.1);
    const V3 ue = V3(1, 0, 1).normalized(), uc = V3(1, 1, 1).normalized();
    const V3 cf = face + (r + gap) * ez, ce = edge + (r + gap) * ue, cc = corner + (r + gap) * uc;
    // The normal points from the sphere (geom 0) into the box.
    expect_contacts(sphere(cf, r), b, margin, {along(cf - r * ez, face, -ez)});
    expect_contacts(sphere(ce, r), b, margin, {along(ce - r * ue, edge, -ue)});
    expect_contacts(sphere(cc, r), b, margin, {along(cc - r * uc, corner, -uc)});
  }
  expect_contacts(sphere(V3(0.1, 0.05, 0.1 + r + 0.02), r), b, margin, {});
  // Center inside, 0.03 below the top face (the nearest): pushed out through the top.
  const V3 c(0.1, 0.05, 0.07);
  expect_contacts(sphere(c, r), b, margin, {along(c - r * ez, V3(0.1, 0.05, 0.1), -ez)});
  EXPECT_NEAR(collide(sphere(c, r), b, margin)[0].phi, -0.08, kTol);
}

// ---- capsule-box ------------------------------------------------------------------------------

TEST(CollisionCapsuleBox, LyingOnAFaceGivesTwo) {
  const V3 half(0.3, 0.2, 0.1);
  const Shape b = box(V3::Zero(), M3::Identity(), half);
  const double r = 0.05, hl = 0.2, margin = 0.01;
  const M3 along_x = rot_axis(ey, M_PI / 2);
  for (double gap : {0.0, 0.006, -0.02}) {
    SCOPED_TRACE(gap);
    const double z = 0.1 + gap;  // height of the capsule's bottom line
    expect_contacts(capsule(V3(0, 0.05, z + r), along_x, r, hl), b, margin,
                    {along(V3(-hl, 0.05, z), V3(-hl, 0.05, 0.1), -ez), along(V3(hl, 0.05, z), V3(hl, 0.05, 0.1), -ez)});
    // Overhanging the +x edge: the segment x in [0.15, 0.55] is clipped to the face at 0.3.
    expect_contacts(capsule(V3(0.35, 0.05, z + r), along_x, r, hl), b, margin,
                    {along(V3(0.15, 0.05, z), V3(0.15, 0.05, 0.1), -ez),
                     along(V3(0.3, 0.05, z), V3(0.3, 0.05, 0.1), -ez)});
  }
  expect_contacts(capsule(V3(0, 0.05, 0.1 + r + 0.02), along_x, r, hl), b, margin, {});
  // Sunk 0.02 into the top face (axis inside the box): still the 2-point line contact.
  expect_contacts(capsule(V3(0, 0.05, 0.08), along_x, r, 0.1), b, margin,
                  {along(V3(-0.1, 0.05, 0.03), V3(-0.1, 0.05, 0.1), -ez),
                   along(V3(0.1, 0.05, 0.03), V3(0.1, 0.05, 0.1), -ez)});
}

TEST(CollisionCapsuleBox, StandingAlongAnEdgeAndAtACorner) {
  const V3 half(0.3, 0.2, 0.1);
  const Shape b = box(V3::Zero(), M3::Identity(), half);
  const double r = 0.05, margin = 0.01;
  for (double gap : {0.0, 0.004, -0.01}) {
    SCOPED_TRACE(gap);
    // Standing on the top face: only the lower end is within the margin.
    expect_contacts(capsule(V3(0.1, 0.05, 0.1 + r + 0.2 + gap), M3::Identity(), r, 0.2), b, margin,
                    {along(V3(0.1, 0.05, 0.1 + gap), V3(0.1, 0.05, 0.1), -ez)});
    // Along the edge x = 0.3, z = 0.1 (parallel to y): clipped to its length, 2 contacts.
    const V3 u = V3(1, 0, 1).normalized();
    const V3 c = V3(0.3, 0, 0.1) + (r + gap) * u;
    expect_contacts(capsule(c, rot_axis(ex, M_PI / 2), r, 0.1), b, margin,
                    {along(V3(0.3, -0.1, 0.1) + gap * u, V3(0.3, -0.1, 0.1), -u),
                     along(V3(0.3, 0.1, 0.1) + gap * u, V3(0.3, 0.1, 0.1), -u)});
    // Pointing at the corner along the diagonal: the lower end sphere touches the corner.
    const V3 uc = V3(1, 1, 1).normalized(), corner(0.3, 0.2, 0.1);
    const V3 cc = corner + (r + gap + 0.15) * uc;
    expect_contacts(capsule(cc, Eigen::Quaterniond::FromTwoVectors(ez, uc).toRotationMatrix(), r, 0.15), b, margin,
                    {along(corner + gap * uc, corner, -uc)});
  }
}

// ---- box-box ----------------------------------------------------------------------------------

TEST(CollisionBoxBox, StackedFaceFaceGivesFour) {
  const Shape a = box(V3::Zero(), M3::Identity(), V3(0.5, 0.5, 0.2));
  const V3 hb(0.2, 0.15, 0.1);
  for (double gap : {0.0, 0.005, -0.03}) {
    SCOPED_TRACE(gap);
    const Shape b = box(V3(0.1, -0.05, 0.2 + hb.z() + gap), rot_axis(ez, 0.3), hb);
    std::vector<Contact> expected, swapped;
    for (const V3& c : corners(b))
      if (c.z() < 0.2 + gap + 1e-12) {
        expected.push_back(along(V3(c.x(), c.y(), 0.2), c, ez));
        swapped.push_back(mirrored(expected.back()));
      }
    ASSERT_EQ(expected.size(), 4u);
    expect_contacts(a, b, 0.01, expected);
    expect_contacts(b, a, 0.01, swapped);
  }
  expect_contacts(a, box(V3(0, 0, 0.2 + hb.z() + 0.02), M3::Identity(), hb), 0.01, {});
}

TEST(CollisionBoxBox, SameSizeStackedGivesFour) {
  const V3 h(0.2, 0.2, 0.2);
  const Shape a = box(V3::Zero(), M3::Identity(), h);
  const Shape b = box(V3(0, 0, 0.4 - 0.01), M3::Identity(), h);
  std::vector<Contact> expected;
  for (const V3& c : corners(b))
    if (c.z() < 0.2) expected.push_back(along(V3(c.x(), c.y(), 0.2), c, ez));
  expect_contacts(a, b, 0.005, expected);
}

TEST(CollisionBoxBox, EdgeEdgeGivesOne) {
  const double h = 0.2, top = h * std::sqrt(2.0);
  const Shape a = box(V3::Zero(), rot_axis(ey, M_PI / 4), V3(h, h, h));  // top edge along y at z = top
  for (double gap : {0.0, 0.006, -0.03}) {
    SCOPED_TRACE(gap);
    const Shape b = box(V3(0, 0, 2 * top + gap), rot_axis(ex, M_PI / 4), V3(h, h, h));  // bottom edge along x
    expect_contacts(a, b, 0.01, {along(V3(0, 0, top), V3(0, 0, top + gap), ez)});
  }
  expect_contacts(a, box(V3(0, 0, 2 * top + 0.02), rot_axis(ex, M_PI / 4), V3(h, h, h)), 0.01, {});
}

TEST(CollisionBoxBox, CornerOnFaceGivesOne) {
  const Shape a = box(V3::Zero(), M3::Identity(), V3(0.5, 0.5, 0.2));
  const V3 hb(0.1, 0.1, 0.1);
  for (double gap : {0.0, 0.004, -0.01}) {
    SCOPED_TRACE(gap);
    const Shape b = box(V3(0.05, 0.1, 0.2 + hb.norm() + gap), corner_down(hb), hb);
    const V3 tip = b.pos - hb.norm() * ez;
    expect_contacts(a, b, 0.01, {along(V3(tip.x(), tip.y(), 0.2), tip, ez)});
  }
}

TEST(CollisionBoxBox, CornerCornerWithinMarginIsExact) {
  const V3 h(0.2, 0.2, 0.2);
  const Shape a = box(V3::Zero(), M3::Identity(), h);
  const V3 u = V3(1, 1, 1).normalized();
  const double g = 0.01;  // each coordinate apart: distance g sqrt(3)
  const Shape b = box(V3(0.4 + g, 0.4 + g, 0.4 + g), M3::Identity(), h);
  expect_contacts(a, b, 0.05, {along(V3(0.2, 0.2, 0.2), V3(0.2 + g, 0.2 + g, 0.2 + g), u)});
  expect_contacts(a, b, 0.015, {});  // g sqrt(3) = 0.0173 is beyond this margin
}
