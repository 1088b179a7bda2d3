#include <gtest/gtest.h>

#include "sap/context.hpp"
#include "sap/model_builder.hpp"
#include "sap/solver_sap.hpp"

TEST(Smoke, BuildsAndSteps) {
  sap::ModelBuilder b;
  sap::BodySpec body;
  body.name = "ball";
  body.pos = {0, 0, 1};
  body.mass = 2;
  body.inertia = {0.1, 0.1, 0.1, 0, 0, 0};
  int id = b.add_body(body);
  sap::JointSpec j;
  j.type = sap::kJointFree;
  b.add_joint(id, j);
  sap::Model m = b.finalize();
  sap::Context ctx(sap::Backend::CPU, 2);
  sap::SolverSAP solver(m, ctx, 3);
  sap::State s(m, 3, sap::Backend::CPU), out(m, 3, sap::Backend::CPU);
  sap::Control c(m, 3, sap::Backend::CPU);
  sap::Contacts none(3, 0, sap::Backend::CPU);
  solver.step(s, out, c, none, 0.01);
  auto v = out.qvel.world_to_host(1);
  EXPECT_NEAR(v[2], -9.81 * 0.01, 1e-6);
}
