// General convex narrow phase (src/kernels/collision_gjk_epa.hpp, collision_manifold.hpp, collision_hfield.hpp): support functions against
// brute force, GJK distances and EPA depths against the analytic pairs (box-box, sphere-box,
// sphere-sphere), manifolds of face contacts (mesh cube on a plane / on a box, cylinder on a
// box), symmetry under swapping the geoms, rigid-motion invariance, fp32 against fp64,
// heightfields against the plane they flatten to, MuJoCo oracles (tests/data fixtures), and a
// mesh cube sliding like the primitive box.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "collision_test_util.hpp"
#include "kernels/collision_world.hpp"
#include "sap/collision.hpp"
#include "sap/model_builder.hpp"
#include "sap/scene.hpp"
#include "sap/simulator.hpp"

using namespace sap;
using namespace sap::test;

namespace {

// ---- Convex hulls built by hand ------------------------------------------------------------

MeshSpec box_hull(const V3& h) {
  MeshSpec m;
  m.name = "box";
  for (int i = 0; i < 8; ++i)
    m.vert.push_back({(i & 1 ? 1 : -1) * h[0], (i & 2 ? 1 : -1) * h[1], (i & 4 ? 1 : -1) * h[2]});
  // Two outward triangles per face.
  const int quads[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  for (const auto& q : quads) {
    m.face.push_back({q[0], q[1], q[2]});
    m.face.push_back({q[0], q[2], q[3]});
  }
  return m;
}

MeshSpec tetrahedron_hull(double s) {
  MeshSpec m;
  m.name = "tet";
  m.vert = {{s, s, s}, {s, -s, -s}, {-s, s, -s}, {-s, -s, s}};
  m.face = {{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 3, 2}};
  // Orient outward: flip triangles whose normal points to the centroid (the origin).
  for (auto& f : m.face) {
    const V3 a(m.vert[f[0]][0], m.vert[f[0]][1], m.vert[f[0]][2]);
    const V3 b(m.vert[f[1]][0], m.vert[f[1]][1], m.vert[f[1]][2]);
    const V3 c(m.vert[f[2]][0], m.vert[f[2]][1], m.vert[f[2]][2]);
    if ((b - a).cross(c - a).dot(a) < 0) std::swap(f[1], f[2]);
  }
  return m;
}

// A regular prism with k sides (a polytope approximating a cylinder; radius r, half-height h).
MeshSpec prism_hull(int k, double r, double h) {
  MeshSpec m;
  m.name = "prism" + std::to_string(k);
  for (int z = 0; z < 2; ++z)
    for (int i = 0; i < k; ++i) {
      const double a = 2 * M_PI * i / k;
      m.vert.push_back({r * std::cos(a), r * std::sin(a), z ? h : -h});
    }
  for (int i = 0; i < k; ++i) {
    const int j = (i + 1) % k;
    m.face.push_back({i, k + j, j});  // side, outward
    m.face.push_back({i, k + i, k + j});
    if (i >= 1 && i + 1 < k) {
      m.face.push_back({0, i + 1, i});              // bottom (seen from below)
      m.face.push_back({k, k + i, k + i + 1});      // top
    }
  }
  return m;
}

// A model holding the meshes (for their adjacency arrays); geoms are made by frame().
struct Meshes {
  Model model;
  explicit Meshes(const std::vector<MeshSpec>& specs) {
    ModelBuilder b;
    for (const auto& s : specs) b.add_mesh(s);
    model = b.finalize();
  }
  GeomFrame<double> frame(int id, const V3& p, const M3& R) const { return frame_t<double>(id, p, R); }
  template <class S>
  GeomFrame<S> frame_t(int id, const V3& p, const M3& R) const {
    GeomFrame<S> f;
    for (int i = 0; i < 3; ++i) {
      f.pos[i] = S(p[i]);
      f.size[i] = S(0);
      for (int j = 0; j < 3; ++j) f.rot(i, j) = S(R(i, j));
    }
    const int adr = model.mesh_vertadr[id];
    f.vert = model.mesh_vert.data() + 3 * adr;
    f.nvert = model.mesh_vertnum[id];
    f.vert_edgeadr = model.mesh_vert_edgeadr.data() + adr;
    f.vert_edgenum = model.mesh_vert_edgenum.data() + adr;
    f.edge = model.mesh_edge.data();
    return f;
  }
};

std::vector<Contact> to_contacts(const ContactGeom<double>* out, int n) {
  std::vector<Contact> r;
  for (int i = 0; i < n; ++i) r.push_back({ev(out[i].x0), ev(out[i].x1), ev(out[i].normal), out[i].phi});
  return r;
}

std::vector<Contact> collide_frames(int t0, const GeomFrame<double>& a, int t1, const GeomFrame<double>& b,
                                    double margin) {
  ContactGeom<double> out[kMaxPairContacts];
  return to_contacts(out, collide_geoms(t0, a, t1, b, margin, out));
}

double min_phi(const std::vector<Contact>& c) {
  double m = 1e300;
  for (const auto& x : c) m = std::min(m, x.phi);
  return m;
}

// Checks the contract of every contact: unit normal, phi = (x1 - x0) . n, phi < margin.
void expect_well_formed(const std::vector<Contact>& cs, double margin) {
  for (const auto& c : cs) {
    EXPECT_NEAR(c.n.norm(), 1.0, 1e-9);
    EXPECT_NEAR((c.x1 - c.x0).dot(c.n), c.phi, 1e-9);
    EXPECT_LT(c.phi, margin);
  }
}

}  // namespace

// ---- Support functions ---------------------------------------------------------------------

TEST(ConvexSupport, MatchesBruteForce) {
  std::mt19937 rng(7);
  std::normal_distribution<double> g(0, 1);
  const Meshes meshes({box_hull(V3(0.3, 0.2, 0.1)), prism_hull(24, 0.2, 0.15), tetrahedron_hull(0.2)});
  for (int id = 0; id < 3; ++id) {
    const GeomFrame<double> f = meshes.frame(id, V3(0.1, -0.2, 0.3), random_rotation(rng));
    for (int k = 0; k < 200; ++k) {
      const Vec3<double> d{{g(rng), g(rng), g(rng)}};
      const Vec3<double> dl = mul_transpose(f.rot, d);
      const Vec3<double> s = support_local(kGeomMesh, f, dl, false);
      double best = -1e300;
      for (int v = 0; v < f.nvert; ++v) best = std::max(best, dot(mesh_vertex(f, v), dl));
      EXPECT_NEAR(dot(s, dl), best, 1e-12) << "mesh " << id;
    }
  }
  // Box, cylinder, ellipsoid: the support value is the max over dense surface samples.
  const Vec3<double> size{{0.3, 0.2, 0.1}};
  GeomFrame<double> f;
  f.size = size;
  for (int k = 0; k < 50; ++k) {
    const Vec3<double> d = normalized(Vec3<double>{{g(rng), g(rng), g(rng)}});
    double box = -1e300, cyl = -1e300, ell = -1e300;
    for (int i = 0; i < 60; ++i)
      for (int j = 0; j <= 30; ++j) {
        const double th = 2 * M_PI * i / 60, ph = M_PI * j / 30;
        const V3 u(std::sin(ph) * std::cos(th), std::sin(ph) * std::sin(th), std::cos(ph));
        ell = std::max(ell, size[0] * u[0] * d[0] + size[1] * u[1] * d[1] + size[2] * u[2] * d[2]);
        cyl = std::max(cyl, size[0] * (std::cos(th) * d[0] + std::sin(th) * d[1]) + (j % 2 ? 1 : -1) * size[1] * d[2]);
      }
    for (int c = 0; c < 8; ++c)
      box = std::max(box, (c & 1 ? 1 : -1) * size[0] * d[0] + (c & 2 ? 1 : -1) * size[1] * d[1] +
                              (c & 4 ? 1 : -1) * size[2] * d[2]);
    EXPECT_NEAR(dot(support_local(kGeomBox, f, d, false), d), box, 1e-12);
    const double hc = dot(support_local(kGeomCylinder, f, d, false), d);
    EXPECT_GE(hc, cyl - 1e-12);
    EXPECT_LT(hc - cyl, 0.01 * size[0]);
    const double he = dot(support_local(kGeomEllipsoid, f, d, false), d);
    EXPECT_GE(he, ell - 1e-12);
    EXPECT_LT(he - ell, 0.01 * size[0]);
    // The ellipsoid support point is on its surface.
    const Vec3<double> p = support_local(kGeomEllipsoid, f, d, false);
    EXPECT_NEAR(sqr_(p[0] / size[0]) + sqr_(p[1] / size[1]) + sqr_(p[2] / size[2]), 1.0, 1e-12);
  }
}

// ---- GJK distance and EPA depth against the analytic pairs ---------------------------------

TEST(ConvexGjkEpa, MeshBoxMatchesAnalyticBoxBox) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-0.4, 0.4);
  const V3 ha(0.2, 0.15, 0.1), hb(0.12, 0.1, 0.18);
  const Meshes meshes({box_hull(ha), box_hull(hb)});
  int separated = 0, overlapping = 0, compared = 0;
  for (int k = 0; k < 400; ++k) {
    const M3 Ra = random_rotation(rng), Rb = random_rotation(rng);
    const V3 pa(u(rng), u(rng), u(rng)), pb(u(rng), u(rng), u(rng));
    const double margin = 0.05;
    const auto ref = collide(box(pa, Ra, ha), box(pb, Rb, hb), margin);
    const auto got = collide_frames(kGeomMesh, meshes.frame(0, pa, Ra), kGeomMesh, meshes.frame(1, pb, Rb), margin);
    expect_well_formed(got, margin);
    // Separated: both give the exact distance. Overlapping: box-box's depth is the SAT
    // minimum over 15 axes, EPA's the exact minimum translation: they agree unless the SAT
    // axis is an edge-edge axis chosen with the 5% face preference.
    const double exact = convex_distance(box(pa, Ra, ha), box(pb, Rb, hb));
    if (exact > 1e-6 && exact < margin * 0.9) {
      ++separated;
      ASSERT_FALSE(got.empty()) << k;
      // A face patch measures along the face normal (within 2 degrees of the exact direction).
      EXPECT_NEAR(min_phi(got), exact, 1e-6 + 2e-3 * exact) << k;
      ++compared;
    } else if (exact <= 1e-6 && !ref.empty()) {
      ++overlapping;
      ASSERT_FALSE(got.empty()) << k;
      // EPA depth is the minimum translation: never deeper than SAT's depth (same set of axes
      // bounds it), and within 5% of it (the face preference of box-box).
      // (Patches measure along the reference face's normal: 3e-3 relative slack.)
      EXPECT_GE(min_phi(got), min_phi(ref) * (1 + 3e-3) - 1e-7) << k;
      EXPECT_LE(min_phi(got), 0.95 * min_phi(ref) + 1e-7) << k;
    } else if (exact >= margin * 1.1) {
      EXPECT_TRUE(got.empty()) << k;
    }
  }
  EXPECT_GT(separated, 20);
  EXPECT_GT(overlapping, 50);
  EXPECT_EQ(compared, separated);
}

TEST(ConvexGjkEpa, SpheresAsEllipsoidsAndSphereMesh) {
  // An ellipsoid with equal axes is a sphere: distance and depth against the analytic sphere
  // pairs (sphere-sphere and sphere-box) to the GJK/EPA tolerance.
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  const Meshes meshes({box_hull(V3(0.2, 0.1, 0.15))});
  int n = 0;
  for (int k = 0; k < 300; ++k) {
    const V3 pa(u(rng), u(rng), u(rng)), pb(u(rng), u(rng), u(rng));
    const M3 R = random_rotation(rng);
    const double r = 0.2, margin = 0.02;
    const Shape ell{kGeomEllipsoid, pa, R, V3(r, r, r)};
    const Shape ell_b{kGeomEllipsoid, pb, random_rotation(rng), V3(0.1, 0.1, 0.1)};
    const auto ref = collide(sphere(pa, r), sphere(pb, 0.1), margin);
    // Ellipsoid-sphere (GJK with the sphere's center as core) and ellipsoid-ellipsoid (GJK,
    // and EPA plus the support-function polish when they overlap). Concentric configurations
    // have no defined normal: skipped.
    if ((pa - pb).norm() < 0.05) continue;
    for (const auto& got : {collide(ell, sphere(pb, 0.1), margin), collide(ell, ell_b, margin)}) {
      ASSERT_EQ(got.size(), ref.size()) << k;
      if (!ref.empty()) {
        EXPECT_NEAR(got[0].phi, ref[0].phi, 1e-9) << k;
        EXPECT_LT((got[0].n - ref[0].n).norm(), 1e-6) << k;
        EXPECT_LT((got[0].x0 - ref[0].x0).norm(), 1e-6) << k;
        ++n;
      }
    }
    // Sphere against a mesh box = sphere-box.
    const auto rb = collide(sphere(pb, 0.1), box(pa, R, V3(0.2, 0.1, 0.15)), margin);
    const auto gb = collide_frames(kGeomSphere, frame(sphere(pb, 0.1)), kGeomMesh, meshes.frame(0, pa, R), margin);
    ASSERT_EQ(gb.size(), rb.size()) << k;
    if (!rb.empty()) {
      EXPECT_NEAR(gb[0].phi, rb[0].phi, 1e-7) << k;
      EXPECT_LT((gb[0].n - rb[0].n).norm(), 1e-5) << k;
      EXPECT_LT((gb[0].x0 - rb[0].x0).norm(), 1e-5) << k;
    }
  }
  EXPECT_GT(n, 40);
}

// ---- Manifolds -----------------------------------------------------------------------------

TEST(ConvexManifold, MeshCubeOnPlaneAndOnBox) {
  const double h = 0.1, pen = 0.002;
  const Meshes meshes({box_hull(V3(h, h, h))});
  const M3 Rz = rot_axis(V3(0, 0, 1), 0.3);
  // On the plane: the 4 bottom corners, same as the primitive box.
  const auto ref = collide(plane(), box(V3(0.5, 0.2, h - pen), Rz, V3(h, h, h)), 0.01);
  const auto got = collide_frames(kGeomPlane, frame(plane()), kGeomMesh, meshes.frame(0, V3(0.5, 0.2, h - pen), Rz), 0.01);
  ASSERT_EQ(got.size(), 4u);
  ASSERT_EQ(ref.size(), 4u);
  for (const auto& c : got) {
    EXPECT_NEAR(c.phi, -pen, 1e-12);
    bool matched = false;
    for (const auto& r : ref) matched = matched || (r.x1 - c.x1).norm() < 1e-12;
    EXPECT_TRUE(matched);
  }
  // Tilted by 3 degrees about x: the corners inside the margin are kept, as by plane-box.
  {
    const M3 Rt = rot_axis(V3(1, 0, 0), 0.05) * Rz;
    const V3 c(0.5, 0.2, h - pen);
    const auto rt = collide(plane(), box(c, Rt, V3(h, h, h)), 0.01);
    const auto gt = collide_frames(kGeomPlane, frame(plane()), kGeomMesh, meshes.frame(0, c, Rt), 0.01);
    ASSERT_EQ(gt.size(), rt.size());
    ASSERT_GE(gt.size(), 3u);
    for (const auto& g : gt) {
      bool matched = false;
      for (const auto& r : rt) matched = matched || ((r.x1 - g.x1).norm() < 1e-12 && std::abs(r.phi - g.phi) < 1e-12);
      EXPECT_TRUE(matched);
    }
  }
  // Mesh cube resting on a box (rotated about z): a 4-point patch at depth pen, all inside the
  // footprint of both.
  for (int which = 0; which < 2; ++which) {
    const V3 top(0.03, -0.02, 2 * h - pen);
    std::vector<Contact> cs;
    if (which == 0)
      cs = collide_frames(kGeomBox, frame(box(V3::Zero(), M3::Identity(), V3(h, h, h))), kGeomMesh,
                          meshes.frame(0, top, Rz), 0.0);
    else
      cs = collide_frames(kGeomMesh, meshes.frame(0, V3::Zero(), M3::Identity()), kGeomMesh, meshes.frame(0, top, Rz),
                          0.0);
    ASSERT_GE(cs.size(), 3u) << which;
    ASSERT_LE(cs.size(), 4u);
    expect_well_formed(cs, 0.0);
    V3 centroid = V3::Zero();
    for (const auto& c : cs) {
      EXPECT_NEAR(c.phi, -pen, 1e-9);
      EXPECT_NEAR(c.n.z(), 1.0, 1e-9);
      EXPECT_LE(std::abs(c.x0.x()), h + 1e-9);
      EXPECT_LE(std::abs(c.x0.y()), h + 1e-9);
      centroid += c.x0 / double(cs.size());
    }
    // The patch spans the overlap: its points are spread (not all at one corner).
    double spread = 0;
    for (const auto& c : cs) spread = std::max(spread, (c.x0 - centroid).norm());
    EXPECT_GT(spread, 0.5 * h);
  }
}

TEST(ConvexManifold, CylinderOnBoxStandingAndLying) {
  const double r = 0.05, hl = 0.08, pen = 0.001;
  const Shape base = box(V3::Zero(), M3::Identity(), V3(0.3, 0.3, 0.1));
  // Standing on its end disk: a patch of 3-4 rim points at the depth.
  const auto stand = collide(base, cylinder(V3(0.05, 0.02, 0.1 + hl - pen), M3::Identity(), r, hl), 0.0);
  ASSERT_GE(stand.size(), 3u);
  expect_well_formed(stand, 0.0);
  for (const auto& c : stand) {
    EXPECT_NEAR(c.phi, -pen, 1e-9);
    EXPECT_NEAR((c.x1 - V3(0.05, 0.02, c.x1.z())).norm(), r, 1e-9);  // on the rim
  }
  // Lying on its side: the 2 ends of the contact line.
  const M3 Rx = rot_axis(V3(1, 0, 0), M_PI / 2);
  const auto lie = collide(base, cylinder(V3(0, 0, 0.1 + r - pen), Rx, r, hl), 0.0);
  ASSERT_EQ(lie.size(), 2u);
  for (const auto& c : lie) EXPECT_NEAR(c.phi, -pen, 1e-9);
  EXPECT_NEAR(std::abs(lie[0].x1.y() - lie[1].x1.y()), 2 * hl, 1e-9);
  // Tilted on a rim point: one contact, exact depth (lowest rim point).
  const double th = 0.4;
  const M3 Rt = rot_axis(V3(1, 0, 0), th);
  const double low = hl * std::cos(th) + r * std::sin(th);  // center height over the lowest point
  const auto tilt = collide(base, cylinder(V3(0, 0, 0.1 + low - pen), Rt, r, hl), 0.0);
  ASSERT_EQ(tilt.size(), 1u);
  EXPECT_NEAR(tilt[0].phi, -pen, 1e-7);
  // Cylinder-cylinder, parallel axes side by side: a line contact of 2 points.
  const auto cc = collide(cylinder(V3::Zero(), Rx, r, hl), cylinder(V3(0, 0, 2 * r - pen), Rx, r, hl), 0.0);
  ASSERT_EQ(cc.size(), 2u);
  for (const auto& c : cc) EXPECT_NEAR(c.phi, -pen, 1e-6);
}

// ---- Properties over random poses ----------------------------------------------------------

struct Operand {
  int type;
  V3 size;
  int mesh = -1;
};

TEST(ConvexProperties, SymmetryRigidMotionAndFloat) {
  const Meshes meshes({box_hull(V3(0.12, 0.08, 0.1)), prism_hull(12, 0.1, 0.07), tetrahedron_hull(0.1)});
  const std::vector<Operand> ops = {{kGeomSphere, V3(0.1, 0, 0)},        {kGeomCapsule, V3(0.05, 0.1, 0)},
                                    {kGeomBox, V3(0.1, 0.07, 0.05)},     {kGeomCylinder, V3(0.08, 0.06, 0)},
                                    {kGeomEllipsoid, V3(0.12, 0.08, 0.05)}, {kGeomMesh, V3::Zero(), 0},
                                    {kGeomMesh, V3::Zero(), 1},          {kGeomMesh, V3::Zero(), 2}};
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-0.2, 0.2);
  auto make = [&](const Operand& o, const V3& p, const M3& R) {
    if (o.type == kGeomMesh) return meshes.frame(o.mesh, p, R);
    return frame(Shape{o.type, p, R, o.size});
  };
  auto make_f = [&](const Operand& o, const V3& p, const M3& R) {
    if (o.type == kGeomMesh) return meshes.frame_t<float>(o.mesh, p, R);
    return frame_f(Shape{o.type, p, R, o.size});
  };
  int total = 0, float_mismatch = 0, float_cases = 0;
  for (std::size_t i = 0; i < ops.size(); ++i)
    for (std::size_t j = i; j < ops.size(); ++j) {
      const Operand &a = ops[i], &b = ops[j];
      if (a.type < kGeomCylinder && b.type < kGeomCylinder) continue;  // analytic pairs
      int with_contacts = 0;
      for (int k = 0; k < 60; ++k) {
        const V3 pa(u(rng), u(rng), u(rng)), pb(u(rng), u(rng), u(rng));
        const M3 Ra = random_rotation(rng), Rb = random_rotation(rng);
        const double margin = 0.01;
        const auto ab = collide_frames(a.type, make(a, pa, Ra), b.type, make(b, pb, Rb), margin);
        const auto ba = collide_frames(b.type, make(b, pb, Rb), a.type, make(a, pa, Ra), margin);
        expect_well_formed(ab, margin);
        // Swapping the geoms mirrors the contacts (same depths, opposite normals) up to order,
        // except when the pair is of one type (then collide_ordered runs on swapped operands
        // and may choose another reference feature): compare the deepest depth.
        ASSERT_EQ(ab.empty(), ba.empty()) << i << " " << j << " " << k;
        if (!ab.empty()) {
          ++with_contacts;
          EXPECT_NEAR(min_phi(ab), min_phi(ba), 2e-4 + 1e-2 * std::abs(min_phi(ab))) << i << " " << j << " " << k;
        }
        if (a.type != b.type && ab.size() == ba.size())
          for (std::size_t c = 0; c < ab.size(); ++c) {
            EXPECT_NEAR(ab[c].phi, ba[c].phi, 1e-12);
            EXPECT_LT((ab[c].n + ba[c].n).norm(), 1e-12);
          }
        // A rigid motion of both moves the contacts with it.
        std::mt19937 r2(k);
        const Rigid T = random_rigid(r2, 1.0);
        const auto moved = collide_frames(a.type, make(a, T.point(pa), T.R * Ra), b.type, make(b, T.point(pb), T.R * Rb),
                                          margin);
        ASSERT_EQ(moved.empty(), ab.empty());
        if (!ab.empty())
          EXPECT_NEAR(min_phi(moved), min_phi(ab), 2e-4 + 1e-2 * std::abs(min_phi(ab))) << i << " " << j << " " << k;
        // fp32 agrees with fp64 on the deepest depth.
        ContactGeom<float> outf[kMaxPairContacts];
        const int nf = collide_geoms(a.type, make_f(a, pa, Ra), b.type, make_f(b, pb, Rb), float(margin), outf);
        if (!ab.empty() && min_phi(ab) < -1e-3) {
          ++float_cases;
          float mf = 1e30f;
          for (int c = 0; c < nf; ++c) mf = std::min(mf, outf[c].phi);
          if (nf == 0 || std::abs(double(mf) - min_phi(ab)) > 5e-4) ++float_mismatch;
        }
      }
      total += with_contacts;
      EXPECT_GT(with_contacts, 3) << "pair " << i << " " << j;
    }
  EXPECT_GT(total, 200);
  EXPECT_LE(float_mismatch, float_cases / 50) << float_mismatch << " of " << float_cases;
}

// ---- Heightfields --------------------------------------------------------------------------

TEST(ConvexHfield, FlatFieldActsLikeAPlaneAndSlopeTiltsTheNormal) {
  // A flat heightfield at elevation 0.1 (data 0.5 of size 0.2) behaves like the plane z = 0.1.
  HfieldSpec hs;
  hs.name = "flat";
  hs.nrow = 9;
  hs.ncol = 11;
  hs.size = {1.0, 0.8, 0.2, 0.1};
  hs.data.assign(static_cast<std::size_t>(hs.nrow * hs.ncol), 0.5);
  HfieldSpec slope = hs;
  slope.name = "slope";
  for (int r = 0; r < slope.nrow; ++r)
    for (int c = 0; c < slope.ncol; ++c)  // z = 0.2 * data, data linear in x: dz/dx = 0.05
      slope.data[static_cast<std::size_t>(r * slope.ncol + c)] = 0.5 + 0.25 * (2.0 * c / (slope.ncol - 1) - 1);
  ModelBuilder b;
  b.add_hfield(hs);
  b.add_hfield(slope);
  const Model m = b.finalize();
  auto hframe = [&](int id) {
    GeomFrame<double> f = frame(plane());
    f.hdata = m.hfield_data.data() + m.hfield_adr[id];
    f.hsize = m.hfield_size.data() + 4 * id;
    f.nrow = m.hfield_nrow[id];
    f.ncol = m.hfield_ncol[id];
    return f;
  };
  const double pen = 0.003;
  // Sphere.
  auto cs = collide_frames(kGeomSphere, frame(sphere(V3(0.13, -0.21, 0.1 + 0.05 - pen), 0.05)), kGeomHfield, hframe(0), 0.0);
  ASSERT_GE(cs.size(), 1u);
  expect_well_formed(cs, 0.0);
  EXPECT_NEAR(min_phi(cs), -pen, 1e-7);
  for (const auto& c : cs) EXPECT_NEAR(c.n.z(), -1.0, 1e-7);  // from the sphere to the field
  // Box rotated about z resting on it: contacts at the depth, spread over its footprint.
  const M3 Rz = rot_axis(V3(0, 0, 1), 0.4);
  cs = collide_frames(kGeomBox, frame(box(V3(0.1, 0.05, 0.1 + 0.08 - pen), Rz, V3(0.2, 0.15, 0.08))), kGeomHfield,
                      hframe(0), 0.0);
  ASSERT_GE(cs.size(), 3u);
  V3 lo = V3::Constant(1e9), hi = V3::Constant(-1e9);
  for (const auto& c : cs) {
    EXPECT_NEAR(c.phi, -pen, 1e-7);
    lo = lo.cwiseMin(c.x0);
    hi = hi.cwiseMax(c.x0);
  }
  EXPECT_GT(hi.x() - lo.x(), 0.2);  // the patch spans most of the box's bottom
  EXPECT_GT(hi.y() - lo.y(), 0.15);
  // Mesh cube against the flat field.
  const Meshes meshes({box_hull(V3(0.1, 0.1, 0.1))});
  cs = collide_frames(kGeomMesh, meshes.frame(0, V3(-0.3, 0.2, 0.1 + 0.1 - pen), Rz), kGeomHfield, hframe(0), 0.0);
  ASSERT_GE(cs.size(), 3u);
  for (const auto& c : cs) EXPECT_NEAR(c.phi, -pen, 1e-7);
  // On the slope z = 0.1 + 0.05 x the sphere's contact normal tilts to (-0.05, 0, 1)/|.|
  // (pointing from the sphere into the field: negated).
  const double x = 0.2, r = 0.05;
  const V3 nrm = V3(-0.05, 0, 1).normalized();
  const V3 center = V3(x, 0.0, 0.1 + 0.05 * x) + (r - pen) * nrm;
  cs = collide_frames(kGeomSphere, frame(sphere(center, r)), kGeomHfield, hframe(1), 0.0);
  ASSERT_GE(cs.size(), 1u);
  EXPECT_NEAR(min_phi(cs), -pen, 1e-7);
  EXPECT_LT((cs[0].n + nrm).norm(), 1e-6);
  // Above the field (beyond the margin): nothing.
  EXPECT_TRUE(collide_frames(kGeomSphere, frame(sphere(V3(0, 0, 0.2), 0.05)), kGeomHfield, hframe(0), 0.01).empty());
}

// ---- MuJoCo oracles (tests/data/mujoco/convex_contacts.json, tools/reference/mujoco_contacts.py) ------

namespace {

int geom_type_of(const std::string& name) {
  if (name == "plane") return kGeomPlane;
  if (name == "sphere") return kGeomSphere;
  if (name == "capsule") return kGeomCapsule;
  if (name == "box") return kGeomBox;
  if (name == "cylinder") return kGeomCylinder;
  if (name == "ellipsoid") return kGeomEllipsoid;
  if (name == "mesh") return kGeomMesh;
  if (name == "hfield") return kGeomHfield;
  throw std::runtime_error("unknown geom type " + name);
}

V3 v3(const nlohmann::json& j, int o = 0) { return V3(j[o].get<double>(), j[o + 1].get<double>(), j[o + 2].get<double>()); }

// One fixture case: the geoms as MuJoCo compiled and placed them, and our contacts for the pair
// in MuJoCo's geom order (so normals compare directly).
struct OracleCase {
  std::string name;
  Model model;  // holds the mesh / heightfield arrays the frames point into
  std::vector<int> type;
  std::vector<GeomFrame<double>> frame;
  std::vector<double> margin;
  explicit OracleCase(const nlohmann::json& c) : name(c["name"].get<std::string>()) {
    ModelBuilder b;
    std::vector<int> dataid;
    for (const auto& g : c["geoms"]) {
      type.push_back(geom_type_of(g["type"].get<std::string>()));
      margin.push_back(g["margin"].get<double>());
      int id = -1;
      if (type.back() == kGeomMesh) {
        MeshSpec ms;
        ms.name = "m" + std::to_string(type.size());
        const auto& v = g["vert"];
        for (std::size_t i = 0; i < v.size(); i += 3) ms.vert.push_back({v[i].get<double>(), v[i + 1].get<double>(), v[i + 2].get<double>()});
        const auto& f = g["face"];
        for (std::size_t i = 0; i < f.size(); i += 3) ms.face.push_back({f[i].get<int>(), f[i + 1].get<int>(), f[i + 2].get<int>()});
        id = b.add_mesh(ms);
      } else if (type.back() == kGeomHfield) {
        HfieldSpec hs;
        hs.name = "h";
        hs.nrow = g["nrow"].get<int>();
        hs.ncol = g["ncol"].get<int>();
        for (int k = 0; k < 4; ++k) hs.size[static_cast<std::size_t>(k)] = g["hfield_size"][k].get<double>();
        hs.data = g["data"].get<std::vector<double>>();
        id = b.add_hfield(hs);
      }
      dataid.push_back(id);
    }
    model = b.finalize();
    for (std::size_t i = 0; i < type.size(); ++i) {
      const auto& g = c["geoms"][i];
      GeomFrame<double> f;
      const V3 p = v3(g["pos"]), sz = v3(g["size"]);
      for (int r = 0; r < 3; ++r) {
        f.pos[r] = p[r];
        f.size[r] = sz[r];
        for (int k = 0; k < 3; ++k) f.rot(r, k) = g["mat"][3 * r + k].get<double>();
      }
      const int id = dataid[i];
      if (type[i] == kGeomMesh) {
        const int adr = model.mesh_vertadr[id];
        f.vert = model.mesh_vert.data() + 3 * adr;
        f.nvert = model.mesh_vertnum[id];
        f.vert_edgeadr = model.mesh_vert_edgeadr.data() + adr;
        f.vert_edgenum = model.mesh_vert_edgenum.data() + adr;
        f.edge = model.mesh_edge.data();
      } else if (type[i] == kGeomHfield) {
        f.hdata = model.hfield_data.data() + model.hfield_adr[id];
        f.hsize = model.hfield_size.data() + 4 * id;
        f.nrow = model.hfield_nrow[id];
        f.ncol = model.hfield_ncol[id];
      }
      frame.push_back(f);
    }
  }
  std::vector<Contact> collide(int g0, int g1) const {
    return collide_frames(type[static_cast<std::size_t>(g0)], frame[static_cast<std::size_t>(g0)],
                          type[static_cast<std::size_t>(g1)], frame[static_cast<std::size_t>(g1)],
                          margin[0] + margin[1]);
  }
};

}  // namespace

// MuJoCo's pair margin is max(margin0, margin1), ours margin0 + margin1: the fixture puts the
// margin on one geom only. Compared per case (tolerances from MuJoCo's own ccd tolerance
// 1e-6 and its polygon choices):
//   - both find contacts;
//   - deepest depth within 2e-4 m and the deepest contact's normal within 0.02 rad;
//   - every MuJoCo contact at most 1e-3 m shallower than the deepest (the supporting patch)
//     has one of ours within 5 mm (midpoint of the witnesses) at a depth within 1e-3 m, except
//     on heightfields (MuJoCo keeps one contact per prism; we keep a reduced patch of <= 7);
//   - when MuJoCo reports a face patch (>= 3 contacts at the deepest depth), so do we.
TEST(ConvexOracle, MatchesMuJoCoContacts) {
  const std::string path = std::string(SAP_SOURCE_DIR) + "/tests/data/mujoco/convex_contacts.json";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "missing fixture " << path << " (tools/reference/mujoco_contacts.py)";
  const nlohmann::json fx = nlohmann::json::parse(in);
  int ncase = 0, npatch = 0, npoint = 0, nhfield = 0, inconsistent = 0;
  double worst_depth = 0, worst_angle = 0;
  for (const auto& c : fx["cases"]) {
    const OracleCase oc(c);
    const auto& mj = c["contacts"];
    ASSERT_FALSE(mj.empty());
    const int g0 = mj[0]["geom"][0].get<int>(), g1 = mj[0]["geom"][1].get<int>();
    const auto ours = oc.collide(g0, g1);
    ++ncase;
    ASSERT_FALSE(ours.empty()) << oc.name;
    // Our own answer is self-consistent: moving geom g1 by (depth + 1 mm) along our deepest
    // normal separates the pair (the minimum translation does).
    {
      std::size_t dp = 0;
      for (std::size_t i = 1; i < ours.size(); ++i)
        if (ours[i].phi < ours[dp].phi) dp = i;
      if (ours[dp].phi < 0) {
        OracleCase moved(c);
        GeomFrame<double>& f = moved.frame[static_cast<std::size_t>(g1)];
        const V3 shift = (-ours[dp].phi + 1e-3) * ours[dp].n;
        for (int k = 0; k < 3; ++k) f.pos[k] += shift[k];
        for (const auto& o : moved.collide(g0, g1)) EXPECT_GT(o.phi, 0.0) << oc.name << " (moved along our normal)";
      }
    }
    if (!c["mujoco_separates"].get<bool>()) {
      // MuJoCo's own normal does not separate the pair by its depth (checked in MuJoCo by
      // tools/reference/mujoco_contacts.py): not a reference; ours passed the check above.
      ++inconsistent;
      continue;
    }
    double mj_min = 1e300;
    V3 mj_n;
    for (const auto& k : mj)
      if (k["dist"].get<double>() < mj_min) mj_min = k["dist"].get<double>(), mj_n = v3(k["normal"]);
    std::size_t deepest = 0;
    for (std::size_t i = 1; i < ours.size(); ++i)
      if (ours[i].phi < ours[deepest].phi) deepest = i;
    const double ddepth = std::abs(ours[deepest].phi - mj_min);
    // The deepest contact's normal: on ties (a face patch) any of ours at that depth.
    double angle = 1e9;
    for (const auto& o : ours)
      if (o.phi < ours[deepest].phi + 1e-6) angle = std::min(angle, std::acos(std::clamp(o.n.dot(mj_n), -1.0, 1.0)));
    worst_depth = std::max(worst_depth, ddepth);
    worst_angle = std::max(worst_angle, angle);
    EXPECT_LT(ddepth, 2e-4) << oc.name << ": ours " << ours[deepest].phi << " mujoco " << mj_min;
    // MuJoCo's multi-contact snaps the normal to a face normal within ~10 degrees; one contact:
    // the exact direction.
    EXPECT_LT(angle, mj.size() == 1 ? 0.02 : 0.2) << oc.name;
    const bool hfield = oc.type[static_cast<std::size_t>(g0)] == kGeomHfield || oc.type[static_cast<std::size_t>(g1)] == kGeomHfield;
    // MuJoCo's patch (contacts at its deepest depth) against ours.
    std::vector<V3> mj_patch, our_patch;
    for (const auto& k : mj)
      if (k["dist"].get<double>() < mj_min + 1e-6) mj_patch.push_back(v3(k["pos"]));
    for (const auto& o : ours)
      if (o.phi < ours[deepest].phi + 1e-6) our_patch.push_back(0.5 * (o.x0 + o.x1));
    auto centroid = [](const std::vector<V3>& p) {
      V3 c = V3::Zero();
      for (const auto& x : p) c += x / double(p.size());
      return c;
    };
    if (std::getenv("SAP_ORACLE_VERBOSE")) {
      std::printf("%s\n", oc.name.c_str());
      for (const auto& k : mj)
        std::printf("  mj   dist % .5f pos % .4f % .4f % .4f n % .4f % .4f % .4f\n", k["dist"].get<double>(),
                    v3(k["pos"])[0], v3(k["pos"])[1], v3(k["pos"])[2], v3(k["normal"])[0], v3(k["normal"])[1],
                    v3(k["normal"])[2]);
      for (const auto& o : ours) {
        const V3 p = 0.5 * (o.x0 + o.x1);
        std::printf("  ours phi  % .5f pos % .4f % .4f % .4f n % .4f % .4f % .4f\n", o.phi, p[0], p[1], p[2], o.n[0],
                    o.n[1], o.n[2]);
      }
    }
    if (hfield) {  // MuJoCo keeps one contact per prism, we keep a reduced patch (<= 7)
      ++nhfield;
      continue;
    }
    if (mj_patch.size() >= 3) {
      // A face patch: ours too, centred where MuJoCo's is and no wider than it (5 mm slack).
      ++npatch;
      EXPECT_GE(our_patch.size(), 3u) << oc.name;
      const V3 c = centroid(mj_patch);
      double radius = 0;
      for (const auto& x : mj_patch) radius = std::max(radius, (x - c).norm());
      EXPECT_LT((centroid(our_patch) - c).norm(), 0.25 * radius + 2e-3) << oc.name;
      for (const auto& x : our_patch) EXPECT_LT((x - c).norm(), radius + 5e-3) << oc.name;
    } else if (mj_patch.size() == 1 && our_patch.size() == 1) {
      // A unique deepest point: the same point.
      EXPECT_LT((our_patch[0] - mj_patch[0]).norm(), 2e-3) << oc.name;
      ++npoint;
    }
  }
  std::printf("MuJoCo %s oracle: %d cases (%d face patches, %d single points, %d on heightfields, %d where MuJoCo's "
              "normal does not separate), worst deepest-depth error %.2e m, worst normal angle %.2e rad\n",
              fx["mujoco_version"].get<std::string>().c_str(), ncase, npatch, npoint, nhfield, inconsistent, worst_depth,
              worst_angle);
  EXPECT_LE(inconsistent, 2);
  EXPECT_GT(ncase, 60);
}

// ---- Physics: mesh cube against the primitive box ------------------------------------------

namespace {

Scene cube_scene(bool mesh, double vx) {
  const double h = 0.1;
  ModelBuilder b;
  GeomSpec ground;
  ground.type = kGeomPlane;
  ground.friction = 0.5;
  ground.stiffness = 1e5;
  b.add_geom(0, ground);
  BodySpec body;
  body.inertia_from_geoms = false;
  body.mass = 8.0;
  body.inertia = {8.0 * 2 * h * h / 3, 8.0 * 2 * h * h / 3, 8.0 * 2 * h * h / 3, 0, 0, 0};
  const int id = b.add_body(body);
  JointSpec free;
  free.type = kJointFree;
  b.add_joint(id, free);
  GeomSpec g;
  g.friction = 0.5;
  g.stiffness = 1e5;
  if (mesh) {
    g.type = kGeomMesh;
    g.dataid = b.add_mesh(box_hull(V3(h, h, h)));
  } else {
    g.type = kGeomBox;
    g.size = {h, h, h};
  }
  b.add_geom(id, g);
  Scene s;
  s.name = mesh ? "mesh_cube" : "box_cube";
  s.model = b.finalize();
  s.dt = 0.002;
  s.max_rigid_contact = 8;
  s.qpos0 = {0, 0, h - 8 * 9.81 / (4 * 5e4), 1, 0, 0, 0};
  s.qvel0 = {vx, 0, 0, 0, 0, 0};
  return s;
}

std::vector<std::vector<double>> run_cube(bool mesh, double vx, int steps) {
  SimulatorOptions o;
  o.nworld = 1;
  o.backend = Backend::CPU;
  o.threads = 1;
  Simulator sim(cube_scene(mesh, vx), o);
  std::vector<std::vector<double>> traj;
  for (int i = 0; i < steps; ++i) {
    sim.step();
    traj.push_back(sim.state().qpos.world_to_host(0));
  }
  return traj;
}

}  // namespace

TEST(ConvexPhysics, MeshCubeRestsAndSlidesLikeTheBox) {
  for (const double vx : {0.0, 1.0}) {
    const auto box_traj = run_cube(false, vx, 300);
    const auto mesh_traj = run_cube(true, vx, 300);
    double max_diff = 0;
    for (std::size_t i = 0; i < box_traj.size(); ++i)
      for (std::size_t k = 0; k < 7; ++k) max_diff = std::max(max_diff, std::abs(box_traj[i][k] - mesh_traj[i][k]));
    // Same 4 corner contacts (plane-mesh takes the hull's bottom face): identical up to rounding.
    EXPECT_LT(max_diff, 1e-9) << "vx " << vx;
    const auto& last = mesh_traj.back();
    EXPECT_NEAR(last[2], 0.1, 2e-3);  // resting on its face
    if (vx > 0) EXPECT_GT(last[0], 0.05);  // slid, then stopped by friction: v0^2 / (2 mu g) = 0.10
    if (vx > 0) EXPECT_LT(last[0], 0.12);
  }
}

// ---- Pipeline: every executor gives the same contacts -------------------------------------

namespace {

// Ground plane, a terrain heightfield, and free bodies with a mesh cube, a prism mesh, a
// cylinder, an ellipsoid and a box: every new pair kind in one model.
Model convex_scene() {
  ModelBuilder b;
  GeomSpec ground;
  ground.name = "ground";
  ground.type = kGeomPlane;
  ground.margin = 0.005;
  b.add_geom(0, ground);
  HfieldSpec hs;
  hs.name = "terrain";
  hs.nrow = 8;
  hs.ncol = 9;
  hs.size = {0.6, 0.6, 0.1, 0.05};
  for (int r = 0; r < hs.nrow; ++r)
    for (int c = 0; c < hs.ncol; ++c) hs.data.push_back(0.5 + 0.4 * std::sin(0.9 * r) * std::cos(0.7 * c));
  GeomSpec terrain;
  terrain.name = "terrain";
  terrain.type = kGeomHfield;
  terrain.dataid = b.add_hfield(hs);
  terrain.pos = {1.5, 0, 0};
  b.add_geom(0, terrain);
  const int cube = b.add_mesh(box_hull(V3(0.1, 0.1, 0.1)));
  const int prism = b.add_mesh(prism_hull(10, 0.08, 0.06));
  struct G {
    int type;
    Vec3d size;
    int dataid;
  };
  const std::vector<G> gs = {{kGeomMesh, {0, 0, 0}, cube},
                             {kGeomMesh, {0, 0, 0}, prism},
                             {kGeomCylinder, {0.07, 0.09, 0}, -1},
                             {kGeomEllipsoid, {0.1, 0.07, 0.05}, -1},
                             {kGeomBox, {0.09, 0.06, 0.05}, -1}};
  for (std::size_t i = 0; i < gs.size(); ++i) {
    BodySpec bs;
    bs.name = "b" + std::to_string(i);
    bs.mass = 1;
    bs.inertia = {0.01, 0.01, 0.01, 0, 0, 0};
    const int id = b.add_body(bs);
    JointSpec j;
    j.type = kJointFree;
    b.add_joint(id, j);
    GeomSpec g;
    g.name = "g" + std::to_string(i);
    g.type = gs[i].type;
    g.size = gs[i].size;
    g.dataid = gs[i].dataid;
    g.margin = 0.005;
    b.add_geom(id, g);
  }
  return b.finalize();
}

std::vector<std::vector<double>> contact_table(const Contacts& c, int w) {
  const int n = c.counts_host()[static_cast<std::size_t>(w)];
  const auto x0 = c.x0.world_to_host(w), x1 = c.x1.world_to_host(w), nrm = c.normal.world_to_host(w);
  const auto phi = c.phi.world_to_host(w);
  const auto geom = c.geom.world_to_host(w);
  std::vector<std::vector<double>> r;
  for (int i = 0; i < n; ++i) {
    const std::size_t s = static_cast<std::size_t>(i);
    r.push_back({double(geom[2 * s]), double(geom[2 * s + 1]), x0[3 * s], x0[3 * s + 1], x0[3 * s + 2], x1[3 * s],
                 x1[3 * s + 1], x1[3 * s + 2], nrm[3 * s], nrm[3 * s + 1], nrm[3 * s + 2], phi[s]});
  }
  return r;
}

}  // namespace

TEST(ConvexPipeline, SameContactsOnEveryExecutorAndFloatClose) {
  const Model m = convex_scene();
  int supported = 0;
  for (int p = 0; p < m.npair; ++p)
    supported += pair_max_contacts(m.geom_type[static_cast<std::size_t>(m.pair_geom0[static_cast<std::size_t>(p)])],
                                   m.geom_type[static_cast<std::size_t>(m.pair_geom1[static_cast<std::size_t>(p)])]) > 0;
  EXPECT_EQ(supported, m.npair);  // every pair of this scene has a narrow phase
  // Bodies clustered (overlapping pairs) over the ground and over the terrain.
  const int nworld = 12;
  std::mt19937 rng(21);
  std::uniform_real_distribution<double> u(-0.12, 0.12);
  State st(m, nworld, Backend::CPU);
  for (int w = 0; w < nworld; ++w) {
    std::vector<double> q;
    const double cx = w % 2 ? 1.5 : 0.0;
    for (int b = 0; b < 5; ++b) {
      const M3 R = random_rotation(rng);
      const Eigen::Quaterniond qq(R);
      for (double v : {cx + u(rng), u(rng), 0.12 + 0.1 * b + u(rng) * 0.3, qq.w(), qq.x(), qq.y(), qq.z()}) q.push_back(v);
    }
    st.qpos.world_from_host(w, q.data());
  }
  const int cap = estimate_contact_capacity(m);
  auto run = [&](Context& ctx, Precision p) {
    CollisionPipeline pipe(m, ctx, nworld, p);
    Contacts c(nworld, cap, Backend::CPU);
    pipe.collide(st, c);
    EXPECT_EQ(pipe.last_dropped_total(), 0);
    std::vector<std::vector<std::vector<double>>> all;
    for (int w = 0; w < nworld; ++w) all.push_back(contact_table(c, w));
    return all;
  };
  Context one(Backend::CPU, 1), two(Backend::CPU, 2), emu(Backend::CPU, 1, 32);
  const auto ref = run(one, Precision::F64);
  EXPECT_EQ(run(two, Precision::F64), ref);  // bit for bit, whatever the executor
  EXPECT_EQ(run(emu, Precision::F64), ref);
  std::size_t total = 0;
  for (const auto& w : ref) total += w.size();
  EXPECT_GT(total, 30u);
  // fp32: the same contacts in the same order (pair by pair) in nearly every world.
  const auto f32 = run(one, Precision::F32);
  int same = 0;
  for (int w = 0; w < nworld; ++w) {
    bool ok = f32[static_cast<std::size_t>(w)].size() == ref[static_cast<std::size_t>(w)].size();
    for (std::size_t i = 0; ok && i < ref[static_cast<std::size_t>(w)].size(); ++i)
      ok = std::abs(f32[static_cast<std::size_t>(w)][i][11] - ref[static_cast<std::size_t>(w)][i][11]) < 1e-4;
    same += ok;
    if (!ok && std::getenv("SAP_ORACLE_VERBOSE"))
      for (std::size_t i = 0; i < std::max(ref[w].size(), f32[w].size()); ++i) {
        auto pr = [](const std::vector<std::vector<double>>& t, std::size_t i) {
          if (i < t.size()) std::printf("  %g-%g phi % .6f n % .4f % .4f % .4f |", t[i][0], t[i][1], t[i][11], t[i][8], t[i][9], t[i][10]);
          else std::printf("  - |");
        };
        pr(ref[w], i);
        pr(f32[w], i);
        std::printf("\n");
      }
  }
  EXPECT_GE(same, nworld - 2);
}

// ---- Physics: a cylinder rolling on a box --------------------------------------------------

TEST(ConvexPhysics, CylinderRestsAndRollsOnABox) {
  // A solid cylinder (r = 0.05, I = m r^2 / 2 about its axis) lying on a static box, thrown
  // along +x without spin: friction brings it to rolling at v = v0 / (1 + I / (m r^2)) = 2/3 v0
  // (angular momentum about the contact line is conserved), then it rolls at constant speed.
  const double r = 0.05, hl = 0.1, mass = 2.0, v0 = 0.6;
  ModelBuilder b;
  GeomSpec table;
  table.type = kGeomBox;
  table.size = {2, 0.5, 0.1};
  table.pos = {0, 0, -0.1};
  table.friction = 0.8;
  table.stiffness = 1e6;
  b.add_geom(0, table);
  BodySpec bs;
  bs.mass = mass;
  // axis along world y (local z rotated): inertia in body axes, the cylinder's axis is body z
  bs.inertia = {mass * (3 * r * r + 4 * hl * hl) / 12, mass * (3 * r * r + 4 * hl * hl) / 12, mass * r * r / 2, 0, 0, 0};
  const int id = b.add_body(bs);
  JointSpec free;
  free.type = kJointFree;
  b.add_joint(id, free);
  GeomSpec g;
  g.type = kGeomCylinder;
  g.size = {r, hl, 0};
  g.friction = 0.8;
  g.stiffness = 1e6;
  b.add_geom(id, g);
  Scene s;
  s.name = "cylinder_roll";
  s.model = b.finalize();
  s.dt = 0.001;
  s.max_rigid_contact = 8;
  const double c = std::sqrt(0.5);
  s.qpos0 = {0, 0, r - mass * 9.81 / (2 * 5e5), c, c, 0, 0};  // 90 degrees about x: the axis along world -y
  s.qvel0 = {v0, 0, 0, 0, 0, 0};
  SimulatorOptions o;
  o.nworld = 1;
  o.backend = Backend::CPU;
  o.threads = 1;
  Simulator sim(s, o);
  double zmin = 1e9, zmax = -1e9;
  for (int i = 0; i < 800; ++i) {
    sim.step();
    const auto q = sim.state().qpos.world_to_host(0);
    zmin = std::min(zmin, q[2]);
    zmax = std::max(zmax, q[2]);
  }
  const auto v = sim.state().qvel.world_to_host(0);
  EXPECT_NEAR(v[0], 2.0 / 3.0 * v0, 0.03 * v0);  // rolling speed
  // Rolling without slipping: |omega| r = v.
  // (free-joint angular velocity in body axes: the spin is about the cylinder's axis, body z)
  EXPECT_NEAR(std::abs(v[5]) * r, v[0], 0.03 * v0) << "omega " << v[3] << " " << v[4] << " " << v[5];
  EXPECT_NEAR(std::hypot(v[3], v[4]), 0.0, 1e-3);
  EXPECT_LT(zmax - zmin, 2e-3);  // stays on the table (no hops, no sinking)
  EXPECT_NEAR(v[1], 0.0, 1e-3);
}
