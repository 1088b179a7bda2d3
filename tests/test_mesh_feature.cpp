// The support feature of a convex mesh hull (kernels/collision_mesh_feature.hpp): a face is the
// hull's face (all its coplanar vertices, none of a chamfer next to it, also on a long slab whose
// chamfers lie within the feature angle as seen from the far end), within the feature angle of
// the direction; an edge is a hull edge; otherwise the support vertex. Checked against the
// geometry of boxes, chamfered slabs and prisms in random rotations and tilts.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>
#include <set>

#include "kernels/collision_mesh_feature.hpp"
#include "sap/mesh_asset.hpp"
#include "sap/model_builder.hpp"

using namespace sap;

namespace {

using V = std::array<double, 3>;

std::vector<V> box_points(double hx, double hy, double hz) {
  std::vector<V> p;
  for (int sz : {-1, 1})
    for (int sy : {-1, 1})
      for (int sx : {-1, 1}) p.push_back({sx * hx, sy * hy, sz * hz});
  return p;
}

// A box whose 12 edges are chamfered by c (24 vertices).
std::vector<V> chamfered_points(double hx, double hy, double hz, double c) {
  std::set<V> s;
  for (int sz : {-1, 1})
    for (int sy : {-1, 1})
      for (int sx : {-1, 1}) {
        s.insert({sx * (hx - c), sy * hy, sz * (hz - c)});
        s.insert({sx * hx, sy * (hy - c), sz * (hz - c)});
        s.insert({sx * (hx - c), sy * (hy - c), sz * hz});
      }
  return {s.begin(), s.end()};
}

std::vector<V> prism_points(int k, double r, double h) {
  std::vector<V> p;
  for (double z : {-h, h})
    for (int i = 0; i < k; ++i) p.push_back({r * std::cos(2 * M_PI * i / k), r * std::sin(2 * M_PI * i / k), z});
  return p;
}

struct Hull {
  Model model;
  explicit Hull(const std::vector<V>& pts) {
    const TriangleMesh h = convex_hull(pts, "test hull");
    MeshSpec ms;
    ms.name = "hull";
    ms.vert = h.vert;
    ms.face = h.face;
    ModelBuilder b;
    b.add_mesh(ms);
    model = b.finalize();
  }
  GeomFrame<double> frame() const {
    GeomFrame<double> f;
    f.vert = model.mesh_vert.data();
    f.nvert = model.mesh_vertnum[0];
    f.vert_edgeadr = model.mesh_vert_edgeadr.data();
    f.vert_edgenum = model.mesh_vert_edgenum.data();
    f.edge = model.mesh_edge.data();
    return f;
  }
  Eigen::Vector3d vert(int i) const {
    return {model.mesh_vert[3 * i], model.mesh_vert[3 * i + 1], model.mesh_vert[3 * i + 2]};
  }
  // Support vertex and feature along d (unit, mesh frame).
  MeshFeature<double> feature(const Eigen::Vector3d& d, std::vector<int>* on_face = nullptr) const {
    const GeomFrame<double> f = frame();
    int best = 0;
    for (int i = 1; i < f.nvert; ++i)
      if (vert(i).dot(d) > vert(best).dot(d)) best = i;
    Vec3<double> dd;
    for (int k = 0; k < 3; ++k) dd[k] = d[k];
    const MeshFeature<double> mf = mesh_support_feature(f, dd, best, 0.035);
    if (on_face && mf.kind == kMeshFeatureFace) {
      const Eigen::Vector3d n(mf.normal[0], mf.normal[1], mf.normal[2]);
      for (int i = 0; i < f.nvert; ++i)
        if (std::abs((vert(i) - vert(best)).dot(n)) <= mf.plane_tol) on_face->push_back(i);
    }
    return mf;
  }
};

Eigen::Vector3d tilted(const Eigen::Vector3d& n, double angle, double azimuth) {
  Eigen::Vector3d t = n.unitOrthogonal();
  t = Eigen::AngleAxisd(azimuth, n) * t;
  return (std::cos(angle) * n + std::sin(angle) * t).normalized();
}

}  // namespace

// Every face of a box, seen along its normal tilted by up to 1.9 degrees in any azimuth: the
// face's 4 vertices exactly. Tilted by 3 degrees towards an edge: not a face.
TEST(MeshFeature, BoxFacesWithinTheFeatureAngle) {
  const Hull h(box_points(0.3, 0.2, 0.1));
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> u(0, 2 * M_PI);
  for (int axis = 0; axis < 3; ++axis)
    for (int sign : {-1, 1}) {
      Eigen::Vector3d n = Eigen::Vector3d::Zero();
      n[axis] = sign;
      for (int k = 0; k < 20; ++k) {
        std::vector<int> face;
        const auto mf = h.feature(tilted(n, 1.9 * M_PI / 180 * k / 19, u(rng)), &face);
        ASSERT_EQ(mf.kind, kMeshFeatureFace);
        EXPECT_NEAR(std::abs(mf.normal[axis]), 1.0, 1e-12);
        EXPECT_EQ(face.size(), 4u);
        for (int i : face) EXPECT_NEAR(h.vert(i)[axis] * sign, axis == 0 ? 0.3 : axis == 1 ? 0.2 : 0.1, 1e-12);
      }
    }
  // Between the top face and the +x face: an edge (the two ends on both faces), then a vertex.
  const auto edge = h.feature(Eigen::Vector3d(1, 0, 1).normalized());
  ASSERT_EQ(edge.kind, kMeshFeatureEdge);
  for (int v : {edge.v0, edge.v1}) {
    EXPECT_NEAR(h.vert(v)[0], 0.3, 1e-12);
    EXPECT_NEAR(h.vert(v)[2], 0.1, 1e-12);
  }
  EXPECT_EQ(h.feature(Eigen::Vector3d(1, 1, 1).normalized()).kind, kMeshFeatureVertex);
  EXPECT_NE(h.feature(tilted(Eigen::Vector3d::UnitZ(), 3 * M_PI / 180, 0.3)).kind, kMeshFeatureFace);
}

// The long chamfered slab: its bottom face is the 4 bottom vertices, never a chamfer vertex
// (which the angle test seen from the far end would take: 8 mm over 0.38 m is 1.2 degrees).
TEST(MeshFeature, ChamferedSlabFaceExcludesTheChamfers) {
  const double hx = 0.2, hy = 0.04, hz = 0.03, c = 0.008;
  const Hull h(chamfered_points(hx, hy, hz, c));
  std::mt19937 rng(2);
  std::uniform_real_distribution<double> u(0, 2 * M_PI);
  for (int k = 0; k < 40; ++k) {
    std::vector<int> face;
    const auto mf = h.feature(tilted(-Eigen::Vector3d::UnitZ(), 1.5 * M_PI / 180 * (k % 10) / 9, u(rng)), &face);
    ASSERT_EQ(mf.kind, kMeshFeatureFace) << k;
    ASSERT_EQ(face.size(), 4u) << k;
    for (int i : face) EXPECT_NEAR(h.vert(i)[2], -hz, 1e-12);
  }
  // Along the chamfer's own normal (45 degrees between the bottom and the +y side): the
  // chamfer face, 4 vertices at z = -(hz - c) or y = hy... on the chamfer plane.
  std::vector<int> face;
  const auto mf = h.feature(Eigen::Vector3d(0, 1, -1).normalized(), &face);
  ASSERT_EQ(mf.kind, kMeshFeatureFace);
  EXPECT_EQ(face.size(), 4u);
  for (int i : face) EXPECT_NEAR(h.vert(i)[1] - h.vert(i)[2], hy + hz - c, 1e-12);
}

// A 64-sided prism: its cap is one face of 64 vertices (from any rim vertex), its side faces
// are quads, a direction between two side faces is an edge.
TEST(MeshFeature, PrismCapIsOneFace) {
  const int k = 64;
  const Hull h(prism_points(k, 0.12, 0.05));
  for (double az : {0.0, 0.7, 2.0, 4.5}) {
    std::vector<int> face;
    const auto mf = h.feature(tilted(Eigen::Vector3d::UnitZ(), 1e-3, az), &face);
    ASSERT_EQ(mf.kind, kMeshFeatureFace);
    EXPECT_EQ(face.size(), static_cast<std::size_t>(k));
  }
  std::vector<int> side;
  const double a = 2 * M_PI * 0.5 / k;  // normal of the side face between rim vertices 0 and 1
  const auto mf = h.feature(Eigen::Vector3d(std::cos(a), std::sin(a), 0), &side);
  ASSERT_EQ(mf.kind, kMeshFeatureFace);
  EXPECT_EQ(side.size(), 4u);
  // Halfway between two side faces is a vertical rim edge... within 2.8 degrees of both faces
  // for k = 64, so one of them is the feature; for k = 16 the edge itself.
  const Hull h16(prism_points(16, 0.12, 0.05));
  const auto e = h16.feature(Eigen::Vector3d(1, 0, 0));
  ASSERT_EQ(e.kind, kMeshFeatureEdge);
  EXPECT_NEAR(h16.vert(e.v0)[0], 0.12, 1e-12);
  EXPECT_NEAR(h16.vert(e.v1)[0], 0.12, 1e-12);
}
