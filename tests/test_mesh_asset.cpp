// Mesh and heightfield assets (src/import/mesh_asset.cpp, src/import/mjcf_assets.cpp): file reading (OBJ,
// ASCII and binary STL), convex hulls (vertices, outward triangles, Euler characteristic, edge
// pairing), mass properties against analytic solids, scale and mirrors, PNG heightfields, clear
// errors naming the file, and the MJCF import against MuJoCo's compiler
// (tests/data/meshes/mesh_scene_mujoco.json, written by tools/reference/mesh_reference.py).
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "import_test_util.hpp"
#include "sap/mesh_asset.hpp"
#include "sap/mjcf.hpp"
#include "sap/model_builder.hpp"
#include "sap/scene.hpp"

namespace {

using sap::MeshInertia;
using sap::TriangleMesh;

std::string data(const std::string& name) { return std::string(SAP_SOURCE_DIR) + "/tests/data/meshes/" + name; }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

Eigen::Vector3d vec(const std::array<double, 3>& a) { return {a[0], a[1], a[2]}; }

Eigen::Matrix3d rot(const std::array<double, 4>& q) {
  return Eigen::Quaterniond(q[0], q[1], q[2], q[3]).normalized().toRotationMatrix();
}

// Analytic box inertia per unit density (volume lx ly lz), about its centre.
Eigen::Vector3d box_inertia(double lx, double ly, double lz) {
  const double v = lx * ly * lz;
  return {v / 12 * (ly * ly + lz * lz), v / 12 * (lx * lx + lz * lz), v / 12 * (lx * lx + ly * ly)};
}

// Inertia tensor (file frame) from the principal moments and axes.
Eigen::Matrix3d tensor(const sap::MeshMassProperties& p) {
  const Eigen::Matrix3d r = rot(p.quat);
  return r * vec(p.inertia).asDiagonal() * r.transpose();
}

// Checks a closed convex triangulated surface: outward faces (every vertex on the inner side of
// every face plane), every directed edge used once and its reverse once, V - E + F = 2.
void expect_convex_closed(const TriangleMesh& h) {
  const int nv = static_cast<int>(h.vert.size()), nf = static_cast<int>(h.face.size());
  std::set<std::pair<int, int>> directed;
  double scale = 0;
  for (const auto& v : h.vert) scale = std::max(scale, vec(v).norm());
  for (const auto& f : h.face) {
    const Eigen::Vector3d a = vec(h.vert[f[0]]), b = vec(h.vert[f[1]]), c = vec(h.vert[f[2]]);
    const Eigen::Vector3d n = (b - a).cross(c - a);
    ASSERT_GT(n.norm(), 1e-12 * scale * scale) << "degenerate hull triangle";
    for (const auto& v : h.vert) EXPECT_LE(n.normalized().dot(vec(v) - a), 1e-9 * scale) << "face not outward";
    for (int k = 0; k < 3; ++k) EXPECT_TRUE(directed.insert({f[k], f[(k + 1) % 3]}).second) << "edge used twice";
  }
  for (const auto& e : directed) EXPECT_TRUE(directed.count({e.second, e.first})) << "edge without its twin";
  const int ne = static_cast<int>(directed.size()) / 2;
  EXPECT_EQ(nv - ne + nf, 2);
}

TEST(MeshFile, BoxInThreeFormatsReadsTheSameSurface) {
  for (const char* f : {"box.obj", "box_ascii.stl", "box_binary.stl"}) {
    SCOPED_TRACE(f);
    const TriangleMesh m = sap::read_mesh_file(data(f));
    EXPECT_EQ(m.vert.size(), 8u);  // STL repeats corners per triangle: merged
    EXPECT_EQ(m.face.size(), 12u);  // quads triangulated
    for (const auto& v : m.vert) {
      EXPECT_TRUE(v[0] == 0 || v[0] == 2);
      EXPECT_TRUE(v[1] == 0 || v[1] == 1);
      EXPECT_TRUE(v[2] == 0 || v[2] == 0.5);
    }
    const auto p = sap::mesh_mass_properties(m, m, MeshInertia::kExact, f);
    EXPECT_NEAR(p.measure, 1.0, 1e-12);  // signed volume positive: triangles kept outward
  }
}

TEST(MeshFile, ErrorsNameTheFile) {
  const std::string missing = data("no_such_mesh.stl");
  std::string e = error_of([&] { sap::read_mesh_file(missing); });
  EXPECT_NE(e.find(missing), std::string::npos) << e;
  EXPECT_NE(e.find("no such file"), std::string::npos) << e;
  sap_test::TempDir dir("mesh");
  const std::string junk = dir.write("junk.stl", "this is not a mesh\n");
  e = error_of([&] { sap::read_mesh_file(junk); });
  EXPECT_NE(e.find(junk), std::string::npos) << e;
  // A flat mesh has triangles but no hull.
  const TriangleMesh flat = sap::read_mesh_file(data("flat.obj"));
  e = error_of([&] { sap::compile_mesh("flat", flat, {1, 1, 1}, MeshInertia::kLegacy, data("flat.obj")); });
  EXPECT_NE(e.find("flat.obj"), std::string::npos) << e;
  EXPECT_NE(e.find("spans no volume"), std::string::npos) << e;
  e = error_of([&] { sap::convex_hull({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, "three.obj"); });
  EXPECT_NE(e.find("three.obj: a convex mesh needs at least 4 vertices, got 3"), std::string::npos) << e;
  // Colinear points: no volume.
  e = error_of([&] { sap::convex_hull({{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {4, 0, 0}}, "line"); });
  EXPECT_NE(e.find("line: the mesh spans no volume"), std::string::npos) << e;
  // Inward triangles: negative volume under the exact rule.
  TriangleMesh inward = sap::read_mesh_file(data("tetra.obj"));
  for (auto& f : inward.face) std::swap(f[1], f[2]);
  e = error_of([&] { sap::mesh_mass_properties(inward, inward, MeshInertia::kExact, "inward.obj"); });
  EXPECT_NE(e.find("inward.obj: mesh volume is negative"), std::string::npos) << e;
  EXPECT_EQ(error_of([&] { sap::scale_mesh(inward, {1, 0, 1}, "zero"); }),
            "zero: mesh scale entries must be finite and nonzero");
}

TEST(ConvexHull, BoxTetraAndLShape) {
  const TriangleMesh box = sap::convex_hull(sap::read_mesh_file(data("box.obj")).vert, "box");
  EXPECT_EQ(box.vert.size(), 8u);
  EXPECT_EQ(box.face.size(), 12u);
  expect_convex_closed(box);
  const TriangleMesh tet = sap::convex_hull(sap::read_mesh_file(data("tetra.obj")).vert, "tetra");
  EXPECT_EQ(tet.vert.size(), 4u);
  EXPECT_EQ(tet.face.size(), 4u);
  expect_convex_closed(tet);
  // The L prism's two re-entrant vertices (1, 1, z) are inside the hull.
  const TriangleMesh l = sap::read_mesh_file(data("lshape.obj"));
  const TriangleMesh lh = sap::convex_hull(l.vert, "lshape");
  EXPECT_EQ(lh.vert.size(), 10u);
  EXPECT_EQ(lh.face.size(), 16u);
  for (const auto& v : lh.vert) EXPECT_FALSE(v[0] == 1 && v[1] == 1) << "re-entrant vertex on the hull";
  expect_convex_closed(lh);
  // Hull volume: the profile hull (area 3.5) times the height 1.
  EXPECT_NEAR(sap::mesh_mass_properties(lh, lh, MeshInertia::kExact, "lshape").measure, 3.5, 1e-12);
  // Interior points do not change the hull.
  std::vector<std::array<double, 3>> pts = sap::read_mesh_file(data("box.obj")).vert;
  pts.push_back({1, 0.5, 0.25});
  pts.push_back({0.3, 0.2, 0.1});
  EXPECT_EQ(sap::convex_hull(pts, "box+").vert.size(), 8u);
}

TEST(MeshMass, BoxMatchesTheAnalyticSolid) {
  const TriangleMesh m = sap::read_mesh_file(data("box_binary.stl"));
  const Eigen::Vector3d expect = box_inertia(2, 1, 0.5);
  for (MeshInertia t : {MeshInertia::kExact, MeshInertia::kLegacy, MeshInertia::kConvex}) {
    const auto p = sap::mesh_mass_properties(m, sap::convex_hull(m.vert, "box"), t, "box");
    EXPECT_NEAR(p.measure, 1.0, 1e-12);
    EXPECT_NEAR((vec(p.com) - Eigen::Vector3d(1, 0.5, 0.25)).norm(), 0, 1e-12);
    const Eigen::Matrix3d I = tensor(p);
    EXPECT_NEAR((I - Eigen::Matrix3d(expect.asDiagonal())).norm(), 0, 1e-12);
    // Decreasing principal moments (MuJoCo's order) and the equivalent box = the box.
    EXPECT_GE(p.inertia[0], p.inertia[1]);
    EXPECT_GE(p.inertia[1], p.inertia[2]);
    EXPECT_NEAR(p.box[0], 0.25, 1e-12);
    EXPECT_NEAR(p.box[1], 0.5, 1e-12);
    EXPECT_NEAR(p.box[2], 1.0, 1e-12);
  }
}

TEST(MeshMass, ShellOfABoxIsSixPlates) {
  const TriangleMesh m = sap::read_mesh_file(data("box.obj"));
  const auto p = sap::mesh_mass_properties(m, m, MeshInertia::kShell, "box");
  const double a = 2, b = 1, c = 0.5;  // edge lengths along x, y, z
  EXPECT_NEAR(p.measure, 2 * (a * b + a * c + b * c), 1e-12);
  // Plate of area A, sides (u, v) in a plane at distance d from the centre: its moment about
  // the axis normal to it is A (u^2 + v^2)/12, about an in-plane axis along u: A v^2/12 + A d^2.
  auto Ixx = [&](double lx, double ly, double lz) {
    const double pyz = ly * lz, pxy = lx * ly, pxz = lx * lz;
    return 2 * pyz * (ly * ly + lz * lz) / 12                    // the two x-faces (normal x)
           + 2 * (pxz * lz * lz / 12 + pxz * (ly / 2) * (ly / 2))  // y-faces at +-ly/2
           + 2 * (pxy * ly * ly / 12 + pxy * (lz / 2) * (lz / 2));  // z-faces at +-lz/2
  };
  const Eigen::Matrix3d I = tensor(p);
  EXPECT_NEAR(I(0, 0), Ixx(a, b, c), 1e-12);
  EXPECT_NEAR(I(1, 1), Ixx(b, a, c), 1e-12);
  EXPECT_NEAR(I(2, 2), Ixx(c, b, a), 1e-12);
  EXPECT_NEAR(I(0, 1), 0, 1e-12);
}

TEST(MeshMass, TetrahedronAndScale) {
  const TriangleMesh t = sap::read_mesh_file(data("tetra.obj"));
  const auto p = sap::mesh_mass_properties(t, t, MeshInertia::kExact, "tetra");
  EXPECT_NEAR(p.measure, 1.0 / 6, 1e-14);
  EXPECT_NEAR((vec(p.com) - Eigen::Vector3d(0.25, 0.25, 0.25)).norm(), 0, 1e-14);
  // Corner tetrahedron, about its centroid: I_xx = V (2/20 - 2/16) ... from the covariance
  // C = V/20 (I + 1 1^T) about the origin, shifted: C_c = C - V c c^T; I = tr(C_c) 1 - C_c.
  const double V = 1.0 / 6;
  Eigen::Matrix3d C = V / 20 * (Eigen::Matrix3d::Identity() + Eigen::Matrix3d::Ones());
  C -= V * Eigen::Vector3d::Constant(0.25) * Eigen::Vector3d::Constant(0.25).transpose();
  const Eigen::Matrix3d I = C.trace() * Eigen::Matrix3d::Identity() - C;
  EXPECT_NEAR((tensor(p) - I).norm(), 0, 1e-14);
  // Scale (sx, sy, sz): volume x sx sy sz; a mirror (negative determinant) keeps the surface
  // outward, so the exact rule still sees a positive volume.
  for (std::array<double, 3> s : {std::array<double, 3>{2, 3, 4}, std::array<double, 3>{-1, 1, 2}}) {
    const sap::MeshAsset a = sap::compile_mesh("t", t, s, MeshInertia::kExact, "tetra");
    EXPECT_NEAR(a.mass.measure, std::abs(s[0] * s[1] * s[2]) / 6, 1e-12);
    EXPECT_NEAR((vec(a.mass.com) - 0.25 * Eigen::Vector3d(s[0], s[1], s[2])).norm(), 0, 1e-12);
    // The stored hull is centred at the com and in principal axes: its own inertia is diagonal.
    TriangleMesh h{a.hull.vert, a.hull.face};
    const auto ph = sap::mesh_mass_properties(h, h, MeshInertia::kExact, "hull");
    EXPECT_NEAR(vec(ph.com).norm(), 0, 1e-12);
    const Eigen::Matrix3d Ih = tensor(ph);
    EXPECT_NEAR(Ih(0, 1), 0, 1e-12);
    EXPECT_NEAR(Ih(0, 2), 0, 1e-12);
    EXPECT_NEAR(Ih(1, 2), 0, 1e-12);
    EXPECT_NEAR(Ih(0, 0), a.mass.inertia[0], 1e-12);
    EXPECT_NEAR(Ih(2, 2), a.mass.inertia[2], 1e-12);
    expect_convex_closed(h);
  }
}

TEST(MeshMass, LegacyConvexExactDifferOnANonConvexMesh) {
  const TriangleMesh l = sap::read_mesh_file(data("lshape.obj"));
  const TriangleMesh h = sap::convex_hull(l.vert, "l");
  const auto exact = sap::mesh_mass_properties(l, h, MeshInertia::kExact, "l");
  const auto convex = sap::mesh_mass_properties(l, h, MeshInertia::kConvex, "l");
  EXPECT_NEAR(exact.measure, 3.0, 1e-12);
  EXPECT_NEAR(convex.measure, 3.5, 1e-12);
  // Exact com of the L: two unit squares' worth (1,0.5)x2 and (0.5,1.5)x1 -> (5/6, 5/6).
  EXPECT_NEAR(exact.com[0], 5.0 / 6, 1e-12);
  EXPECT_NEAR(exact.com[1], 5.0 / 6, 1e-12);
  EXPECT_NEAR(exact.com[2], 0.5, 1e-12);
}

TEST(MeshModel, HullAdjacencyIsSymmetric) {
  const sap::MeshAsset a = sap::compile_mesh("l", sap::read_mesh_file(data("lshape.obj")), {1, 1, 1},
                                             MeshInertia::kLegacy, "l");
  sap::ModelBuilder b;
  sap::BodySpec body_spec;
  body_spec.mass = 1;
  body_spec.inertia = {1, 1, 1, 0, 0, 0};
  const int body = b.add_body(body_spec);
  b.add_joint(body, sap::JointSpec{});
  sap::GeomSpec g;
  g.type = sap::kGeomMesh;
  g.dataid = b.add_mesh(a.hull);
  b.add_geom(body, g);
  const sap::Model m = b.finalize();
  ASSERT_EQ(m.nmesh, 1);
  EXPECT_EQ(m.mesh_vertnum[0], 10);
  std::set<std::pair<int, int>> edges;
  for (int v = 0; v < m.nmeshvert; ++v)
    for (int k = 0; k < m.mesh_vert_edgenum[v]; ++k) edges.insert({v, m.mesh_edge[m.mesh_vert_edgeadr[v] + k]});
  for (const auto& e : edges) EXPECT_TRUE(edges.count({e.second, e.first}));
  EXPECT_EQ(edges.size(), 2u * 24u);  // E = V + F - 2 = 24 undirected edges
}

TEST(Heightfield, PngGreyLevels) {
  const sap::GreyImage img = sap::read_png_grey(data("hfield.png"));
  ASSERT_EQ(img.nrow, 3);
  ASSERT_EQ(img.ncol, 4);
  const int grey[12] = {0, 51, 102, 153, 204, 255, 0, 51, 102, 153, 204, 255};
  for (int i = 0; i < 12; ++i) EXPECT_DOUBLE_EQ(img.data[i], grey[i] / 255.0);
  const std::string e = error_of([] { sap::read_png_grey(data("box.obj")); });
  EXPECT_NE(e.find("box.obj: cannot read PNG"), std::string::npos) << e;
}

// MuJoCo's geom types -> ours.
int our_type(int mj) {
  static const std::map<int, int> m = {{0, sap::kGeomPlane},  {1, sap::kGeomHfield},   {2, sap::kGeomSphere},
                                       {3, sap::kGeomCapsule}, {4, sap::kGeomEllipsoid}, {5, sap::kGeomCylinder},
                                       {6, sap::kGeomBox},     {7, sap::kGeomMesh}};
  return m.at(mj);
}

// Tolerances: MuJoCo stores mesh vertices in single precision, so sums over them agree to
// about 1e-7 relative; 1e-6 relative (to the body's largest value) is asserted.
TEST(MjcfMeshOracle, MatchesMuJoCosCompiler) {
  std::ifstream in(data("mesh_scene_mujoco.json"));
  ASSERT_TRUE(in) << "missing fixture (tools/reference/mesh_reference.py)";
  const nlohmann::json ref = nlohmann::json::parse(in);
  sap::ImportReport report;
  const sap::Model m = sap::load_mjcf(data("mesh_scene.xml"), &report).model;
  for (const auto& b : ref["bodies"]) {
    const std::string name = b["name"];
    SCOPED_TRACE(name);
    const int id = m.body_id(name);
    ASSERT_GE(id, 0);
    const double mass = b["mass"];
    EXPECT_NEAR(m.body_mass[id], mass, 1e-6 * mass);
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(m.body_ipos[3 * id + k], b["ipos"][k].get<double>(), 1e-6);
    double scale = 0;
    for (int k = 0; k < 6; ++k) scale = std::max(scale, std::abs(b["inertia"][k].get<double>()));
    for (int k = 0; k < 6; ++k) EXPECT_NEAR(m.body_inertia[6 * id + k], b["inertia"][k].get<double>(), 1e-6 * scale) << k;
  }
  int nmesh_geoms = 0;
  for (const auto& g : ref["geoms"]) {
    const std::string name = g["name"];
    SCOPED_TRACE(name);
    const int id = m.geom_id(name);
    ASSERT_GE(id, 0);
    EXPECT_EQ(m.geom_type[id], our_type(g["type"]));
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(m.geom_pos[3 * id + k], g["pos"][k].get<double>(), 1e-6);
    // Quaternions up to sign (q and -q are one rotation; MuJoCo does not fix the sign).
    double dp = 0;
    for (int k = 0; k < 4; ++k) dp += m.geom_quat[4 * id + k] * g["quat"][k].get<double>();
    EXPECT_NEAR(std::abs(dp), 1.0, 1e-9);
    if (m.geom_type[id] != sap::kGeomMesh && m.geom_type[id] != sap::kGeomHfield)  // fitted primitives
      for (int k = 0; k < 3; ++k) EXPECT_NEAR(m.geom_size[3 * id + k], g["size"][k].get<double>(), 1e-6) << k;
    if (m.geom_type[id] == sap::kGeomMesh) {
      ++nmesh_geoms;
      for (int k = 0; k < 3; ++k) EXPECT_NEAR(m.geom_size[3 * id + k], g["size"][k].get<double>(), 1e-6);
      const int mesh = m.geom_dataid[id];
      const auto& rm = ref["meshes"][g["dataid"].get<int>()];
      EXPECT_EQ(m.mesh_vertnum[mesh], rm["hull_vertices"].get<int>());
      EXPECT_EQ(m.mesh_facenum[mesh], rm["hull_faces"].get<int>());
    }
  }
  EXPECT_EQ(nmesh_geoms, 10);
  ASSERT_EQ(m.nhfield, static_cast<int>(ref["hfields"].size()));
  for (const auto& h : ref["hfields"]) {
    const int id = m.geom_dataid[m.geom_id(h["name"].get<std::string>())];
    SCOPED_TRACE(h["name"].get<std::string>());
    EXPECT_EQ(m.hfield_nrow[id], h["nrow"].get<int>());
    EXPECT_EQ(m.hfield_ncol[id], h["ncol"].get<int>());
    for (int k = 0; k < 4; ++k) EXPECT_DOUBLE_EQ(m.hfield_size[4 * id + k], h["size"][k].get<double>());
    const int n = m.hfield_nrow[id] * m.hfield_ncol[id];
    for (int k = 0; k < n; ++k)  // MuJoCo stores floats
      EXPECT_NEAR(m.hfield_data[m.hfield_adr[id] + k], h["data"][k].get<double>(), 1e-7) << k;
  }
}

TEST(MjcfMesh, ErrorsNameTheAssetAndTheFile) {
  sap_test::TempDir dir("mjcf_mesh");
  auto load = [&](const std::string& asset, const std::string& geom) {
    const std::string xml = "<mujoco><asset>" + asset + "</asset><worldbody><body><freejoint/>" + geom +
                            "</body></worldbody></mujoco>";
    return error_of([&] { sap::load_mjcf(dir.write("m.xml", xml)); });
  };
  std::string e = load(R"(<mesh name="a" file="nowhere.stl"/>)", R"(<geom type="mesh" mesh="a"/>)");
  EXPECT_NE(e.find("m.xml:1"), std::string::npos) << e;
  EXPECT_NE(e.find("nowhere.stl"), std::string::npos) << e;
  EXPECT_NE(e.find("no such file"), std::string::npos) << e;
  e = load("", R"(<geom type="mesh" mesh="b"/>)");
  EXPECT_NE(e.find("unknown mesh 'b'"), std::string::npos) << e;
  e = load(R"(<mesh name="f" vertex="0 0 0 1 0 0 0 1 0 1 1 0"/>)", R"(<geom type="mesh" mesh="f"/>)");
  EXPECT_NE(e.find("mesh 'f'"), std::string::npos) << e;
  EXPECT_NE(e.find("spans no volume"), std::string::npos) << e;
  e = load(R"(<mesh name="t" vertex="0 0 0 1 0 0 0 1 0 0 0 1"/>)", R"(<geom type="mesh" mesh="t" shellinertia="true"/>)");
  EXPECT_NE(e.find("shell inertia is set on the mesh asset"), std::string::npos) << e;
  // A visual mesh (no contact, no mass) is never read: a missing file is no error.
  e = load(R"(<mesh name="v" file="visual_only.dae"/>)",
           R"(<geom type="mesh" mesh="v" contype="0" conaffinity="0" density="0"/><geom size="0.1"/>)");
  EXPECT_EQ(e, "");
}

TEST(MjcfMesh, MeshdirDefaultsAndInlineVertices) {
  sap_test::TempDir dir("mjcf_meshdir");
  std::ifstream src(data("tetra.obj"));
  const std::string obj((std::istreambuf_iterator<char>(src)), std::istreambuf_iterator<char>());
  dir.write("assets/parts/tetra.obj", obj);
  // meshdir relative to the model file; unnamed mesh takes the file's stem; <default><mesh scale>.
  const std::string xml = R"(<mujoco><compiler meshdir="assets"/>
    <default><mesh scale="2 2 2"/></default>
    <asset><mesh file="parts/tetra.obj" inertia="exact"/>
           <mesh name="cube" vertex="0 0 0 1 0 0 0 1 0 1 1 0 0 0 1 1 0 1 0 1 1 1 1 1" scale="1 1 1"/></asset>
    <worldbody><body name="t"><freejoint/><geom type="mesh" mesh="tetra" density="6"/></body>
               <body name="c" pos="0 0 3"><freejoint/><geom type="mesh" mesh="cube"/></body></worldbody></mujoco>)";
  const sap::Model m = sap::load_mjcf(dir.write("m.xml", xml)).model;
  EXPECT_NEAR(m.body_mass[m.body_id("t")], 6 * 8.0 / 6, 1e-12);  // scale 2: volume 8/6
  EXPECT_NEAR(m.body_mass[m.body_id("c")], 1000.0, 1e-9);       // unit cube from its hull
  EXPECT_EQ(m.nmesh, 2);
}

// JSON scenes: a mesh shape (file relative to the scene, scale) takes the mass of its hull's
// solid; an ellipsoid shape (semi-axes rx, ry, rz) that of the ellipsoid.
TEST(SceneMesh, MeshAndEllipsoidShapes) {
  const std::string scene = R"({"schema_version": 1, "name": "m",
    "bodies": [{"id": "a", "transform": {"p": [0, 0, 1]},
                "shapes": [{"type": "mesh", "file": "box.obj", "scale": [1, 2, 1], "cfg": {"density": 10}}]},
               {"id": "b", "transform": {"p": [3, 0, 1]},
                "shapes": [{"type": "ellipsoid", "rx": 0.1, "ry": 0.2, "rz": 0.3, "cfg": {"density": 10}}]}],
    "joints": [{"id": "fa", "type": "free", "parent": "world", "child": "a"},
               {"id": "fb", "type": "free", "parent": "world", "child": "b"}]})";
  const sap::Scene s = sap::parse_scene(scene, "mesh.json", data(""));
  const sap::Model& m = s.model;
  const int a = m.body_id("a"), b = m.body_id("b");
  ASSERT_GE(a, 0);
  EXPECT_NEAR(m.body_mass[a], 10 * 2.0, 1e-12);  // box 2 x 2 x 0.5
  const double expect_com[3] = {1, 1, 0.25};
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(m.body_ipos[3 * a + k], expect_com[k], 1e-12);
  const Eigen::Vector3d I = 10 * box_inertia(2, 2, 0.5);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(m.body_inertia[6 * a + k], I[k], 1e-12);
  EXPECT_NEAR(m.body_mass[b], 10 * 4.0 / 3 * M_PI * 0.1 * 0.2 * 0.3, 1e-12);
  int nmesh_geoms = 0;
  for (int g = 0; g < m.ngeom; ++g) nmesh_geoms += m.geom_bodyid[g] == a && m.geom_type[g] == sap::kGeomMesh;
  EXPECT_EQ(nmesh_geoms, 1);
  // Errors carry the JSON pointer and the file.
  std::string e = error_of([&] {
    sap::parse_scene(R"({"schema_version": 1, "name": "m", "bodies": [{"id": "a",
      "shapes": [{"type": "mesh", "file": "nowhere.obj"}]}]})", "mesh.json", data(""));
  });
  EXPECT_NE(e.find("mesh.json: /bodies/0/shapes/0/file: "), std::string::npos) << e;
  EXPECT_NE(e.find("nowhere.obj: cannot open mesh file"), std::string::npos) << e;
}

}  // namespace
