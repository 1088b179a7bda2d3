// JSON scenes: every library scene loads and steps; malformed scenes give "<file>: <pointer>:
// <expectation>" errors; the Warp joint-frame mapping reproduces Warp's placement formula;
// perturbations are deterministic Gaussians; control schedules follow their formulas.
#include <gtest/gtest.h>

#include "sap/simulator.hpp"

#include <dirent.h>
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sap/collision.hpp"
#include "sap/context.hpp"
#include "sap/dynamics.hpp"
#include "sap/scene.hpp"
#include "sap/solver_sap.hpp"

namespace {

using Eigen::AngleAxisd;
using Eigen::Quaterniond;
using Eigen::Vector3d;

const double kPi = 3.14159265358979323846;

std::vector<std::string> scene_files() {
  const std::string dir = std::string(SAP_SOURCE_DIR) + "/scenes";
  std::vector<std::string> files;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) files.push_back(dir + "/" + n);
    }
    closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool all_finite(const std::vector<double>& v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

// Runs `steps` steps of a scene on the CPU backend with the collision pipeline and the scene's
// contact capacity; returns the final qpos of every world and, in *dropped_at_start, the
// contacts the initial state would drop for lack of capacity.
std::vector<std::vector<double>> run_scene(const sap::Scene& s, int nworld, int steps, long long* dropped_at_start,
                                           int* failed_worlds) {
  sap::SimulatorOptions o;
  o.nworld = nworld;
  o.backend = sap::Backend::CPU;
  o.threads = 2;
  sap::Simulator sim(s, o);
  *failed_worlds = 0;
  for (int k = 0; k < steps; ++k) {
    sim.step();
    if (k == 0) *dropped_at_start = sim.collision().last_dropped_total();
    *failed_worlds = std::max<int>(*failed_worlds, static_cast<int>(sim.failed_worlds().size()));
  }
  std::vector<std::vector<double>> out;
  for (int w = 0; w < nworld; ++w) out.push_back(sim.state().qpos.world_to_host(w));
  return out;
}

std::string error_of(const std::string& text, const std::string& base_dir = ".") {
  try {
    sap::parse_scene(text, "bad.json", base_dir);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// A minimal valid scene with the given extra top-level members (a JSON fragment).
std::string scene_with(const std::string& members) {
  return std::string(R"({"schema_version": 1, "name": "t")") + (members.empty() ? "" : ", " + members) + "}";
}

const char* kOneBox =
    R"("bodies": [{"id": "a", "transform": {"p": [0, 0, 1]}, "shapes": [{"type": "box", "hx": 0.1, "hy": 0.1, "hz": 0.1}]}],
       "joints": [{"id": "fa", "type": "free", "parent": "world", "child": "a"}])";

}  // namespace

// ------------------------------------------------------------------------------------------
TEST(SceneJson, EveryLibrarySceneLoadsAndSteps) {
  const auto files = scene_files();
  ASSERT_GE(files.size(), 10u) << "scenes/ lost files";
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    sap::Scene s;
    try {
      s = sap::load_scene(f);  // every asset lives in the repository (models/, scenes/)
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    EXPECT_FALSE(s.description.empty()) << "every library scene says what it shows";
    EXPECT_EQ(s.source, f);
    EXPECT_EQ(static_cast<int>(s.qpos0.size()), s.model.nq);
    EXPECT_EQ(static_cast<int>(s.qvel0.size()), s.model.nv);
    EXPECT_EQ(static_cast<int>(s.controls.size()), s.model.nu);
    EXPECT_GT(s.model.nv, 0);
    const int nworld = std::min(s.num_worlds, 2);
    long long dropped = 0;
    int failed = 0;
    const auto q = run_scene(s, nworld, 100, &dropped, &failed);
    for (const auto& qw : q) EXPECT_TRUE(all_finite(qw));
    EXPECT_EQ(dropped, 0) << "max_rigid_contact is too small for the initial state";
    EXPECT_EQ(failed, 0) << "worlds failed (non-finite or factorisation)";
  }
}

TEST(SceneJson, FreeCubeIsFaithfulToTheWarpYaml) {
  // Numbers copied from MuJoCo Warp SAP's scene free_cube.yaml (docs/scene-format.md).
  const sap::Scene s = sap::load_scene(std::string(SAP_SOURCE_DIR) + "/scenes/free_cube.json");
  EXPECT_EQ(s.name, "small_cube_spin_release");
  EXPECT_DOUBLE_EQ(s.dt, 0.005);
  EXPECT_EQ(s.max_rigid_contact, 256);
  EXPECT_EQ(s.solver.contact_preset_variant, sap::Preset::Drake);
  EXPECT_EQ(s.solver.line_search_variant, sap::LineSearchVariant::ArmijoDecay);
  EXPECT_DOUBLE_EQ(s.model.gravity[2], -9.81);
  const int cube = s.model.body_id("cube");
  ASSERT_GT(cube, 0);
  EXPECT_NEAR(s.model.body_mass[cube], 1500.0 * 0.04 * 0.04 * 0.04, 1e-12);
  // Solid cube: I = m (2a)^2 / 6 about each axis.
  EXPECT_NEAR(s.model.body_inertia[6 * cube], s.model.body_mass[cube] * 0.04 * 0.04 / 6.0, 1e-15);
  const int g = s.model.geom_id("cube_shape0"), ground = s.model.geom_id("ground");
  ASSERT_GE(g, 0);
  ASSERT_GE(ground, 0);
  EXPECT_DOUBLE_EQ(s.model.geom_friction[g], 0.5);
  EXPECT_DOUBLE_EQ(s.model.geom_friction[ground], 0.1);
  EXPECT_DOUBLE_EQ(s.model.geom_stiffness[g], 1e4);
  EXPECT_DOUBLE_EQ(s.model.geom_dissipation[g], 0.03);
  EXPECT_DOUBLE_EQ(s.model.geom_margin[g], 0.002);
  const std::vector<double> q0 = {0.35, 0.0, 0.12, 1.0, 0.0, 0.0, 0.0};
  const std::vector<double> v0 = {0.5, 0.2, 0.3, 2.0, 1.0, 6.0};
  for (int i = 0; i < 7; ++i) EXPECT_NEAR(s.qpos0[i], q0[i], 1e-15) << i;
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(s.qvel0[i], v0[i], 1e-15) << i;
}

TEST(SceneJson, MultiJointsIsFaithfulToTheWarpYaml) {
  const sap::Scene s = sap::load_scene(std::string(SAP_SOURCE_DIR) + "/scenes/multi_joints.json");
  const sap::Model& m = s.model;
  EXPECT_DOUBLE_EQ(s.dt, 0.01);
  EXPECT_EQ(s.max_rigid_contact, 32);
  // Two free bodies (6 dofs each), one hinge, one slide; the welded bodies have no dofs.
  EXPECT_EQ(m.nv, 14);
  EXPECT_NEAR(m.body_mass[m.body_id("b_rev")], 1000.0 * 0.2 * 0.2 * 1.5, 1e-9);
  EXPECT_NEAR(m.body_mass[m.body_id("rb1")], 10.0 * 1.0, 1e-12);
  const int jr = m.joint_id("revolute_a_b"), jp = m.joint_id("prismatic_a_b");
  ASSERT_GE(jr, 0);
  ASSERT_GE(jp, 0);
  EXPECT_NEAR(s.qpos0[m.jnt_qposadr[jr]], kPi / 2, 1e-15);
  EXPECT_EQ(m.jnt_limited[jp], 1);
  EXPECT_DOUBLE_EQ(m.jnt_range[2 * jp], -0.3);
  EXPECT_DOUBLE_EQ(m.jnt_range[2 * jp + 1], 0.3);
  // Warp places the hinge at a_rev + (0, 0, -0.1875) = (0, -3, 2); b_rev's center hangs 0.75 from
  // it and at q = pi/2 about +x points along +y.
  sap::DynamicsEvaluator ev(m);
  ev.compute(s.qpos0.data());
  EXPECT_LT((ev.body_pos(m.body_id("b_rev")) - Vector3d(0, -2.25, 2.0)).norm(), 1e-12);
  EXPECT_LT((ev.body_pos(m.body_id("b_pri")) - Vector3d(0, 0, 1.25)).norm(), 1e-12);
  EXPECT_LT((ev.body_pos(m.body_id("rb1")) - Vector3d(0, -2, 3.2)).norm(), 1e-12);
  // Ignored inputs are reported: the two tilted transforms and limit_ke / limit_kd.
  auto has = [&](const std::string& sub) {
    for (const auto& w : s.warnings)
      if (w.find(sub) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has("/bodies/1/transform: ignored"));
  EXPECT_TRUE(has("/bodies/3/transform: ignored"));
  EXPECT_TRUE(has("/builder/defaults/joint/limit_ke: accepted but ignored"));
  EXPECT_TRUE(has("/builder/defaults/joint/limit_kd: accepted but ignored"));
  EXPECT_FALSE(has("/bodies/0/transform")) << "a_rev's transform agrees with its weld";
}

TEST(SceneJson, PendulumHasTheStatedLengthAndMass) {
  const sap::Scene s = sap::load_scene(std::string(SAP_SOURCE_DIR) + "/scenes/pendulum.json");
  sap::DynamicsEvaluator ev(s.model);
  std::vector<double> q = s.qpos0;
  q[0] = 0;
  ev.compute(q.data());
  const int bob = s.model.body_id("bob");
  EXPECT_LT((ev.body_com(bob) - Vector3d(0, 0, 0.5)).norm(), 1e-12) << "pivot at 1.5 m, l = 1 m";
  // M = m l^2 + I_yy.
  EXPECT_NEAR(ev.mass_matrix()(0, 0), 1.0 * 1.0 + 1e-6, 1e-12);
  EXPECT_NEAR(s.qpos0[0], kPi / 6, 1e-15);
}

// ------------------------------------------------------------------------------------------
// Warp joint frames: X_wc(q) = X_wp X_pj J(q) inv(X_cj).

namespace {

struct Xf {
  Vector3d p;
  Quaterniond q;
};
Xf mul(const Xf& a, const Xf& b) { return {a.p + a.q * b.p, a.q * b.q}; }
Xf inv(const Xf& a) { return {-(a.q.conjugate() * a.p), a.q.conjugate()}; }
Quaterniond rpy(double r, double p, double y) {
  return Quaterniond(AngleAxisd(y, Vector3d::UnitZ()) * AngleAxisd(p, Vector3d::UnitY()) *
                     AngleAxisd(r, Vector3d::UnitX()));
}

// Parent A on a free joint at X_A; child B on `joint` with the frames below.
const Xf kXA{Vector3d(0.3, -0.2, 1.1), rpy(0.2, -0.4, 0.9)};
const Xf kXpj{Vector3d(0.1, 0.25, -0.3), Quaterniond(AngleAxisd(0.7, Vector3d(0, 0.6, 0.8)))};
const Xf kXcj{Vector3d(-0.05, 0.2, 0.4), rpy(-0.3, 0.5, 1.2)};

std::string two_body_scene(const std::string& joint_type, const std::string& extra_joint, const std::string& init) {
  return R"({"schema_version": 1, "name": "xf", "builder": {"gravity": 0},
    "bodies": [
      {"id": "A", "transform": {"p": [0.3, -0.2, 1.1], "q": {"rpy": [0.2, -0.4, 0.9]}},
       "shapes": [{"type": "sphere", "radius": 0.1}]},
      {"id": "B", "shapes": [{"type": "box", "hx": 0.1, "hy": 0.2, "hz": 0.3}]}],
    "joints": [
      {"id": "jb", "type": ")" +
         joint_type + R"(", "parent": "A", "child": "B",
       "parent_xform": {"p": [0.1, 0.25, -0.3], "q": {"axis_angle": {"axis": [0, 0.6, 0.8], "angle": 0.7}}},
       "child_xform": {"p": [-0.05, 0.2, 0.4], "q": {"rpy": [-0.3, 0.5, 1.2]}})" +
         extra_joint + R"(},
      {"id": "ja", "type": "free", "parent": "world", "child": "A"}],
    "initial_joint_q": [)" +
         init + "]}";
}

void expect_pose(const sap::DynamicsEvaluator& ev, int body, const Xf& want) {
  EXPECT_LT((ev.body_pos(body) - want.p).norm(), 1e-12);
  EXPECT_LT(ev.body_quat(body).angularDistance(want.q), 1e-12);
}

}  // namespace

TEST(SceneJson, RevoluteJointFollowsTheWarpFormula) {
  const Vector3d axis(0.48, 0.6, 0.64);  // unit
  for (double theta : {0.0, 0.7, -2.1}) {
    SCOPED_TRACE(theta);
    const sap::Scene s = sap::parse_scene(two_body_scene("revolute", R"(, "axis": [0.48, 0.6, 0.64])",
                                                         R"({"joint": "jb", "value": )" + std::to_string(theta) + "}"),
                                          "xf.json");
    const int b = s.model.body_id("B");
    sap::DynamicsEvaluator ev(s.model);
    ev.compute(s.qpos0.data());
    const Xf J{Vector3d::Zero(), Quaterniond(AngleAxisd(theta, axis))};
    expect_pose(ev, b, mul(mul(mul(kXA, kXpj), J), inv(kXcj)));
    // The anchor (child joint origin) stays at the parent joint origin and the world axis is fixed.
    const Vector3d anchor = ev.body_pos(b) + ev.body_rot(b) * kXcj.p;
    EXPECT_LT((anchor - mul(kXA, kXpj).p).norm(), 1e-12);
    const Vector3d axis_world = ev.body_rot(b) * (kXcj.q * axis);
    EXPECT_LT((axis_world - (kXA.q * kXpj.q) * axis).norm(), 1e-12);
  }
}

TEST(SceneJson, PrismaticJointFollowsTheWarpFormula) {
  const Vector3d axis(0, 0.8, -0.6);
  for (double d : {0.0, 0.35, -0.2}) {
    SCOPED_TRACE(d);
    const sap::Scene s = sap::parse_scene(two_body_scene("prismatic", R"(, "axis": [0, 0.8, -0.6])",
                                                         R"({"joint": "jb", "value": )" + std::to_string(d) + "}"),
                                          "xf.json");
    sap::DynamicsEvaluator ev(s.model);
    ev.compute(s.qpos0.data());
    const Xf J{axis * d, Quaterniond::Identity()};
    expect_pose(ev, s.model.body_id("B"), mul(mul(mul(kXA, kXpj), J), inv(kXcj)));
  }
}

TEST(SceneJson, BallJointFollowsTheWarpFormula) {
  // The initial rotation is given in the joint frame, as in Warp.
  const sap::Scene s = sap::parse_scene(
      two_body_scene("ball", "", R"({"joint": "jb", "value": {"axis_angle": {"axis": [0.6, 0, 0.8], "angle": 1.3}}})"),
      "xf.json");
  sap::DynamicsEvaluator ev(s.model);
  ev.compute(s.qpos0.data());
  const Xf J{Vector3d::Zero(), Quaterniond(AngleAxisd(1.3, Vector3d(0.6, 0, 0.8)))};
  expect_pose(ev, s.model.body_id("B"), mul(mul(mul(kXA, kXpj), J), inv(kXcj)));
}

TEST(SceneJson, FixedJointWeldsAtTheWarpPose) {
  const sap::Scene s = sap::parse_scene(two_body_scene("fixed", "", ""), "xf.json");
  EXPECT_EQ(s.model.nv, 6) << "only A's free joint moves";
  sap::DynamicsEvaluator ev(s.model);
  ev.compute(s.qpos0.data());
  expect_pose(ev, s.model.body_id("B"), mul(mul(kXA, kXpj), inv(kXcj)));
  // B's mass is welded to A: the free joint carries both.
  EXPECT_NEAR(ev.mass_matrix()(0, 0), 1000.0 * (4.0 / 3.0 * kPi * 1e-3 + 8 * 0.1 * 0.2 * 0.3), 1e-9);
}

TEST(SceneJson, ChildrenMayPrecedeParentsAndJointlessBodiesAreStatic) {
  const sap::Scene s = sap::parse_scene(scene_with(R"(
    "bodies": [
      {"id": "tip", "shapes": [{"type": "sphere", "radius": 0.05}]},
      {"id": "mid", "shapes": [{"type": "sphere", "radius": 0.05}]},
      {"id": "post", "transform": {"p": [1, 2, 0.5], "q": {"rpy": [0, 0, 0.3]}}, "shapes": [{"type": "box", "hx": 0.1, "hy": 0.1, "hz": 0.5}]}],
    "joints": [
      {"id": "j_tip", "type": "revolute", "parent": "mid", "child": "tip", "axis": [1, 0, 0], "parent_xform": {"p": [0, 0, -0.3]}},
      {"id": "j_mid", "type": "revolute", "parent": "world", "child": "mid", "axis": [1, 0, 0], "parent_xform": {"p": [0, 0, 2]}}])"),
                                        "order.json");
  const sap::Model& m = s.model;
  const int tip = m.body_id("tip"), mid = m.body_id("mid"), post = m.body_id("post");
  EXPECT_LT(mid, tip);
  EXPECT_EQ(m.body_parentid[tip], mid);
  EXPECT_EQ(m.body_parentid[post], 0);
  EXPECT_EQ(m.body_dofnum[post], 0);
  EXPECT_EQ(m.nv, 2);
  sap::DynamicsEvaluator ev(m);
  const std::vector<double> q = {0.4, -0.2};
  ev.compute(q.data());
  EXPECT_LT((ev.body_pos(post) - Vector3d(1, 2, 0.5)).norm(), 1e-15);
  EXPECT_LT(ev.body_quat(post).angularDistance(Quaterniond(AngleAxisd(0.3, Vector3d::UnitZ()))), 1e-15);
}

TEST(SceneJson, RotationFormsAgree) {
  // (w, x, y, z), (x, y, z, w), axis-angle and rpy spellings of the same rotation.
  const Quaterniond want(AngleAxisd(0.8, Vector3d(0, 0, 1)));
  const std::string w = std::to_string(want.w()), z = std::to_string(want.z());
  for (const std::string& rot : {"[" + w + ", 0, 0, " + z + "]", R"({"wxyz": [)" + w + ", 0, 0, " + z + "]}",
                                 R"({"xyzw": [0, 0, )" + z + ", " + w + "]}",
                                 std::string(R"({"axis_angle": {"axis": [0, 0, 1], "angle": 0.8}})"),
                                 std::string(R"({"rpy": [0, 0, "0.8"]})")}) {
    SCOPED_TRACE(rot);
    const sap::Scene s = sap::parse_scene(scene_with(R"("bodies": [{"id": "a", "transform": {"q": )" + rot +
                                                     R"(}, "shapes": [{"type": "sphere", "radius": 0.1}]}],
        "joints": [{"id": "f", "type": "free", "parent": "world", "child": "a"}])"),
                                          "rot.json");
    const Quaterniond got(s.qpos0[3], s.qpos0[4], s.qpos0[5], s.qpos0[6]);
    EXPECT_LT(got.angularDistance(want), 2e-6);  // to_string keeps 6 decimals
  }
}

TEST(SceneJson, NearlyUnitAxesAreNormalised) {
  const sap::Scene s = sap::parse_scene(scene_with(
                                            R"("bodies": [{"id": "a", "shapes": [{"type": "sphere", "radius": 0.1}]}],
      "joints": [{"id": "h", "type": "revolute", "parent": "world", "child": "a", "axis": [1.0000004, 0, 0]}])"),
                                        "axis.json");
  EXPECT_DOUBLE_EQ(s.model.jnt_axis[0], 1.0);
}

// ------------------------------------------------------------------------------------------
struct BadCase {
  const char* label;
  std::string json;
  std::string expected;  // substring of the error message
};

TEST(SceneJson, MalformedScenesGiveLocatedErrors) {
  const std::string box = R"({"type": "box", "hx": 0.1, "hy": 0.1, "hz": 0.1})";
  auto body = [&](const std::string& id, const std::string& shapes, const std::string& more = "") {
    return R"({"id": ")" + id + R"(", "shapes": [)" + shapes + "]" + more + "}";
  };
  auto free = [](const std::string& child) {
    return R"({"id": "f_)" + child + R"(", "type": "free", "parent": "world", "child": ")" + child + R"("})";
  };
  const std::vector<BadCase> cases = {
      {"syntax", "{\"schema_version\": 1,\n  \"name\": }", "bad.json: line 2, column 11: JSON syntax error"},
      // Found by fuzzing (issue 14): nlohmann throws out_of_range, not parse_error, for this.
      {"number overflow", "{\"schema_version\": 1,\n  \"x\": 1e400}",
       "bad.json: line 2, column 8: JSON syntax error: number out of range of a double: '1e400'"},
      {"root", "[1, 2]", "bad.json: (root): expected an object"},
      {"no version", R"({"name": "x"})", "bad.json: /schema_version: missing required key"},
      {"version 2", R"({"schema_version": 2, "name": "x"})", "bad.json: /schema_version: expected schema version 1"},
      {"unknown root key", scene_with(R"("bodys": [])"), "bad.json: /bodys: unknown key for a scene, expected one of"},
      {"duplicate key", R"({"schema_version": 1, "name": "a", "name": "b"})", "bad.json: /name: duplicate key"},
      {"nested duplicate", scene_with(R"("simulation": {"dt": 0.1, "solver": {"rho": 0.5, "rho": 0.6}})"),
       "bad.json: /simulation/solver/rho: duplicate key"},
      {"name type", R"({"schema_version": 1, "name": 5})", "bad.json: /name: expected a non-empty string, got 5"},
      {"dt", scene_with(R"("simulation": {"dt": -0.01})"),
       "bad.json: /simulation/dt: expected a positive number, got -0.01"},
      {"num_worlds", scene_with(R"("simulation": {"num_worlds": -3})"),
       "bad.json: /simulation/num_worlds: expected an integer in [1, 16777216], got -3"},
      {"num_worlds float", scene_with(R"("simulation": {"num_worlds": 2.5})"),
       "/simulation/num_worlds: expected an integer"},
      {"max contacts", scene_with(R"("simulation": {"max_rigid_contact": -1})"),
       "/simulation/max_rigid_contact: expected an integer"},
      {"solver name", scene_with(R"("simulation": {"solver": {"rhoo": 0.5}})"),
       "bad.json: /simulation/solver/rhoo: unknown solver option 'rhoo'"},
      {"solver value", scene_with(R"("simulation": {"solver": {"line_search_variant": "fast"}})"),
       "bad.json: /simulation/solver/line_search_variant: solver option 'line_search_variant': invalid value 'fast'"},
      {"solver range", scene_with(R"("simulation": {"solver": {"rho": 1.5}})"),
       "bad.json: /simulation/solver: solver option 'rho': invalid value"},
      {"solver type", scene_with(R"("simulation": {"solver": {"rho": [1]}})"),
       "/simulation/solver/rho: expected a string, number or boolean"},
      {"gravity", scene_with(R"("builder": {"gravity": [0, 0]})"),
       "bad.json: /builder/gravity: expected an array of 3 numbers"},
      {"rigid_gap", scene_with(R"("builder": {"rigid_gap": -1})"), "/builder/rigid_gap: expected a number >= 0"},
      {"defaults key", scene_with(R"("builder": {"defaults": {"shape": {"kd": 1}}})"),
       "/builder/defaults/shape/kd: unknown key"},
      {"negative hx",
       scene_with(R"("bodies": [)" + body("a", box) + "," + body("b", box) + "," +
                  body("c", R"({"type": "box", "hx": -1, "hy": 0.1, "hz": 0.1})") + "]"),
       "bad.json: /bodies/2/shapes/0/hx: expected a positive number, got -1"},
      {"missing radius", scene_with(R"("bodies": [)" + body("a", R"({"type": "sphere"})") + "]"),
       "bad.json: /bodies/0/shapes/0/radius: missing required key"},
      {"radius on a box",
       scene_with(R"("bodies": [)" + body("a", R"({"type": "box", "hx": 1, "hy": 1, "hz": 1, "radius": 1})") + "]"),
       "bad.json: /bodies/0/shapes/0/radius: unknown key for a box shape"},
      {"shape type", scene_with(R"("bodies": [)" + body("a", R"({"type": "cone"})") + "]"),
       "bad.json: /bodies/0/shapes/0/type: expected sphere, capsule, box, plane, cylinder, ellipsoid or mesh, got \"cone\""},
      {"density",
       scene_with(R"("bodies": [)" + body("a", R"({"type": "sphere", "radius": 1, "cfg": {"density": 0}})") + "]"),
       "bad.json: /bodies/0/shapes/0/cfg/density: expected a positive number, got 0"},
      {"density and mass",
       scene_with(R"("bodies": [)" + body("a", R"({"type": "sphere", "radius": 1, "cfg": {"density": 1, "mass": 2}})") +
                  "]"),
       "/bodies/0/shapes/0/cfg/mass: give either density or mass"},
      {"mass",
       scene_with(R"("bodies": [)" + body("a", R"({"type": "sphere", "radius": 1, "cfg": {"mass": -2}})") + "]"),
       "/bodies/0/shapes/0/cfg/mass: expected a positive number, got -2"},
      {"contype",
       scene_with(R"("bodies": [)" + body("a", R"({"type": "sphere", "radius": 1, "cfg": {"contype": 1.5}})") + "]"),
       "/bodies/0/shapes/0/cfg/contype: expected an integer"},
      {"inertia mass",
       scene_with(R"("bodies": [)" + body("a", box, R"(, "inertia": {"mass": -2, "diag": [1, 1, 1]})") + "]"),
       "bad.json: /bodies/0/inertia/mass: expected a positive number, got -2"},
      {"inertia triangle",
       scene_with(R"("bodies": [)" + body("a", box, R"(, "inertia": {"mass": 1, "diag": [1, 1, 3]})") + "]"),
       "bad.json: /bodies/0/inertia/diag: expected a positive-definite inertia"},
      {"inertia both",
       scene_with(R"("bodies": [)" +
                  body("a", box, R"(, "inertia": {"mass": 1, "diag": [1, 1, 1], "inertia": [1, 1, 1, 0, 0, 0]})") +
                  "]"),
       "/bodies/0/inertia/diag: give either inertia"},
      {"body id world", scene_with(R"("bodies": [)" + body("world", box) + "]"), "/bodies/0/id: \"world\" is reserved"},
      {"duplicate body", scene_with(R"("bodies": [)" + body("a", box) + "," + body("a", box) + "]"),
       "bad.json: /bodies/1/id: expected a unique body id, \"a\" is already used by /bodies/0"},
      {"unknown parent",
       scene_with(
           R"("bodies": [)" + body("a", box) +
           R"(], "joints": [{"id": "j", "type": "revolute", "parent": "ghost", "child": "a", "axis": [1, 0, 0]}])"),
       "bad.json: /joints/0/parent: expected \"world\" or a body id (\"a\"), got \"ghost\""},
      {"unknown child",
       scene_with(
           R"("bodies": [)" + body("a", box) +
           R"(], "joints": [{"id": "j", "type": "revolute", "parent": "world", "child": "b", "axis": [1, 0, 0]}])"),
       "bad.json: /joints/0/child: expected the id of a body of this file (\"a\"), got \"b\""},
      {"two parents",
       scene_with(R"("bodies": [)" + body("a", box) + "," + body("b", box) + R"(], "joints": [)" + free("a") +
                  R"(, {"id": "j", "type": "fixed", "parent": "b", "child": "a"}])"),
       "bad.json: /joints/1/child: body \"a\" already has a parent joint (/joints/0)"},
      {"cycle",
       scene_with(R"("bodies": [)" + body("a", box) + "," + body("b", box) + "," + body("c", box) + R"(], "joints": [
          {"id": "j1", "type": "revolute", "parent": "b", "child": "a", "axis": [1, 0, 0]},
          {"id": "j2", "type": "revolute", "parent": "c", "child": "b", "axis": [1, 0, 0]},
          {"id": "j3", "type": "revolute", "parent": "a", "child": "c", "axis": [1, 0, 0]}])"),
       "bad.json: /joints/0: the joints form a cycle (child -> parent): a -> b -> c -> a"},
      {"self joint",
       scene_with(R"("bodies": [)" + body("a", box) +
                  R"(], "joints": [{"id": "j", "type": "fixed", "parent": "a", "child": "a"}])"),
       "/joints/0/parent: a joint cannot connect body \"a\" to itself"},
      {"world child",
       scene_with(R"("bodies": [)" + body("a", box) +
                  R"(], "joints": [{"id": "j", "type": "fixed", "parent": "a", "child": "world"}])"),
       "/joints/0/child: expected the id of a body of this file, the world cannot be a child"},
      {"free not on world",
       scene_with(R"("bodies": [)" + body("a", box) + "," + body("b", box) + R"(], "joints": [)" + free("a") +
                  R"(, {"id": "j", "type": "free", "parent": "a", "child": "b"}])"),
       "bad.json: /joints/1/parent: a free joint must have parent \"world\""},
      {"joint type",
       scene_with(R"("bodies": [)" + body("a", box) +
                  R"(], "joints": [{"id": "j", "type": "hinge", "parent": "world", "child": "a"}])"),
       "/joints/0/type: expected fixed, revolute, prismatic, ball or free, got \"hinge\""},
      {"zero axis",
       scene_with(
           R"("bodies": [)" + body("a", box) +
           R"(], "joints": [{"id": "j", "type": "revolute", "parent": "world", "child": "a", "axis": [0, 0, 0]}])"),
       "bad.json: /joints/0/axis: expected a unit axis, got the zero vector"},
      {"non-unit axis",
       scene_with(
           R"("bodies": [)" + body("a", box) +
           R"(], "joints": [{"id": "j", "type": "revolute", "parent": "world", "child": "a", "axis": [1, 1, 0]}])"),
       "bad.json: /joints/0/axis: expected a unit axis (|a| = 1 within 1e-6), got |a| = 1.41421356"},
      {"missing axis",
       scene_with(R"("bodies": [)" + body("a", box) +
                  R"(], "joints": [{"id": "j", "type": "prismatic", "parent": "world", "child": "a"}])"),
       "/joints/0/axis: missing required key"},
      {"axis on ball",
       scene_with(R"("bodies": [)" + body("a", box) +
                  R"(], "joints": [{"id": "j", "type": "ball", "parent": "world", "child": "a", "axis": [1, 0, 0]}])"),
       "bad.json: /joints/0/axis: unknown key for a ball joint"},
      {"xform on free",
       scene_with(
           R"("bodies": [)" + body("a", box) +
           R"(], "joints": [{"id": "j", "type": "free", "parent": "world", "child": "a", "parent_xform": "identity"}])"),
       "/joints/0/parent_xform: unknown key for a free joint"},
      {"one limit",
       scene_with(
           R"("bodies": [)" + body("a", box) +
           R"(], "joints": [{"id": "j", "type": "revolute", "parent": "world", "child": "a", "axis": [1, 0, 0], "limit_lower": -1}])"),
       "bad.json: /joints/0/limit_upper: missing required key"},
      {"inverted limits",
       scene_with(
           R"("bodies": [)" + body("a", box) +
           R"(], "joints": [{"id": "j", "type": "revolute", "parent": "world", "child": "a", "axis": [1, 0, 0], "limit_lower": 1, "limit_upper": -1}])"),
       "/joints/0/limit_upper: expected a number greater than limit_lower (1), got -1"},
      {"bad effort",
       scene_with(
           R"("bodies": [)" + body("a", box) +
           R"(], "joints": [{"id": "j", "type": "revolute", "parent": "world", "child": "a", "axis": [1, 0, 0], "effort_limit": 0}])"),
       "/joints/0/effort_limit: expected a positive number, got 0"},
      {"duplicate joint",
       scene_with(R"("bodies": [)" + body("a", box) + "," + body("b", box) + R"(], "joints": [)" + free("a") +
                  R"(, {"id": "f_a", "type": "free", "parent": "world", "child": "b"}])"),
       "/joints/1/id: expected a unique joint id"},
      {"bad quaternion", scene_with(R"("bodies": [)" + body("a", box, R"(, "transform": {"q": [1, 1, 0, 0]})") + "]"),
       "bad.json: /bodies/0/transform/q: expected a unit quaternion (|q| = 1 within 1e-6), got |q| = 1.41421356"},
      {"bad rotation", scene_with(R"("bodies": [)" + body("a", box, R"(, "transform": {"q": "ident"})") + "]"),
       "/bodies/0/transform/q: expected a rotation"},
      {"bad transform key", scene_with(R"("bodies": [)" + body("a", box, R"(, "transform": {"pos": [0, 0, 0]})") + "]"),
       "/bodies/0/transform/pos: unknown key for a transform"},
      {"massless moving body", scene_with(R"("bodies": [{"id": "a"}], "joints": [)" + free("a") + "]"),
       "bad.json: /bodies/0: body 'a': a moving body needs positive mass"},
      {"plane on moving body",
       scene_with(R"("bodies": [)" + body("a", box + R"(, {"type": "plane"})") + R"(], "joints": [)" + free("a") + "]"),
       "bad.json: /bodies/0/shapes/1/type: a plane must be on a static body"},
      {"initial q unknown joint",
       scene_with(std::string(kOneBox) + R"(, "initial_joint_q": [{"joint": "nope", "value": 1}])"),
       "bad.json: /initial_joint_q/0/joint: expected the id of a movable joint (\"fa\"), got \"nope\""},
      {"initial q expression",
       scene_with(R"("bodies": [)" + body("a", box) +
                  R"(], "joints": [{"id": "h", "type": "revolute", "parent": "world", "child": "a", "axis": [1, 0, 0]}],
           "initial_joint_q": [{"joint": "h", "value": "pi ** 2"}])"),
       "bad.json: /initial_joint_q/0/value: expected a number or an arithmetic expression of numbers and pi"},
      {"initial q fixed",
       scene_with(
           R"("bodies": [)" + body("a", box) + "," + body("b", box) + R"(], "joints": [)" + free("a") +
           R"(, {"id": "w", "type": "fixed", "parent": "a", "child": "b"}], "initial_joint_q": [{"joint": "w", "value": 0}])"),
       "/initial_joint_q/0/joint: joint \"w\" is fixed and has no coordinates"},
      {"initial q free size",
       scene_with(std::string(kOneBox) + R"(, "initial_joint_q": [{"joint": "fa", "value": [1, 2, 3]}])"),
       "/initial_joint_q/0/value: expected an array of 7 numbers"},
      {"initial qd free size",
       scene_with(std::string(kOneBox) + R"(, "initial_joint_qd": [{"joint": "fa", "value": [1, 2, 3]}])"),
       "/initial_joint_qd/0/value: expected an array of 6 numbers"},
      {"initial q twice",
       scene_with(
           std::string(kOneBox) +
           R"(, "initial_joint_q": [{"joint": "fa", "value": "identity"}, {"joint": "fa", "value": "identity"}])"),
       "/initial_joint_q/1/joint: joint \"fa\" is listed twice"},
      {"controls unknown actuator",
       scene_with(std::string(kOneBox) +
                  R"(, "controls": {"schedules": [{"actuator": "m", "constant": {"value": 1}}]})"),
       "bad.json: /controls/schedules/0/actuator: expected an actuator name (none), got \"m\""},
      {"controls default", scene_with(std::string(kOneBox) + R"(, "controls": {"default": "keep"})"),
       "/controls/default: expected \"zero\" or \"hold\""},
      {"perturbation std", scene_with(std::string(kOneBox) + R"(, "perturbation": {"qpos_std": -0.1})"),
       "bad.json: /perturbation/qpos_std: expected a number >= 0, got -0.1"},
      {"perturbation seed", scene_with(std::string(kOneBox) + R"(, "perturbation": {"seed": -4})"),
       "/perturbation/seed: expected an integer"},
      {"ground key", scene_with(R"("ground": {"enabled": true, "cfg": {}})"),
       "bad.json: /ground/cfg: unknown key for ground"},
      {"ground enabled", scene_with(R"("ground": {"enabled": "yes"})"),
       "/ground/enabled: expected true or false, got \"yes\""},
      {"asset type", scene_with(R"("assets": [{"type": "sdf", "path": "x.sdf"}])"),
       "bad.json: /assets/0/type: expected \"mjcf\" or \"urdf\", got \"sdf\""},
      {"asset file", scene_with(R"("assets": [{"type": "mjcf", "path": "no_such_file.xml"}])"),
       "bad.json: /assets/0/path: file not found"},
      {"asset floating mjcf", scene_with(R"("assets": [{"type": "mjcf", "path": "pendulum.json", "floating": true}])"),
       "/assets/0/floating: only URDF assets take"},
  };
  const std::string scenes_dir = std::string(SAP_SOURCE_DIR) + "/scenes";
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.label);
    const std::string msg = error_of(c.json, scenes_dir);
    EXPECT_NE(msg.find(c.expected), std::string::npos) << "message: " << msg << "\nexpected: " << c.expected;
  }
}

TEST(SceneJson, ControlScheduleErrors) {
  const std::string arm = R"("bodies": [{"id": "a", "shapes": [{"type": "sphere", "radius": 0.1}]}],
      "joints": [{"id": "h", "type": "revolute", "parent": "world", "child": "a", "axis": [0, 1, 0], "target_ke": 10}])";
  EXPECT_NE(
      error_of(
          scene_with(
              arm +
              R"(, "controls": {"schedules": [{"actuator": "h", "keyframes": [{"time": 1, "value": 0}, {"time": 1, "value": 1}]}]})"))
          .find(
              "bad.json: /controls/schedules/0/keyframes/1/time: expected a time greater than the previous keyframe's (1), got 1"),
      std::string::npos);
  EXPECT_NE(
      error_of(
          scene_with(
              arm +
              R"(, "controls": {"schedules": [{"actuator": "h", "constant": {"value": 1}, "sinusoid": {"amplitude": 1, "frequency_hz": 1}}]})"))
          .find("/controls/schedules/0: expected exactly one of \"constant\", \"sinusoid\" or \"keyframes\", got 2"),
      std::string::npos);
  EXPECT_NE(error_of(
                scene_with(arm + R"(, "controls": {"schedules": [{"actuator": "h", "sinusoid": {"amplitude": 1}}]})"))
                .find("/controls/schedules/0/sinusoid/frequency_hz: missing required key"),
            std::string::npos);
  EXPECT_NE(error_of(scene_with(arm + R"(, "controls": {"schedules": [{"actuator": "h", "keyframes": []}]})"))
                .find("/controls/schedules/0/keyframes: expected a non-empty array"),
            std::string::npos);
}

TEST(SceneJson, LoadSceneReportsUnreadableFiles) {
  try {
    sap::load_scene("/nonexistent/dir/scene.json");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/scene.json: cannot open"), std::string::npos);
  }
}

// Issue 14: deep nesting is an error naming the file and the JSON pointer where the bound was
// exceeded, never a stack overflow (100,000 nested arrays crashed sap_bench).
TEST(SceneJson, DeepNestingIsALocatedError) {
  const int n = 100000;
  for (const std::string& prefix : {std::string(), std::string(R"({"schema_version": 1, "bodies": )")}) {
    const std::string text = prefix + std::string(n, '[') + std::string(n, ']') + (prefix.empty() ? "" : "}");
    try {
      sap::parse_scene(text, "deep.json");
      FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
      const std::string msg = e.what();
      const std::string where = prefix.empty() ? "deep.json: /0/0/0/0" : "deep.json: /bodies/0/0/0";
      EXPECT_EQ(msg.rfind(where, 0), 0u) << msg;
      EXPECT_NE(msg.find("JSON nesting deeper than"), std::string::npos) << msg;
      EXPECT_LT(msg.size(), 600u) << "the pointer is shortened in the message";
    }
  }
  // The bound is far above what scenes need: 60 levels parse and fail on the schema instead.
  try {
    sap::parse_scene(std::string(60, '[') + std::string(60, ']'), "d.json");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("d.json: (root): expected an object"), std::string::npos) << e.what();
  }
  // The expression evaluator recurses on '(' and unary signs: bounded too.
  for (const std::string& e : {std::string(n, '(') + "1" + std::string(n, ')'), std::string(n, '-') + "1"}) {
    try {
      sap::evaluate_scene_expression(e);
      FAIL() << "expected an error";
    } catch (const std::invalid_argument& ex) {
      EXPECT_NE(std::string(ex.what()).find("nested deeper than"), std::string::npos) << ex.what();
      EXPECT_LT(std::string(ex.what()).size(), 400u);
    }
  }
  EXPECT_EQ(sap::evaluate_scene_expression("((((-(-1)))))"), 1.0);
}

TEST(SceneJson, ExpressionsInNumberFields) {
  EXPECT_DOUBLE_EQ(sap::evaluate_scene_expression("pi"), kPi);
  EXPECT_DOUBLE_EQ(sap::evaluate_scene_expression("pi * 0.5"), kPi * 0.5);
  EXPECT_DOUBLE_EQ(sap::evaluate_scene_expression("0.25 * pi"), 0.25 * kPi);
  EXPECT_DOUBLE_EQ(sap::evaluate_scene_expression("-pi / 4"), -kPi / 4);
  EXPECT_DOUBLE_EQ(sap::evaluate_scene_expression(" 2 * (1 + pi) - 3 "), 2 * (1 + kPi) - 3);
  EXPECT_DOUBLE_EQ(sap::evaluate_scene_expression("1e-3"), 1e-3);
  for (const char* bad : {"", "pie", "pi pi", "2 *", "(1", "1 / 0", "x", "inf", "pi ** 2"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(sap::evaluate_scene_expression(bad), std::invalid_argument);
  }
}

// ------------------------------------------------------------------------------------------
TEST(SceneJson, PerturbationIsDeterministicGaussianAndKeepsUnitQuaternions) {
  const std::string base = R"("bodies": [
        {"id": "a", "transform": {"p": [0, 0, 1]}, "shapes": [{"type": "sphere", "radius": 0.1}]},
        {"id": "b", "shapes": [{"type": "sphere", "radius": 0.1}]}],
      "joints": [{"id": "fa", "type": "free", "parent": "world", "child": "a"},
                 {"id": "hb", "type": "revolute", "parent": "a", "child": "b", "axis": [1, 0, 0], "parent_xform": {"p": [0, 0, -0.3]}}],
      "initial_joint_q": [{"joint": "hb", "value": 0.5}])";
  const sap::Scene s = sap::parse_scene(
      scene_with(base + R"(, "perturbation": {"qpos_std": 0.01, "qvel_std": 0.2, "seed": 42})"), "p.json");
  const sap::Scene s2 = sap::parse_scene(
      scene_with(base + R"(, "perturbation": {"qpos_std": 0.01, "qvel_std": 0.2, "seed": 43})"), "p.json");
  const sap::Scene s0 = sap::parse_scene(scene_with(base), "p.json");
  std::vector<double> q1, v1, q2, v2;
  sap::scene_initial_state(s, 3, q1, v1);
  sap::scene_initial_state(s, 3, q2, v2);
  EXPECT_EQ(q1, q2);
  EXPECT_EQ(v1, v2);
  sap::scene_initial_state(s, 4, q2, v2);
  EXPECT_NE(q1, q2);
  sap::scene_initial_state(s2, 3, q2, v2);
  EXPECT_NE(q1, q2) << "another seed gives another state";
  sap::scene_initial_state(s0, 3, q2, v2);
  EXPECT_EQ(q2, s0.qpos0) << "no perturbation: the nominal state";
  EXPECT_EQ(v2, s0.qvel0);

  // Over many worlds the noise has zero mean and the requested standard deviation.
  const int n = 4000;
  double sum = 0, sum2 = 0, vsum2 = 0;
  for (int w = 0; w < n; ++w) {
    sap::scene_initial_state(s, w, q1, v1);
    const double qn = std::sqrt(q1[3] * q1[3] + q1[4] * q1[4] + q1[5] * q1[5] + q1[6] * q1[6]);
    ASSERT_NEAR(qn, 1.0, 1e-14);
    const double e = q1[7] - 0.5;  // hinge coordinate
    sum += e;
    sum2 += e * e;
    vsum2 += v1[6] * v1[6];
  }
  const double mean = sum / n, sd = std::sqrt(sum2 / n - mean * mean), vsd = std::sqrt(vsum2 / n);
  // Standard error of the mean 0.01/sqrt(4000) = 1.6e-4; of the standard deviation ~1.1%.
  EXPECT_LT(std::abs(mean), 6e-4);
  EXPECT_NEAR(sd, 0.01, 0.0006);
  EXPECT_NEAR(vsd, 0.2, 0.012);
}

TEST(SceneJson, ControlSchedulesFollowTheirLaws) {
  const sap::Scene s = sap::parse_scene(scene_with(R"(
      "bodies": [{"id": "a", "shapes": [{"type": "sphere", "radius": 0.1}]},
                 {"id": "b", "shapes": [{"type": "sphere", "radius": 0.1}]},
                 {"id": "c", "shapes": [{"type": "sphere", "radius": 0.1}]},
                 {"id": "d", "shapes": [{"type": "sphere", "radius": 0.1}]}],
      "joints": [{"id": "ja", "type": "revolute", "parent": "world", "child": "a", "axis": [0, 1, 0], "target_ke": 100, "target_kd": 5, "effort_limit": 7},
                 {"id": "jb", "type": "prismatic", "parent": "a", "child": "b", "axis": [0, 0, 1], "target_kd": 3},
                 {"id": "jc", "type": "revolute", "parent": "b", "child": "c", "axis": [1, 0, 0], "target_ke": 50},
                 {"id": "jd", "type": "revolute", "parent": "c", "child": "d", "axis": [1, 0, 0], "target_ke": 20}],
      "initial_joint_q": [{"joint": "jd", "value": 0.4}],
      "controls": {"default": "hold", "schedules": [
        {"actuator": "ja", "constant": {"value": 0.3}},
        {"actuator": "jb", "sinusoid": {"amplitude": 0.2, "frequency_hz": 1.5, "phase": 0.3, "offset": 0.1, "phase_per_world": 0.25}},
        {"actuator": "jc", "keyframes": [{"time": 0.5, "value": 1.0}, {"time": 1.5, "value": 3.0}, {"time": 2.0, "value": 2.0}]}]})"),
                                        "c.json");
  const sap::Model& m = s.model;
  ASSERT_EQ(m.nu, 4);
  // Actuators in joint order, PD gains and effort limits as written.
  EXPECT_EQ(m.actuator_names, (std::vector<std::string>{"ja", "jb", "jc", "jd"}));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(m.actuator_type[i], sap::kActPD);
  EXPECT_DOUBLE_EQ(m.actuator_kp[0], 100);
  EXPECT_DOUBLE_EQ(m.actuator_kd[0], 5);
  EXPECT_EQ(m.actuator_forcelimited[0], 1);
  EXPECT_DOUBLE_EQ(m.actuator_forcerange[0], -7);
  EXPECT_DOUBLE_EQ(m.actuator_forcerange[1], 7);
  EXPECT_EQ(m.actuator_forcelimited[1], 0);
  EXPECT_DOUBLE_EQ(m.actuator_kd[1], 3);

  std::vector<double> u, uv;
  for (int world : {0, 3}) {
    for (double t : {0.0, 0.2, 0.5, 0.9, 1.5, 1.75, 2.0, 3.0}) {
      SCOPED_TRACE(t);
      sap::scene_control(s, t, world, u, uv);
      ASSERT_EQ(u.size(), 4u);
      EXPECT_DOUBLE_EQ(u[0], 0.3);
      EXPECT_DOUBLE_EQ(uv[0], 0.0);
      const double arg = 2 * kPi * 1.5 * t + 0.3 + 0.25 * world;
      EXPECT_NEAR(u[1], 0.1 + 0.2 * std::sin(arg), 1e-15);
      EXPECT_NEAR(uv[1], 0.2 * 2 * kPi * 1.5 * std::cos(arg), 1e-13);
      // Keyframes: hold 1 before 0.5, 1 -> 3 over [0.5, 1.5], 3 -> 2 over [1.5, 2], hold 2 after.
      const double want = t < 0.5 ? 1.0 : t < 1.5 ? 1.0 + 2.0 * (t - 0.5) : t < 2.0 ? 3.0 - 2.0 * (t - 1.5) : 2.0;
      const double slope = t < 0.5 ? 0.0 : t < 1.5 ? 2.0 : t < 2.0 ? -2.0 : 0.0;
      EXPECT_NEAR(u[2], want, 1e-15);
      EXPECT_NEAR(uv[2], slope, 1e-15);
      EXPECT_DOUBLE_EQ(u[3], 0.4) << "default hold: the initial joint position";
      EXPECT_DOUBLE_EQ(uv[3], 0.0);
    }
  }
  // The sinusoid's velocity target is the derivative of its position target.
  const double t = 0.37, h = 1e-6;
  std::vector<double> up, um;
  sap::scene_control(s, t + h, 1, up, uv);
  sap::scene_control(s, t - h, 1, um, uv);
  sap::scene_control(s, t, 1, u, uv);
  EXPECT_NEAR(uv[1], (up[1] - um[1]) / (2 * h), 1e-7);
}

TEST(SceneJson, DefaultControlIsZero) {
  const sap::Scene s = sap::parse_scene(scene_with(R"(
      "builder": {"defaults": {"joint": {"target_ke": 10}}},
      "bodies": [{"id": "a", "shapes": [{"type": "sphere", "radius": 0.1}]}],
      "joints": [{"id": "ja", "type": "revolute", "parent": "world", "child": "a", "axis": [0, 1, 0]}],
      "initial_joint_q": [{"joint": "ja", "value": 0.7}])"),
                                        "z.json");
  ASSERT_EQ(s.model.nu, 1) << "builder defaults create the drive";
  std::vector<double> u, uv;
  sap::scene_control(s, 1.0, 0, u, uv);
  EXPECT_EQ(u, std::vector<double>{0.0});
}

TEST(SceneJson, FreeJointVelocityForms) {
  // {"linear", "angular"} takes the angular velocity in the world frame; the raw 6-array is
  // our generalized velocity (angular part in the body frame).
  const std::string bodies =
      R"("bodies": [{"id": "a", "transform": {"q": {"axis_angle": {"axis": [0, 0, 1], "angle": "pi/2"}}},
        "shapes": [{"type": "sphere", "radius": 0.1}]}],
      "joints": [{"id": "fa", "type": "free", "parent": "world", "child": "a"}])";
  const sap::Scene s = sap::parse_scene(
      scene_with(bodies +
                 R"(, "initial_joint_qd": [{"joint": "fa", "value": {"linear": [1, 2, 3], "angular": [1, 0, 0]}}])"),
      "v.json");
  EXPECT_NEAR(s.qvel0[0], 1, 1e-15);
  EXPECT_NEAR(s.qvel0[2], 3, 1e-15);
  // World x is body -y after a quarter turn about z.
  EXPECT_NEAR(s.qvel0[3], 0, 1e-15);
  EXPECT_NEAR(s.qvel0[4], -1, 1e-15);
  EXPECT_NEAR(s.qvel0[5], 0, 1e-15);
  const sap::Scene r = sap::parse_scene(
      scene_with(bodies + R"(, "initial_joint_qd": [{"joint": "fa", "value": [1, 2, 3, 4, 5, 6]}])"), "v.json");
  EXPECT_EQ(r.qvel0, (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(SceneJson, MjcfAssetImport) {
  const std::string text = scene_with(
      R"("assets": [{"type": "mjcf", "path": "../models/mujoco_humanoid/humanoid.xml", "prefix": "h_",
      "xform": {"p": [1, 0, 0]}, "keyframe": "squat"}])");
  sap::Scene s;
  try {
    s = sap::parse_scene(text, "asset.json", std::string(SAP_SOURCE_DIR) + "/scenes");
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    FAIL() << msg;
  }
  EXPECT_EQ(s.model.nq, 28);
  for (int b = 1; b < s.model.nbody; ++b) EXPECT_EQ(s.model.body_names[b].rfind("h_", 0), 0u) << s.model.body_names[b];
  // The 'squat' keyframe of humanoid.xml (root at (0, 0, 0.596), knees at -2.65), moved by xform.
  EXPECT_DOUBLE_EQ(s.qpos0[0], 1.0);
  EXPECT_DOUBLE_EQ(s.qpos0[2], 0.596);
  EXPECT_DOUBLE_EQ(s.qpos0[s.model.jnt_qposadr[s.model.joint_id("h_knee_right")]], -2.65);
  // The hamstring tendons are imported (prefixed), nothing is dropped.
  EXPECT_EQ(s.model.ntendon, 2);
  EXPECT_GE(s.model.tendon_id("h_hamstring_left"), 0);
  for (const auto& w : s.warnings) EXPECT_EQ(w.find("dropped"), std::string::npos) << w;
}

TEST(SceneJson, DocumentationExampleLoads) {
  // The example of docs/scene-format.md must stay valid.
  const std::string path = std::string(SAP_SOURCE_DIR) + "/docs/scene-format.md";
  std::ifstream f(path);
  ASSERT_TRUE(f.good()) << path;
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string doc = ss.str();
  const std::size_t ex = doc.find("## Example");
  ASSERT_NE(ex, std::string::npos);
  const std::size_t begin = doc.find("```json\n", ex);
  ASSERT_NE(begin, std::string::npos);
  const std::size_t end = doc.find("```", begin + 8);
  ASSERT_NE(end, std::string::npos);
  const sap::Scene s = sap::parse_scene(doc.substr(begin + 8, end - begin - 8), "docs-example");
  EXPECT_EQ(s.name, "hinged_box");
  EXPECT_EQ(s.model.nv, 1);
  EXPECT_EQ(s.model.nu, 1);
  EXPECT_EQ(s.model.body_dofnum[s.model.body_id("post")], 0);
  EXPECT_NEAR(s.qpos0[0], kPi / 8, 1e-15);
  EXPECT_TRUE(s.warnings.empty());
  // The lid's hinge sits 0.55 m above the post's origin at (0, 0, 0.5).
  sap::DynamicsEvaluator ev(s.model);
  ev.compute(s.qpos0.data());
  EXPECT_LT((ev.body_pos(s.model.body_id("lid")) - Vector3d(0, 0, 1.05)).norm(), 1e-12);
}

namespace {

// "hold" with an imported MJCF servo whose model gear is not 1: the general affine actuator
// gainprm 500, biasprm 0 -200 0 is our servo with gear g = 0.4 and target ctrl / g
// (docs/model-import.md, "Actuators"), so holding the start q0 needs ctrl = g q0 (MuJoCo's
// control that holds q0: 200 q0 / 500 = 0.4 q0). The servo then applies no force at the start.
TEST(SceneJson, HoldOfAGearedImportedServoTargetsTheInitialPosition) {
  const sap::Scene s = sap::parse_scene(
      scene_with(R"("assets": [{"type": "mjcf", "path": "tests/data/mujoco/affine_actuators.xml"}],
                    "initial_joint_q": [{"joint": "h1", "value": 0.3}, {"joint": "h2", "value": -0.2}],
                    "controls": {"default": "hold"})"),
      "hold.json", SAP_SOURCE_DIR);
  const sap::Model& m = s.model;
  std::vector<double> u, uv;
  sap::scene_control(s, 0.0, 0, u, uv);
  const std::size_t a = static_cast<std::size_t>(m.actuator_id("adroit"));
  const std::size_t b = static_cast<std::size_t>(m.actuator_id("servo_kv_gear"));
  EXPECT_DOUBLE_EQ(m.actuator_gear[a], 0.4);
  EXPECT_NEAR(u[a], 0.4 * 0.3, 1e-15);
  EXPECT_NEAR(u[a] / m.actuator_gear[a], 0.3, 1e-15);  // the servo's target is q0
  EXPECT_NEAR(u[b] / m.actuator_gear[b], -0.2, 1e-15);
}

}  // namespace
