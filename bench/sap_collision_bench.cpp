// Narrow-phase cost per geom pair on the CPU (one thread), on the geometry and poses of the
// MuJoCo contact fixture (tests/data/mujoco/convex_contacts.json, tools/reference/mujoco_contacts.py), so
// that `tools/reference/mujoco_contacts.py --bench` times MuJoCo's mj_collision on exactly the same pairs.
//
//   build/sap_collision_bench [fixture.json] [--calls N]
//
// Prints, per case, the contacts found and the time per collide_ordered call in fp64 and fp32
// (best of 5 repetitions of N calls, default N = 20000).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/collision_world.hpp"
#include "sap/model_builder.hpp"

using namespace sap;

namespace {

int type_of(const std::string& n) {
  const char* names[] = {"plane", "sphere", "capsule", "box", "cylinder", "ellipsoid", "mesh", "hfield"};
  for (int i = 0; i < kNumGeomTypes; ++i)
    if (n == names[i]) return i;
  throw std::runtime_error("unknown geom type '" + n + "'");
}

struct Case {
  std::string name;
  Model model;
  int type[2];
  GeomFrame<double> f[2];
  GeomFrame<float> ff[2];
  double margin = 0;
  int g0 = 0, g1 = 1;
};

Case load(const nlohmann::json& c) {
  Case k;
  k.name = c["name"].get<std::string>();
  ModelBuilder b;
  int dataid[2] = {-1, -1};
  for (int i = 0; i < 2; ++i) {
    const auto& g = c["geoms"][i];
    k.type[i] = type_of(g["type"].get<std::string>());
    k.margin += g["margin"].get<double>();
    if (k.type[i] == kGeomMesh) {
      MeshSpec ms;
      ms.name = "m" + std::to_string(i);
      const auto& v = g["vert"];
      for (std::size_t j = 0; j < v.size(); j += 3)
        ms.vert.push_back({v[j].get<double>(), v[j + 1].get<double>(), v[j + 2].get<double>()});
      const auto& f = g["face"];
      for (std::size_t j = 0; j < f.size(); j += 3) ms.face.push_back({f[j].get<int>(), f[j + 1].get<int>(), f[j + 2].get<int>()});
      dataid[i] = b.add_mesh(ms);
    } else if (k.type[i] == kGeomHfield) {
      HfieldSpec hs;
      hs.name = "h";
      hs.nrow = g["nrow"].get<int>();
      hs.ncol = g["ncol"].get<int>();
      for (int j = 0; j < 4; ++j) hs.size[static_cast<std::size_t>(j)] = g["hfield_size"][j].get<double>();
      hs.data = g["data"].get<std::vector<double>>();
      dataid[i] = b.add_hfield(hs);
    }
  }
  k.model = b.finalize();
  const Model& m = k.model;
  for (int i = 0; i < 2; ++i) {
    const auto& g = c["geoms"][i];
    GeomFrame<double>& f = k.f[i];
    for (int r = 0; r < 3; ++r) {
      f.pos[r] = g["pos"][r].get<double>();
      f.size[r] = g["size"][r].get<double>();
      for (int q = 0; q < 3; ++q) f.rot(r, q) = g["mat"][3 * r + q].get<double>();
    }
    const int id = dataid[i];
    if (k.type[i] == kGeomMesh) {
      const int adr = m.mesh_vertadr[static_cast<std::size_t>(id)];
      f.vert = m.mesh_vert.data() + 3 * adr;
      f.nvert = m.mesh_vertnum[static_cast<std::size_t>(id)];
      f.vert_edgeadr = m.mesh_vert_edgeadr.data() + adr;
      f.vert_edgenum = m.mesh_vert_edgenum.data() + adr;
      f.edge = m.mesh_edge.data();
    } else if (k.type[i] == kGeomHfield) {
      f.hdata = m.hfield_data.data() + m.hfield_adr[static_cast<std::size_t>(id)];
      f.hsize = m.hfield_size.data() + 4 * id;
      f.nrow = m.hfield_nrow[static_cast<std::size_t>(id)];
      f.ncol = m.hfield_ncol[static_cast<std::size_t>(id)];
    }
    GeomFrame<float>& ff = k.ff[i];
    ff.pos = f.pos.cast<float>();
    ff.size = f.size.cast<float>();
    for (int j = 0; j < 9; ++j) ff.rot.m[j] = float(f.rot.m[j]);
    ff.vert = f.vert, ff.nvert = f.nvert, ff.vert_edgeadr = f.vert_edgeadr, ff.vert_edgenum = f.vert_edgenum;
    ff.edge = f.edge, ff.hdata = f.hdata, ff.hsize = f.hsize, ff.nrow = f.nrow, ff.ncol = f.ncol;
  }
  // Type order, as the pipeline calls it.
  if (k.type[0] > k.type[1]) k.g0 = 1, k.g1 = 0;
  return k;
}

// Best of 5 repetitions (the development machines are shared: the minimum is the cost).
template <class S>
double time_per_call(const Case& k, const GeomFrame<S>* f, long calls, int& n) {
  ContactGeom<S> out[kMaxPairContacts];
  volatile S sink = 0;
  double best = 1e300;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < calls; ++i) {
      n = collide_ordered(k.type[k.g0], f[k.g0], k.type[k.g1], f[k.g1], S(k.margin), out);
      sink = sink + (n > 0 ? out[0].phi : S(0));
    }
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count() / double(calls));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = std::string(SAP_SOURCE_DIR) + "/tests/data/mujoco/convex_contacts.json";
  long calls = 20000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--calls" && i + 1 < argc) calls = std::stol(argv[++i]);
    else if (a.rfind("--", 0) == 0) {
      std::cerr << "sap_collision_bench: unknown option " << a << " (expected [fixture.json] [--calls N])\n";
      return 2;
    } else path = a;
  }
  std::ifstream in(path);
  if (!in) {
    std::cerr << "sap_collision_bench: cannot open " << path << "\n";
    return 1;
  }
  nlohmann::json fx;
  try {
    fx = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    std::cerr << "sap_collision_bench: " << path << ": " << e.what() << "\n";
    return 1;
  }
  std::printf("%-40s %8s %12s %12s\n", "case", "contacts", "fp64 us", "fp32 us");
  for (const auto& c : fx["cases"]) {
    const std::string name = c["name"].get<std::string>();
    if (name.find("random 0") == std::string::npos && name.find("resting 1") == std::string::npos) continue;
    const Case k = load(c);
    int n64 = 0, n32 = 0;
    const double t64 = time_per_call<double>(k, k.f, calls, n64);
    const double t32 = time_per_call<float>(k, k.ff, calls, n32);
    std::printf("%-40s %8d %12.3f %12.3f\n", name.c_str(), n64, t64 * 1e6, t32 * 1e6);
  }
  return 0;
}
