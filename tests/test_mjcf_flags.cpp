// MJCF <option><flag> switches implemented at import time, and a site's fromto, against MuJoCo
// 4.0 (tests/data/mujoco/option_flags.json, written by tools/reference/option_flags_reference.py):
// each small model is stepped with its flag enabled and disabled, in MuJoCo and here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "sap/mjcf.hpp"
#include "sap/simulator.hpp"

namespace {

nlohmann::json fixture() {
  std::ifstream in(std::string(SAP_SOURCE_DIR) + "/tests/data/mujoco/option_flags.json");
  EXPECT_TRUE(in.good());
  return nlohmann::json::parse(in);
}

std::vector<double> simulate(const sap::Scene& s, const std::vector<double>& ctrl, int steps) {
  sap::SimulatorOptions o;
  o.nworld = 1;
  o.backend = sap::Backend::CPU;
  o.threads = 1;
  sap::Simulator sim(s, o);
  sim.reset();
  if (!ctrl.empty()) sim.set_control(ctrl);
  sim.step(steps);
  EXPECT_TRUE(sim.failed_worlds().empty());
  return sim.state().qpos.world_to_host(0);
}

// Disabled, every case is a free motion (a fall, or a constant force) and agrees with MuJoCo's up
// to the O(h) difference of the two time steppings (0.4 s at h = 2 ms: 4 mm in a 0.79 m fall).
// Enabled, the constraint holds (MuJoCo's soft rows and SAP's differ by a few millimetres) or
// the control is clamped. The flag changes every outcome by far more (0.32 m and more).
TEST(MjcfFlags, DisabledConstraintsAndClampingMatchMuJoCo) {
  const nlohmann::json fx = fixture();
  ASSERT_EQ(fx["cases"].size(), 8u);
  for (std::size_t i = 0; i + 1 < fx["cases"].size(); i += 2) {  // enable, then disable
    const std::vector<double> on = fx["cases"][i]["qpos"], off = fx["cases"][i + 1]["qpos"];
    double change = 0;
    for (std::size_t k = 0; k < on.size(); ++k) change = std::max(change, std::abs(on[k] - off[k]));
    EXPECT_GT(change, 0.3) << fx["cases"][i]["name"];
  }
  for (const auto& c : fx["cases"]) {
    const std::string name = c["name"], value = c["value"];
    SCOPED_TRACE(name + " " + c["flag"].get<std::string>() + "=" + value);
    sap::ImportReport report;
    const sap::Scene s = sap::load_mjcf_string(c["xml"].get<std::string>(), name + ".xml", &report);
    for (const std::string& w : report.warnings) EXPECT_EQ(w.find("flag"), std::string::npos) << w;
    const std::vector<double> q = simulate(s, c["ctrl"].get<std::vector<double>>(), c["steps"].get<int>());
    const std::vector<double> want = c["qpos"].get<std::vector<double>>();
    ASSERT_EQ(q.size(), want.size());
    for (std::size_t i = 0; i < q.size(); ++i) EXPECT_NEAR(q[i], want[i], 5e-3) << "qpos " << i;
  }
}

TEST(MjcfFlags, DisabledElementsAreNotInTheModel) {
  const nlohmann::json fx = fixture();
  for (const auto& c : fx["cases"]) {
    if (c["value"] != "disable") continue;
    const sap::Model m = sap::load_mjcf_string(c["xml"].get<std::string>(), "m.xml").model;
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    if (name == "weld" || name == "constraint") EXPECT_EQ(m.neq, 0);
    if (name == "frictionloss" || name == "constraint")
      for (double f : m.dof_frictionloss) EXPECT_EQ(f, 0.0);
    if (name == "constraint") {
      for (int l : m.jnt_limited) EXPECT_EQ(l, 0);
    }
    if (name == "clampctrl")
      for (int l : m.actuator_ctrllimited) EXPECT_EQ(l, 0);
  }
}

TEST(MjcfFlags, ActuationDisableIsRejectedNamingTheLine) {
  const std::string xml = "<mujoco>\n<option><flag actuation=\"disable\"/></option>\n<worldbody/>\n</mujoco>";
  try {
    sap::load_mjcf_string(xml, "a.xml");
    FAIL() << "loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("a.xml:2: flag actuation"), std::string::npos) << e.what();
  }
  sap::ImportOptions drop;
  drop.drop_unsupported = true;
  sap::ImportReport report;
  sap::load_mjcf_string(xml, "a.xml", &report, drop);
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("dropped"), std::string::npos) << report.warnings[0];
}

// MuJoCo places a site with fromto at the midpoint of its two points, for capsule, cylinder, box
// and ellipsoid sites (the type may come from a default class); a sphere site with fromto and a
// nonzero pos next to fromto are errors there, and here.
TEST(MjcfFlags, SiteFromtoMatchesMuJoCo) {
  const nlohmann::json fx = fixture()["site_fromto"];
  const sap::Model m = sap::load_mjcf_string(fx["xml"].get<std::string>(), "site.xml").model;
  ASSERT_EQ(m.nsite, 1);
  const std::vector<double> want = fx["site_pos"].get<std::vector<double>>();
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(m.site_pos[static_cast<std::size_t>(k)], want[static_cast<std::size_t>(k)], 1e-15);

  auto model = [](const std::string& defaults, const std::string& site) {
    return "<mujoco>\n<default>" + defaults + "</default>\n<worldbody>\n<body>\n<geom size=\"0.1\"/>\n" + site +
           "\n</body>\n</worldbody>\n</mujoco>";
  };
  // The type from the default class (MuJoCo 4.0: site_pos (0, 0, 0.5)).
  const sap::Model d = sap::load_mjcf_string(model("<site type=\"box\"/>", "<site fromto=\"0 0 0 0 0 1\"/>"), "d.xml").model;
  EXPECT_NEAR(d.site_pos[2], 0.5, 1e-15);
  for (const auto& [site, message] :
       std::vector<std::pair<std::string, std::string>>{
           {"<site fromto=\"0 0 0 0 0 1\"/>", "d.xml:6: fromto is only valid for capsule, cylinder, box and ellipsoid "
                                               "sites, not sphere"},
           {"<site type=\"capsule\" pos=\"1 0 0\" fromto=\"0 0 0 0 0 1\"/>", "d.xml:6: both pos and fromto given in site"},
           {"<geom type=\"capsule\" size=\"0.1\" pos=\"1 0 0\" fromto=\"0 0 0 0 0 1\"/>",
            "d.xml:6: both pos and fromto given in geom"}}) {
    SCOPED_TRACE(site);
    try {
      sap::load_mjcf_string(model("", site), "d.xml");
      ADD_FAILURE() << "loaded";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

}  // namespace
