// Loader robustness (issue 14): the fuzzers' regression corpus (fuzz/regressions/<target>/:
// inputs that once crashed, hung or gave an unlocated error) and their seed corpus
// (fuzz/corpus/<target>/) replayed through the plain loaders, without libFuzzer. Every input
// must load or fail with std::runtime_error / std::invalid_argument naming the input; any other
// exception fails the test, a crash fails the test binary. Also: the string entry points agree
// with the file ones, and paths that are not regular files are clear errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../fuzz/fuzz_targets.hpp"
#include "sap/mjcf.hpp"
#include "sap/scene.hpp"

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> files_in(const std::string& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(std::string(SAP_SOURCE_DIR) + "/" + dir, ec))
    if (e.is_regular_file()) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

// Inputs the fuzzers found (see docs/reliability.md for what each one was): each must give a
// result or a located error now.
TEST(LoaderRobustness, RegressionCorpusGivesResultsOrLocatedErrors) {
  int n = 0;
  for (const auto& p : files_in("fuzz/regressions/scene_json")) {
    SCOPED_TRACE(p.string());
    const std::string err = sap::fuzz::load_scene_text(read(p));
    EXPECT_TRUE(sap::fuzz::located(err, sap::fuzz::kSceneSource)) << err;
    ++n;
  }
  for (const auto& p : files_in("fuzz/regressions/mjcf")) {
    SCOPED_TRACE(p.string());
    for (bool drop : {false, true}) {
      const std::string err = sap::fuzz::load_mjcf_text(read(p), drop);
      EXPECT_TRUE(sap::fuzz::located(err, sap::fuzz::kMjcfSource)) << err;
    }
    ++n;
  }
  for (const auto& p : files_in("fuzz/regressions/urdf")) {
    SCOPED_TRACE(p.string());
    for (bool variant : {false, true}) {
      const std::string err = sap::fuzz::load_urdf_text(read(p), variant);
      EXPECT_TRUE(sap::fuzz::located(err, sap::fuzz::kUrdfSource)) << err;
    }
    ++n;
  }
  EXPECT_GT(n, 0) << "no regression inputs found under fuzz/regressions";
}

// The seeds are valid inputs: they load through the string entry points (MJCF and URDF with
// unsupported elements dropped).
TEST(LoaderRobustness, SeedCorpusLoads) {
  const auto scenes = files_in("fuzz/corpus/scene_json");
  const auto mjcf = files_in("fuzz/corpus/mjcf");
  const auto urdf = files_in("fuzz/corpus/urdf");
  ASSERT_FALSE(scenes.empty() || mjcf.empty() || urdf.empty());
  for (const auto& p : scenes) EXPECT_EQ(sap::fuzz::load_scene_text(read(p)), "") << p;
  for (const auto& p : mjcf) EXPECT_EQ(sap::fuzz::load_mjcf_text(read(p), true), "") << p;
  for (const auto& p : urdf) EXPECT_EQ(sap::fuzz::load_urdf_text(read(p), true), "") << p;
}

// load_*_string and load_* give the same model; errors carry the given source name and line.
TEST(LoaderRobustness, StringEntryPointsMatchFiles) {
  const std::string dir = std::string(SAP_SOURCE_DIR) + "/fuzz/assets";
  const std::string mjcf_path = dir + "/arm.xml", urdf_path = dir + "/arm.urdf";
  const sap::Model a = sap::load_mjcf(mjcf_path).model, b = sap::load_mjcf_string(read(mjcf_path), "arm", nullptr, {}, dir).model;
  EXPECT_EQ(a.nq, b.nq);
  EXPECT_EQ(a.nv, b.nv);
  EXPECT_EQ(a.nu, b.nu);
  EXPECT_EQ(a.body_mass, b.body_mass);
  EXPECT_EQ(a.body_pos, b.body_pos);
  const sap::Model c = sap::load_urdf(urdf_path, nullptr, {}, true).model;
  // URDF text resolves mesh paths (package://arm/...) relative to the source name's directory.
  const sap::Model d = sap::load_urdf_string(read(urdf_path), urdf_path, nullptr, {}, true).model;
  EXPECT_EQ(c.nq, d.nq);
  EXPECT_EQ(c.body_inertia, d.body_inertia);
  EXPECT_EQ(c.nmesh, 2);  // fuzz/assets/arm/upper.stl, upper2.stl
  EXPECT_EQ(c.mesh_vert, d.mesh_vert);
  // Includes of a string document resolve relative to base_dir (mjx_scene.xml includes mjx_panda.xml).
  sap::ImportOptions drop;
  drop.drop_unsupported = true;
  const sap::Model panda = sap::load_mjcf_string(R"(<mujoco><include file="mjx_scene.xml"/></mujoco>)", "s", nullptr,
                                                 drop, dir).model;
  EXPECT_EQ(panda.nv, 9);
  try {
    sap::load_mjcf_string(
        "<mujoco>\n<worldbody>\n<body><geom type=\"sphere\" size=\"-1\"/></body>\n</worldbody>\n</mujoco>",
        "inline.xml");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("inline.xml:3: ", 0), 0u) << e.what();
  }
  try {
    sap::load_urdf_string("<robot>\n<link/>\n</robot>", "inline.urdf");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("inline.urdf:2: <link> needs a 'name'", 0), 0u) << e.what();
  }
}

// A directory where a file is expected: tinyxml2 would take its size for a huge length (and a
// FIFO would block), so every loader checks for a regular file first.
TEST(LoaderRobustness, DirectoriesAreNotFiles) {
  const std::string dir = std::string(SAP_SOURCE_DIR) + "/fuzz/assets";
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { sap::load_mjcf(dir); }).find("is not a regular file"), std::string::npos);
  EXPECT_NE(message([&] { sap::load_urdf(dir); }).find("is not a regular file"), std::string::npos);
  EXPECT_NE(message([&] { sap::load_scene(dir); }).find("not a regular file"), std::string::npos);
  const std::string scene = R"({"schema_version": 1, "name": "d", "assets": [{"type": "mjcf", "path": "."}]})";
  EXPECT_NE(message([&] { sap::parse_scene(scene, "d.json", dir); }).find("d.json: /assets/0/path: not a regular file"),
            std::string::npos);
  const std::string inc = R"(<mujoco><include file="."/></mujoco>)";
  EXPECT_NE(message([&] { sap::load_mjcf_string(inc, "i.xml", nullptr, {}, dir); }).find("i.xml:1: '"),
            std::string::npos)
      << message([&] { sap::load_mjcf_string(inc, "i.xml", nullptr, {}, dir); });
}

// Found by UBSan while fuzzing (issue 14): a huge inertiagrouprange converted to int (undefined
// behaviour), and integer attributes read through long wrapped silently ("4294967299" was 3).
TEST(LoaderRobustness, IntegerAttributesAreRangeChecked) {
  auto error = [](const std::string& xml) {
    try {
      sap::load_mjcf_string(xml, "i.xml");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string body = "<worldbody><body><freejoint/><geom size=\"0.1\"";
  EXPECT_EQ(error("<mujoco><compiler inertiagrouprange=\"1e300 2\"/>" + body + "/></body></worldbody></mujoco>"),
            "i.xml:1: attribute 'inertiagrouprange': expected two integer geom groups, got '1e300 2'");
  EXPECT_EQ(error("<mujoco>" + body + " condim=\"4294967299\"/></body></worldbody></mujoco>"),
            "i.xml:1: attribute 'condim': integer out of range, got '4294967299'");
  EXPECT_EQ(error("<mujoco><compiler inertiagrouprange=\"0 3\"/>" + body + "/></body></worldbody></mujoco>"),
            "no error");
}
