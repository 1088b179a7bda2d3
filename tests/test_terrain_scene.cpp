// The heightfield terrain scene (scenes/g1_rough_terrain.json, issue 18): Unitree G1 on rough
// MJCF heightfield ground, held by its PD position actuators at its standing pose, stands.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "sap/simulator.hpp"
#include "scene_cases.hpp"

using namespace sap;

namespace {

const std::string kScene = std::string(SAP_SOURCE_DIR) + "/scenes/g1_rough_terrain.json";

struct FootContacts {
  int left = 0, right = 0, other_bodies_on_terrain = 0;
  double max_depth = 0;  // deepest penetration of a terrain contact
};

// Contacts of the terrain geom, by the body on the other side.
FootContacts terrain_contacts(Simulator& sim, int terrain_geom, int left_foot, int right_foot) {
  FootContacts f;
  const int n = sim.contacts().counts_host()[0];
  const std::vector<int> geom = sim.contacts().geom.world_to_host(0);
  const std::vector<int> body = sim.contacts().body.world_to_host(0);
  const std::vector<double> phi = sim.contacts().phi.world_to_host(0);
  for (int c = 0; c < n; ++c) {
    int other = -1;
    if (geom[2 * c] == terrain_geom) other = body[2 * c + 1];
    else if (geom[2 * c + 1] == terrain_geom) other = body[2 * c];
    if (other < 0) continue;
    f.max_depth = std::max(f.max_depth, -phi[static_cast<std::size_t>(c)]);
    if (other == left_foot) ++f.left;
    else if (other == right_foot) ++f.right;
    else ++f.other_bodies_on_terrain;
  }
  return f;
}

}  // namespace

// The scene's terrain is a real heightfield (not flat), under the robot, and the only ground.
TEST(TerrainScene, GroundIsARoughHeightfield) {
  const Scene scene = load_scene(kScene);
  const Model& m = scene.model;
  ASSERT_EQ(m.nhfield, 1);
  const int terrain = m.geom_id("terrain");
  ASSERT_GE(terrain, 0);
  EXPECT_EQ(m.geom_type[terrain], kGeomHfield);
  for (int g = 0; g < m.ngeom; ++g) EXPECT_NE(m.geom_type[g], kGeomPlane) << "no floor plane: " << m.geom_names[g];
  const int nrow = m.hfield_nrow[0], ncol = m.hfield_ncol[0];
  EXPECT_EQ(nrow, 41);
  EXPECT_EQ(ncol, 41);
  const auto data = m.hfield_data.begin() + m.hfield_adr[0];
  const auto [lo, hi] = std::minmax_element(data, data + nrow * ncol);
  EXPECT_DOUBLE_EQ(*lo, 0.0);  // normalised elevations
  EXPECT_DOUBLE_EQ(*hi, 1.0);
  EXPECT_DOUBLE_EQ(m.hfield_size[2], 0.03);  // 3 cm from the lowest to the highest point
  // Uneven where the robot stands too: the samples within 25 cm of the pelvis's initial x, y
  // (the soles reach 15 cm to the side, 14 cm forward) span more than 5 mm.
  const double x0 = scene.qpos0[0], y0 = scene.qpos0[1];
  double near_lo = 1, near_hi = 0;
  for (int r = 0; r < nrow; ++r)
    for (int c = 0; c < ncol; ++c) {
      const double x = -2 + 0.1 * c, y = -2 + 0.1 * r;
      if (std::hypot(x - x0, y - y0) > 0.25) continue;
      near_lo = std::min(near_lo, data[r * ncol + c]);
      near_hi = std::max(near_hi, data[r * ncol + c]);
    }
  std::printf("ground within 25 cm of the standing spot spans %.1f mm\n", 1e3 * 0.03 * (near_hi - near_lo));
  EXPECT_GT(0.03 * (near_hi - near_lo), 0.005);
  // Every actuator is a position servo holding the keyframe's pose.
  for (int a = 0; a < m.nu; ++a) EXPECT_GT(m.actuator_kp[a], 0) << m.actuator_names[a];
}

// G1 dropped 1 cm onto the rough ground stands for 2 s on every preset, on the CPU: pelvis
// height above 0.65 m throughout (0.78 m standing; a fall brings it below 0.4 m), upright
// (pelvis z axis within 15 degrees of vertical), both feet touching the heightfield from 0.5 s on
// with no other body on the ground, penetration below 5 mm, no failed world, and nearly at rest
// at the end (mean pelvis speed over the last 0.1 s < 5 cm/s). MuJoCo 3.3.7 on the same scene
// (tools/reference/make_terrain_scene.py --mujoco): pelvis min height 0.7796 m, end (-0.792, -0.904, 0.7825).
TEST(TerrainScene, G1StandsOnRoughHeightfieldFor2s) {
  const Scene scene = load_scene(kScene);
  const Model& m = scene.model;
  const int pelvis = m.body_id("pelvis"), left = m.body_id("left_ankle_roll_link"),
            right = m.body_id("right_ankle_roll_link"), terrain = m.geom_id("terrain");
  ASSERT_GE(pelvis, 0);
  ASSERT_GE(left, 0);
  ASSERT_GE(right, 0);
  ASSERT_GE(terrain, 0);
  for (const char* preset : {"approx32", "approx64", "drake"}) {
    SCOPED_TRACE(preset);
    Simulator sim(scene, sap::testing::cpu_scene_options(scene, preset));
    const int steps = static_cast<int>(std::lround(2.0 / scene.dt)), landed = static_cast<int>(std::lround(0.5 / scene.dt));
    double min_height = 1e9, max_tilt = 0, max_depth = 0;
    int min_left = 1 << 30, min_right = 1 << 30, others = 0;
    const int last = steps - static_cast<int>(std::lround(0.1 / scene.dt));
    Eigen::Vector3d prev = Eigen::Vector3d::Zero(), p = prev;
    for (int k = 1; k <= steps; ++k) {
      if (k == last + 1) prev = p;
      sim.step();
      const std::vector<double> bp = sim.body_pos(0), bq = sim.body_quat(0);
      p = Eigen::Vector3d(bp[3 * pelvis], bp[3 * pelvis + 1], bp[3 * pelvis + 2]);
      const Eigen::Quaterniond q(bq[4 * pelvis], bq[4 * pelvis + 1], bq[4 * pelvis + 2], bq[4 * pelvis + 3]);
      min_height = std::min(min_height, p.z());
      max_tilt = std::max(max_tilt, std::acos(std::clamp(q.normalized().toRotationMatrix()(2, 2), -1.0, 1.0)));
      const FootContacts f = terrain_contacts(sim, terrain, left, right);
      max_depth = std::max(max_depth, f.max_depth);
      others += f.other_bodies_on_terrain;
      if (k >= landed) {
        min_left = std::min(min_left, f.left);
        min_right = std::min(min_right, f.right);
      }
    }
    const double speed = (p - prev).norm() / ((steps - last) * scene.dt);  // mean pelvis speed over the last 0.1 s
    std::printf("terrain %s: pelvis min height %.4f m, end (%.4f %.4f %.4f), max tilt %.2f deg, end speed %.4f m/s; "
                "foot-terrain contacts from 0.5 s: left >= %d, right >= %d; other bodies on the terrain %d; "
                "max penetration %.2f mm\n",
                preset, min_height, p.x(), p.y(), p.z(), max_tilt * 180 / M_PI, speed, min_left, min_right, others,
                1e3 * max_depth);
    EXPECT_TRUE(sim.failed_worlds_since_reset().empty());
    EXPECT_TRUE(p.allFinite());
    EXPECT_GT(min_height, 0.65);
    EXPECT_LT(max_tilt, 15 * M_PI / 180);
    EXPECT_GT(min_left, 0) << "left foot lost the ground";
    EXPECT_GT(min_right, 0) << "right foot lost the ground";
    EXPECT_EQ(others, 0) << "a body other than the feet touched the ground";
    EXPECT_LT(max_depth, 5e-3);
    EXPECT_LT(speed, 0.05);
  }
}
