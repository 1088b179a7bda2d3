// Resting contact under SAP's compliance (issue 14; docs/solver.md, "Resting contact: offset and
// creep"). Two predictions of the model, checked over 2000-step runs (sap_longrun runs 10^5):
//
// - Normal compliance gives a steady offset, not a creep: at rest (v_n = 0) the impulse is
//   gamma_n = h k (-phi), so each interface of a stack is compressed by its load over its
//   stiffness, delta = N m g / (n_c k_pair), and stays so.
// - Stiction is regularised: in stiction gamma_t = -v_t / R_t with R_t = sigma w, so a contact
//   carrying a static tangential load creeps at |v_t| = R_t |gamma_t|. A rigid body held by n_c
//   sticking contacts slides as one, so sum_c gamma_t,c = h |f_t| gives
//   v_creep = h |f_t| / sum_c (1 / R_t,c). On a flat stack f_t = 0 (no creep); on an incline
//   below the friction angle f_t = m g sin(theta).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sap/scene.hpp"
#include "sap/simulator.hpp"
#include "model/solve_data.hpp"

namespace {

std::string scene_text(const char* name) {
  std::ifstream f(std::string(SAP_SOURCE_DIR) + "/scenes/" + name);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

sap::SimulatorOptions one_world(const sap::SolverOptions& scene_solver) {
  sap::SimulatorOptions o;
  o.nworld = 1;
  o.backend = sap::Backend::CPU;
  o.threads = 1;
  // SAP's regularised cone, whose stiction compliance is R_t = sigma w (the Hunt-Crossley
  // approximations regularise by the slip speed v_s instead: tests/contact_fidelity.hpp predicts
  // both creeps).
  o.override_solver = true;
  o.solver = scene_solver;
  o.solver.contact_approximation = sap::ContactApproximation::Sap;
  return o;
}

// R_t of each contact of world 0 in the last solve (con_param: ContactParam, src/model/solve_data.hpp).
std::vector<double> tangential_regularisation(sap::Simulator& sim) {
  sap::SolveData& s = sim.solver().solve_data();
  const int n = s.con_count.world_to_host(0)[0];
  const std::vector<double> prm = s.con_param.world_to_host(0);
  std::vector<double> rt;
  for (int c = 0; c < n; ++c) rt.push_back(prm[static_cast<std::size_t>(s.size().ncp * c + sap::kConRt)]);
  return rt;
}

double series(double a, double b) { return a * b / (a + b); }

}  // namespace

// box_stack_5: the top box settles at the stacked height minus the compressions predicted by
// the contact stiffness, then neither sinks nor slides. With f_t = 0 the predicted creep is 0;
// the drift is compared with the largest creep stiction could allow (|v_t| <= R_t mu gamma_n,
// every contact at its friction limit), which it must stay far below.
TEST(Creep, RestingStackHasTheComplianceOffsetAndNoCreep) {
  const sap::Scene scene = sap::parse_scene(scene_text("box_stack_5.json"), "box_stack_5.json");
  const sap::Model& m = scene.model;
  sap::Simulator sim(scene, one_world(scene.solver));
  const int settle = 500, steps = 2000, nbox = 5;
  for (int k = 0; k < settle; ++k) sim.step();
  const std::vector<double> q0 = sim.state().qpos.world_to_host(0);

  // Predicted height of the top box's centre: boxes of half-height hz touching face to face,
  // interface i (0 = ground) carrying the weight of the nbox - i boxes above it on 4 corner
  // contacts of stiffness k_pair (the series combination of the two geoms' stiffnesses).
  const double g = 9.81, hz = m.geom_size[3 * 1 + 2];
  const double box_mass = m.body_mass[1];
  const double k_ground = series(m.geom_stiffness[0], m.geom_stiffness[1]);
  const double k_box = series(m.geom_stiffness[1], m.geom_stiffness[2]);
  double z_pred = hz * (2 * nbox - 1), compression = 0;
  for (int i = 0; i < nbox; ++i) compression += (nbox - i) * box_mass * g / (4 * (i == 0 ? k_ground : k_box));
  z_pred -= compression;
  const std::size_t top = static_cast<std::size_t>(m.jnt_qposadr[static_cast<std::size_t>(nbox - 1)]);
  EXPECT_NEAR(q0[top + 2], z_pred, 0.02 * compression)
      << "compression " << compression << " m predicted, " << hz * (2 * nbox - 1) - q0[top + 2] << " m measured";

  double max_creep_speed = 0;  // the stiction bound: max over contacts of R_t mu gamma_n / h
  for (int k = 0; k < steps; ++k) {
    sim.step();
    ASSERT_TRUE(sim.failed_worlds().empty());
    if (k == steps - 1) {
      const std::vector<double> rt = tangential_regularisation(sim);
      const auto impulses = sim.solver().contact_impulses(0);
      ASSERT_EQ(rt.size(), impulses.size());
      for (std::size_t c = 0; c < rt.size(); ++c)
        max_creep_speed = std::max(max_creep_speed, rt[c] * 0.6 * impulses[c].gamma[2]);
    }
  }
  ASSERT_GT(max_creep_speed, 0.0);
  const std::vector<double> q1 = sim.state().qpos.world_to_host(0);
  const double T = steps * scene.dt;
  const double drift_xy = std::hypot(q1[top] - q0[top], q1[top + 1] - q0[top + 1]);
  std::printf("stack: compression predicted %.6e m, measured %.6e m; drift over %.1f s: xy %.3e m, z %.3e m; "
              "stiction bound %.3e m\n",
              compression, hz * (2 * nbox - 1) - q0[top + 2], T, drift_xy, q1[top + 2] - q0[top + 2],
              max_creep_speed * T);
  EXPECT_LT(drift_xy, 1e-3 * max_creep_speed * T) << "stiction bound over the run: " << max_creep_speed * T << " m";
  EXPECT_LT(std::abs(q1[top + 2] - q0[top + 2]), 1e-3 * compression) << "the compliance offset is steady";
}

// box_on_incline with mu = 0.6 > tan(20 deg): the box sticks, and creeps down the slope at the
// speed the stiction regularisation predicts, h m g sin(theta) / sum_c (1 / R_t,c).
TEST(Creep, StickingBoxOnInclineCreepsAtTheRegularisedRate) {
  std::string text = scene_text("box_on_incline.json");
  const std::string mu = "\"mu\": 0.3";
  ASSERT_NE(text.find(mu), std::string::npos);
  text.replace(text.find(mu), mu.size(), "\"mu\": 0.6");
  const sap::Scene scene = sap::parse_scene(text, "box_on_incline.json");
  const double theta = 20 * M_PI / 180, g = 9.81, h = scene.dt;
  const double mass = scene.model.body_mass[static_cast<std::size_t>(scene.model.nbody - 1)];
  sap::Simulator sim(scene, one_world(scene.solver));
  const int settle = 250, steps = 2000;
  for (int k = 0; k < settle; ++k) sim.step();
  const std::vector<double> q0 = sim.state().qpos.world_to_host(0);
  double predicted_sum = 0;
  for (int k = 0; k < steps; ++k) {
    sim.step();
    ASSERT_TRUE(sim.failed_worlds().empty());
    double inv = 0;
    for (double rt : tangential_regularisation(sim)) inv += 1 / rt;
    ASSERT_GT(inv, 0.0) << "step " << k << ": no contact";
    predicted_sum += h * mass * g * std::sin(theta) / inv;
  }
  const std::vector<double> q1 = sim.state().qpos.world_to_host(0);
  // Distance along the slope (it descends toward +x, rotated by theta about y).
  const double dx = q1[0] - q0[0], dz = q1[2] - q0[2];
  const double along = dx * std::cos(theta) - dz * std::sin(theta);
  const double measured = along / (steps * h), predicted = predicted_sum / steps;
  std::printf("incline: creep %.4e m/s measured, %.4e m/s predicted (R_t = %.4e, sigma w with sigma = 1e-3)\n",
              measured, predicted, tangential_regularisation(sim)[0]);
  EXPECT_GT(measured, 0.0) << "creeps downhill";
  EXPECT_NEAR(measured, predicted, 0.05 * predicted)
      << "creep " << measured << " m/s, predicted " << predicted << " m/s";
  // Sticking, not sliding: the friction-limited slide would accelerate at g (sin - 0.6 cos) < 0.
  EXPECT_LT(std::abs(sim.state().qvel.world_to_host(0)[0]), 10 * predicted);
}
