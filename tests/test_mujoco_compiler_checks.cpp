// MuJoCo's moving-body check (src/import/mujoco_compiler_checks.hpp) on the body trees of the MJCF
// cases of tests/data/mujoco/validation_errors.json (tools/reference/mujoco_contact_semantics.py), written
// here as body arrays: our verdict equals MuJoCo's (accepted, or rejected with "mass and inertia
// of moving bodies") on every one of them.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "import/mujoco_compiler_checks.hpp"
#include "sap/mjcf.hpp"

using sap::BodyMassInput;

namespace {

BodyMassInput body(int parent, bool joint, double mass, std::array<double, 3> com, std::array<double, 3> diag) {
  BodyMassInput b;
  b.parent = parent;
  b.has_joint = joint;
  b.mass = mass;
  b.com = com;
  b.inertia = {diag[0], 0, 0, 0, diag[1], 0, 0, 0, diag[2]};
  return b;
}

const BodyMassInput kWorld{};
// A sphere geom of radius 0.1 at density 1000 (MuJoCo's default), about its centre.
const double kSphereMass = 1000 * 4.0 / 3.0 * M_PI * 1e-3;
const double kSphereI = 0.4 * kSphereMass * 0.01;

}  // namespace

TEST(MujocoCompilerChecks, MovingBodiesAsMuJoCoJudgesThem) {
  std::map<std::string, std::vector<BodyMassInput>> trees = {
      {"free_body_inertia_110", {kWorld, body(0, true, 1, {0, 0, 1}, {1, 1, 0})}},
      {"free_body_tiny_mass", {kWorld, body(0, true, 1e-20, {0, 0, 1}, {1e-3, 1e-3, 1e-3})}},
      {"free_body_tiny_inertia", {kWorld, body(0, true, 1, {0, 0, 1}, {1e-20, 1e-20, 1e-20})}},
      {"free_body_negative_mass", {kWorld, body(0, true, -1, {0, 0, 1}, {1, 1, 1})}},
      {"hinge_massless_leaf", {kWorld, body(0, true, 0, {0, 0, 0}, {0, 0, 0})}},
      {"hinge_massless_parent_of_moving_child",
       {kWorld, body(0, true, 0, {0, 0, 0}, {0, 0, 0}), body(1, true, kSphereMass, {1, 0, 0}, {kSphereI, kSphereI, kSphereI})}},
      {"hinge_massless_parent_of_welded_child",
       {kWorld, body(0, true, 0, {0, 0, 0}, {0, 0, 0}), body(1, false, kSphereMass, {1, 0, 0}, {kSphereI, kSphereI, kSphereI})}},
      {"hinge_point_mass", {kWorld, body(0, true, 1, {1, 0, 0}, {0, 0, 0})}},
      {"static_model", {kWorld, body(0, false, 0.5 * 0.5 * 0.02 * 8 * 1000, {0, 0, 0.5}, {1, 1, 1})}},
  };
  std::ifstream in(std::string(SAP_SOURCE_DIR) + "/tests/data/mujoco/validation_errors.json");
  ASSERT_TRUE(in.good()) << "tests/data/mujoco/validation_errors.json missing (tools/reference/mujoco_contact_semantics.py)";
  const nlohmann::json fx = nlohmann::json::parse(in);
  int n = 0;
  for (const auto& c : fx["cases"]) {
    const auto it = trees.find(c["name"].get<std::string>());
    if (it == trees.end()) continue;
    const sap::MovingBodyIssue issue = sap::mujoco_check_moving_bodies(it->second);
    const bool mujoco_accepts = c["accepted"].get<bool>();
    EXPECT_EQ(issue.body < 0, mujoco_accepts) << it->first << ": MuJoCo " << (mujoco_accepts ? "accepts" : "rejects");
    if (!mujoco_accepts) {
      EXPECT_NE(c["error"].get<std::string>().find("mass and inertia of moving bodies"), std::string::npos);
    }
    ++n;
  }
  EXPECT_EQ(n, static_cast<int>(trees.size()));
}

// The group is rigid: a body welded under a moving one adds its mass and, by the parallel-axis
// theorem, inertia; two point masses apart have inertia about all but the axis through them.
TEST(MujocoCompilerChecks, WeldGroupsAddUpAboutTheirCentreOfMass) {
  const std::vector<BodyMassInput> two_points = {kWorld, body(0, true, 1, {0, 0, 0}, {0, 0, 0}),
                                                 body(1, false, 1, {1, 0, 0}, {0, 0, 0})};
  const auto i2 = sap::mujoco_check_moving_bodies(two_points);
  EXPECT_EQ(i2.body, 1);  // a dumbbell: no inertia about its axis
  EXPECT_DOUBLE_EQ(i2.mass, 2);
  EXPECT_NEAR(i2.principal[2], 0.5, 1e-12);  // 2 x 1 x 0.5^2
  const std::vector<BodyMassInput> three_points = {kWorld, body(0, true, 1, {0, 0, 0}, {0, 0, 0}),
                                                   body(1, false, 1, {1, 0, 0}, {0, 0, 0}),
                                                   body(1, false, 1, {0, 1, 0}, {0, 0, 0})};
  EXPECT_EQ(sap::mujoco_check_moving_bodies(three_points).body, -1);
  // A static subtree (no joint on the path to the world) is never checked.
  const std::vector<BodyMassInput> fixed = {kWorld, body(0, false, 0, {0, 0, 0}, {0, 0, 0})};
  EXPECT_EQ(sap::mujoco_check_moving_bodies(fixed).body, -1);
}

// Through the MJCF importer (load_mjcf_string), every MJCF case of validation_errors.json that
// MuJoCo's moving-body check decides: the models MuJoCo 4.0.0 compiles load (a massless hinge
// body whose welded child has mass, a static table), and each one it rejects with "mass and
// inertia of moving bodies" is an error naming the file: the moving-body check's (5 cases) names
// the body, its mass and principal moments; a negative mass and a massless jointed leaf are
// refused by the importer before it, with errors of their own.
TEST(MujocoCompilerChecks, ImporterRejectsWhatMuJoCoRejects) {
  std::ifstream in(std::string(SAP_SOURCE_DIR) + "/tests/data/mujoco/validation_errors.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json fx = nlohmann::json::parse(in);
  int accepted = 0, rejected = 0;
  for (const auto& c : fx["cases"]) {
    if (!c.contains("xml") || c["xml"].is_null()) continue;
    const std::string name = c["name"], error = c["error"].is_string() ? c["error"].get<std::string>() : "";
    const bool mujoco_accepts = c["accepted"].get<bool>();
    if (!mujoco_accepts && error.find("mass and inertia of moving bodies") == std::string::npos) continue;
    if (name == "static_model" || name.find("flat_mesh") != std::string::npos) continue;  // other checks
    SCOPED_TRACE(name);
    try {
      const sap::Scene s = sap::load_mjcf_string(c["xml"].get<std::string>(), name + ".xml");
      EXPECT_TRUE(mujoco_accepts) << "MuJoCo rejects it: " << error;
      EXPECT_EQ(s.model.nv, c["nv"].get<int>());
      ++accepted;
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_FALSE(mujoco_accepts) << what;
      EXPECT_NE(what.find(name + ".xml"), std::string::npos) << what;
      // The moving-body check's error, unless the importer refused the file earlier (a negative mass).
      if (what.find("MuJoCo's compiler requires the mass and inertia of moving bodies") != std::string::npos) {
        EXPECT_NE(what.find(name + ".xml: body '"), std::string::npos) << what;
        ++rejected;
      }
    }
  }
  EXPECT_GE(accepted, 1);
  EXPECT_EQ(rejected, 5);
}
