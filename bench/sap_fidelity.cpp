// sap_fidelity: the contact-fidelity sweep (issue 31; docs/solver.md, "Contact fidelity"). Runs
// the cases of tests/contact_fidelity.hpp (bodies sliding, sticking, rolling and tipping on an
// incline, against rigid-body mechanics with Coulomb friction) under solver configurations and
// writes one record per world. tools/checks/fidelity_matrix.py turns the records into the acceptance
// matrix of docs/solver.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contact_fidelity.hpp"

namespace {

using namespace sap;
using namespace sap::fidelity;

constexpr const char* kHelp = R"(usage: sap_fidelity [options]

Runs the contact-fidelity sweep (every shape x time step x mass x stiffness x angle/friction;
tests/contact_fidelity.hpp) under each configuration and prints one summary line per group and
configuration. Worlds of one group share a simulator (per-world mass, contact and gravity).

options:
  --config P[/A]        preset P (approx32, approx64, drake) with contact approximation A (sap,
                        similar, lagged; none or default: the preset's default); repeatable.
                        Default: every preset with each approximation (9 configurations)
  --set key=value       solver option for every configuration (repeatable; an ablation)
  --shape S             only this shape (cube, flat_box, tall_box, capsule_along, capsule_across,
                        cylinder_upright, cylinder_across, sphere, mesh_cube); repeatable
  --dt SEC              only the groups with this time step (repeatable)
  --threads N           CPU threads per simulator (default 1)
  --json OUT            every world's record as JSON (tools/checks/fidelity_matrix.py reads it)
  --failures            print every failing world
  -h, --help            this help
)";

Config parse_config(const std::string& text) {
  Config c;
  const auto slash = text.find('/');
  c.preset = text.substr(0, slash);
  if (slash != std::string::npos) {
    const std::string a = text.substr(slash + 1);
    if (a == "sap") c.approximation = ContactApproximation::Sap;
    else if (a == "similar") c.approximation = ContactApproximation::Similar;
    else if (a == "lagged") c.approximation = ContactApproximation::Lagged;
    else if (a != "default")
      throw std::invalid_argument("--config " + text + ": approximation '" + a + "' is not sap, similar, lagged or default");
  }
  if (c.preset != "approx32" && c.preset != "approx64" && c.preset != "drake")
    throw std::invalid_argument("--config " + text + ": preset '" + c.preset + "' is not approx32, approx64 or drake");
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Config> configs;
  std::vector<std::pair<std::string, std::string>> sets;
  std::set<std::string> shapes;
  std::vector<double> dts;
  int threads = 1;
  std::string json_out;
  bool list_failures = false;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      if (a == "-h" || a == "--help") {
        std::cout << kHelp;
        return 0;
      } else if (a == "--config") {
        configs.push_back(parse_config(value()));
      } else if (a == "--set") {
        const std::string kv = value();
        const auto eq = kv.find('=');
        if (eq == std::string::npos) throw std::invalid_argument("--set " + kv + ": expected key=value");
        sets.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
      } else if (a == "--shape") {
        const std::string name = value();
        bool known = false;
        for (Shape sh : kAllShapes) known = known || name == shape_name(sh);
        if (!known) throw std::invalid_argument("--shape " + name + ": unknown shape (see --help)");
        shapes.insert(name);
      } else if (a == "--dt") {
        const std::string text = value();
        char* end = nullptr;
        const double dt = std::strtod(text.c_str(), &end);
        bool swept = false;
        for (const Group& g : full_sweep()) swept = swept || g.dt == dt;
        if (!end || *end != 0 || !swept) throw std::invalid_argument("--dt " + text + ": the sweep's time steps are 1e-4, 1e-3, 5e-3, 1e-2");
        dts.push_back(dt);
      } else if (a == "--threads") {
        const std::string text = value();
        char* end = nullptr;
        threads = static_cast<int>(std::strtol(text.c_str(), &end, 10));
        if (!end || *end != 0 || threads < 1) throw std::invalid_argument("--threads " + text + ": expected an integer >= 1");
      } else if (a == "--json") {
        json_out = value();
      } else if (a == "--failures") {
        list_failures = true;
      } else {
        throw std::invalid_argument("unknown option " + a + " (see --help)");
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sap_fidelity: error: %s\n", e.what());
    return 2;
  }
  if (configs.empty())
    for (const char* p : {"approx32", "approx64", "drake"})
      for (const char* a : {"sap", "similar", "lagged"}) configs.push_back(parse_config(std::string(p) + "/" + a));
  for (Config& c : configs) {
    c.overrides = sets;
    try {
      SolverOptions o;
      apply_config(o, c);
      o.resolve();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "sap_fidelity: error: %s\n", e.what());
      return 2;
    }
  }

  nlohmann::json records = nlohmann::json::array();
  int total = 0, passed = 0, failed_worlds = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const Group& g : full_sweep()) {
    if (!shapes.empty() && !shapes.count(shape_name(g.shape))) continue;
    if (!dts.empty() && std::find(dts.begin(), dts.end(), g.dt) == dts.end()) continue;
    for (const Config& c : configs) {
      // The approximation this configuration runs, and whether it is its preset's default.
      SolverOptions preset_only;
      set_solver_option(preset_only, "contact_preset_variant", c.preset);
      const ContactApproximation preset_default = preset_only.resolve().contact_approximation;
      SolverOptions full;
      apply_config(full, c);
      const ContactApproximation approx = full.resolve().contact_approximation;
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<WorldResult> res;
      try {
        res = run_group(g, c, threads);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "sap_fidelity: error: %s dt %g %s: %s\n", shape_name(g.shape), g.dt, c.label().c_str(),
                     e.what());
        return 1;
      }
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      int ok = 0, bad = 0, judged = 0;
      for (const WorldResult& r : res) {
        ok += r.pass && r.judged ? 1 : 0;
        judged += r.judged ? 1 : 0;
        bad += r.failed ? 1 : 0;
        records.push_back({{"shape", shape_name(g.shape)},
                           {"motion", motion_name(r.spec.motion)},
                           {"config", c.label()},
                           {"preset", c.preset},
                           {"approximation", to_string(approx)},
                           {"is_default", approx == preset_default},
                           {"dt", g.dt},
                           {"duration", g.duration},
                           {"mass", r.spec.mass},
                           {"stiffness", r.spec.stiffness},
                           {"angle_deg", r.spec.angle_deg},
                           {"mu", r.spec.mu},
                           {"pass", r.pass},
                           {"judged", r.judged},
                           {"failed", r.failed},
                           {"figure", r.figure},
                           {"distance", r.distance},
                           {"predicted", r.predicted},
                           {"creep", r.creep},
                           {"release_error", r.release_error},
                           {"rotation_deg", r.rotation_deg},
                           {"rotation_bound_deg", r.rotation_bound_deg},
                           {"slip", r.slip},
                           {"max_normal_speed", r.max_normal_speed},
                           {"airborne_steps", r.airborne_steps},
                           {"unheld_steps", r.unheld_steps},
                           {"steps", r.steps},
                           {"note", r.note}});
        if (list_failures && ((r.judged && !r.pass) || r.failed))
          std::printf("  FAIL %s %s dt %g %s m %g k %g angle %.2f mu %g: figure %.4g rotation %.3g (bound %.3g) %s\n",
                      motion_name(r.spec.motion), shape_name(g.shape), g.dt, c.label().c_str(), r.spec.mass,
                      r.spec.stiffness, r.spec.angle_deg, r.spec.mu, r.figure, r.rotation_deg, r.rotation_bound_deg,
                      r.note.c_str());
      }
      total += judged;
      passed += ok;
      failed_worlds += bad;
      std::printf("%-16s dt %-6g %-18s %3d/%3d pass (%zu worlds, %d judged), %d failed worlds (%.1f s)\n",
                  shape_name(g.shape), g.dt, c.label().c_str(), ok, judged, res.size(), judged, bad, secs);
      std::fflush(stdout);
    }
  }
  std::printf("total: %d/%d judged worlds pass, %d failed worlds, %.0f s\n", passed, total, failed_worlds,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (!json_out.empty()) {
    std::ofstream f(json_out);
    f << records.dump(1) << "\n";
  }
  return 0;
}
