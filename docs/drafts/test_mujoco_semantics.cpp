// MJCF models mean what MuJoCo means (issue 29), end to end through the importer, the collision
// pipeline and the solver, against MuJoCo's own answers for the same files
// (tests/data/mujoco/*.json, tools/reference/mujoco_contact_semantics.py, MuJoCo 4.0.0):
//   - which geom pairs collide (parent/weld filtering, <exclude>) and with which friction
//     (max, priority, condim 1, <pair>), margin and gap;
//   - stick or slide on a tilted floor (friction combination), and where a box rests with
//     margins;
//   - resting and sliding convex meshes keep MuJoCo's contact patch.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "sap/collision.hpp"
#include "sap/contacts.hpp"
#include "sap/mjcf.hpp"
#include "sap/simulator.hpp"

using namespace sap;

namespace {

nlohmann::json fixture(const std::string& name) {
  std::ifstream in(std::string(SAP_SOURCE_DIR) + "/tests/data/mujoco/" + name);
  EXPECT_TRUE(in.good()) << "missing tests/data/mujoco/" << name << " (tools/reference/mujoco_contact_semantics.py)";
  return nlohmann::json::parse(in);
}

struct HostContact {
  std::string g0, g1;
  double phi, friction;
  double pos[3];
};

// Our contacts of world 0 at qpos.
std::vector<HostContact> collide_at(const Model& m, const std::vector<double>& qpos) {
  Context ctx(Backend::CPU, 1);
  CollisionPipeline pipe(m, ctx, 1);
  State st(m, 1, Backend::CPU);
  st.qpos.world_from_host(0, qpos.data());
  Contacts con(1, 64, Backend::CPU);
  pipe.collide(st, con);
  const int n = con.counts_host()[0];
  const auto geom = con.geom.world_to_host(0);
  const auto phi = con.phi.world_to_host(0), mu = con.friction.world_to_host(0);
  const auto x0 = con.x0.world_to_host(0), x1 = con.x1.world_to_host(0);
  std::vector<HostContact> out;
  for (int i = 0; i < n; ++i) {
    HostContact c{m.geom_names[geom[2 * i]], m.geom_names[geom[2 * i + 1]], phi[i], mu[i], {}};
    for (int k = 0; k < 3; ++k) c.pos[k] = 0.5 * (x0[3 * i + k] + x1[3 * i + k]);
    out.push_back(c);
  }
  return out;
}

std::pair<std::string, std::string> sorted_pair(std::string a, std::string b) {
  if (b < a) std::swap(a, b);
  return {a, b};
}

}  // namespace

// Which pairs collide: every case of contact_params.json and contact_filter.json at the
// model's initial configuration; friction = MuJoCo's first coefficient (0 for condim 1).
TEST(MujocoSemantics, ContactPairsAndFrictionMatchMuJoCo) {
  int cases = 0;
  for (const char* file : {"contact_params.json", "contact_filter.json"}) {
    const nlohmann::json fx = fixture(file);
    for (const auto& c : fx["cases"]) {
      const std::string name = c["name"];
      const Scene s = load_mjcf_string(c["xml"].get<std::string>(), name + ".xml");
      const auto ours = collide_at(s.model, s.qpos0);
      std::set<std::pair<std::string, std::string>> ours_pairs, mj_pairs;
      for (const auto& o : ours) ours_pairs.insert(sorted_pair(o.g0, o.g1));
      if (c.contains("contacts")) {
        for (const auto& k : c["contacts"]) {
          mj_pairs.insert(sorted_pair(k["geom"][0], k["geom"][1]));
          const double mu = k["condim"].get<int>() == 1 ? 0.0 : k["friction"][0].get<double>();
          for (const auto& o : ours) EXPECT_NEAR(o.friction, mu, 1e-12) << name;
        }
      } else {
        for (const auto& p : c["pairs"]) mj_pairs.insert(sorted_pair(p[0], p[1]));
      }
      EXPECT_EQ(ours_pairs, mj_pairs) << name;
      ++cases;
    }
  }
  EXPECT_GT(cases, 20);
}

// A box on a floor under gravity tilted by atan(0.5): sticks where MuJoCo's box sticks, slides
// by MuJoCo's distance (to 3 %) where it slides (elliptic-cone cases; our cone is elliptic).
TEST(MujocoSemantics, StickOrSlideAsMuJoCo) {
  const nlohmann::json fx = fixture("friction_outcomes.json");
  int n = 0;
  for (const auto& c : fx["cases"]) {
    if (c["cone"] != "elliptic") continue;
    const std::string name = c["name"];
    const Scene s = load_mjcf_string(c["xml"].get<std::string>(), name + ".xml");
    SimulatorOptions opt;
    opt.nworld = 1;
    opt.backend = Backend::CPU;
    opt.threads = 1;
    Simulator sim(s, opt);
    sim.reset();
    sim.step(static_cast<int>(std::lround(1.0 / s.dt)));
    const std::vector<double> q = sim.qpos_view().to_host<double>();
    const double x = q[0] - s.qpos0[0], mj = c["x_at_1s"];
    if (std::abs(mj) < 0.01) {
      EXPECT_LT(std::abs(x), 0.01) << name << ": MuJoCo sticks (" << mj << " m), ours moves " << x << " m";
    } else {
      EXPECT_NEAR(x, mj, 0.03 * std::abs(mj)) << name;
    }
    ++n;
  }
  EXPECT_EQ(n, 6);
}

// With margins the contact surface moves out by the margin: the box rests at dist = margin.
TEST(MujocoSemantics, BoxRestsAtTheMargin) {
  const nlohmann::json fx = fixture("friction_outcomes.json");
  for (const auto& c : fx["margin_rest"]) {
    const Scene s = load_mjcf_string(c["xml"].get<std::string>(), "margin_rest.xml");
    SimulatorOptions opt;
    opt.nworld = 1;
    opt.backend = Backend::CPU;
    opt.threads = 1;
    Simulator sim(s, opt);
    sim.reset();
    sim.step(static_cast<int>(std::lround(2.0 / s.dt)));
    const std::vector<double> q = sim.qpos_view().to_host<double>();
    const double rest = q[2] - 0.1, mj = c["rest_gap"];
    EXPECT_NEAR(rest, mj, 5e-4) << "margins " << c["margin"] << " gap " << c["gap"];
  }
}

// Resting faces keep a patch: at each snapshot of MuJoCo's run, where MuJoCo has a face patch
// (>= 3 distinct points) we have >= 3 contacts, each within 5 mm of one of MuJoCo's points.
TEST(MujocoSemantics, MeshFacePatchesAsMuJoCo) {
  const nlohmann::json fx = fixture("mesh_contact_sets.json");
  int patches = 0;
  for (const auto& c : fx["cases"]) {
    const std::string name = c["name"];
    const Scene s = load_mjcf_string(c["xml"].get<std::string>(), name + ".xml");
    for (const auto& snap : c["snapshots"]) {
      std::vector<std::array<double, 3>> mj;
      for (const auto& k : snap["contacts"]) {
        const std::array<double, 3> p{k["pos"][0], k["pos"][1], k["pos"][2]};
        bool dup = false;
        for (const auto& q : mj) dup |= std::hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]) < 1e-6;
        if (!dup) mj.push_back(p);
      }
      if (mj.size() < 3) continue;
      const auto ours = collide_at(s.model, snap["qpos"].get<std::vector<double>>());
      EXPECT_GE(ours.size(), 3u) << name << " step " << snap["step"];
      for (const auto& o : ours) {
        double best = 1e9;
        for (const auto& q : mj) best = std::min(best, std::hypot(o.pos[0] - q[0], o.pos[1] - q[1], o.pos[2] - q[2]));
        EXPECT_LT(best, 5e-3) << name << " step " << snap["step"];
      }
      ++patches;
    }
  }
  EXPECT_GT(patches, 25);
}
