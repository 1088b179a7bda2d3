// MuJoCo's contact rules (src/model/mujoco_contact_rules.hpp) against what MuJoCo itself made of the
// same geoms (tests/data/mujoco/contact_params.json and contact_filter.json, written by
// tools/reference/mujoco_contact_semantics.py from MuJoCo's compiled attributes and mj_forward's contacts):
// pair parameters (priority, max, solmix, direct solref, condim, 5 coefficients, minimum mu),
// margin and gap (which contacts are detected, which are active), the bit test, weld-group and
// parent filtering, <exclude>.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "model/mujoco_contact_rules.hpp"

using sap::MujocoGeomContact;
using sap::MujocoPairContact;

namespace {

nlohmann::json fixture(const std::string& name) {
  std::ifstream in(std::string(SAP_SOURCE_DIR) + "/tests/data/mujoco/" + name);
  EXPECT_TRUE(in.good()) << "missing tests/data/mujoco/" << name << " (tools/reference/mujoco_contact_semantics.py)";
  return nlohmann::json::parse(in);
}

MujocoGeomContact geom_of(const nlohmann::json& g) {
  MujocoGeomContact c;
  c.contype = g["contype"];
  c.conaffinity = g["conaffinity"];
  c.condim = g["condim"];
  c.priority = g["priority"];
  for (int i = 0; i < 3; ++i) c.friction[i] = g["friction"][i];
  c.solmix = g["solmix"];
  for (int i = 0; i < 2; ++i) c.solref[i] = g["solref"][i];
  for (int i = 0; i < 5; ++i) c.solimp[i] = g["solimp"][i];
  c.margin = g["margin"];
  c.gap = g["gap"];
  return c;
}

MujocoPairContact pair_of(const nlohmann::json& p) {
  MujocoPairContact c;
  c.condim = p["condim"];
  for (int i = 0; i < 5; ++i) c.friction[i] = p["friction"][i];
  for (int i = 0; i < 2; ++i) c.solref[i] = p["solref"][i];
  for (int i = 0; i < 2; ++i) c.solreffriction[i] = p["solreffriction"][i];
  for (int i = 0; i < 5; ++i) c.solimp[i] = p["solimp"][i];
  c.margin = p["margin"];
  c.gap = p["gap"];
  sap::mujoco_clamp_friction(c.friction);
  return c;
}

}  // namespace

TEST(MujocoContactRules, PairParametersMatchMuJoCo) {
  const nlohmann::json fx = fixture("contact_params.json");
  int compared = 0, silent = 0;
  for (const auto& c : fx["cases"]) {
    const std::string name = c["name"];
    const MujocoGeomContact floor = geom_of(c["geoms"]["floor"]), box = geom_of(c["geoms"]["box"]);
    const bool explicit_pair = !c["pairs"].empty();
    const bool collides = explicit_pair || sap::mujoco_bitmask_collides(floor, box);
    const bool excluded = name == "exclude";  // <exclude body1="world" body2="box">
    const MujocoPairContact p = explicit_pair ? pair_of(c["pairs"][0]) : sap::mujoco_pair_contact(floor, box);
    const bool in_range = c["nominal_dist"].get<double>() < p.margin + p.gap;
    if (!collides || excluded || !in_range) {
      EXPECT_TRUE(c["contacts"].empty()) << name << ": MuJoCo made contacts for a pair our rule filters";
      ++silent;
      continue;
    }
    ASSERT_FALSE(c["contacts"].empty()) << name << ": our rule keeps a pair MuJoCo does not collide";
    for (const auto& k : c["contacts"]) {
      EXPECT_EQ(p.condim, k["condim"].get<int>()) << name;
      for (int i = 0; i < 5; ++i) EXPECT_DOUBLE_EQ(p.friction[i], k["friction"][i].get<double>()) << name << " " << i;
      for (int i = 0; i < 2; ++i) EXPECT_NEAR(p.solref[i], k["solref"][i].get<double>(), 1e-15) << name;
      for (int i = 0; i < 5; ++i) EXPECT_NEAR(p.solimp[i], k["solimp"][i].get<double>(), 1e-15) << name;
      EXPECT_NEAR(p.margin, k["includemargin"].get<double>(), 1e-15) << name;
      // Detected while dist < margin + gap; inactive (excluded) from margin on.
      const double dist = k["dist"];
      EXPECT_LT(dist, p.margin + p.gap) << name;
      EXPECT_EQ(dist >= p.margin, k["exclude"].get<int>() == 1) << name;
      ++compared;
    }
  }
  EXPECT_GT(compared, 40);
  EXPECT_EQ(silent, 4);  // exclude, contype_mismatch, visual_only, margin_gap_beyond
}

// The margin/gap probe: a sphere-box at 8 distances for 5 margin/gap combinations.
TEST(MujocoContactRules, DetectionAndActivityFollowMarginAndGap) {
  const nlohmann::json fx = fixture("contact_params.json");
  int n = 0;
  for (const auto& pr : fx["margin_gap_probe"]) {
    MujocoGeomContact a, b;
    a.margin = pr["margin"][0];
    b.margin = pr["margin"][1];
    a.gap = pr["gap"][0];
    b.gap = pr["gap"][1];
    const MujocoPairContact p = sap::mujoco_pair_contact(a, b);
    const double dist = pr["dist"];
    const bool detected = dist < p.margin + p.gap, active = dist < p.margin;
    EXPECT_EQ(detected, pr["ncon"].get<int>() > 0) << "dist " << dist << " margin " << p.margin << " gap " << p.gap;
    EXPECT_EQ(active, pr["nefc"].get<int>() > 0) << "dist " << dist << " margin " << p.margin << " gap " << p.gap;
    if (detected) {
      EXPECT_NEAR(p.margin, pr["includemargin"].get<double>(), 1e-15);
    }
    ++n;
  }
  EXPECT_EQ(n, 40);
}

// Which geom pairs of a chain collide (filterparent on and off, weld groups, <exclude>). The
// candidates are the geometric overlaps (MuJoCo's pairs with every filter off); our rule must
// keep exactly the pairs MuJoCo reports in each case.
TEST(MujocoContactRules, FilteringMatchesMuJoCo) {
  const nlohmann::json fx = fixture("contact_filter.json");
  std::vector<std::pair<std::string, std::string>> overlaps;
  for (const auto& c : fx["cases"])
    if (c["name"] == "chain_filterparent_off")
      for (const auto& p : c["pairs"]) overlaps.emplace_back(p[0].get<std::string>(), p[1].get<std::string>());
  ASSERT_EQ(overlaps.size(), 5u);
  int checked = 0;
  for (const auto& c : fx["cases"]) {
    const std::string name = c["name"];
    const auto& bodies = c["bodies"];
    std::map<std::string, int> id{{"world", 0}};
    for (auto it = bodies.begin(); it != bodies.end(); ++it)
      if (it.key() != "world") id.emplace(it.key(), static_cast<int>(id.size()));
    auto weld = [&](const std::string& b) { return bodies[b]["weld"].get<std::string>(); };
    auto parent_weld = [&](const std::string& b) { return weld(bodies[weld(b)]["parent"].get<std::string>()); };
    std::set<std::pair<int, int>> excluded;
    for (const auto& e : c["exclude"]) {
      const int a = id.at(e[0].get<std::string>()), b = id.at(e[1].get<std::string>());
      excluded.insert({std::min(a, b), std::max(a, b)});
    }
    std::set<std::pair<std::string, std::string>> want, ours;
    for (const auto& p : c["pairs"]) want.emplace(p[0].get<std::string>(), p[1].get<std::string>());
    for (const auto& [g0, g1] : overlaps) {
      const std::string b0 = c["geoms"][g0]["body"], b1 = c["geoms"][g1]["body"];
      if (sap::mujoco_weld_filtered(id.at(weld(b0)), id.at(parent_weld(b0)), id.at(weld(b1)), id.at(parent_weld(b1)),
                                    c["filterparent"].get<bool>()))
        continue;
      if (excluded.count({std::min(id.at(b0), id.at(b1)), std::max(id.at(b0), id.at(b1))})) continue;
      ours.emplace(g0, g1);
    }
    EXPECT_EQ(ours, want) << name;
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

TEST(MujocoContactRules, PriorityAndSolmixEdgeCases) {
  MujocoGeomContact a, b;
  a.solmix = 0;
  b.solmix = 0;
  a.solimp[0] = 0.5;
  b.solimp[0] = 0.7;
  EXPECT_NEAR(sap::mujoco_pair_contact(a, b).solimp[0], 0.6, 1e-15);  // both zero: halves
  a.solmix = 2;
  EXPECT_NEAR(sap::mujoco_pair_contact(a, b).solimp[0], 0.5, 1e-15);  // only a has weight
  b.priority = -1;
  a.friction = {0, 0, 0};
  b.friction = {2, 2, 2};
  const MujocoPairContact p = sap::mujoco_pair_contact(a, b);
  for (double f : p.friction) EXPECT_EQ(f, sap::kMujocoMinMu);  // a wins, raised to the minimum
}
