// sap_ablate: how much do the solver presets (and one-factor overrides) change the motion?
// Steps one Simulator per variant (approx32, approx64, drake, plus any --variant) from the same
// initial state and records, per step and per world,
//   Delta_precision = ||v(approx64) - v(approx32)||,  Delta_model = ||v(drake) - v(approx64)||,
//   Delta_<variant> = ||v(variant) - v(its preset)||,
// and the same norms of the qpos differences. Two modes (docs/benchmarks.md):
//   trajectory  every variant steps from its own previous state: divergence of trajectories;
//   one-step    before each step every variant copies the reference variant's state (approx64 by
//               default), so the differences are those of a single step from a shared state.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "sap/simulator.hpp"
#include "sap/status.hpp"

namespace sap::bench {
namespace {

constexpr const char* kHelp = R"(usage: sap_ablate SCENE [options]

Runs the solver presets approx32, approx64 and drake (and extra one-factor variants) on SCENE
from the same initial state and records per step the velocity and position differences
Delta_precision = ||v(approx64) - v(approx32)|| and Delta_model = ||v(drake) - v(approx64)||.

options:
  --worlds N            number of worlds (default: the scene's num_worlds)
  --steps N             steps (default 200)
  --mode M              trajectory (default): each variant steps from its own state;
                        one-step: each step starts every variant from the reference's state
  --reference NAME      one-step mode: the variant whose trajectory supplies the shared state
                        (default approx64)
  --variant SPEC        extra variant [NAME=]PRESET[:key=value[,key=value...]], compared with
                        PRESET, e.g. approx64:contact_weight_mode=diag_delassus (repeatable)
  --set key=value       solver option applied to every variant (repeatable)
  --line-search L       shorthand for --set line_search_variant=L
  --dt SEC              override the scene's time step
  --backend B           cpu, cuda or auto (default auto)
  --threads N           CPU threads (default 0 = all hardware threads)
  --emulated-lanes N    CPU backend running team stages on emulated GPU teams of N lanes (tests)
  --csv OUT             per-step aggregates as CSV
  --json OUT            everything (per-world values included) as JSON; plot with
                        /usr/bin/python3 tools/plots/plot_ablation.py OUT --out PLOT.png
  --keyframe NAME       MJCF only: start from this keyframe
  --drop-unsupported    MJCF only: drop elements without a counterpart instead of failing
  --quiet               no summary on stdout
  -h, --help            this help

Variants start from the scene's solver options with contact_preset_variant replaced, then
--set/--line-search, then the variant's own overrides.
)";

struct VariantSpec {
  std::string name, preset;
  std::vector<std::pair<std::string, std::string>> overrides;
};

struct Options : CommonOptions {
  int worlds = 0;
  long long steps = 200;
  bool one_step = false;
  std::string reference = "approx64";
  std::vector<VariantSpec> extra;
  SolverOverrides common;
  std::string csv_path, json_path;
};

// [NAME=]PRESET[:key=value[,key=value...]]
VariantSpec parse_variant(const std::string& text) {
  const std::string opt = "--variant";
  VariantSpec v;
  const std::size_t colon = text.find(':');
  const std::string head = text.substr(0, colon);
  const std::size_t eq = head.find('=');
  std::string preset = head;
  if (eq != std::string::npos) {
    v.name = head.substr(0, eq);
    preset = head.substr(eq + 1);
    if (v.name.empty()) throw UsageError("option --variant: empty NAME in '" + text + "'");
  }
  try {
    v.preset = canonical_preset(preset);
  } catch (const std::exception&) {
    throw UsageError("option --variant '" + text + "': unknown preset '" + preset +
                     "' (expected [NAME=]PRESET[:key=value,...] with PRESET approx32, approx64 or drake)");
  }
  if (colon != std::string::npos) {
    std::string rest = text.substr(colon + 1);
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = rest.find(',', start);
      v.overrides.push_back(parse_key_value(opt + " '" + text + "'",
                                            rest.substr(start, comma == std::string::npos ? comma : comma - start)));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (v.name.empty()) v.name = text;
  for (const char* base : {"approx32", "approx64", "drake"})
    if (v.name == base)
      throw UsageError("option --variant: name '" + v.name + "' is taken by a preset; give it a NAME= prefix");
  return v;
}

Options parse_options(int argc, char** argv) {
  Options o;
  parse_arguments(argc, argv, kHelp, o, [&](ArgReader& r, const std::string& a) {
    if (a == "--worlds") {
      o.worlds = static_cast<int>(parse_int(a, r.value(a), 1, 1 << 24));
    } else if (a == "--steps") {
      o.steps = parse_int(a, r.value(a), 1, 1LL << 40);
    } else if (a == "--mode") {
      const std::string m = r.value(a);
      if (m == "trajectory") o.one_step = false;
      else if (m == "one-step" || m == "one_step") o.one_step = true;
      else throw UsageError("option --mode: expected trajectory or one-step, got '" + m + "'");
    } else if (a == "--reference") {
      o.reference = r.value(a);
    } else if (a == "--variant") {
      o.extra.push_back(parse_variant(r.value(a)));
    } else if (a == "--set") {
      o.common.sets.push_back(parse_key_value(a, r.value(a)));
    } else if (a == "--line-search") {
      o.common.line_search = r.value(a);
    } else if (a == "--csv") {
      o.csv_path = r.value(a);
    } else if (a == "--json") {
      o.json_path = r.value(a);
    } else {
      return false;
    }
    return true;
  });
  return o;
}

struct Variant {
  VariantSpec spec;
  SolverOptions options;
  std::unique_ptr<Simulator> sim;
  std::vector<double> q, v;  // host copies after the current step
  std::vector<int> failed_per_step;
  std::vector<double> newton_mean_per_step;
};

struct Comparison {
  std::string name, a, b;  // Delta = ||x(a) - x(b)||
  int ia = -1, ib = -1;
  std::vector<std::vector<double>> dv, dq;  // [step][world]
  std::vector<double> dv_mean, dv_max, dq_mean, dq_max;
};

Comparison make_comparison(const std::string& name, const std::string& a, const std::string& b) {
  Comparison c;
  c.name = name;
  c.a = a;
  c.b = b;
  return c;
}

double mean_of(const std::vector<double>& x) {
  double s = 0;
  for (double e : x) s += e;
  return x.empty() ? 0.0 : s / static_cast<double>(x.size());
}
// Max that propagates NaN (a non-finite world must not disappear from the aggregate).
double max_of(const std::vector<double>& x) {
  double m = 0;
  for (double e : x) {
    if (std::isnan(e)) return e;
    m = std::max(m, e);
  }
  return m;
}

int run(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  // Fail fast on --backend cuda without a device; say when --threads has no effect.
  if (resolve_backend(o.backend) == Backend::CUDA && o.threads > 0)
    std::fprintf(stderr, "sap_ablate: note: --threads applies to the CPU backend only; ignored on CUDA\n");
  const Scene scene = load_bench_scene(o.scene_path, o.load);
  const int nworld = o.worlds > 0 ? o.worlds : scene.num_worlds;

  // Variants: the three presets, then the extras.
  std::vector<Variant> vars;
  for (const char* p : {"approx32", "approx64", "drake"}) {
    Variant v;
    v.spec.name = v.spec.preset = p;
    vars.push_back(std::move(v));
  }
  for (const auto& e : o.extra) {
    for (const auto& v : vars)
      if (v.spec.name == e.name) throw UsageError("option --variant: two variants are named '" + e.name + "'");
    Variant v;
    v.spec = e;
    vars.push_back(std::move(v));
  }
  for (auto& v : vars) {
    v.options = scene.solver;
    SolverOverrides ov = o.common;
    ov.preset = v.spec.preset;
    ov.sets.insert(ov.sets.end(), v.spec.overrides.begin(), v.spec.overrides.end());
    try {
      apply_solver_overrides(v.options, ov);
    } catch (const UsageError& e) {
      throw UsageError("variant '" + v.spec.name + "': " + e.what());
    }
  }
  int iref = -1;
  for (std::size_t i = 0; i < vars.size(); ++i)
    if (vars[i].spec.name == o.reference) iref = static_cast<int>(i);
  if (iref < 0) {
    std::string names;
    for (const auto& v : vars) names += (names.empty() ? "" : ", ") + v.spec.name;
    throw UsageError("option --reference: no variant named '" + o.reference + "' (variants: " + names + ")");
  }

  std::vector<Comparison> comps;
  auto index_of = [&](const std::string& n) {
    for (std::size_t i = 0; i < vars.size(); ++i)
      if (vars[i].spec.name == n) return static_cast<int>(i);
    return -1;
  };
  comps.push_back(make_comparison("precision", "approx64", "approx32"));
  comps.push_back(make_comparison("model", "drake", "approx64"));
  for (const auto& e : o.extra) comps.push_back(make_comparison(e.name, e.name, e.preset));
  for (auto& c : comps) {
    c.ia = index_of(c.a);
    c.ib = index_of(c.b);
  }

  for (auto& v : vars) {
    SimulatorOptions so;
    so.nworld = nworld;
    so.backend = o.backend;
    so.threads = o.threads;
    so.emulated_lanes = o.emulated_lanes;
    so.override_solver = true;
    so.solver = v.options;
    v.sim = std::make_unique<Simulator>(scene, so);
  }
  const std::size_t nq = static_cast<std::size_t>(scene.model.nq), nv = static_cast<std::size_t>(scene.model.nv);
  std::vector<double> v_ref_mean;

  Progress bar("ablation", o.steps, !o.quiet);
  for (long long s = 0; s < o.steps; ++s) {
    if (o.one_step) {
      const State& shared = vars[static_cast<std::size_t>(iref)].sim->state();
      for (std::size_t i = 0; i < vars.size(); ++i)
        if (static_cast<int>(i) != iref) vars[i].sim->state().copy_from(shared);
    }
    for (auto& v : vars) {
      v.sim->step();
      v.q = v.sim->state().qpos.buffer().to_host();
      v.v = v.sim->state().qvel.buffer().to_host();
      const StepDiagnostics d = v.sim->solver().diagnostics();
      int failed = 0;
      double newton = 0;
      for (int w = 0; w < nworld; ++w) {
        failed += (d.status[static_cast<std::size_t>(w)] & kStatusFailureMask) ? 1 : 0;
        newton += d.newton_iterations[static_cast<std::size_t>(w)];
      }
      v.failed_per_step.push_back(failed);
      v.newton_mean_per_step.push_back(newton / nworld);
    }
    for (auto& c : comps) {
      const Variant& A = vars[static_cast<std::size_t>(c.ia)];
      const Variant& B = vars[static_cast<std::size_t>(c.ib)];
      std::vector<double> dv(static_cast<std::size_t>(nworld)), dq(static_cast<std::size_t>(nworld));
      for (int w = 0; w < nworld; ++w) {
        const std::size_t W = static_cast<std::size_t>(w);
        double sv = 0, sq = 0;
        for (std::size_t i = 0; i < nv; ++i)
          sv += (A.v[W * nv + i] - B.v[W * nv + i]) * (A.v[W * nv + i] - B.v[W * nv + i]);
        for (std::size_t i = 0; i < nq; ++i)
          sq += (A.q[W * nq + i] - B.q[W * nq + i]) * (A.q[W * nq + i] - B.q[W * nq + i]);
        dv[W] = std::sqrt(sv);
        dq[W] = std::sqrt(sq);
      }
      c.dv_mean.push_back(mean_of(dv));
      c.dv_max.push_back(max_of(dv));
      c.dq_mean.push_back(mean_of(dq));
      c.dq_max.push_back(max_of(dq));
      c.dv.push_back(std::move(dv));
      c.dq.push_back(std::move(dq));
    }
    {
      const Variant& R = vars[static_cast<std::size_t>(iref)];
      std::vector<double> n(static_cast<std::size_t>(nworld));
      for (int w = 0; w < nworld; ++w) {
        double s2 = 0;
        for (std::size_t i = 0; i < nv; ++i)
          s2 += R.v[static_cast<std::size_t>(w) * nv + i] * R.v[static_cast<std::size_t>(w) * nv + i];
        n[static_cast<std::size_t>(w)] = std::sqrt(s2);
      }
      v_ref_mean.push_back(mean_of(n));
    }
    bar.update(s + 1);
  }
  bar.finish();

  // ---- outputs
  using nlohmann::json;
  json j = record_header("sap_ablate", scene, o.scene_path);
  j["device"] = vars[0].sim->context().device_name();
  j["cpu_model"] = cpu_model_name();
  j["mode"] = o.one_step ? "one-step" : "trajectory";
  j["reference"] = o.reference;
  j["nworld"] = nworld;
  j["steps"] = o.steps;
  j["dt"] = scene.dt;
  std::vector<double> time;
  for (long long s = 1; s <= o.steps; ++s) time.push_back(static_cast<double>(s) * scene.dt);
  j["time"] = time;
  j["v_reference_norm_mean"] = v_ref_mean;
  json jv = json::array();
  for (const auto& v : vars) {
    json e;
    e["name"] = v.spec.name;
    e["preset"] = v.spec.preset;
    json ov = json::array();
    for (const auto& kv : v.spec.overrides) ov.push_back(kv.first + "=" + kv.second);
    e["overrides"] = ov;
    e["config"] = config_json(v.options.resolve());
    e["failed_worlds_per_step"] = v.failed_per_step;
    e["newton_iterations_mean_per_step"] = v.newton_mean_per_step;
    jv.push_back(e);
  }
  j["variants"] = jv;
  auto arr = [](const std::vector<double>& x) {
    json a = json::array();
    for (double e : x) a.push_back(finite_or_null(e));
    return a;
  };
  json jc = json::array();
  for (const auto& c : comps) {
    json e;
    e["name"] = c.name;
    e["a"] = c.a;
    e["b"] = c.b;
    e["dv_mean"] = arr(c.dv_mean);
    e["dv_max"] = arr(c.dv_max);
    e["dq_mean"] = arr(c.dq_mean);
    e["dq_max"] = arr(c.dq_max);
    json dvw = json::array(), dqw = json::array();
    for (const auto& x : c.dv) dvw.push_back(arr(x));
    for (const auto& x : c.dq) dqw.push_back(arr(x));
    e["dv_world"] = dvw;  // [step][world]
    e["dq_world"] = dqw;
    jc.push_back(e);
  }
  j["comparisons"] = jc;
  if (!o.json_path.empty()) write_json_file(o.json_path, j, /*indent=*/-1);  // compact: per-world arrays
  if (!o.csv_path.empty()) {
    std::ofstream f(o.csv_path);
    if (!f) throw std::runtime_error("cannot write '" + o.csv_path + "'");
    f << "step,time,comparison,a,b,dv_mean,dv_max,dq_mean,dq_max\n";
    f.precision(17);
    for (long long s = 0; s < o.steps; ++s)
      for (const auto& c : comps) {
        const std::size_t k = static_cast<std::size_t>(s);
        f << (s + 1) << "," << time[k] << "," << c.name << "," << c.a << "," << c.b << "," << c.dv_mean[k] << ","
          << c.dv_max[k] << "," << c.dq_mean[k] << "," << c.dq_max[k] << "\n";
      }
    if (!f) throw std::runtime_error("error writing '" + o.csv_path + "'");
  }

  int total_failed = 0;
  for (const auto& v : vars)
    for (int f : v.failed_per_step) total_failed += f;
  bool nonfinite = false;
  for (const auto& c : comps)
    for (double x : c.dv_max) nonfinite = nonfinite || !std::isfinite(x);
  if (!o.quiet) {
    std::printf("sap_ablate  %s  (%s), mode %s%s, nworld %d, %lld steps of %g s, %s\n", scene.name.c_str(),
                o.scene_path.c_str(), o.one_step ? "one-step" : "trajectory",
                o.one_step ? (" (shared state from " + o.reference + ")").c_str() : "", nworld, o.steps, scene.dt,
                j["device"].get<std::string>().c_str());
    auto label_of = [](const Comparison& c) {
      return c.name == c.a ? c.a + " - " + c.b : c.name + ": " + c.a + " - " + c.b;
    };
    int width = 28;
    for (const auto& c : comps) width = std::max(width, static_cast<int>(label_of(c).size()));
    std::printf("  %-*s %12s %12s %12s %12s %12s\n", width, "Delta = ||x(a) - x(b)||", "v last mean", "v last max",
                "v max(steps)", "q last mean", "q max(steps)");
    for (const auto& c : comps)
      std::printf("  %-*s %12.3e %12.3e %12.3e %12.3e %12.3e\n", width, label_of(c).c_str(), c.dv_mean.back(),
                  c.dv_max.back(), max_of(c.dv_max), c.dq_mean.back(), max_of(c.dq_max));
    std::printf("  reference |v| mean over worlds at the last step: %.3e\n", v_ref_mean.back());
    for (const auto& v : vars) {
      int failed = 0;
      for (int f : v.failed_per_step) failed += f;
      std::printf("  %-*s newton mean %.3g, failed world-steps %d\n", width, v.spec.name.c_str(),
                  mean_of(v.newton_mean_per_step), failed);
    }
  }
  return total_failed == 0 && !nonfinite ? 0 : 3;
}

}  // namespace
}  // namespace sap::bench

int main(int argc, char** argv) { return sap::bench::tool_main("sap_ablate", sap::bench::run, argc, argv); }
