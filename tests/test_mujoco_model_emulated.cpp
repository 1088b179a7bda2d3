// The MuJoCo-model features of issue 30 on emulated GPU teams (CPU backend, SimulatorOptions::
// emulated_lanes): a model with spatial tendons (wraps, pulleys, limits), activation dynamics and
// muscles, fluid forces, a tendon equality, gravity compensation, a spring dead band, tendon
// armature and dry friction, stepped 60 steps on 1 lane and on 3 and 32 lanes
// (a partial warp and a full one): every stage's lanes (the spatial tendons strided over them,
// the one-lane scatters) give the one-lane trajectory (qpos, qvel, act) to the stages' rounding.
#include <gtest/gtest.h>

#include <cmath>

#include "sap/mjcf.hpp"
#include "sap/simulator.hpp"

namespace {

const char* kModel = R"(<mujoco>
  <option timestep="0.002" density="800" viscosity="0.01" wind="0.3 0 0"/>
  <worldbody>
    <geom type="plane" size="2 2 0.1"/>
    <site name="anchor" pos="0 0 1.2"/>
    <geom name="pulley_ball" type="sphere" size="0.05" pos="0.1 0 1.05" contype="0" conaffinity="0"/>
    <body name="upper" pos="0 0 1">
      <joint name="shoulder" type="hinge" axis="0 1 0" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03"/>
      <site name="u1" pos="0.04 0 -0.05"/>
      <site name="u2" pos="0.04 0 -0.25"/>
      <body name="lower" pos="0 0 -0.3">
        <joint name="elbow" type="hinge" axis="0 1 0" damping="0.1"/>
        <geom name="elbow_cyl" type="cylinder" size="0.03 0.04" euler="1.5707963 0 0" contype="0" conaffinity="0"/>
        <site name="side" pos="0.1 0 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.25" size="0.025" fluidshape="ellipsoid"/>
        <site name="l1" pos="0.03 0 -0.1"/>
      </body>
    </body>
    <body name="box" pos="0.5 0 0.3" gravcomp="0.5">
      <freejoint/>
      <geom type="box" size="0.05 0.05 0.05"/>
      <site name="b1" pos="0 0 0.05"/>
    </body>
  </worldbody>
  <tendon>
    <spatial name="flexor" limited="true" range="0.05 0.6" stiffness="5" springlength="0.35 0.45" damping="0.5">
      <site site="anchor"/><geom geom="pulley_ball"/><site site="u1"/><site site="u2"/>
      <geom geom="elbow_cyl" sidesite="side"/><site site="l1"/>
    </spatial>
    <spatial name="leash" limited="true" range="0 0.9">
      <site site="u2"/><pulley divisor="2"/><site site="u2"/><site site="b1"/>
    </spatial>
    <fixed name="sum" armature="0.01" frictionloss="0.02"><joint joint="shoulder" coef="1"/><joint joint="elbow" coef="0.5"/></fixed>
  </tendon>
  <equality><tendon tendon1="sum" polycoef="0.1 0 0 0 0" solref="0.05 1"/></equality>
  <actuator>
    <muscle name="m" tendon="flexor" lengthrange="0.3 0.7"/>
    <general name="f" joint="elbow" dyntype="filter" dynprm="0.05" gainprm="3" ctrlrange="-1 1"/>
    <position name="p" joint="shoulder" kp="20" timeconst="0.03"/>
  </actuator>
</mujoco>)";

struct Traj {
  std::vector<double> qpos, qvel, act;
};

Traj run(const sap::Scene& scene, int lanes) {
  sap::SimulatorOptions o;
  o.nworld = 1;
  o.backend = sap::Backend::CPU;
  o.emulated_lanes = lanes;
  sap::Simulator sim(scene, o);
  for (int k = 0; k < 60; ++k) {
    const double t = k * scene.dt;
    sim.set_control(std::vector<double>{0.5 + 0.5 * std::sin(8 * t), std::sin(5 * t), 0.3 * std::cos(3 * t)});
    sim.step();
  }
  return {sim.state().qpos.buffer().to_host(), sim.state().qvel.buffer().to_host(), sim.state().act.buffer().to_host()};
}

TEST(MujocoModelEmulated, TeamsFollowOneLane) {
  sap::Scene scene;
  scene.name = "mujoco_model_features";
  scene.model = sap::load_mjcf_string(kModel, "features.xml").model;
  ASSERT_EQ(scene.model.ntendata, 3);
  ASSERT_EQ(scene.model.na, 3);
  ASSERT_GT(scene.model.nfluidbody, 0);
  ASSERT_GT(scene.model.ngravcomp, 0);
  scene.dt = scene.model.timestep;
  scene.max_rigid_contact = 16;
  scene.qpos0.assign(scene.model.qpos0.begin(), scene.model.qpos0.end());
  scene.qvel0.assign(static_cast<std::size_t>(scene.model.nv), 0.0);
  scene.controls.resize(static_cast<std::size_t>(scene.model.nu));
  const Traj one = run(scene, 0);
  double moved = 0;
  for (std::size_t i = 0; i < one.qvel.size(); ++i) moved = std::max(moved, std::abs(one.qvel[i]));
  EXPECT_GT(moved, 0.1);  // the model moves
  for (int lanes : {3, 32}) {
    const Traj t = run(scene, lanes);
    double worst = 0;
    for (std::size_t i = 0; i < one.qpos.size(); ++i) worst = std::max(worst, std::abs(t.qpos[i] - one.qpos[i]));
    for (std::size_t i = 0; i < one.qvel.size(); ++i) worst = std::max(worst, std::abs(t.qvel[i] - one.qvel[i]));
    for (std::size_t i = 0; i < one.act.size(); ++i) worst = std::max(worst, std::abs(t.act[i] - one.act[i]));
    std::printf("%d lanes: worst |difference| from one lane over 60 steps %.2e\n", lanes, worst);
    EXPECT_LT(worst, 1e-6) << lanes << " lanes";
  }
}

}  // namespace
