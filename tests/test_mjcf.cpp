// MJCF importer: orientation forms, defaults and childclass, include, fromto, inertia from
// geoms, actuators, keyframes, the contact-material rule, error messages with file:line and
// warnings for ignored elements. Expected values are analytic (rotation algebra, solid-body
// formulas, pendulum dynamics); the comparison against MuJoCo itself lives in
// tests/oracle/test_mujoco_oracle.cpp and tests/test_mjcf_fixtures.cpp.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include <Eigen/Dense>
#include <cmath>
#include <string>
#include <vector>

#include "import_test_util.hpp"
#include "model/contact_pairs.hpp"
#include "sap/dynamics.hpp"
#include "sap/mjcf.hpp"
#include "sap/simulator.hpp"

namespace {

using sap_test::TempDir;
constexpr double kPi = 3.14159265358979323846;

Eigen::Matrix3d body_rot(const sap::Model& m, const std::string& name) {
  const int b = m.body_id(name);
  EXPECT_GE(b, 0) << name;
  const double* q = &m.body_quat[4 * static_cast<std::size_t>(b)];
  return Eigen::Quaterniond(q[0], q[1], q[2], q[3]).toRotationMatrix();
}
Eigen::Matrix3d geom_rot(const sap::Model& m, int g) {
  const double* q = &m.geom_quat[4 * static_cast<std::size_t>(g)];
  return Eigen::Quaterniond(q[0], q[1], q[2], q[3]).toRotationMatrix();
}
Eigen::Matrix3d Rx(double a) { return Eigen::AngleAxisd(a, Eigen::Vector3d::UnitX()).toRotationMatrix(); }
Eigen::Matrix3d Ry(double a) { return Eigen::AngleAxisd(a, Eigen::Vector3d::UnitY()).toRotationMatrix(); }
Eigen::Matrix3d Rz(double a) { return Eigen::AngleAxisd(a, Eigen::Vector3d::UnitZ()).toRotationMatrix(); }

sap::Model load(const std::string& xml, sap::ImportReport* report = nullptr, const sap::ImportOptions& opt = {}) {
  TempDir dir("mjcf");
  return sap::load_mjcf(dir.write("model.xml", xml), report, opt).model;
}

bool has_warning(const sap::ImportReport& r, const std::string& needle, int* count = nullptr) {
  int n = 0;
  for (const std::string& w : r.warnings) n += w.find(needle) != std::string::npos;
  if (count) *count = n;
  return n > 0;
}

// ------------------------------------------------------------------ orientation forms

TEST(Mjcf, OrientationForms) {
  const double d = kPi / 180;
  const sap::Model m = load(R"(<mujoco>
  <worldbody>
    <body name="quat" quat="0 0 0 2"><geom size="0.1"/></body>
    <body name="aa" axisangle="0 0 3 90"><geom size="0.1"/></body>
    <body name="euler" euler="10 20 30"><geom size="0.1"/></body>
    <body name="xy" xyaxes="0 1 0 -1 0 0"><geom size="0.1"/></body>
    <body name="xy_skew" xyaxes="1 0 0 1 1 0"><geom size="0.1"/></body>
    <body name="z" zaxis="1 0 0"><geom size="0.1"/></body>
    <body name="zdown" zaxis="0 0 -1"><geom size="0.1"/></body>
  </worldbody>
</mujoco>)");
  EXPECT_TRUE(body_rot(m, "quat").isApprox(Rz(kPi), 1e-14));    // normalized (0 0 0 2)
  EXPECT_TRUE(body_rot(m, "aa").isApprox(Rz(kPi / 2), 1e-14));  // degrees by default, axis normalized
  // Default eulerseq "xyz": rotations about the moving axes, R = Rx Ry Rz.
  EXPECT_TRUE(body_rot(m, "euler").isApprox(Rx(10 * d) * Ry(20 * d) * Rz(30 * d), 1e-14));
  EXPECT_TRUE(body_rot(m, "xy").isApprox(Rz(kPi / 2), 1e-14));
  // y is made orthogonal to x: (1 1 0) -> (0 1 0).
  EXPECT_TRUE(body_rot(m, "xy_skew").isApprox(Eigen::Matrix3d::Identity(), 1e-14));
  // zaxis: the minimal rotation taking z onto the given direction.
  EXPECT_TRUE(body_rot(m, "z").isApprox(Ry(kPi / 2), 1e-14));
  EXPECT_TRUE((body_rot(m, "zdown") * Eigen::Vector3d::UnitZ()).isApprox(-Eigen::Vector3d::UnitZ(), 1e-14));
}

TEST(Mjcf, EulerSequencesAndRadians) {
  const sap::Model m = load(R"(<mujoco>
  <compiler angle="radian" eulerseq="ZYX"/>
  <worldbody>
    <body name="fixed" euler="0.1 0.2 0.3"><geom size="0.1"/></body>
    <body name="aa" axisangle="1 0 0 0.5"><geom size="0.1"/></body>
  </worldbody>
</mujoco>)");
  // Upper case: fixed (parent) axes, each rotation premultiplies: R = Rx(0.3) Ry(0.2) Rz(0.1).
  EXPECT_TRUE(body_rot(m, "fixed").isApprox(Rx(0.3) * Ry(0.2) * Rz(0.1), 1e-14));
  EXPECT_TRUE(body_rot(m, "aa").isApprox(Rx(0.5), 1e-14));
  const sap::Model m2 = load(R"(<mujoco>
  <compiler angle="radian" eulerseq="zyx"/>
  <worldbody><body name="moving" euler="0.1 0.2 0.3"><geom size="0.1"/></body></worldbody>
</mujoco>)");
  EXPECT_TRUE(body_rot(m2, "moving").isApprox(Rz(0.1) * Ry(0.2) * Rx(0.3), 1e-14));
}

TEST(Mjcf, FramesComposeWithTheirChildren) {
  const sap::Model m = load(R"(<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <frame pos="1 0 0" axisangle="0 0 1 1.5707963267948966">
      <body name="b" pos="1 0 0">
        <frame pos="0 0 1" euler="0.3 0 0">
          <joint name="j" axis="0 1 0" pos="0 0.5 0"/>
          <geom name="g" type="box" size="0.1 0.2 0.3" pos="0 1 0"/>
        </frame>
      </body>
    </frame>
  </worldbody>
</mujoco>)");
  const int b = m.body_id("b");
  EXPECT_NEAR(m.body_pos[3 * b + 0], 1, 1e-14);
  EXPECT_NEAR(m.body_pos[3 * b + 1], 1, 1e-14);
  EXPECT_TRUE(body_rot(m, "b").isApprox(Rz(kPi / 2), 1e-14));
  const int j = m.joint_id("j");
  // Joint anchor and axis are expressed in the body frame through the inner frame.
  const Eigen::Vector3d anchor = Eigen::Vector3d(0, 0, 1) + Rx(0.3) * Eigen::Vector3d(0, 0.5, 0);
  const Eigen::Vector3d axis = Rx(0.3) * Eigen::Vector3d::UnitY();
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(m.jnt_pos[3 * j + k], anchor[k], 1e-14);
    EXPECT_NEAR(m.jnt_axis[3 * j + k], axis[k], 1e-14);
  }
  const int g = m.geom_id("g");
  EXPECT_TRUE(geom_rot(m, g).isApprox(Rx(0.3), 1e-14));
}

// ------------------------------------------------------------------ defaults

TEST(Mjcf, DefaultClassesAndChildclass) {
  const sap::Model m = load(R"(<mujoco>
  <default>
    <joint damping="1"/>
    <geom size="0.1 0.2" type="capsule"/>
    <default class="A">
      <joint armature="0.1"/>
      <default class="B"><joint damping="3"/><geom size="0.5"/></default>
    </default>
  </default>
  <worldbody>
    <body name="top" childclass="A">
      <joint name="inherits_A"/>
      <joint name="class_B" class="B"/>
      <joint name="explicit" class="B" damping="7" armature="0.2"/>
      <geom name="g_main"/>
      <geom name="g_B" class="B"/>
      <geom name="g_partial" size="0.3"/>
      <body name="child">
        <joint name="nested_inherits_A"/>
        <geom size="0.1"/>
      </body>
    </body>
    <body name="other">
      <joint name="main_only"/>
      <geom size="0.1"/>
    </body>
  </worldbody>
</mujoco>)");
  auto dof = [&](const std::string& j) {
    return static_cast<std::size_t>(m.jnt_dofadr[static_cast<std::size_t>(m.joint_id(j))]);
  };
  EXPECT_DOUBLE_EQ(m.dof_damping[dof("inherits_A")], 1);
  EXPECT_DOUBLE_EQ(m.dof_armature[dof("inherits_A")], 0.1);
  EXPECT_DOUBLE_EQ(m.dof_damping[dof("class_B")], 3);
  EXPECT_DOUBLE_EQ(m.dof_armature[dof("class_B")], 0.1);
  EXPECT_DOUBLE_EQ(m.dof_damping[dof("explicit")], 7);
  EXPECT_DOUBLE_EQ(m.dof_armature[dof("explicit")], 0.2);
  EXPECT_DOUBLE_EQ(m.dof_armature[dof("nested_inherits_A")], 0.1);
  EXPECT_DOUBLE_EQ(m.dof_armature[dof("main_only")], 0);
  EXPECT_DOUBLE_EQ(m.dof_damping[dof("main_only")], 1);
  // Geom sizes: fewer values than the type needs keep the inherited rest.
  const auto size = [&](const std::string& g, int k) {
    return m.geom_size[3 * static_cast<std::size_t>(m.geom_id(g)) + static_cast<std::size_t>(k)];
  };
  EXPECT_DOUBLE_EQ(size("g_main", 0), 0.1);
  EXPECT_DOUBLE_EQ(size("g_main", 1), 0.2);
  EXPECT_DOUBLE_EQ(size("g_B", 0), 0.5);
  EXPECT_DOUBLE_EQ(size("g_B", 1), 0.2);
  EXPECT_DOUBLE_EQ(size("g_partial", 0), 0.3);
  EXPECT_DOUBLE_EQ(size("g_partial", 1), 0.2);
  EXPECT_EQ(m.geom_type[static_cast<std::size_t>(m.geom_id("g_B"))], sap::kGeomCapsule);
}

TEST(Mjcf, IncludeRelativeToTheIncludingFile) {
  TempDir dir("mjcf");
  dir.write("parts/arm.xml", R"(<mujoco>
  <include file="defaults/arm_defaults.xml"/>
  <worldbody><body name="arm"><joint name="shoulder" class="arm"/><geom size="0.1"/></body></worldbody>
</mujoco>)");
  dir.write("parts/defaults/arm_defaults.xml",
            R"(<mujoco><default><default class="arm"><joint damping="4"/></default></default></mujoco>)");
  dir.write("scene.xml", R"(<mujoco>
  <include file="parts/arm.xml"/>
  <worldbody><geom name="floor" type="plane" size="0 0 1"/></worldbody>
</mujoco>)");
  const sap::Model m = sap::load_mjcf(dir.path() + "/scene.xml").model;
  ASSERT_GE(m.joint_id("shoulder"), 0);
  EXPECT_DOUBLE_EQ(m.dof_damping[0], 4);
  // World geoms come first (MuJoCo's geom order is by body).
  EXPECT_EQ(m.geom_names[0], "floor");
}

// ------------------------------------------------------------------ geoms and inertia

TEST(Mjcf, FromtoCapsuleCylinderAndBox) {
  const sap::Model m = load(R"(<mujoco>
  <worldbody>
    <body name="b">
      <freejoint/>
      <geom name="cap" type="capsule" fromto="0.1 0.2 0.3 0.4 0.6 0.3" size="0.05"/>
      <geom name="cyl" type="cylinder" fromto="0 0 0 0 0 -2" size="0.1"/>
      <geom name="box" type="box" fromto="0 0 0 0 3 4" size="0.1 0.7"/>
    </body>
  </worldbody>
</mujoco>)");
  const int cap = m.geom_id("cap");
  const Eigen::Vector3d a(0.1, 0.2, 0.3), b(0.4, 0.6, 0.3);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(m.geom_pos[3 * cap + k], 0.5 * (a[k] + b[k]), 1e-15);
  EXPECT_DOUBLE_EQ(m.geom_size[3 * cap], 0.05);
  EXPECT_NEAR(m.geom_size[3 * cap + 1], 0.5 * (b - a).norm(), 1e-15);
  // The geom z axis lies along the segment (MuJoCo points it from `to` to `from`).
  EXPECT_TRUE((geom_rot(m, cap) * Eigen::Vector3d::UnitZ()).isApprox((a - b).normalized(), 1e-14));
  const int cyl = m.geom_id("cyl");
  EXPECT_NEAR(m.geom_size[3 * cyl + 1], 1.0, 1e-15);
  EXPECT_TRUE((geom_rot(m, cyl) * Eigen::Vector3d::UnitZ()).isApprox(Eigen::Vector3d::UnitZ(), 1e-14));
  const int box = m.geom_id("box");
  EXPECT_DOUBLE_EQ(m.geom_size[3 * box + 0], 0.1);
  EXPECT_DOUBLE_EQ(m.geom_size[3 * box + 1], 0.1);  // square section of half-width size[0]
  EXPECT_NEAR(m.geom_size[3 * box + 2], 2.5, 1e-15);
}

TEST(Mjcf, InertiaFromGeoms) {
  const sap::Model m = load(R"(<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <body name="box">
      <freejoint/>
      <geom type="box" size="0.1 0.2 0.3" density="500" pos="0.1 0 0" axisangle="0 0 1 0.7"/>
    </body>
    <body name="two_spheres">
      <freejoint/>
      <geom type="sphere" size="0.1" pos="-0.5 0 0" mass="2"/>
      <geom type="sphere" size="0.1" pos="0.5 0 0" mass="2"/>
    </body>
    <body name="explicit">
      <freejoint/>
      <inertial pos="0 0 0.1" mass="3" diaginertia="1 2 3" axisangle="1 0 0 1.5707963267948966"/>
      <geom type="sphere" size="1"/>
    </body>
    <body name="capsule">
      <freejoint/>
      <geom type="capsule" size="0.1 0.2"/>
    </body>
  </worldbody>
</mujoco>)");
  auto tensor = [&](int b) {
    const double* I = &m.body_inertia[6 * static_cast<std::size_t>(b)];
    Eigen::Matrix3d T;
    T << I[0], I[3], I[4], I[3], I[1], I[5], I[4], I[5], I[2];
    return T;
  };
  // Box: m = rho 8abc, I = m/3 (b^2+c^2, ...) in the geom frame, rotated into the body.
  const int bb = m.body_id("box");
  const double mb = 500 * 8 * 0.1 * 0.2 * 0.3;
  EXPECT_NEAR(m.body_mass[bb], mb, 1e-12);
  EXPECT_NEAR(m.body_ipos[3 * bb], 0.1, 1e-15);
  const Eigen::Vector3d dbox(mb / 3 * (0.04 + 0.09), mb / 3 * (0.01 + 0.09), mb / 3 * (0.01 + 0.04));
  EXPECT_TRUE(tensor(bb).isApprox(Rz(0.7) * dbox.asDiagonal() * Rz(0.7).transpose(), 1e-13));
  // Two spheres: parallel axis m d^2 on y and z.
  const int bs = m.body_id("two_spheres");
  EXPECT_NEAR(m.body_mass[bs], 4, 1e-14);
  const double is = 0.4 * 2 * 0.01;
  EXPECT_TRUE(
      tensor(bs).isApprox(Eigen::Vector3d(2 * is, 2 * is + 4 * 0.25, 2 * is + 4 * 0.25).asDiagonal().toDenseMatrix(),
                          1e-13));
  // An <inertial> wins over the geoms (inertiafromgeom="auto").
  const int be = m.body_id("explicit");
  EXPECT_DOUBLE_EQ(m.body_mass[be], 3);
  EXPECT_DOUBLE_EQ(m.body_ipos[3 * be + 2], 0.1);
  EXPECT_TRUE(tensor(be).isApprox(Eigen::Vector3d(1, 3, 2).asDiagonal().toDenseMatrix(), 1e-13));
  // Capsule of density 1000: cylinder plus two hemispheres (com 3r/8 from their flat face).
  const int bc = m.body_id("capsule");
  const double r = 0.1, h = 0.2, mc = 1000 * kPi * r * r * 2 * h, ms = 1000 * 4.0 / 3.0 * kPi * r * r * r;
  EXPECT_NEAR(m.body_mass[bc], mc + ms, 1e-12);
  const double hemi_com = h + 3 * r / 8, ihemi = 0.4 * (ms / 2) * r * r - (ms / 2) * (3 * r / 8) * (3 * r / 8);
  const double ixx = mc * (3 * r * r + 4 * h * h) / 12 + 2 * (ihemi + (ms / 2) * hemi_com * hemi_com);
  EXPECT_NEAR(tensor(bc)(0, 0), ixx, 1e-14);
  EXPECT_NEAR(tensor(bc)(2, 2), 0.5 * mc * r * r + 0.4 * ms * r * r, 1e-14);
}

TEST(Mjcf, CompilerMassOptions) {
  const sap::Model m = load(R"(<mujoco>
  <compiler boundmass="0.5" boundinertia="0.01" settotalmass="3"/>
  <worldbody>
    <body name="light"><freejoint/><geom size="0.01" density="1"/></body>
    <body name="heavy"><freejoint/><inertial pos="0 0 0" mass="2" diaginertia="1 1 1"/></body>
  </worldbody>
</mujoco>)");
  // boundmass lifts the light body to 0.5, then settotalmass scales 0.5 + 2 to 3.
  EXPECT_NEAR(m.body_mass[static_cast<std::size_t>(m.body_id("light"))], 0.5 * 3 / 2.5, 1e-12);
  EXPECT_NEAR(m.body_mass[static_cast<std::size_t>(m.body_id("heavy"))], 2 * 3 / 2.5, 1e-12);
  EXPECT_NEAR(m.body_inertia[6 * static_cast<std::size_t>(m.body_id("light"))], 0.01 * 3 / 2.5, 1e-12);
}

// ------------------------------------------------------------------ joints and dynamics

TEST(Mjcf, PendulumMatchesTheAnalyticDynamics) {
  // A sphere (radius r, mass m) at distance l below a hinge along y offset from the body origin.
  const sap::Model m = load(R"(<mujoco>
  <compiler angle="degree"/>
  <option gravity="0 0 -9.81"/>
  <worldbody>
    <body name="p" pos="0 0 2">
      <joint name="hinge" axis="0 1 0" pos="0 0 0.5" armature="0.03" range="-30 45" ref="10"/>
      <geom type="sphere" size="0.1" mass="2" pos="0 0 -0.5"/>
    </body>
  </worldbody>
</mujoco>)");
  const int j = m.joint_id("hinge");
  EXPECT_TRUE(m.jnt_limited[j]);  // autolimits: a range makes the joint limited
  EXPECT_NEAR(m.jnt_range[2 * j], -30 * kPi / 180, 1e-15);
  EXPECT_NEAR(m.jnt_range[2 * j + 1], 45 * kPi / 180, 1e-15);
  EXPECT_NEAR(m.jnt_qpos0[j], 10 * kPi / 180, 1e-15);
  EXPECT_NEAR(m.qpos0[0], 10 * kPi / 180, 1e-15);
  sap::DynamicsEvaluator ev(m);
  const double mass = 2, r = 0.1, l = 1.0;
  for (double q : {-0.4, 0.0, 0.7}) {
    Eigen::VectorXd qv(1), vv(1);
    qv << q;
    vv << 0.3;
    ev.compute(qv, vv);
    EXPECT_NEAR(ev.mass_matrix()(0, 0), 0.4 * mass * r * r + mass * l * l + 0.03, 1e-12);
    // The body frame is at the reference angle when q = ref: the pendulum angle is q - ref.
    EXPECT_NEAR(ev.bias()[0], mass * 9.81 * l * std::sin(q - m.jnt_qpos0[j]), 1e-12);
  }
}

TEST(Mjcf, BallJointLimitsAreDroppedWithAWarning) {
  sap::ImportReport report;
  const sap::Model m = load(R"(<mujoco>
  <worldbody>
    <body><joint name="ball" type="ball" range="0 30"/><geom size="0.1"/></body>
  </worldbody>
</mujoco>)",
                            &report);
  EXPECT_EQ(m.jnt_type[0], sap::kJointBall);
  EXPECT_EQ(m.jnt_limited[0], 0);
  EXPECT_TRUE(has_warning(report, "model.xml:3: ball joint limit dropped"));
}

// ------------------------------------------------------------------ actuators

TEST(Mjcf, ActuatorMapping) {
  const sap::Model m = load(R"(<mujoco>
  <compiler angle="radian"/>
  <default>
    <default class="servo">
      <general dyntype="none" biastype="affine" ctrlrange="-1 1" forcerange="-30 30"/>
      <position kp="20" kv="2"/>
    </default>
  </default>
  <worldbody>
    <body>
      <joint name="a" axis="1 0 0" range="-1 2"/>
      <joint name="b" axis="0 1 0"/>
      <joint name="c" type="slide"/>
      <geom size="0.1"/>
    </body>
  </worldbody>
  <actuator>
    <motor name="motor" joint="a" gear="3" ctrlrange="-1 1" forcerange="-2 2"/>
    <general name="gain2" joint="b" gainprm="2" forcerange="-4 4"/>
    <position name="pos_default_kv" joint="a" class="servo" kp="50"/>
    <position name="pos_range" joint="a" class="servo" kv="5" inheritrange="0.5"/>
    <velocity name="vel" joint="b" kv="3"/>
    <general name="gen_servo" joint="c" gainprm="100" biastype="affine" biasprm="0 -100 -8" ctrlrange="0 0.04"/>
    <general name="gen_no_bias" joint="c" gainprm="100" biasprm="0 -100 -8"/>
  </actuator>
</mujoco>)");
  ASSERT_EQ(m.nu, 7);
  auto u = [&](const std::string& n) { return static_cast<std::size_t>(m.actuator_id(n)); };
  EXPECT_EQ(m.actuator_type[u("motor")], sap::kActMotor);
  EXPECT_DOUBLE_EQ(m.actuator_gear[u("motor")], 3);
  EXPECT_TRUE(m.actuator_ctrllimited[u("motor")]);  // autolimits
  EXPECT_TRUE(m.actuator_forcelimited[u("motor")]);
  // MuJoCo: force = clamp(2 ctrl, -4, 4); ours: gear 2, clamp(ctrl, -2, 2) -- the same force.
  EXPECT_DOUBLE_EQ(m.actuator_gear[u("gain2")], 2);
  EXPECT_DOUBLE_EQ(m.actuator_forcerange[2 * u("gain2") + 1], 2);
  EXPECT_FALSE(m.actuator_ctrllimited[u("gain2")]);
  EXPECT_EQ(m.actuator_type[u("pos_default_kv")], sap::kActPosition);
  EXPECT_DOUBLE_EQ(m.actuator_kp[u("pos_default_kv")], 50);
  EXPECT_DOUBLE_EQ(m.actuator_kd[u("pos_default_kv")], 2);  // kv from the class
  EXPECT_DOUBLE_EQ(m.actuator_forcerange[2 * u("pos_default_kv")], -30);
  EXPECT_DOUBLE_EQ(m.actuator_kp[u("pos_range")], 20);  // kp from the class
  EXPECT_DOUBLE_EQ(m.actuator_kd[u("pos_range")], 5);
  EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[2 * u("pos_range")], 0.5 - 0.75);  // mid +- 0.5 half-width
  EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[2 * u("pos_range") + 1], 0.5 + 0.75);
  EXPECT_EQ(m.actuator_type[u("vel")], sap::kActVelocity);
  EXPECT_DOUBLE_EQ(m.actuator_kd[u("vel")], 3);
  EXPECT_EQ(m.actuator_type[u("gen_servo")], sap::kActPosition);
  EXPECT_DOUBLE_EQ(m.actuator_kp[u("gen_servo")], 100);
  EXPECT_DOUBLE_EQ(m.actuator_kd[u("gen_servo")], 8);
  EXPECT_EQ(m.actuator_dofadr[u("gen_servo")], m.jnt_dofadr[static_cast<std::size_t>(m.joint_id("c"))]);
  // biastype defaults to "none": biasprm is unused and the actuator is a motor of gain 100.
  EXPECT_EQ(m.actuator_type[u("gen_no_bias")], sap::kActMotor);
  EXPECT_DOUBLE_EQ(m.actuator_gear[u("gen_no_bias")], 100);
}

// A general affine actuator, force = G (g0 ctrl + b1 G q + b2 G qdot), maps onto our servo with
// gear g = -G b1/g0, kp = G g0/g, kd = -G^2 b2/g^2 (docs/model-import.md, "Actuators"). Adroit's
// arm (gainprm 500, biasprm 0 -200 0): g = 0.4, kp = 1250, so g^2 kp = 200 on q and g kp = 500 on
// ctrl, as MuJoCo's. The force law is checked against MuJoCo's qfrc_actuator in
// test_mjcf_fixtures (AffineActuators).
TEST(Mjcf, GeneralAffineActuatorMapsExactly) {
  const sap::Model m = load(R"(<mujoco>
  <worldbody>
    <body><joint name="a" type="slide"/><joint name="b"/><geom size="0.1"/></body>
  </worldbody>
  <actuator>
    <general name="adroit" joint="a" ctrlrange="-0.3 0.5" biastype="affine" gainprm="500 0 0" biasprm="0 -200 0"/>
    <general name="geared" joint="b" gear="2" forcerange="-3 6" biastype="affine" gainprm="30" biasprm="0 -50 -4"/>
    <general name="vel" joint="b" biastype="affine" gainprm="10" biasprm="0 0 -5"/>
  </actuator>
</mujoco>)");
  auto u = [&](const std::string& n) { return static_cast<std::size_t>(m.actuator_id(n)); };
  EXPECT_EQ(m.actuator_type[u("adroit")], sap::kActPosition);
  EXPECT_DOUBLE_EQ(m.actuator_gear[u("adroit")], 0.4);
  EXPECT_DOUBLE_EQ(m.actuator_kp[u("adroit")], 1250);
  EXPECT_DOUBLE_EQ(m.actuator_kd[u("adroit")], 0);
  EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[2 * u("adroit")], -0.3);  // ctrl units unchanged
  // G = 2: g = 2 * 50/30 = 10/3, kp = G g0/g = 18, kd = G^2 4/g^2 = 1.44; the joint force bound
  // g forcerange' = G forcerange = [-6, 12].
  EXPECT_EQ(m.actuator_type[u("geared")], sap::kActPosition);
  EXPECT_NEAR(m.actuator_gear[u("geared")], 10.0 / 3, 1e-14);
  EXPECT_NEAR(m.actuator_kp[u("geared")], 18, 1e-12);
  EXPECT_NEAR(m.actuator_kd[u("geared")], 1.44, 1e-12);
  EXPECT_NEAR(m.actuator_gear[u("geared")] * m.actuator_forcerange[2 * u("geared")], -6, 1e-12);
  EXPECT_NEAR(m.actuator_gear[u("geared")] * m.actuator_forcerange[2 * u("geared") + 1], 12, 1e-12);
  // Velocity form: g = 5/10, kd = 10/0.5 = 20: g^2 kd = 5 on qdot, g kd = 10 on ctrl.
  EXPECT_EQ(m.actuator_type[u("vel")], sap::kActVelocity);
  EXPECT_DOUBLE_EQ(m.actuator_gear[u("vel")], 0.5);
  EXPECT_DOUBLE_EQ(m.actuator_kd[u("vel")], 20);
}

// ------------------------------------------------------------------ keyframes, names, appending

TEST(Mjcf, KeyframesNamesAndAppending) {
  TempDir dir("mjcf");
  const std::string robot = dir.write("robot.xml", R"(<mujoco>
  <compiler angle="radian"/>
  <worldbody>
    <body name="base" pos="0 0 1"><freejoint/><geom size="0.1"/>
      <body name="arm"><joint name="j" ref="0.2"/><geom size="0.1"/></body>
    </body>
  </worldbody>
  <actuator><motor name="m" joint="j"/></actuator>
  <keyframe>
    <key name="full" qpos="1 2 3 0 0 0 2 0.5" ctrl="0.25"/>
    <key name="defaults"/>
  </keyframe>
</mujoco>)");
  sap::ModelBuilder b;
  sap::ImportOptions a, c;
  a.name_prefix = "a/";
  c.name_prefix = "b/";
  sap::ImportReport ra, rb;
  sap::add_mjcf(robot, b, &ra, a);
  sap::add_mjcf(robot, b, &rb, c);
  const sap::Model m = b.finalize();
  EXPECT_EQ(m.nbody, 5);
  EXPECT_GE(m.body_id("a/base"), 0);
  EXPECT_EQ(m.body_parentid[static_cast<std::size_t>(m.body_id("b/arm"))], m.body_id("b/base"));
  EXPECT_EQ(m.actuator_dofadr[static_cast<std::size_t>(m.actuator_id("b/m"))],
            m.jnt_dofadr[static_cast<std::size_t>(m.joint_id("b/j"))]);
  ASSERT_EQ(rb.keyframes.size(), 2u);
  // Keyframes cover the joints of their own file; quaternions are normalized.
  const std::vector<double> full{1, 2, 3, 0, 0, 0, 1, 0.5};
  EXPECT_EQ(rb.keyframes[0].qpos, full);
  EXPECT_EQ(rb.keyframes[0].ctrl, std::vector<double>{0.25});
  const std::vector<double> defaults{0, 0, 1, 1, 0, 0, 0, 0.2};  // qpos0: body pose, ref
  EXPECT_EQ(rb.keyframes[1].qpos, defaults);
  EXPECT_EQ(rb.keyframes[1].ctrl, std::vector<double>{0.0});
}

// ------------------------------------------------------------------ contact parameters

TEST(Mjcf, ContactMaterialRule) {
  sap::ImportOptions opt;
  const std::string xml = R"(<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1" solref="0.02 1"/>
    <body name="ball" pos="0 0 1">
      <freejoint/>
      <geom name="ball" size="0.1" mass="3" solref="0.02 1"/>
      <body name="tail"><joint axis="1 0 0"/><geom name="tail" size="0.05" mass="1" solref="0.01 0.5"/></body>
    </body>
    <body name="soft" pos="2 0 1">
      <freejoint/>
      <geom name="direct" size="0.1" mass="2" solref="-1000 -30"/>
      <geom name="unset" size="0.1" mass="0" pos="0 0 0.2"/>
    </body>
  </worldbody>
</mujoco>)";
  const sap::Model m = load(xml, nullptr, opt);
  auto k = [&](const std::string& g) { return m.geom_stiffness[static_cast<std::size_t>(m.geom_id(g))]; };
  auto tau = [&](const std::string& g) { return m.geom_dissipation[static_cast<std::size_t>(m.geom_id(g))]; };
  // Static geoms are rigid; tau_g = tc zeta^2.
  EXPECT_DOUBLE_EQ(k("floor"), 1e12);
  EXPECT_DOUBLE_EQ(tau("floor"), 0.02);
  // Moving geoms: mass of their tree (3 + 1 kg) times w^2 = 1/(tc zeta)^2.
  EXPECT_NEAR(k("ball"), 4.0 / (0.02 * 0.02), 1e-9);
  EXPECT_NEAR(k("tail"), 4.0 / (0.005 * 0.005), 1e-6);
  EXPECT_NEAR(tau("tail"), 0.01 * 0.25, 1e-15);
  // The ball on the floor is a mass-spring-damper with the frequency and damping ratio of
  // MuJoCo's reference dynamics: series stiffness, summed time scales.
  const double kp = k("ball") * k("floor") / (k("ball") + k("floor")), tp = tau("ball") + tau("floor");
  const double w = std::sqrt(kp / 4.0);
  EXPECT_NEAR(w, 1 / 0.02, 1e-6);
  EXPECT_NEAR(kp * tp / (2 * std::sqrt(kp * 4.0)), 1.0, 1e-6);  // zeta
  // Negative solref: w^2 = stiffness, 2 zeta w = damping.
  EXPECT_NEAR(k("direct"), 2 * 1000, 1e-9);
  EXPECT_NEAR(tau("direct"), 0.5 * 30 / 1000, 1e-15);
  // ImportOptions defaults apply only to geoms whose solref the file leaves unset.
  opt.default_stiffness = 123;
  opt.default_dissipation = 0.5;
  const sap::Model m2 = load(xml, nullptr, opt);
  EXPECT_DOUBLE_EQ(m2.geom_stiffness[static_cast<std::size_t>(m2.geom_id("unset"))], 123);
  EXPECT_DOUBLE_EQ(m2.geom_dissipation[static_cast<std::size_t>(m2.geom_id("unset"))], 0.5);
  EXPECT_DOUBLE_EQ(m2.geom_stiffness[static_cast<std::size_t>(m2.geom_id("ball"))], k("ball"));
  // Friction: the first (sliding) component.
  const sap::Model m3 = load(
      R"(<mujoco><worldbody><body><freejoint/><geom size="0.1" friction="0.3 0.1 0.01"/></body></worldbody></mujoco>)");
  EXPECT_DOUBLE_EQ(m3.geom_friction[0], 0.3);
}

TEST(Mjcf, ContactFilteringFollowsMujocoWeldGroups) {
  const sap::Model m = load(R"(<mujoco>
  <worldbody>
    <body name="A"><joint/><geom size="0.1"/>
      <body name="B"><geom size="0.1"/>
        <body name="C"><joint/><geom size="0.1"/>
          <body name="D"><joint/><geom size="0.1"/></body>
        </body>
      </body>
    </body>
    <body name="E"><freejoint/><geom size="0.1"/></body>
    <body name="F"><freejoint/><geom size="0.1"/></body>
  </worldbody>
  <contact><exclude body1="E" body2="F"/></contact>
</mujoco>)");
  auto paired = [&](const std::string& a, const std::string& b) {
    const int ba = m.body_id(a), bb = m.body_id(b);
    for (int p = 0; p < m.npair; ++p) {
      const int b0 = m.geom_bodyid[static_cast<std::size_t>(m.pair_geom0[static_cast<std::size_t>(p)])];
      const int b1 = m.geom_bodyid[static_cast<std::size_t>(m.pair_geom1[static_cast<std::size_t>(p)])];
      if ((b0 == ba && b1 == bb) || (b0 == bb && b1 == ba)) return true;
    }
    return false;
  };
  EXPECT_FALSE(paired("A", "B"));  // same weld group (B has no joint)
  EXPECT_FALSE(paired("A", "C"));  // C's parent weld group is A's
  EXPECT_FALSE(paired("B", "C"));
  EXPECT_FALSE(paired("C", "D"));  // parent and child
  EXPECT_TRUE(paired("A", "D"));
  EXPECT_TRUE(paired("B", "D"));
  EXPECT_FALSE(paired("E", "F"));  // <exclude>
  EXPECT_TRUE(paired("A", "E"));
}

// ------------------------------------------------------------------ options and warnings

TEST(Mjcf, OptionsAndWarningsForIgnoredElements) {
  sap::ImportReport report;
  const sap::Model m = load(R"(<mujoco>
  <option timestep="0.01" gravity="0 0 -1" iterations="50">
    <flag gravity="disable" warmstart="disable"/>
  </option>
  <visual><global offwidth="100"/></visual>
  <worldbody>
    <light pos="0 0 3"/>
    <body name="b">
      <freejoint/>
      <geom size="0.1" rgba="1 0 0 1" bogus="3"/>
      <site name="s1"/>
      <camera name="c0"/>
      <camera name="c"/>
    </body>
  </worldbody>
  <sensor><framepos objtype="site" objname="s1"/></sensor>
  <keyframe><key qvel="1 2 3 4 5 6"/></keyframe>
</mujoco>)",
                            &report);
  EXPECT_DOUBLE_EQ(m.timestep, 0.01);
  EXPECT_DOUBLE_EQ(m.gravity[2], 0.0);  // flag gravity="disable"
  int n = 0;
  EXPECT_TRUE(has_warning(report, "model.xml:12: camera ignored: no effect on the dynamics (2 occurrences)", &n));
  EXPECT_EQ(n, 1);  // reported once, with the count
  EXPECT_EQ(m.nsite, 1);  // sites are imported (the points of spatial tendons), silently
  EXPECT_TRUE(has_warning(report, "model.xml:2: option iterations ignored"));
  EXPECT_TRUE(has_warning(report, "model.xml:3: option flag warmstart ignored"));
  EXPECT_TRUE(has_warning(report, "model.xml:5: <visual> ignored"));
  EXPECT_TRUE(has_warning(report, "model.xml:7: light ignored"));
  EXPECT_TRUE(has_warning(report, "model.xml:10: attribute 'bogus' of <geom> is not recognized"));
  EXPECT_TRUE(has_warning(report, "model.xml:16: sensor ignored"));
  EXPECT_TRUE(has_warning(report, "model.xml:17: keyframe qvel ignored"));
  EXPECT_FALSE(has_warning(report, "rgba"));  // visual attributes are silent
}

TEST(Mjcf, UnsupportedElementsAreDroppedOnRequest) {
  const std::string xml = R"(<mujoco>
  <worldbody>
    <body name="a"><joint name="j1"/><geom size="0.1"/>
      <body name="b"><joint name="j2"/><geom size="0.1"/>
        <geom type="sdf" mesh="m"/>
      </body>
    </body>
  </worldbody>
  <tendon><fixed name="t" actuatorfrcrange="-1 1"><joint joint="j1" coef="1"/></fixed></tendon>
  <equality><flex flex="f"/></equality>
  <actuator><motor tendon="t"/><motor tendon="t" gear="2"/></actuator>
</mujoco>)";
  sap::ImportOptions opt;
  opt.drop_unsupported = true;
  sap::ImportReport report;
  const sap::Model m = load(xml, &report, opt);
  EXPECT_EQ(m.ngeom, 2);  // the colliding SDF is skipped, and its mass
  EXPECT_TRUE(has_warning(report, "model.xml:5: sdf geom that collides dropped"));
  EXPECT_TRUE(has_warning(report, "model.xml:5: mass of a mesh/hfield geom dropped"));
  EXPECT_TRUE(has_warning(report, "model.xml:9: tendon actuatorfrcrange with several actuators dropped"));
  EXPECT_TRUE(has_warning(report, "model.xml:10: <flex> equality dropped"));
  EXPECT_EQ(m.ntendon, 1);
  EXPECT_EQ(m.neq, 0);
  EXPECT_EQ(m.actuator_forcelimited[0] + m.actuator_forcelimited[1], 0);  // the range was dropped
}

// ------------------------------------------------------------------ errors with file:line

struct BadSnippet {
  const char* xml;
  const char* expected;  // substring of the error, after "<file>:"
};

TEST(Mjcf, ErrorsNameFileAndLine) {
  const std::vector<BadSnippet> cases = {
      {"<mujoco>\n<worldbody>\n<body>\n</worldbody>\n</mujoco>", ": XML parse error"},
      {"<robot>\n</robot>", "model.xml:1: expected a <mujoco> root element, got <robot>"},
      {"<mujoco>\n<worldbody>\n<body pos=\"0 0 x\"/>\n</worldbody>\n</mujoco>",
       "model.xml:3: attribute 'pos': expected a number, got 'x'"},
      {"<mujoco>\n<worldbody>\n<body pos=\"1 2\"/>\n</worldbody>\n</mujoco>",
       "model.xml:3: attribute 'pos': expected 3 numbers, got 2"},
      {"<mujoco>\n<worldbody>\n<body>\n<joint type=\"screw\"/>\n</body>\n</worldbody>\n</mujoco>",
       "model.xml:4: joint type: expected hinge, slide, ball or free, got 'screw'"},
      {"<mujoco>\n<worldbody>\n<body childclass=\"nope\"/>\n</worldbody>\n</mujoco>",
       "model.xml:3: unknown default class 'nope'"},
      {"<mujoco>\n<include file=\"missing.xml\"/>\n</mujoco>", "model.xml:2: cannot open file"},
      {"<mujoco>\n<worldbody>\n<body><joint name=\"j\"/><geom size=\"1\"/></body>\n</worldbody>\n<tendon>\n<spatial>\n"
       "<site site=\"s\"/>\n</spatial>\n</tendon>\n</mujoco>",
       "model.xml:7: spatial tendon: unknown site 's'"},
      {"<mujoco>\n<worldbody>\n<body><joint name=\"j\"/><geom size=\"1\"/></body>\n</worldbody>\n<equality>\n"
       "<joint joint1=\"k\"/>\n</equality>\n</mujoco>",
       "model.xml:6: joint equality: unknown joint 'k'"},
      {"<mujoco>\n<worldbody>\n<body><joint name=\"j\"/><geom size=\"1\"/></body>\n</worldbody>\n<tendon>\n<fixed>\n"
       "<joint joint=\"x\" coef=\"1\"/>\n</fixed>\n</tendon>\n</mujoco>",
       "model.xml:7: tendon: unknown joint 'x'"},
      {"<mujoco>\n<worldbody>\n<body>\n<freejoint/>\n<geom type=\"mesh\" mesh=\"m\"/>\n</body>\n</worldbody>\n</mujoco>",
       "model.xml:5: geom refers to unknown mesh 'm'"},
      {"<mujoco>\n<worldbody>\n<body>\n<geom size=\"1\"/>\n<body>\n<freejoint/>\n<geom size=\"1\"/>\n</body>\n</body>\n"
       "</worldbody>\n</mujoco>",
       "model.xml:6: a free joint must belong to a child of the world body"},
      {"<mujoco>\n<worldbody>\n<body><joint/><geom size=\"1\"/></body>\n</worldbody>\n<actuator>\n"
       "<motor joint=\"nope\"/>\n</actuator>\n</mujoco>",
       "model.xml:6: actuator: unknown joint 'nope'"},
      {"<mujoco>\n<worldbody>\n<body><joint name=\"j\"/><geom size=\"1\"/></body>\n</worldbody>\n<actuator>\n"
       "<general joint=\"j\" gainprm=\"2\" biastype=\"affine\" biasprm=\"1 -2 -3\"/>\n</actuator>\n</mujoco>",
       "model.xml:6: actuator bias offset is not supported: actuator: gainprm 2, biasprm (1, -2, -3)"},
      {"<mujoco>\n<worldbody>\n<body><joint name=\"j\"/><geom size=\"1\"/></body>\n</worldbody>\n<actuator>\n"
       "<general joint=\"j\" gainprm=\"2\" biastype=\"affine\" biasprm=\"0 2 0\"/>\n</actuator>\n</mujoco>",
       "model.xml:6: actuator: gainprm 2, biasprm (0, 2, 0): a positive biasprm[1] or biasprm[2] is positive feedback"},
      {"<mujoco>\n<worldbody>\n<body><joint name=\"j\" type=\"ball\"/><geom size=\"1\"/></body>\n</worldbody>\n"
       "<actuator>\n<position joint=\"j\"/>\n</actuator>\n</mujoco>",
       "model.xml:6: actuator: joint 'j' must be a hinge or slide joint"},
      {"<mujoco>\n<worldbody>\n<body><joint name=\"j\"/><geom size=\"1\"/></body>\n</worldbody>\n<actuator>\n"
       "<general joint=\"j\" dyntype=\"user\"/>\n</actuator>\n</mujoco>",
       "model.xml:6: actuator dynamics is not supported"},
      {"<mujoco>\n<worldbody>\n<body><joint name=\"j\"/><geom size=\"1\"/></body>\n</worldbody>\n<actuator>\n"
       "<position joint=\"j\" gear=\"0\"/>\n</actuator>\n</mujoco>",
       "model.xml:6: actuator: gear must be non-zero"},
      {"<mujoco>\n<worldbody>\n<body>\n<inertial pos=\"0 0 0\" diaginertia=\"1 1 1\"/>\n</body>\n</worldbody>\n</mujoco>",
       "model.xml:4: <inertial> needs a 'mass'"},
      {"<mujoco>\n<worldbody>\n<body quat=\"1 0 0 0\" euler=\"0 0 0\"/>\n</worldbody>\n</mujoco>",
       "model.xml:3: more than one orientation given"},
      {"<mujoco>\n<worldbody>\n<body>\n<joint frictionloss=\"-0.1\"/>\n<geom size=\"1\"/>\n</body>\n</worldbody>\n</mujoco>",
       "model.xml:4: joint frictionloss must be non-negative"},
      {"<mujoco>\n<worldbody>\n<body>\n<freejoint/>\n<geom type=\"capsule\" size=\"0.1\"/>\n</body>\n</worldbody>\n</mujoco>",
       "model.xml:5: capsule geom: size[1] must be positive"},
      {"<mujoco>\n<worldbody>\n<body><joint/><geom size=\"1\"/></body>\n</worldbody>\n<keyframe>\n"
       "<key qpos=\"1 2\"/>\n</keyframe>\n</mujoco>",
       "model.xml:6: attribute 'qpos': expected 1 number, got 2"},
      {"<mujoco>\n<worldbody>\n<body name=\"a\"><freejoint/><geom size=\"1\"/></body>\n</worldbody>\n<contact>\n"
       "<exclude body1=\"a\" body2=\"zz\"/>\n</contact>\n</mujoco>",
       "model.xml:6: <exclude>: unknown body 'zz'"},
      {"<mujoco>\n<worldbody>\n<body>\n<freejoint/>\n<geom type=\"plane\" size=\"1 1 1\"/>\n<geom size=\"1\"/>\n</body>\n"
       "</worldbody>\n</mujoco>",
       "model.xml:5: plane geoms must belong to the world or a body welded to it"},
      {"<mujoco>\n<worldbody>\n<body name=\"a\"/>\n<body name=\"a\"/>\n</worldbody>\n</mujoco>",
       "model.xml:4: repeated body name 'a'"},
      {"<mujoco>\n<worldbody>\n<body>\n<joint axis=\"0 0 0\"/>\n<geom size=\"1\"/>\n</body>\n</worldbody>\n</mujoco>",
       "model.xml:4: joint axis must be non-zero"},
      {"<mujoco>\n<worldbody>\n<body>\n<joint range=\"1 -1\"/>\n<geom size=\"1\"/>\n</body>\n</worldbody>\n</mujoco>",
       "model.xml:4: joint range: lower bound must be below the upper bound"},
      {"<mujoco>\n<compiler autolimits=\"false\"/>\n<worldbody>\n<body>\n<joint range=\"-1 1\"/>\n<geom size=\"1\"/>\n"
       "</body>\n</worldbody>\n</mujoco>",
       "model.xml:5: joint has a range but 'limited' is not set and compiler autolimits is false"},
      {"<mujoco>\n<worldbody>\n<body>\n<joint limited=\"maybe\"/>\n</body>\n</worldbody>\n</mujoco>",
       "model.xml:4: attribute 'limited': expected 'true', 'false' or 'auto', got 'maybe'"},
      {"<mujoco>\n<worldbody>\n<body>\n<freejoint/>\n<geom type=\"ellipsoid\" size=\"1 1\"/>\n</body>\n</worldbody>\n</mujoco>",
       "model.xml:5: ellipsoid geom: size[2] must be positive"},
      {"<mujoco>\n<worldbody>\n<body>\n<freejoint/>\n<geom type=\"sdf\" mesh=\"m\" contype=\"0\" conaffinity=\"0\"/>\n"
       "</body>\n</worldbody>\n</mujoco>",
       "model.xml:5: mass of a mesh/hfield geom is not supported: body '' takes its inertia from its geoms"},
      {"<mujoco>\n<worldbody>\n<body>\n<freejoint/>\n<geom size=\"1\" solref=\"0.02 -1\"/>\n</body>\n</worldbody>\n</mujoco>",
       "model.xml:5: geom solref"},
      {"<mujoco>\n<worldbody>\n<body name=\"b\">\n<joint/>\n</body>\n</worldbody>\n</mujoco>",
       "model.xml:3: body 'b' has joints but no mass in its subtree"},
  };
  for (const BadSnippet& c : cases) {
    SCOPED_TRACE(c.xml);
    try {
      load(c.xml);
      ADD_FAILURE() << "expected an error containing: " << c.expected;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos) << "got: " << e.what();
    }
  }
}

// MuJoCo accepts included files whose root is <mujocoinclude> (Adroit hands, Franka kitchen);
// a main file must still be <mujoco>.
TEST(Mjcf, IncludedFileMayHaveAMujocoincludeRoot) {
  TempDir dir("mjcf");
  dir.write("parts.xml", "<mujocoinclude>\n<body name=\"b\" pos=\"0 0 1\">\n<joint type=\"hinge\"/>\n"
                         "<geom type=\"sphere\" size=\"0.1\"/>\n</body>\n</mujocoinclude>");
  dir.write("main.xml", "<mujoco>\n<worldbody>\n<include file=\"parts.xml\"/>\n</worldbody>\n</mujoco>");
  const sap::Model m = sap::load_mjcf(dir.path() + "/main.xml").model;
  EXPECT_EQ(m.nbody, 2);
  EXPECT_EQ(m.body_names[1], "b");
  EXPECT_EQ(m.njnt, 1);
  dir.write("top.xml", "<mujocoinclude>\n<worldbody/>\n</mujocoinclude>");
  try {
    sap::load_mjcf(dir.path() + "/top.xml");
    ADD_FAILURE() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("top.xml:1: expected a <mujoco> root element, got <mujocoinclude>"),
              std::string::npos)
        << e.what();
  }
}

TEST(Mjcf, RecursiveIncludeIsAnError) {
  TempDir dir("mjcf");
  dir.write("a.xml", "<mujoco>\n<include file=\"b.xml\"/>\n</mujoco>");
  dir.write("b.xml", "<mujoco>\n\n<include file=\"a.xml\"/>\n</mujoco>");
  try {
    sap::load_mjcf(dir.path() + "/a.xml");
    ADD_FAILURE() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("b.xml:3: recursive include of"), std::string::npos) << e.what();
  }
}

}  // namespace

// <contact><pair>: an explicit candidate pair, tested whatever contype/conaffinity say, listed
// once (not again as an automatic pair), with its own values: unset ones are MuJoCo's pair
// defaults (condim 3, friction 1, margin 0), not the geoms' (model/contact_pairs.hpp).
TEST(Mjcf, ExplicitContactPairs) {
  const char* xml = R"(<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="ball" pos="0 0 0.5"><freejoint/>
      <geom name="ghost" type="sphere" size="0.1" contype="0" conaffinity="0"/>
      <geom name="solid" type="sphere" size="0.1" pos="0.3 0 0" margin="0.01"/>
    </body>
  </worldbody>
  <contact>
    <pair geom1="ghost" geom2="floor" condim="1"/>
    <pair geom1="floor" geom2="solid" friction="0.4 0.3 0.005 0.0001 0.0002" margin="0.02" gap="0.01" condim="6"/>
  </contact>
</mujoco>)";
  sap::ImportReport report;
  const sap::Model m = load(xml, &report);
  ASSERT_EQ(m.npair, 2);  // the automatic floor-solid pair is not added a second time
  const int floor = m.geom_id("floor"), ghost = m.geom_id("ghost"), solid = m.geom_id("solid");
  EXPECT_EQ(m.contact_rule, sap::kContactRuleMujoco);
  EXPECT_EQ(m.pair_geom0[0], floor);  // ordered by geom type: plane first
  EXPECT_EQ(m.pair_geom1[0], ghost);
  EXPECT_EQ(m.pair_condim[0], 1);
  EXPECT_EQ(m.pair_margin[0], 0.0);  // MuJoCo's pair default, not the geoms' margins
  const sap::PairContactParams p0 = sap::pair_contact_params(m, 0);
  EXPECT_EQ(p0.condim, 1);
  EXPECT_EQ(p0.friction[0], 0.0);  // frictionless
  EXPECT_EQ(p0.detect, 0.0);
  EXPECT_EQ(m.pair_geom0[1], floor);
  EXPECT_EQ(m.pair_geom1[1], solid);
  const sap::PairContactParams p1 = sap::pair_contact_params(m, 1);
  EXPECT_EQ(p1.condim, 6);
  const std::array<double, 5> f1{0.4, 0.3, 0.005, 0.0001, 0.0002};
  EXPECT_EQ(p1.friction, f1);
  EXPECT_DOUBLE_EQ(p1.detect, 0.03);  // margin + gap
  EXPECT_EQ(p1.shift, 0.02);          // the surface moves out by the margin

  // Errors name what was expected.
  auto error_of = [&](const std::string& pair) {
    std::string bad = xml;
    const std::string first = "<pair geom1=\"ghost\" geom2=\"floor\" condim=\"1\"/>";
    bad.replace(bad.find(first), first.size(), pair);
    try {
      load(bad);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("<pair geom1=\"ghost\" geom2=\"nope\"/>").find("unknown or non-colliding geom 'nope'"), std::string::npos);
  EXPECT_NE(error_of("<pair geom1=\"ghost\"/>").find("needs geom1 and geom2"), std::string::npos);
  EXPECT_NE(error_of("<pair geom1=\"ghost\" geom2=\"floor\" condim=\"2\"/>").find("condim: expected 1, 3, 4 or 6"),
            std::string::npos);
  EXPECT_NE(error_of("<pair geom1=\"ghost\" geom2=\"ghost\"/>").find("the same geom"), std::string::npos);
  EXPECT_NE(error_of("<pair geom1=\"ghost\" geom2=\"floor\" solref=\"0.02 -1\"/>").find("<pair> solref: solref dampratio"),
            std::string::npos);
  EXPECT_NE(error_of("<pair geom1=\"ghost\" geom2=\"floor\" gap=\"-1\"/>").find("margin and gap: expected non-negative"),
            std::string::npos);
}

// A sphere that collides with nothing by contype/conaffinity falls through the floor; an explicit
// pair with the floor holds it up (at rest near the compliant contact's static penetration).
TEST(Mjcf, ExplicitPairHoldsAGhostSphere) {
  auto final_height = [](bool with_pair) {
    const std::string xml = std::string(R"(<mujoco><option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="ball" pos="0 0 0.2"><freejoint/>
      <geom name="ghost" type="sphere" size="0.1" contype="0" conaffinity="0"/>
    </body>
  </worldbody>)") + (with_pair ? R"(<contact><pair geom1="ghost" geom2="floor"/></contact>)" : "") + "</mujoco>";
    sap::Scene s;
    s.model = load(xml);
    s.dt = 0.002;
    s.qpos0 = s.model.qpos0;
    s.qvel0.assign(static_cast<std::size_t>(s.model.nv), 0.0);
    sap::SimulatorOptions o;
    o.nworld = 1;
    o.backend = sap::Backend::CPU;
    o.threads = 1;
    sap::Simulator sim(s, o);
    sim.step(500);
    return sim.state().qpos.world_to_host(0)[2];
  };
  EXPECT_LT(final_height(false), -1.0);  // 1 s of free fall from 0.2 m
  const double z = final_height(true);
  EXPECT_GT(z, 0.09);
  EXPECT_LT(z, 0.1005);
}

// A mesh is hulled only when a geom that collides uses it, as MuJoCo does
// (tests/data/mujoco/validation_errors.json, MuJoCo 4.0.0): a flat plate with shell inertia on a
// visual geom (contype = conaffinity = 0) loads and gives the body its shell mass; the same plate
// with solid inertia has no volume, and on a colliding geom no hull: errors naming the geom's
// line and the mesh, where MuJoCo rejects them too.
TEST(Mjcf, FlatMeshesAreHulledOnlyWhenTheyCollide) {
  std::ifstream in(std::string(SAP_SOURCE_DIR) + "/tests/data/mujoco/validation_errors.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json fx = nlohmann::json::parse(in);
  int n = 0;
  for (const auto& c : fx["cases"]) {
    const std::string name = c["name"];
    if (name.find("flat_mesh") == std::string::npos) continue;
    SCOPED_TRACE(name);
    ++n;
    if (c["accepted"].get<bool>()) {
      const sap::Model m = load(c["xml"]);
      EXPECT_EQ(m.nv, c["nv"].get<int>());
      EXPECT_EQ(m.ngeom, 1);  // the box; the visual plate carries mass only
      // The box (8 kg at density 1000) and the unit plate's shell: 1000 kg/m^2 x 1 m^2.
      EXPECT_NEAR(m.body_mass[1], 8.0 + 1000.0, 1e-9);
      continue;
    }
    try {
      load(c["xml"]);
      ADD_FAILURE() << "MuJoCo rejects it: " << c["error"];
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("model.xml:1"), std::string::npos) << what;
      EXPECT_NE(what.find("mesh 'f'"), std::string::npos) << what;
      if (name == "colliding_flat_mesh_shell") EXPECT_NE(what.find("has no convex hull"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(n, 3);
}

// A model without degrees of freedom (a table on a floor: validation_errors.json static_model,
// which MuJoCo 4.0.0 compiles with nv = 0) loads and steps, as in MuJoCo: time advances, nothing
// moves, no world fails, on every preset and on emulated GPU teams (every stage runs over empty
// dof and contact ranges: the two geoms are in the world's weld group, never a candidate pair).
TEST(Mjcf, StaticModelLoadsAndSteps) {
  std::ifstream in(std::string(SAP_SOURCE_DIR) + "/tests/data/mujoco/validation_errors.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json fx = nlohmann::json::parse(in);
  for (const auto& c : fx["cases"]) {
    if (c["name"] != "static_model") continue;
    ASSERT_TRUE(c["accepted"].get<bool>());
    const sap::Scene s = sap::load_mjcf_string(c["xml"].get<std::string>(), "static_model.xml");
    ASSERT_EQ(s.model.nv, c["nv"].get<int>());
    ASSERT_EQ(s.model.nv, 0);
    for (const sap::Preset preset : {sap::Preset::Approx32, sap::Preset::Approx64, sap::Preset::Drake})
      for (int lanes : {0, 4}) {
        SCOPED_TRACE("preset " + std::to_string(static_cast<int>(preset)) + " lanes " + std::to_string(lanes));
        sap::SimulatorOptions o;
        o.nworld = 2;
        o.backend = sap::Backend::CPU;
        o.threads = 1;
        o.emulated_lanes = lanes;
        o.override_solver = true;
        o.solver = s.solver;
        o.solver.contact_preset_variant = preset;
        sap::Simulator sim(s, o);
        sim.reset();
        const std::vector<double> before = sim.body_pos(1);  // world 1: the world body, the table
        sim.step(10);
        EXPECT_NEAR(sim.time(), 10 * s.dt, 1e-12);
        EXPECT_EQ(sim.body_pos(1), before);  // the table stays where it is
        ASSERT_EQ(before.size(), 6u);
        EXPECT_NEAR(before[5], 0.5, 1e-12);
        EXPECT_TRUE(sim.failed_worlds().empty());
      }
    return;
  }
  FAIL() << "validation_errors.json has no static_model case";
}
