// Scenarios on two public robot models that nobody here wrote (issue 18, docs/robots.md):
// gymnasium-robotics 1.4.2's Shadow hand holding its block (hand/manipulate_block.xml) and
// Fetch's pick-and-place table with its object at rest (fetch/pick_and_place.xml), loaded
// strictly as published, from their environments' reset states, on the three presets.
//
// The models are not in the repository: tools/checks/robot_corpus.py fetches the wheel into
// ~/.cache/sap-robot-corpus (or $SAP_ROBOT_CORPUS_CACHE); .ci/run runs this binary from the
// corpus step after the fetch. Without the cache the tests skip with a message. MuJoCo's
// figures for the same scenarios come from tests/data/mujoco/robot_scenarios.json
// (tools/reference/robot_scenarios_reference.py, which documents how each environment's reset is
// reproduced).
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sap/mjcf.hpp"
#include "sap/simulator.hpp"
#include "scene_cases.hpp"

using namespace sap;

namespace {

std::string corpus_assets() {
  const char* env = std::getenv("SAP_ROBOT_CORPUS_CACHE");
  const char* home = std::getenv("HOME");
  const std::string cache = env && *env ? env : std::string(home ? home : ".") + "/.cache/sap-robot-corpus";
  return cache + "/unpacked/gymnasium-robotics/gymnasium_robotics/envs/assets/";
}

#define REQUIRE_CORPUS_MODEL(path)                                                                          \
  do {                                                                                                      \
    if (!std::filesystem::exists(path))                                                                     \
      GTEST_SKIP() << "robot corpus not cached (" << (path)                                                 \
                   << " missing): run tools/checks/robot_corpus.py --subset to fetch gymnasium-robotics 1.4.2"; \
  } while (0)

nlohmann::json mujoco_fixture() {
  std::ifstream f(std::string(SAP_SOURCE_DIR) + "/tests/data/mujoco/robot_scenarios.json");
  return nlohmann::json::parse(f);
}

Eigen::Vector3d vec3(const nlohmann::json& j) { return {j[0].get<double>(), j[1].get<double>(), j[2].get<double>()}; }

// A bare MJCF model as a scene (as sap_bench loads one): the file's time step, qpos0, zero
// velocity, constant controls; strict import (an unsupported element is an error).
Scene model_scene(const std::string& path) {
  Scene s;
  s.model = load_mjcf(path).model;
  s.source = path;
  s.dt = s.model.timestep;
  s.num_worlds = 1;
  s.qpos0 = s.model.qpos0;
  s.qvel0.assign(static_cast<std::size_t>(s.model.nv), 0.0);
  s.controls.assign(static_cast<std::size_t>(s.model.nu), ControlSchedule{});
  return s;
}


Eigen::Vector3d body_position(Simulator& sim, int body) {
  const std::vector<double> p = sim.body_pos(0);
  return {p[3 * body], p[3 * body + 1], p[3 * body + 2]};
}

// Deepest penetration (-min phi, 0 when none) among the contacts between bodies a and b.
double penetration(Simulator& sim, int a, int b) {
  const int n = sim.contacts().counts_host()[0];
  const std::vector<int> body = sim.contacts().body.world_to_host(0);
  const std::vector<double> phi = sim.contacts().phi.world_to_host(0);
  double depth = 0;
  for (int c = 0; c < n; ++c) {
    const int b0 = body[2 * c], b1 = body[2 * c + 1];
    if ((b0 == a && b1 == b) || (b0 == b && b1 == a)) depth = std::max(depth, -phi[static_cast<std::size_t>(c)]);
  }
  return depth;
}

class RobotScenario : public ::testing::TestWithParam<std::string> {};

// Shadow hand, manipulate_block: the gym env's reset (qpos0, zero action = ctrl at the middle
// of each ctrlrange), 0.4 s of the env's own settling (10 x 20 substeps), then 2 s held. The
// block must stay in the palm: above the palm body (z > palm z + 1.5 cm; the block's half size
// is 2.5 cm), above the env's is_on_palm height 0.04 at every step, moving < 1 cm during the
// 2 s hold, and ending within 1.5 cm of where MuJoCo's block ends. No failed world.
TEST_P(RobotScenario, ShadowHandHoldsBlockInPalmFor2s) {
  const std::string path = corpus_assets() + "hand/manipulate_block.xml";
  REQUIRE_CORPUS_MODEL(path);
  const nlohmann::json ref = mujoco_fixture()["hand"];
  Scene scene = model_scene(path);
  ASSERT_DOUBLE_EQ(scene.dt, ref["dt"].get<double>());
  const Model& m = scene.model;
  ASSERT_EQ(m.nu, static_cast<int>(ref["ctrl"].size()));
  for (int a = 0; a < m.nu; ++a) {  // zero action: the middle of the control range (hand_env.py)
    scene.controls[a].value = 0.5 * (m.actuator_ctrlrange[2 * a] + m.actuator_ctrlrange[2 * a + 1]);
    ASSERT_NEAR(scene.controls[a].value, ref["ctrl"][a].get<double>(), 1e-12) << m.actuator_names[a];
  }
  const int object = m.body_id("object"), palm = m.body_id("robot0:palm");
  ASSERT_GE(object, 0);
  ASSERT_GE(palm, 0);

  Simulator sim(scene, sap::testing::cpu_scene_options(scene, GetParam()));
  const Eigen::Vector3d start = body_position(sim, object);
  EXPECT_LT((start - vec3(ref["positions"]["0"]["object"])).norm(), 1e-9) << "block's initial pose differs from MuJoCo's";
  const int settle = static_cast<int>(std::lround(0.4 / scene.dt)), hold = static_cast<int>(std::lround(2.0 / scene.dt));
  double min_z = start.z(), min_above_palm = 1e9, max_hold_drift = 0;
  Eigen::Vector3d settled = start;
  for (int k = 1; k <= settle + hold; ++k) {
    sim.step();
    const Eigen::Vector3d p = body_position(sim, object);
    min_z = std::min(min_z, p.z());
    if (k == settle) settled = p;
    if (k >= settle) {
      max_hold_drift = std::max(max_hold_drift, (p - settled).norm());
      min_above_palm = std::min(min_above_palm, p.z() - body_position(sim, palm).z());
    }
  }
  const Eigen::Vector3d end = body_position(sim, object);
  const Eigen::Vector3d mj_end = vec3(ref["positions"]["2.4"]["object"]);
  const int ncon = sim.contacts().counts_host()[0];
  std::printf("scenario hand %s: start (%.4f %.4f %.4f) settled@0.4s (%.4f %.4f %.4f) end@2.4s (%.4f %.4f %.4f); "
              "drift over the 2 s hold %.2f mm; min z %.4f m; min height above palm %.4f m; |end - MuJoCo end| %.2f mm; "
              "contacts %d (MuJoCo %d)\n",
              GetParam().c_str(), start.x(), start.y(), start.z(), settled.x(), settled.y(), settled.z(), end.x(),
              end.y(), end.z(), 1e3 * max_hold_drift, min_z, min_above_palm, 1e3 * (end - mj_end).norm(), ncon,
              ref["ncon_end"].get<int>());
  EXPECT_TRUE(sim.failed_worlds_since_reset().empty());
  EXPECT_TRUE(end.allFinite());
  EXPECT_GT(min_z, 0.04) << "the block left the palm (the env's is_on_palm test)";
  EXPECT_GT(min_above_palm, 0.015) << "the block is not resting above the palm";
  EXPECT_LT(max_hold_drift, 0.01) << "the block moved during the 2 s hold";
  EXPECT_LT((end - mj_end).norm(), 0.015) << "the block does not end where MuJoCo's does";
  EXPECT_GT(ncon, 0);
}

// Fetch, pick_and_place: the env's reset (base slides 0.405, 0.48, 0; object0 on the table top
// at x, y = 1.25, 0.53; the mocap body the gripper is welded to moves with the base, as the
// env's reset_mocap_welds + set_mocap_pos keep the weld satisfied), 2 s. The table is part of
// the world (no joint: it cannot move). The object must rest: once the contact has taken its
// compression (0.5 s; about 1 mm, reached well before), drift < 0.1 mm and no growth of its
// penetration into the table (< 0.01 mm) until 2 s; on the table top within the compression
// (|z - 0.425| < 1.5 mm), within 1.5 mm of MuJoCo's end position (MuJoCo compresses 0.2 mm).
// The object's compression (0.98 mm) is what MuJoCo gives with solimp d = 0.5 (the importer
// ignores solimp; the file's d = 0.9..0.95 gives 0.2 mm in MuJoCo). The gripper hangs on its
// weld to the mocap body (solref 0.02 1) and sags 7.0 mm here against MuJoCo's 0.6 mm, 2.5 mm
// with d = 0.5 (docs/robots.md): MuJoCo's soft row sags (1 - d) times our rule's (d = 1 there;
// tests/test_holonomic.cpp checks this against MuJoCo on a welded box), and our translation
// rows' weight (mean diagonal of J diag(A)^-1 J^T at the anchor, 0.089) is 1.9 times MuJoCo's
// (body_invweight0 from the full M^-1 at the com, 0.046). So the sag at 2 s lies between 2 and
// 4 times MuJoCo's with d = 0.5 (the load differs too: the arm still moves at 2 s). No failed
// world.
TEST_P(RobotScenario, FetchTableAndObjectRestWithoutDrift) {
  const std::string path = corpus_assets() + "fetch/pick_and_place.xml";
  REQUIRE_CORPUS_MODEL(path);
  const nlohmann::json ref = mujoco_fixture()["fetch"];
  Scene scene = model_scene(path);
  Model& m = scene.model;
  const int object = m.body_id("object0"), table = m.body_id("table0"), gripper = m.body_id("robot0:gripper_link"),
            mocap = m.body_id("robot0:mocap");
  ASSERT_GE(object, 0);
  ASSERT_GE(table, 0);
  ASSERT_GE(gripper, 0);
  ASSERT_GE(mocap, 0);
  ASSERT_EQ(m.body_dofnum[table], 0) << "the table is a jointless body of the world";
  const Eigen::Vector3d base_shift(0.405, 0.48, 0.0);
  for (const auto& [name, value] : ref["slides"].items()) {
    const int j = m.joint_id(name);
    ASSERT_GE(j, 0) << name;
    scene.qpos0[m.jnt_qposadr[j]] = value.get<double>();
  }
  const int a = m.jnt_qposadr[m.joint_id("object0:joint")];
  const double object_qpos[7] = {1.25, 0.53, 0.425, 1, 0, 0, 0};
  for (int i = 0; i < 7; ++i) scene.qpos0[a + i] = object_qpos[i];
  ASSERT_EQ(m.body_parentid[mocap], 0);
  for (int i = 0; i < 3; ++i) m.body_pos[3 * mocap + i] += base_shift[i];  // the mocap body is static

  Simulator sim(scene, sap::testing::cpu_scene_options(scene, GetParam()));
  const Eigen::Vector3d start = body_position(sim, object), table0 = body_position(sim, table),
                        grip0 = body_position(sim, gripper);
  EXPECT_LT((grip0 - vec3(ref["positions"]["0"]["robot0:gripper_link"])).norm(), 1e-6) << "gripper differs from MuJoCo's";
  const int early = static_cast<int>(std::lround(0.5 / scene.dt)), steps = static_cast<int>(std::lround(2.0 / scene.dt));
  Eigen::Vector3d early_pos = start;
  double early_depth = 0, max_depth_growth = 0, max_drift = 0, max_grip_drift = 0;
  for (int k = 1; k <= steps; ++k) {
    sim.step();
    const Eigen::Vector3d p = body_position(sim, object);
    const double depth = penetration(sim, object, table);
    max_grip_drift = std::max(max_grip_drift, (body_position(sim, gripper) - grip0).norm());
    if (k == early) {
      early_pos = p;
      early_depth = depth;
    }
    if (k >= early) {
      max_drift = std::max(max_drift, (p - early_pos).norm());
      max_depth_growth = std::max(max_depth_growth, depth - early_depth);
    }
  }
  const Eigen::Vector3d end = body_position(sim, object), mj_end = vec3(ref["positions"]["2"]["object0"]);
  const double table_drift = (body_position(sim, table) - table0).norm();
  std::printf("scenario fetch %s: object start (%.4f %.4f %.4f) end@2s (%.5f %.5f %.5f); drift %.3f mm from start, "
              "%.3g mm after 0.5 s; penetration into the table %.3f mm at 0.5 s, growth after %.3g mm; table drift %.3g m; "
              "gripper drift max %.2f mm, at 2 s %.2f mm; |end - MuJoCo end| %.3f mm\n",
              GetParam().c_str(), start.x(), start.y(), start.z(), end.x(), end.y(), end.z(), 1e3 * (end - start).norm(),
              1e3 * max_drift, 1e3 * early_depth, 1e3 * max_depth_growth, table_drift, 1e3 * max_grip_drift,
              1e3 * (body_position(sim, gripper) - grip0).norm(), 1e3 * (end - mj_end).norm());
  EXPECT_TRUE(sim.failed_worlds_since_reset().empty());
  EXPECT_TRUE(end.allFinite());
  EXPECT_GT(early_depth, 0) << "the object should touch the table";
  EXPECT_LT(max_drift, 1e-4) << "the object drifts on the table";
  EXPECT_LT(max_depth_growth, 1e-5) << "the object sinks into the table";
  EXPECT_LT(std::abs(end.z() - 0.425), 1.5e-3);
  EXPECT_LT((end - mj_end).norm(), 1.5e-3) << "the object does not rest where MuJoCo's does";
  EXPECT_EQ(table_drift, 0.0);
  const nlohmann::json half = mujoco_fixture()["fetch_solimp_0.5"]["positions"];
  const double mj_half_sag = (vec3(half["2"]["robot0:gripper_link"]) - vec3(half["0"]["robot0:gripper_link"])).norm();
  const double grip_sag = (body_position(sim, gripper) - grip0).norm();
  EXPECT_GT(grip_sag, 2 * mj_half_sag) << "the weld sags less than MuJoCo's with solimp d = 0.5 over (1 - d)";
  EXPECT_LT(grip_sag, 4 * mj_half_sag) << "the weld sags more than its weight estimate explains";
}

INSTANTIATE_TEST_SUITE_P(Presets, RobotScenario, ::testing::Values("approx32", "approx64", "drake"));

}  // namespace
