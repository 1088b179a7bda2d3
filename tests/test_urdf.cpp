// URDF importer: link frames from joint origins (rpy = fixed-axis roll, pitch, yaw), joint
// types and limits, inertials rotated into the link frame, collision primitives (full sizes
// halved), collision meshes an error unless dropped, <mimic> couplers, fixed joints' axes ignored, floating base,
// inertia repairs (rounding-noise projection, bound mass of massless moving links), errors with file:line. Expected values
// are analytic (rotation algebra, pendulum dynamics).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <Eigen/Dense>
#include <array>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "import_test_util.hpp"
#include "sap/dynamics.hpp"
#include "sap/contacts.hpp"
#include "sap/mjcf.hpp"
#include "sap/solver_sap.hpp"

namespace {

using sap_test::TempDir;

Eigen::Matrix3d Rx(double a) { return Eigen::AngleAxisd(a, Eigen::Vector3d::UnitX()).toRotationMatrix(); }
Eigen::Matrix3d Ry(double a) { return Eigen::AngleAxisd(a, Eigen::Vector3d::UnitY()).toRotationMatrix(); }
Eigen::Matrix3d Rz(double a) { return Eigen::AngleAxisd(a, Eigen::Vector3d::UnitZ()).toRotationMatrix(); }

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The box [0,2]x[0,1]x[0,0.5] as an ASCII STL (tests/data/meshes).
std::string box_stl() { return read_text(std::string(SAP_SOURCE_DIR) + "/tests/data/meshes/box_ascii.stl"); }

sap::Model load(const std::string& xml, sap::ImportReport* report = nullptr, const sap::ImportOptions& opt = {},
                bool floating = false) {
  TempDir dir("urdf");
  dir.write("arm/upper.stl", box_stl());  // package://arm/... next to the URDF
  return sap::load_urdf(dir.write("robot.urdf", xml), report, opt, floating).model;
}

bool has_warning(const sap::ImportReport& r, const std::string& needle) {
  for (const std::string& w : r.warnings)
    if (w.find(needle) != std::string::npos) return true;
  return false;
}

const char* kArm = R"(<?xml version="1.0"?>
<robot name="arm">
  <link name="base">
    <inertial><mass value="5"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.4 0.2 0.1"/></geometry></collision>
    <visual><geometry><mesh filename="package://arm/base.stl"/></geometry></visual>
  </link>
  <link name="upper">
    <inertial>
      <origin xyz="0 0 0.25" rpy="0.3 0 0"/>
      <mass value="2"/>
      <inertia ixx="0.1" iyy="0.2" izz="0.3" ixy="0" ixz="0" iyz="0"/>
    </inertial>
    <collision><origin xyz="0 0 0.25"/><geometry><cylinder radius="0.05" length="0.5"/></geometry></collision>
    <collision><geometry><mesh filename="package://arm/upper.stl"/></geometry></collision>
    <collision><geometry><mesh filename="package://arm/upper.stl" scale="0.5 0.5 0.5"/></geometry></collision>
  </link>
  <link name="tool">
    <collision><geometry><sphere radius="0.03"/></geometry></collision>
    <collision><geometry><capsule radius="0.02" length="0.1"/></geometry></collision>
  </link>
  <link name="slider">
    <inertial><mass value="0.5"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <link name="spinner">
    <inertial><mass value="0.1"/><inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.1" rpy="0.1 0.2 0.3"/>
    <axis xyz="0 2 0"/>
    <limit lower="-1" upper="1.5" effort="50" velocity="2"/>
    <dynamics damping="0.7"/>
  </joint>
  <joint name="tool_mount" type="fixed">
    <parent link="upper"/><child link="tool"/>
    <origin xyz="0 0 0.5"/>
  </joint>
  <joint name="slide" type="prismatic">
    <parent link="upper"/><child link="slider"/>
    <axis xyz="1 0 0"/>
    <limit lower="0" upper="0.2" effort="10" velocity="1"/>
  </joint>
  <joint name="spin" type="continuous">
    <parent link="slider"/><child link="spinner"/>
    <axis xyz="0 0 1"/>
  </joint>
  <gazebo reference="upper"/>
</robot>)";

TEST(Urdf, LinksJointsInertialsAndCollisions) {
  sap::ImportReport report;
  sap::ImportOptions drop;
  drop.drop_unsupported = true;  // the collision meshes
  const sap::Model m = load(kArm, &report, drop);
  ASSERT_EQ(m.nbody, 6);  // world + 5 links, depth first in joint order
  EXPECT_EQ(m.body_names[1], "base");
  EXPECT_EQ(m.body_names[2], "upper");
  EXPECT_EQ(m.body_names[3], "tool");
  EXPECT_EQ(m.body_names[4], "slider");
  EXPECT_EQ(m.body_names[5], "spinner");
  EXPECT_EQ(m.njnt, 3);  // the fixed joint creates no joint; the base is welded to the world
  EXPECT_EQ(m.body_dofnum[1], 0);
  EXPECT_EQ(m.body_dofnum[3], 0);

  // Child frame = joint origin, rpy = Rz(y) Ry(p) Rx(r).
  const int up = m.body_id("upper");
  const double* q = &m.body_quat[4 * static_cast<std::size_t>(up)];
  const Eigen::Matrix3d R = Eigen::Quaterniond(q[0], q[1], q[2], q[3]).toRotationMatrix();
  EXPECT_TRUE(R.isApprox(Rz(0.3) * Ry(0.2) * Rx(0.1), 1e-14));
  EXPECT_DOUBLE_EQ(m.body_pos[3 * static_cast<std::size_t>(up) + 2], 0.1);

  const int sh = m.joint_id("shoulder");
  EXPECT_EQ(m.jnt_type[static_cast<std::size_t>(sh)], sap::kJointHinge);
  EXPECT_DOUBLE_EQ(m.jnt_axis[3 * static_cast<std::size_t>(sh) + 1], 1.0);  // normalized
  EXPECT_TRUE(m.jnt_limited[static_cast<std::size_t>(sh)]);
  EXPECT_DOUBLE_EQ(m.jnt_range[2 * static_cast<std::size_t>(sh)], -1);
  EXPECT_DOUBLE_EQ(m.jnt_range[2 * static_cast<std::size_t>(sh) + 1], 1.5);
  EXPECT_DOUBLE_EQ(m.dof_damping[static_cast<std::size_t>(m.jnt_dofadr[static_cast<std::size_t>(sh)])], 0.7);
  EXPECT_EQ(m.jnt_type[static_cast<std::size_t>(m.joint_id("slide"))], sap::kJointSlide);
  const int spin = m.joint_id("spin");
  EXPECT_EQ(m.jnt_type[static_cast<std::size_t>(spin)], sap::kJointHinge);
  EXPECT_FALSE(m.jnt_limited[static_cast<std::size_t>(spin)]);

  // Inertia about the com, rotated from the inertial frame into the link frame.
  const double* I = &m.body_inertia[6 * static_cast<std::size_t>(up)];
  Eigen::Matrix3d T;
  T << I[0], I[3], I[4], I[3], I[1], I[5], I[4], I[5], I[2];
  EXPECT_TRUE(T.isApprox(Rx(0.3) * Eigen::Vector3d(0.1, 0.2, 0.3).asDiagonal() * Rx(0.3).transpose(), 1e-14));
  EXPECT_DOUBLE_EQ(m.body_ipos[3 * static_cast<std::size_t>(up) + 2], 0.25);
  EXPECT_DOUBLE_EQ(m.body_mass[static_cast<std::size_t>(up)], 2);

  // Collision primitives: URDF full sizes become half sizes; meshes are convex hulls, the geom
  // at the hull's centre of mass (the box's centre, times the scale).
  ASSERT_EQ(m.ngeom, 6);
  EXPECT_EQ(m.geom_type[0], sap::kGeomBox);
  EXPECT_DOUBLE_EQ(m.geom_size[0], 0.2);
  EXPECT_DOUBLE_EQ(m.geom_size[1], 0.1);
  EXPECT_DOUBLE_EQ(m.geom_size[2], 0.05);
  EXPECT_EQ(m.geom_type[1], sap::kGeomCylinder);
  EXPECT_DOUBLE_EQ(m.geom_size[3 + 1], 0.25);
  EXPECT_EQ(m.geom_type[2], sap::kGeomMesh);
  EXPECT_EQ(m.geom_type[3], sap::kGeomMesh);
  ASSERT_EQ(m.nmesh, 2);  // one file, two scales
  EXPECT_NE(m.geom_dataid[2], m.geom_dataid[3]);
  const double box_center[3] = {1, 0.5, 0.25};
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(m.geom_pos[6 + k], box_center[k], 1e-12);
    EXPECT_NEAR(m.geom_pos[9 + k], 0.5 * box_center[k], 1e-12);
  }
  EXPECT_EQ(m.mesh_vertnum[0], 8);
  EXPECT_EQ(m.geom_type[4], sap::kGeomSphere);
  EXPECT_EQ(m.geom_type[5], sap::kGeomCapsule);
  EXPECT_DOUBLE_EQ(m.geom_size[15 + 1], 0.05);
  EXPECT_TRUE(has_warning(report, "robot.urdf:6: <visual> ignored"));
  EXPECT_TRUE(has_warning(report, "robot.urdf:32: joint effort/velocity limits ignored"));
  EXPECT_TRUE(has_warning(report, "robot.urdf:48: <gazebo> ignored"));
  // The base is welded to the world: its geom is static (rigid); the others move with the arm.
  EXPECT_DOUBLE_EQ(m.geom_stiffness[0], 1e12);
  EXPECT_NEAR(m.geom_stiffness[1], (5 + 2 + 0.5 + 0.1) / (0.02 * 0.02), 1e-6);
  EXPECT_DOUBLE_EQ(m.geom_dissipation[1], 0.02);
}

TEST(Urdf, FloatingBaseAndWorldLink) {
  sap::ImportOptions drop;
  drop.drop_unsupported = true;  // the collision meshes
  const sap::Model f = load(kArm, nullptr, drop, /*floating=*/true);
  EXPECT_EQ(f.jnt_type[0], sap::kJointFree);
  EXPECT_EQ(f.nq, 7 + 3);
  EXPECT_EQ(f.nv, 6 + 3);
  // A root link named "world" is the world body.
  const sap::Model w = load(R"(<robot name="r">
  <link name="world"/>
  <link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j" type="continuous"><parent link="world"/><child link="a"/><origin xyz="0 0 1"/></joint>
</robot>)");
  EXPECT_EQ(w.nbody, 2);
  EXPECT_EQ(w.body_parentid[1], 0);
  EXPECT_EQ(w.jnt_type[0], sap::kJointHinge);
  EXPECT_DOUBLE_EQ(w.jnt_axis[0], 1.0);  // URDF default axis (1 0 0)
}

TEST(Urdf, PendulumMatchesTheAnalyticDynamics) {
  // Point-like mass m at distance l below a revolute joint about y; URDF inertia about the com.
  const sap::Model m = load(R"(<robot name="pendulum">
  <link name="world"/>
  <link name="bob">
    <inertial><origin xyz="0 0 -0.8"/><mass value="3"/><inertia ixx="0.01" iyy="0.02" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="hinge" type="revolute">
    <parent link="world"/><child link="bob"/><origin xyz="0 0 2"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3"/>
  </joint>
</robot>)");
  sap::DynamicsEvaluator ev(m);
  for (double q : {-0.5, 0.0, 1.1}) {
    Eigen::VectorXd qv(1), vv(1);
    qv << q;
    vv << -0.7;
    ev.compute(qv, vv);
    EXPECT_NEAR(ev.mass_matrix()(0, 0), 0.02 + 3 * 0.64, 1e-12);
    EXPECT_NEAR(ev.bias()[0], 3 * 9.81 * 0.8 * std::sin(q), 1e-12);
  }
}

TEST(Urdf, UnsupportedJointsAreRejectedOrDropped) {
  const std::string xml = R"(<robot name="r">
  <link name="a"/>
  <link name="b"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j" type="planar">
    <parent link="a"/><child link="b"/>
  </joint>
</robot>)";
  try {
    load(xml);
    ADD_FAILURE() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("robot.urdf:4: planar joint is not supported"), std::string::npos)
        << e.what();
  }
  sap::ImportOptions opt;
  opt.drop_unsupported = true;
  sap::ImportReport report;
  const sap::Model m = load(xml, &report, opt);
  EXPECT_EQ(m.njnt, 0);
  EXPECT_TRUE(has_warning(report, "robot.urdf:4: planar joint dropped"));
}

// <dynamics friction> is the joint's dry friction (dof_frictionloss, a SAP box row).
TEST(Urdf, JointFrictionIsFrictionloss) {
  const sap::Model m = load(R"(<robot name="r">
  <link name="a"/>
  <link name="b"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j" type="continuous">
    <parent link="a"/><child link="b"/>
    <dynamics damping="0.1" friction="0.5"/>
  </joint>
</robot>)");
  ASSERT_EQ(m.nv, 1);
  EXPECT_DOUBLE_EQ(m.dof_damping[0], 0.1);
  EXPECT_DOUBLE_EQ(m.dof_frictionloss[0], 0.5);
}

// Valid URDF gives fixed joints an axis of zero length (Go2, iCub, TIAGo): it has no meaning there.
TEST(Urdf, FixedJointIgnoresItsAxis) {
  const sap::Model m = load(R"(<robot name="r">
  <link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="weld" type="fixed"><parent link="a"/><child link="b"/><origin xyz="0 0 1"/><axis xyz="0 0 0"/></joint>
</robot>)", nullptr, {}, /*floating=*/true);
  EXPECT_EQ(m.njnt, 1);  // the floating base only
  EXPECT_EQ(m.nv, 6);
}

// <mimic joint multiplier offset>: q_follower = multiplier q_leader + offset, the kEqJoint
// coupler of docs/sap-math.md §12 with polycoef (offset, multiplier). Driven through the leader,
// the follower tracks it (the coupler is near-rigid).
TEST(Urdf, MimicBecomesAJointCoupler) {
  const std::string inertial =
      R"(<inertial><origin xyz="0 0 -0.3"/><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>)";
  const sap::Model m = load(R"(<robot name="gripper">
  <link name="world"/>
  <link name="left">)" + inertial + R"(</link>
  <link name="right">)" + inertial + R"(</link>
  <joint name="lead" type="continuous"><parent link="world"/><child link="left"/><axis xyz="0 1 0"/></joint>
  <joint name="follow" type="revolute"><parent link="world"/><child link="right"/><origin xyz="1 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3"/>
    <mimic joint="lead" multiplier="-0.5" offset="0.1"/></joint>
</robot>)");
  ASSERT_EQ(m.neq, 1);
  EXPECT_EQ(m.eq_type[0], sap::kEqJoint);
  EXPECT_EQ(m.eq_obj1id[0], m.joint_id("follow"));
  EXPECT_EQ(m.eq_obj2id[0], m.joint_id("lead"));
  EXPECT_DOUBLE_EQ(m.eq_data[0], 0.1);
  EXPECT_DOUBLE_EQ(m.eq_data[1], -0.5);
  EXPECT_EQ(m.eq_names[0], "follow_mimic");

  // Physics: start the leader at 0.6 rad with the follower where the coupler wants it, release;
  // both swing under gravity and the follower keeps q_f = -0.5 q_l + 0.1.
  sap::Context ctx(sap::Backend::CPU, 1);
  sap::SolverSAP solver(m, ctx, 1);
  sap::State a(m, 1, sap::Backend::CPU), b(m, 1, sap::Backend::CPU);
  sap::Control control(m, 1, sap::Backend::CPU);
  sap::Contacts none(1, 0, sap::Backend::CPU);
  const int lead = m.jnt_qposadr[static_cast<std::size_t>(m.joint_id("lead"))];
  const int follow = m.jnt_qposadr[static_cast<std::size_t>(m.joint_id("follow"))];
  std::vector<double> q(2, 0.0), v(2, 0.0);
  q[static_cast<std::size_t>(lead)] = 0.6;
  q[static_cast<std::size_t>(follow)] = -0.5 * 0.6 + 0.1;
  a.qpos.world_from_host(0, q.data());
  a.qvel.world_from_host(0, v.data());
  double max_violation = 0, min_lead = 1;
  for (int i = 0; i < 500; ++i) {
    solver.step(a, b, control, none, 1e-3);
    std::swap(a, b);
    const std::vector<double> qs = a.qpos.world_to_host(0);
    max_violation = std::max(max_violation, std::abs(qs[static_cast<std::size_t>(follow)] -
                                                     (-0.5 * qs[static_cast<std::size_t>(lead)] + 0.1)));
    min_lead = std::min(min_lead, qs[static_cast<std::size_t>(lead)]);
  }
  EXPECT_LT(min_lead, 0.3);  // it swung
  EXPECT_LT(max_violation, 1e-3);

  // Errors name the file and line.
  for (const auto& [mimic, expected] : std::vector<std::pair<std::string, std::string>>{
           {"<mimic joint=\"nope\"/>", "joint 'j': <mimic> joint 'nope' does not exist"},
           {"<mimic/>", "<mimic> needs a 'joint' attribute"}}) {
    try {
      load("<robot name=\"r\">\n<link name=\"world\"/>\n<link name=\"b\">" + inertial +
           "</link>\n<joint name=\"j\" type=\"continuous\"><parent link=\"world\"/><child link=\"b\"/>\n" + mimic +
           "\n</joint>\n</robot>");
      ADD_FAILURE() << "expected an error: " << expected;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("robot.urdf:5: " + expected), std::string::npos) << e.what();
    }
  }
}

// Notes grouped by kind with summed counts; dropped elements first (sap_bench prints them so).
TEST(Urdf, NotesAreGroupedByKind) {
  sap::ImportReport report;
  sap::ImportOptions drop;
  drop.drop_unsupported = true;
  // Both collision meshes of the arm name a file that does not exist: one kind, two notes.
  std::string arm = kArm;
  for (std::size_t at; (at = arm.find("package://arm/upper.stl")) != std::string::npos;)
    arm.replace(at, 23, "package://arm/missing.stl");
  load(arm, &report, drop);
  std::vector<std::string> notes = report.warnings;
  notes.push_back("scene.json: /assets/1: importer: /x/other.urdf:3: <visual> ignored: no effect on the dynamics");
  const std::vector<sap::NoteGroup> g = sap::group_notes(notes);
  ASSERT_GE(g.size(), 3u);
  EXPECT_EQ(g[0].kind.rfind("collision mesh dropped: mesh 'package://arm/missing.stl' not found", 0), 0u) << g[0].kind;
  EXPECT_EQ(g[0].count, 2);
  bool visual = false;
  for (const sap::NoteGroup& k : g)
    if (k.kind == "<visual> ignored: no effect on the dynamics") {
      visual = true;
      EXPECT_GE(k.count, 2);  // this file's and the other asset's
    }
  EXPECT_TRUE(visual);
}

// A <mimic> on a fixed joint has nothing to couple (TALOS's grippers): warned and ignored. A
// <mimic> of a joint that does not exist (Alex's psyonic hands) is an error, or dropped.
TEST(Urdf, MimicOnAFixedJointOrOfAMissingJoint) {
  const std::string inertial =
      R"(<inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>)";
  sap::ImportReport report;
  const sap::Model m = load(R"(<robot name="r">
  <link name="world"/><link name="a">)" + inertial + R"(</link><link name="b">)" + inertial + R"(</link>
  <joint name="j" type="continuous"><parent link="world"/><child link="a"/></joint>
  <joint name="k" type="fixed"><parent link="a"/><child link="b"/>
    <mimic joint="j"/></joint>
</robot>)",
                            &report);
  EXPECT_EQ(m.neq, 0);
  EXPECT_TRUE(has_warning(report, "robot.urdf:5: <mimic> of a fixed joint ignored"));
  const std::string missing = R"(<robot name="r">
  <link name="world"/><link name="a">)" + inertial + R"(</link>
  <joint name="j" type="continuous"><parent link="world"/><child link="a"/>
    <mimic joint="index_q1"/></joint>
</robot>)";
  try {
    load(missing);
    ADD_FAILURE() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("robot.urdf:4: joint 'j': <mimic> joint 'index_q1' does not exist"),
              std::string::npos)
        << e.what();
  }
  sap::ImportOptions drop;
  drop.drop_unsupported = true;
  sap::ImportReport dropped;
  EXPECT_EQ(load(missing, &dropped, drop).neq, 0);
  EXPECT_TRUE(has_warning(dropped, "robot.urdf:4: <mimic> dropped: joint 'j': <mimic> joint 'index_q1' does not exist"));
}

// Inertia tensors that are not positive semi-definite by rounding noise only (iCub's r_hip_2:
// ixx = iyy = -5.42101e-20 = -2^-64, izz = 0; its head: ixz = 2.40741e-35 alone, principal
// moments (-c, 0, c)) are replaced by the nearest positive semi-definite tensor, V max(Λ, 0) V^T:
// the zero tensor for the hip, c/2 [1 0 1; 0 0 0; 1 0 1] for the head (the eigenvector
// (1, 0, 1)/sqrt 2 of c). The tolerance is 1e-12 of the file's largest principal moment (0.08).
// One note kind counts both; with repair_inertia_rounding off each is an error at its line.
TEST(Urdf, InertiaWithinRoundingIsProjectedOntoTheNearestPsdTensor) {
  const std::string xml = R"(<robot name="r">
  <link name="base"><inertial><mass value="5"/><inertia ixx="0.08" iyy="0.05" izz="0.04" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="hip"><inertial><mass value="0.526"/><origin xyz="0 0 0.1" rpy="0.2 0.3 0"/>
    <inertia ixx="-5.42101e-20" iyy="-5.42101e-20" izz="0" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="head"><inertial><mass value="1.33687"/>
    <inertia ixx="0" iyy="0" izz="0" ixy="0" ixz="2.40741e-35" iyz="0"/></inertial></link>
  <joint name="hip_joint" type="continuous"><parent link="base"/><child link="hip"/><origin xyz="0.1 0 0"/></joint>
  <joint name="neck" type="continuous"><parent link="base"/><child link="head"/><origin xyz="0 0 0.3"/>
    <axis xyz="0 1 0"/></joint>
</robot>)";
  sap::ImportReport report;
  const sap::Model m = load(xml, &report);
  const std::size_t hip = static_cast<std::size_t>(m.body_id("hip")), head = static_cast<std::size_t>(m.body_id("head"));
  for (int k = 0; k < 6; ++k) EXPECT_EQ(m.body_inertia[6 * hip + static_cast<std::size_t>(k)], 0.0) << k;
  const double c = 2.40741e-35;
  const double expected[6] = {c / 2, 0, c / 2, 0, c / 2, 0};  // xx yy zz xy xz yz
  for (int k = 0; k < 6; ++k)
    EXPECT_NEAR(m.body_inertia[6 * head + static_cast<std::size_t>(k)], expected[k], 1e-12 * c) << k;
  EXPECT_DOUBLE_EQ(m.body_mass[hip], 0.526);  // mass and com as written
  const std::vector<sap::NoteGroup> notes = sap::group_notes(report.warnings);
  int repaired = 0;
  for (const sap::NoteGroup& g : notes)
    if (g.kind.find("inertia tensor not positive semi-definite by rounding noise only") != std::string::npos)
      repaired += g.count;
  EXPECT_EQ(repaired, 2);
  EXPECT_TRUE(has_warning(report, "robot.urdf:4: inertia tensor not positive semi-definite by rounding noise only"));
  sap::ImportOptions strict;
  strict.repair_inertia_rounding = false;
  try {
    load(xml, nullptr, strict);
    ADD_FAILURE() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("robot.urdf:4: link 'hip': inertia tensor is not positive semi-definite: "
                                         "principal moments (-5.42e-20, -5.42e-20, 0) kg m^2, within rounding noise "
                                         "(ImportOptions::repair_inertia_rounding is off)"),
              std::string::npos)
        << e.what();
  }
}

// A moving subtree without mass (Romeo's finger phalanges: mass 0, inertia 0, on revolute
// joints) would make M singular: every link of it gets massless_link_mass at its inertial
// origin and the isotropic massless_link_inertia (MuJoCo's boundmass/boundinertia), with one
// note per link. Two z-hinges, the second 0.1 m along x of the first, coms at the link origins:
// M = [[2 I + m d^2, I], [I, I]]. massless_link_mass = 0 restores the error.
TEST(Urdf, MasslessMovingSubtreeGetsTheBoundMass) {
  const std::string xml = R"(<robot name="r">
  <link name="palm"><inertial><mass value="2"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="finger1"/>
  <link name="finger2"><inertial><mass value="0"/><inertia ixx="0" iyy="0" izz="0" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="continuous"><parent link="palm"/><child link="finger1"/><axis xyz="0 0 1"/></joint>
  <joint name="j2" type="revolute"><parent link="finger1"/><child link="finger2"/><origin xyz="0.1 0 0"/>
    <axis xyz="0 0 1"/><limit lower="0" upper="1"/></joint>
</robot>)";
  for (const double mass : {1e-3, 0.02}) {
    sap::ImportOptions opt;
    opt.massless_link_mass = mass;
    const double I = mass == 1e-3 ? opt.massless_link_inertia : 3e-6;
    opt.massless_link_inertia = I;
    sap::ImportReport report;
    const sap::Model m = load(xml, &report, opt);
    for (const char* name : {"finger1", "finger2"}) {
      const std::size_t b = static_cast<std::size_t>(m.body_id(name));
      EXPECT_DOUBLE_EQ(m.body_mass[b], mass) << name;
      for (int k = 0; k < 3; ++k) EXPECT_NEAR(m.body_inertia[6 * b + static_cast<std::size_t>(k)], I, 1e-15 * I);
      for (int k = 3; k < 6; ++k) EXPECT_NEAR(m.body_inertia[6 * b + static_cast<std::size_t>(k)], 0, 1e-15 * I);
    }
    sap::DynamicsEvaluator ev(m);
    ev.compute(Eigen::VectorXd::Zero(m.nq), Eigen::VectorXd::Zero(m.nv));
    Eigen::Matrix2d expected;
    expected << 2 * I + mass * 0.01, I, I, I;
    EXPECT_LT((ev.mass_matrix() - expected).cwiseAbs().maxCoeff(), 1e-12 * expected.norm()) << ev.mass_matrix();
    int bounded = 0;
    for (const sap::NoteGroup& g : sap::group_notes(report.warnings))
      if (g.kind.find("massless moving link given mass") != std::string::npos) bounded += g.count;
    EXPECT_EQ(bounded, 2);
    EXPECT_TRUE(has_warning(report, "robot.urdf:3: massless moving link given mass"));
  }
  sap::ImportOptions strict;
  strict.massless_link_mass = 0;
  try {
    load(xml, nullptr, strict);
    ADD_FAILURE() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("robot.urdf:3: link 'finger1' moves but has no mass in its subtree"),
              std::string::npos)
        << e.what();
  }
}

// MuJoCo's verdicts on the URDF cases of tests/data/mujoco/validation_errors.json (MuJoCo 4.0.0,
// tools/reference/mujoco_contact_semantics.py), and ours:
//   spherical without a limit: a ball joint (nv 3), as MuJoCo;
//   spherical with a limit: a ball joint, the limit dropped with a warning (MuJoCo rejects any
//     range[0] != 0 of a ball; pybullet takes the cone);
//   lower > upper: an unlimited hinge with a warning, as MuJoCo (jnt_limited false);
//   an axis of 4 numbers and an unexpanded $(optenv ...): errors, as MuJoCo, naming the file,
//     line and attribute and saying what was expected;
//   a moving link with a singular inertia (diag(1, 1, 0), diag(1, 1, 2e-15): a principal moment
//     below mjEPS = 1e-14): an error naming the link and its principal moments, as MuJoCo
//     ("inertia must have positive eigenvalues"); diag(1, 1, 1e-13) loads, as in MuJoCo. One
//     difference: a link welded to the static base with diag(1, 1, 0) loads here (its inertia
//     has no effect), MuJoCo rejects it (and a singular link welded to one that carries the
//     inertia: ContactWeightBodyInertia's welded_links_split.urdf, ANYmal's base).
TEST(Urdf, MujocoVerdictsOnJointsAndAttributes) {
  std::ifstream in(std::string(SAP_SOURCE_DIR) + "/tests/data/mujoco/validation_errors.json");
  ASSERT_TRUE(in.good()) << "tests/data/mujoco/validation_errors.json missing";
  const nlohmann::json fx = nlohmann::json::parse(in);
  int n = 0;
  for (const auto& c : fx["cases"]) {
    const std::string name = c["name"];
    if (name.rfind("urdf_", 0) != 0) continue;
    SCOPED_TRACE(name);
    const std::string xml = c["urdf"];
    sap::ImportReport report;
    ++n;
    if (name.find("_inertia_") != std::string::npos) {
      if (name == "urdf_fixed_inertia_110") {  // the documented difference: a static link
        EXPECT_FALSE(c["accepted"].get<bool>());
        EXPECT_EQ(load(xml, &report).nv, 0);
        continue;
      }
      if (c["accepted"].get<bool>()) {
        EXPECT_EQ(load(xml, &report).nv, c["nv"].get<int>());
        continue;
      }
      try {
        load(xml, &report);
        ADD_FAILURE() << "MuJoCo rejects it: " << c["error"];
      } catch (const std::runtime_error& e) {
        const std::string moments = name == "urdf_revolute_inertia_11_2e-15" ? "(2e-15, 1, 1)" : "(0, 1, 1)";
        EXPECT_NE(std::string(e.what()).find("robot.urdf:1: link 'l' moves and its inertia about the centre of "
                                             "mass is singular: principal moments " +
                                             moments + " kg m^2"),
                  std::string::npos)
            << e.what();
      }
      continue;
    }
    if (name == "urdf_axis_4_numbers" || name == "urdf_unexpanded_xacro") {
      ASSERT_FALSE(c["accepted"].get<bool>());
      try {
        load(xml, &report);
        ADD_FAILURE() << "MuJoCo rejects it: " << c["error"];
      } catch (const std::runtime_error& e) {
        const std::string expected = name == "urdf_axis_4_numbers"
                                         ? "robot.urdf:1: attribute 'xyz': expected 3 numbers, got 4 ('0 0 1 0')"
                                         : "robot.urdf:1: attribute 'lower': an unexpanded xacro substitution "
                                           "('$(optenv LOW -1)'): run xacro on the file first";
        EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      }
      continue;
    }
    const sap::Model m = load(xml, &report);
    ASSERT_EQ(m.njnt, 1);
    if (name.rfind("urdf_spherical", 0) == 0) {
      EXPECT_EQ(m.jnt_type[0], sap::kJointBall);
      EXPECT_EQ(m.nv, 3);
      EXPECT_EQ(m.jnt_limited[0], 0);
      EXPECT_EQ(has_warning(report, "spherical joint limit dropped"), name == "urdf_spherical");
    } else {
      ASSERT_EQ(name, "urdf_lower_above_upper");
      EXPECT_TRUE(c["accepted"].get<bool>());
      EXPECT_EQ(m.jnt_type[0], sap::kJointHinge);
      EXPECT_EQ(m.nv, c["nv"].get<int>());
      EXPECT_EQ(m.jnt_limited[0], 0);  // MuJoCo: jnt_limited [False]
      EXPECT_TRUE(has_warning(report, "limit lower 1 > upper -1: the joint is unlimited"));
    }
  }
  EXPECT_EQ(n, 10);
}

// ImportOptions::bound_inertia repairs what the singular-inertia check rejects, as MuJoCo's
// compiler boundinertia: every link's principal moments raised to at least the bound, axes kept,
// a note per raised link. A y-hinge "rod" with inertia diag(0.5, 0.25, 0) in an inertial frame
// turned by 90 degrees about x (its zero moment is about the link's y, the hinge axis) and a tip
// welded on that axis with no y moment: the rigid body rod + tip is singular about y (an error
// naming both); bounded to 1e-3, M = I_yy(rod) + I_yy(tip) = 2e-3 (the tip's mass is on the
// axis).
TEST(Urdf, SingularInertiaIsAnErrorOrBounded) {
  const std::string xml = R"(<robot name="r">
  <link name="base"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j" type="continuous"><parent link="base"/><child link="rod"/><axis xyz="0 1 0"/></joint>
  <link name="rod"><inertial><origin rpy="1.5707963267948966 0 0"/><mass value="2"/>
    <inertia ixx="0.5" iyy="0.25" izz="0" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="k" type="fixed"><parent link="rod"/><child link="tip"/><origin xyz="0 0.3 0"/></joint>
  <link name="tip"><inertial><mass value="0.1"/><inertia ixx="1e-6" iyy="0" izz="1e-6" ixy="0" ixz="0" iyz="0"/></inertial></link>
</robot>)";
  try {
    load(xml);
    ADD_FAILURE() << "expected an error";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("robot.urdf:5: link 'rod' moves (with the links welded to it: 'tip') and its inertia about "
                        "the centre of mass is singular: principal moments ("),
              std::string::npos)
        << what;
    EXPECT_NE(what.find(") kg m^2, the smallest below 1e-14"), std::string::npos) << what;
    EXPECT_NE(what.find("ImportOptions::bound_inertia"), std::string::npos) << what;
  }
  sap::ImportOptions opt;
  opt.bound_inertia = 1e-3;
  sap::ImportReport report;
  const sap::Model m = load(xml, &report, opt);
  const std::size_t rod = static_cast<std::size_t>(m.body_id("rod")),
                    base = static_cast<std::size_t>(m.body_id("base"));
  const double expected[6] = {0.5, 1e-3, 0.25, 0, 0, 0};  // xx yy zz xy xz yz: the zero moment raised
  for (int k = 0; k < 6; ++k)
    EXPECT_NEAR(m.body_inertia[6 * rod + static_cast<std::size_t>(k)], expected[k], 1e-12) << k;
  for (int k = 0; k < 3; ++k) EXPECT_EQ(m.body_inertia[6 * base + static_cast<std::size_t>(k)], 1.0);  // above it
  sap::DynamicsEvaluator ev(m);
  ev.compute(Eigen::VectorXd::Zero(m.nq), Eigen::VectorXd::Zero(m.nv));
  ASSERT_EQ(m.nv, 1);
  EXPECT_NEAR(ev.mass_matrix()(0, 0), 2e-3, 1e-12);
  int raised = 0;
  for (const sap::NoteGroup& g : sap::group_notes(report.warnings))
    if (g.kind.find("raised to at least 0.001 (ImportOptions::bound_inertia") != std::string::npos) raised += g.count;
  EXPECT_EQ(raised, 2);  // the rod and the tip
  EXPECT_TRUE(has_warning(report, "robot.urdf:5: link 'rod': principal moments ("));
}

TEST(Urdf, ErrorsNameFileAndLine) {
  const std::string inertial =
      R"(<inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>)";
  struct Case {
    std::string xml, expected;
  };
  const std::vector<Case> cases = {
      {"<robot>\n<link name=\"a\">\n</robot>", ": XML parse error"},
      {"<mujoco/>", "robot.urdf:1: expected a <robot> root element, got <mujoco>"},
      {"<robot>\n</robot>", "robot.urdf:1: the robot has no links"},
      {"<robot>\n<link/>\n</robot>", "robot.urdf:2: <link> needs a 'name' attribute"},
      {"<robot>\n<link name=\"a\"/>\n<link name=\"a\"/>\n</robot>", "robot.urdf:3: repeated link name 'a'"},
      {"<robot>\n<link name=\"a\"/>\n<link name=\"b\"/>\n</robot>", "expected one root link, found 2: 'a', 'b'"},
      {"<robot>\n<link name=\"a\"/>\n<joint name=\"j\" type=\"fixed\">\n<parent link=\"a\"/>\n<child link=\"zz\"/>\n</joint>\n</robot>",
       "robot.urdf:3: joint 'j': unknown child link 'zz'"},
      {"<robot>\n<link name=\"a\"/>\n<link name=\"b\"/>\n<joint name=\"j\" type=\"screw\">\n<parent link=\"a\"/>\n"
       "<child link=\"b\"/>\n</joint>\n</robot>",
       "robot.urdf:4: joint 'j': unknown type 'screw'"},
      {"<robot>\n<link name=\"a\"/>\n<link name=\"b\">" + inertial +
           "</link>\n<joint name=\"j\" type=\"revolute\">\n"
           "<parent link=\"a\"/>\n<child link=\"b\"/>\n</joint>\n</robot>",
       "robot.urdf:4: joint 'j': a revolute joint needs a <limit>"},
      {"<robot>\n<link name=\"a\"/>\n<link name=\"b\"/>\n<joint name=\"j\" type=\"fixed\">\n<parent link=\"a\"/>\n"
       "<child link=\"b\"/>\n</joint>\n<joint name=\"k\" type=\"fixed\">\n<parent link=\"b\"/>\n<child link=\"a\"/>\n</joint>\n</robot>",
       "the joints form a cycle (no root link)"},
      {"<robot>\n<link name=\"a\">\n<inertial>\n<mass value=\"heavy\"/>\n</inertial>\n</link>\n</robot>",
       "robot.urdf:4: attribute 'value': expected a number, got 'heavy'"},
      {"<robot>\n<link name=\"a\">\n<inertial>\n<mass value=\"1\"/>\n<inertia ixx=\"1\"/>\n</inertial>\n</link>\n</robot>",
       "robot.urdf:5: <inertia> needs a 'iyy' attribute"},
      {"<robot>\n<link name=\"a\">\n<collision>\n<geometry>\n<box size=\"1 1\"/>\n</geometry>\n</collision>\n</link>\n</robot>",
       "robot.urdf:5: attribute 'size': expected 3 numbers, got 2"},
      {"<robot>\n<link name=\"a\">\n<collision>\n<geometry>\n<cone radius=\"1\"/>\n</geometry>\n</collision>\n</link>\n</robot>",
       "robot.urdf:5: unknown collision geometry <cone>"},
      {"<robot>\n<link name=\"a\">\n<collision>\n<geometry>\n<sphere radius=\"-1\"/>\n</geometry>\n</collision>\n</link>\n</robot>",
       "robot.urdf:5: <sphere> dimensions must be positive"},
      {"<robot>\n<link name=\"a\"/>\n<link name=\"b\">" + inertial +
           "</link>\n<joint name=\"j\" type=\"continuous\">\n"
           "<parent link=\"a\"/>\n<child link=\"b\"/>\n<axis xyz=\"0 0 0\"/>\n</joint>\n</robot>",
       "robot.urdf:7: joint axis must be non-zero"},
      {"<robot>\n<link name=\"a\">" + inertial + "</link>\n<link name=\"b\">\n<inertial><mass value=\"1\"/>\n"
           "<inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"2\" ixz=\"0\" iyz=\"0\"/>\n</inertial>\n</link>\n"
           "<joint name=\"j\" type=\"fixed\">\n<parent link=\"a\"/>\n<child link=\"b\"/>\n</joint>\n</robot>",
       "robot.urdf:5: link 'b': inertia tensor is not positive semi-definite: principal moments (-1, 1, 3) kg m^2; "
       "the negative one exceeds rounding noise (1e-12 x 3 kg m^2, the largest principal moment in the file)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.xml);
    try {
      load(c.xml);
      ADD_FAILURE() << "expected an error containing: " << c.expected;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << "got: " << e.what();
    }
  }
}

}  // namespace

namespace {

// package://pkg/rel is found in the first directory named pkg going up from the URDF (or a pkg
// directory inside one of them), then in SAP_PACKAGE_PATH; a mesh that cannot be found or read
// is an error naming it, or dropped with a warning on request.
TEST(UrdfMesh, PackageUrisRelativePathsAndErrors) {
  TempDir dir("urdf_pkg");
  dir.write("share/my_robot/meshes/box.stl", box_stl());
  dir.write("elsewhere/other_pkg/box.stl", box_stl());
  auto robot = [](const std::string& filename) {
    return "<robot name=\"r\"><link name=\"a\"><inertial><mass value=\"1\"/>"
           "<inertia ixx=\"1\" iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>"
           "<collision><geometry><mesh filename=\"" + filename + "\"/></geometry></collision></link></robot>";
  };
  // The URDF sits in share/my_robot/urdf: going up finds share/my_robot (named like the package).
  const std::string urdf = dir.write("share/my_robot/urdf/r.urdf", robot("package://my_robot/meshes/box.stl"));
  sap::Model m = sap::load_urdf(urdf).model;
  ASSERT_EQ(m.ngeom, 1);
  EXPECT_EQ(m.geom_type[0], sap::kGeomMesh);
  // Relative to the URDF's directory.
  m = sap::load_urdf(dir.write("share/my_robot/urdf/rel.urdf", robot("../meshes/box.stl"))).model;
  EXPECT_EQ(m.geom_type[0], sap::kGeomMesh);
  // Not in the tree: an error naming the URI and the candidates, unless SAP_PACKAGE_PATH has it.
  const std::string other = dir.write("share/my_robot/urdf/other.urdf", robot("package://other_pkg/box.stl"));
  std::string e;
  try {
    sap::load_urdf(other);
  } catch (const std::exception& x) {
    e = x.what();
  }
  EXPECT_NE(e.find("other.urdf:1: collision mesh is not supported: mesh 'package://other_pkg/box.stl' not found"),
            std::string::npos)
      << e;
  setenv("SAP_PACKAGE_PATH", (dir.path() + "/nothing:" + dir.path() + "/elsewhere").c_str(), 1);
  m = sap::load_urdf(other).model;
  unsetenv("SAP_PACKAGE_PATH");
  EXPECT_EQ(m.geom_type[0], sap::kGeomMesh);
  // A file that is not a mesh: error naming the file; dropped with a warning on request.
  dir.write("share/my_robot/meshes/bad.stl", "not a mesh");
  const std::string bad = dir.write("share/my_robot/urdf/bad.urdf", robot("package://my_robot/meshes/bad.stl"));
  e.clear();
  try {
    sap::load_urdf(bad);
  } catch (const std::exception& x) {
    e = x.what();
  }
  EXPECT_NE(e.find("bad.urdf:1: collision mesh is not supported: "), std::string::npos) << e;
  EXPECT_NE(e.find("meshes/bad.stl: cannot read mesh"), std::string::npos) << e;
  sap::ImportOptions opt;
  opt.drop_unsupported = true;
  sap::ImportReport report;
  m = sap::load_urdf(bad, &report, opt).model;
  EXPECT_EQ(m.ngeom, 0);
  EXPECT_TRUE(has_warning(report, "bad.urdf:1: collision mesh dropped"));
}

}  // namespace
