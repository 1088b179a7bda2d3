// MJCF models mean what MuJoCo means (issue 29), end to end through the importer, the collision
// pipeline and the solver, against MuJoCo's own answers for the same files
// (tests/data/mujoco/*.json, tools/reference/mujoco_contact_semantics.py, MuJoCo 4.0.0):
//   - resting and sliding convex meshes: MuJoCo's contact patch, and a contact wherever MuJoCo
//     has one (mesh_contact_sets.json).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <fstream>
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
  std::array<double, 3> pos;
};

// Our contacts of one world at qpos (the witness midpoints).
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
    HostContact c{m.geom_names[static_cast<std::size_t>(geom[2 * i])], m.geom_names[static_cast<std::size_t>(geom[2 * i + 1])],
                  phi[i], mu[i], {}};
    for (int k = 0; k < 3; ++k) c.pos[k] = 0.5 * (x0[3 * i + k] + x1[3 * i + k]);
    out.push_back(c);
  }
  return out;
}

double distance(const std::array<double, 3>& a, const std::array<double, 3>& b) {
  return std::hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
}

double dot(const std::array<double, 3>& a, const std::array<double, 3>& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

// Area of the convex hull of points projected on the plane normal to the unit vector n (gift
// wrapping; a handful of points).
double hull_area(const std::vector<std::array<double, 3>>& pts, const std::array<double, 3>& n) {
  std::array<double, 3> t1 = std::abs(n[0]) < 0.9 ? std::array<double, 3>{1, 0, 0} : std::array<double, 3>{0, 1, 0};
  const double tn = dot(t1, n);
  for (int k = 0; k < 3; ++k) t1[k] -= tn * n[k];
  const double l = std::sqrt(dot(t1, t1));
  for (double& x : t1) x /= l;
  const std::array<double, 3> t2{n[1] * t1[2] - n[2] * t1[1], n[2] * t1[0] - n[0] * t1[2], n[0] * t1[1] - n[1] * t1[0]};
  std::vector<std::array<double, 2>> p;
  for (const auto& x : pts) p.push_back({dot(x, t1), dot(x, t2)});
  if (p.size() < 3) return 0;
  std::size_t start = 0;
  for (std::size_t i = 1; i < p.size(); ++i)
    if (p[i][0] < p[start][0]) start = i;
  std::vector<std::size_t> hull;
  std::size_t cur = start;
  do {
    hull.push_back(cur);
    std::size_t next = (cur + 1) % p.size();
    for (std::size_t i = 0; i < p.size(); ++i) {
      const double cr = (p[next][0] - p[cur][0]) * (p[i][1] - p[cur][1]) - (p[next][1] - p[cur][1]) * (p[i][0] - p[cur][0]);
      if (cr < 0) next = i;
    }
    cur = next;
  } while (cur != start && hull.size() <= p.size());
  double a = 0;
  for (std::size_t i = 0; i < hull.size(); ++i) {
    const auto& u = p[hull[i]];
    const auto& v = p[hull[(i + 1) % hull.size()]];
    a += u[0] * v[1] - v[0] * u[1];
  }
  return 0.5 * std::abs(a);
}

}  // namespace

// Resting and sliding faces keep a patch: at each snapshot of MuJoCo's run where MuJoCo has a
// face patch (>= 3 distinct points) we have >= 3 contacts on its contact plane (to 1 mm) whose
// polygon covers at least half the area of MuJoCo's (the two reductions keep different corners
// of one clipped polygon, so the points themselves may differ); where MuJoCo has any contact we
// have one, as deep to 0.1 mm (the snapshot of a mesh cube sliding on a box floor with one
// corner 47 um deep is where GJK once stopped on a duplicate support point and reported no
// contact).
TEST(MujocoSemantics, MeshContactSetsAsMuJoCo) {
  const nlohmann::json fx = fixture("mesh_contact_sets.json");
  int patches = 0, snapshots = 0;
  for (const auto& c : fx["cases"]) {
    const std::string name = c["name"];
    const Scene s = load_mjcf_string(c["xml"].get<std::string>(), name + ".xml");
    for (const auto& snap : c["snapshots"]) {
      std::vector<std::array<double, 3>> mj;
      double mj_deepest = 1e9;
      for (const auto& k : snap["contacts"]) {
        const std::array<double, 3> p{k["pos"][0], k["pos"][1], k["pos"][2]};
        mj_deepest = std::min(mj_deepest, k["dist"].get<double>());
        bool dup = false;
        for (const auto& q : mj) dup |= distance(p, q) < 1e-6;
        if (!dup) mj.push_back(p);
      }
      if (mj.empty()) continue;
      const auto ours = collide_at(s.model, snap["qpos"].get<std::vector<double>>());
      ++snapshots;
      ASSERT_FALSE(ours.empty()) << name << " step " << snap["step"] << ": MuJoCo has " << mj.size() << " contacts";
      double deepest = 1e9;
      for (const auto& o : ours) deepest = std::min(deepest, o.phi);
      EXPECT_NEAR(deepest, mj_deepest, 1e-4) << name << " step " << snap["step"];
      if (mj.size() < 3) continue;
      EXPECT_GE(ours.size(), 3u) << name << " step " << snap["step"];
      const std::array<double, 3> n{snap["contacts"][0]["normal"][0], snap["contacts"][0]["normal"][1],
                                    snap["contacts"][0]["normal"][2]};
      std::vector<std::array<double, 3>> ours_pos;
      for (const auto& o : ours) {
        ours_pos.push_back(o.pos);
        EXPECT_LT(std::abs(dot(o.pos, n) - dot(mj[0], n)), 1e-3) << name << " step " << snap["step"];
      }
      EXPECT_GT(hull_area(ours_pos, n), 0.5 * hull_area(mj, n)) << name << " step " << snap["step"];
      ++patches;
    }
  }
  EXPECT_GT(patches, 25);
  EXPECT_GT(snapshots, patches);
}
