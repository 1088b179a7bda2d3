// MuJoCo's binary .msh meshes (src/import/mesh_msh.cpp): a file written to the documented layout, with
// normals and texture coordinates to skip, reads back its vertices and faces; every malformed
// file gives an error naming the file and what is wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include "import/mesh_msh.hpp"
#include "sap/mjcf.hpp"

#include <nlohmann/json.hpp>

namespace {

constexpr int kNoOverride = std::numeric_limits<int>::min();

struct Msh {
  std::vector<float> vert, normal, texcoord;
  std::vector<std::int32_t> face;
};

std::vector<std::uint8_t> bytes_of(const Msh& m, int nvertex_override = kNoOverride) {
  std::vector<std::uint8_t> b;
  auto put = [&](const void* p, std::size_t n) {
    if (n == 0) return;  // an empty array's data() may be null
    // resize + memcpy: GCC 12 gave a false -Wstringop-overflow on vector::insert of raw bytes here
    const std::size_t at = b.size();
    b.resize(at + n);
    std::memcpy(b.data() + at, p, n);
  };
  const std::int32_t head[4] = {nvertex_override != kNoOverride ? nvertex_override : std::int32_t(m.vert.size() / 3),
                                std::int32_t(m.normal.size() / 3), std::int32_t(m.texcoord.size() / 2),
                                std::int32_t(m.face.size() / 3)};
  put(head, sizeof head);
  put(m.vert.data(), 4 * m.vert.size());
  put(m.normal.data(), 4 * m.normal.size());
  put(m.texcoord.data(), 4 * m.texcoord.size());
  put(m.face.data(), 4 * m.face.size());
  return b;
}

// A tetrahedron, with per-vertex normals and texture coordinates.
Msh tetra() {
  Msh m;
  m.vert = {0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3};
  m.normal = {-1, -1, -1, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  m.texcoord = {0, 0, 1, 0, 0, 1, 1, 1};
  m.face = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
  return m;
}

std::string error_of(const Msh& m, int nvertex_override = kNoOverride, int drop_bytes = 0) {
  auto b = bytes_of(m, nvertex_override);
  b.resize(b.size() - drop_bytes);
  try {
    sap::parse_msh(b, "robot/meshes/part.msh");
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(MeshMsh, ReadsVerticesAndFacesAndSkipsNormalsAndTexcoords) {
  const Msh m = tetra();
  const sap::TriangleMesh t = sap::parse_msh(bytes_of(m), "tetra.msh");
  ASSERT_EQ(t.vert.size(), 4u);
  ASSERT_EQ(t.face.size(), 4u);
  for (int v = 0; v < 4; ++v)
    for (int k = 0; k < 3; ++k) EXPECT_EQ(t.vert[v][k], m.vert[3 * v + k]);
  for (int f = 0; f < 4; ++f)
    for (int k = 0; k < 3; ++k) EXPECT_EQ(t.face[f][k], m.face[3 * f + k]);
}

TEST(MeshMsh, FileOnDiskAndPointSetWithoutFaces) {
  Msh m = tetra();
  m.face.clear();
  m.normal.clear();
  const std::string path = ::testing::TempDir() + "points.msh";
  {
    const auto b = bytes_of(m);
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
  }
  const sap::TriangleMesh t = sap::read_msh_file(path);
  EXPECT_EQ(t.vert.size(), 4u);
  EXPECT_TRUE(t.face.empty());
  try {
    sap::read_msh_file(path + ".missing");
    ADD_FAILURE() << "no error for a missing file";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("points.msh.missing: cannot open"), std::string::npos) << e.what();
  }
}

TEST(MeshMsh, MalformedFilesAreClearErrors) {
  auto expect = [](const std::string& err, const std::string& what) {
    EXPECT_NE(err.find("robot/meshes/part.msh: "), std::string::npos) << err;
    EXPECT_NE(err.find(what), std::string::npos) << "expected '" << what << "' in: " << err;
  };
  expect(error_of(tetra(), kNoOverride, 4), "does not match its header");  // truncated
  expect(error_of(tetra(), 5), "expected 204 bytes");  // 16 + 4 (3*5 + 3*4 + 2*4 + 3*4)
  Msh neg = tetra();
  expect(error_of(neg, -3), "nvertex = -3 is negative");
  Msh bad_face = tetra();
  bad_face.face[4] = 7;
  expect(error_of(bad_face), "face 1 has vertex id 7 outside [0, 4)");
  Msh nan = tetra();
  nan.vert[7] = std::numeric_limits<float>::quiet_NaN();
  expect(error_of(nan), "vertex 2 is not finite");
  Msh three = tetra();
  three.vert.resize(9);
  three.normal.clear();
  three.texcoord.clear();
  three.face = {0, 1, 2};
  expect(error_of(three), "has 3 vertices; a mesh needs at least 4");
  try {
    sap::parse_msh({1, 2, 3}, "robot/meshes/part.msh");
    ADD_FAILURE();
  } catch (const std::exception& e) {
    expect(e.what(), "shorter than its 16-byte header");
  }
}

// Through the MJCF importer (<mesh file=...>), the mesh files of
// tests/data/mujoco/validation_errors.json: where MuJoCo 4.0.0 compiles the model (a .msh
// tetrahedron with and without faces) ours loads a free body (nv 6) with the tetrahedron's hull;
// where MuJoCo rejects the file (.msh size against header, fewer than 4 vertices, a face id out of
// range; an OBJ vertex that is nan or inf) ours is an error naming the model's line, the mesh and
// the file.
TEST(MeshMsh, ImporterAgreesWithMuJoCosVerdicts) {
  std::ifstream in(std::string(SAP_SOURCE_DIR) + "/tests/data/mujoco/validation_errors.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json fx = nlohmann::json::parse(in);
  int n = 0;
  for (const auto& c : fx["cases"]) {
    const std::string name = c["name"];
    if (name.rfind("mesh_", 0) != 0) continue;
    SCOPED_TRACE(name);
    const std::string file = c["file"];
    std::string bytes;
    if (c["bytes_hex"].is_string()) {
      const std::string hex = c["bytes_hex"];
      for (std::size_t i = 0; i + 1 < hex.size(); i += 2) bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    } else {
      bytes = c["text"].get<std::string>();
    }
    const std::string dir = ::testing::TempDir();
    std::ofstream(dir + file, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    const std::string xml = "<mujoco model=\"v\"><compiler meshdir=\"" + dir + "\"/><asset><mesh name=\"m\" file=\"" + file +
                            "\"/></asset>\n<worldbody><body name=\"b\"><freejoint/><geom name=\"g\" type=\"mesh\" "
                            "mesh=\"m\"/></body></worldbody></mujoco>";
    ++n;
    if (c["accepted"].get<bool>()) {
      const sap::Scene s = sap::load_mjcf_string(xml, "v.xml");
      EXPECT_EQ(s.model.nv, 6);
      EXPECT_EQ(s.model.nmeshvert, 4);
      continue;
    }
    try {
      sap::load_mjcf_string(xml, "v.xml");
      ADD_FAILURE() << "MuJoCo rejects it: " << c["error"];
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("v.xml:1: mesh 'm'"), std::string::npos) << what;
      EXPECT_NE(what.find(file + ": "), std::string::npos) << what;
      if (file.find(".obj") != std::string::npos) EXPECT_NE(what.find("is not finite"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(n, 8);
}
