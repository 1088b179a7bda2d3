// What the fuzzers run on each input, shared with the test suite, which replays the regression
// corpus (fuzz/regressions/) and the seed corpus through the same functions without libFuzzer
// (tests/test_loader_robustness.cpp).
//
// Each function loads one input from a string and, when it loads, uses the result a little
// (initial state, controls, one dynamics evaluation) so that a model the loader accepts but
// cannot be used is found too. It returns "" on success and the error message otherwise. Only
// std::runtime_error and std::invalid_argument are the loaders' documented errors; anything
// else (std::bad_alloc, nlohmann::json exceptions, std::out_of_range, ...) propagates: the
// fuzzer then reports it as a crash and the test as a failure.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "sap/dynamics.hpp"
#include "sap/mjcf.hpp"
#include "sap/scene.hpp"

namespace sap::fuzz {

// Names the inputs carry in error messages: every error must start with "<name>:".
constexpr const char* kSceneSource = "fuzz.json";
constexpr const char* kMjcfSource = "fuzz.xml";
constexpr const char* kUrdfSource = "fuzz.urdf";

// Scene assets and MJCF includes are resolved here (small copies of real models), so that the
// fuzzers reach the asset and include paths without touching files outside the repository.
inline std::string assets_dir() { return std::string(SAP_SOURCE_DIR) + "/fuzz/assets"; }

// True when `message` is empty or names its input first, as the loaders promise: `source`, or a
// file of fuzz/assets for an error inside an MJCF include (located in the included file).
inline bool located(const std::string& message, const std::string& source) {
  return message.empty() || message.rfind(source + ":", 0) == 0 || message.rfind(assets_dir() + "/", 0) == 0;
}

namespace detail {
// One dynamics evaluation at q (zero velocity when v is empty).
inline void evaluate(const Model& m, const std::vector<double>& q, const std::vector<double>& v) {
  if (static_cast<int>(q.size()) != m.nq) throw std::logic_error("initial state size differs from nq");
  DynamicsEvaluator ev(m);
  ev.compute(q.data(), v.empty() ? nullptr : v.data());
  (void)ev.mass_matrix();
  (void)ev.bias();
}
inline std::vector<double> reference_configuration(const Model& m) {
  // qpos = 0 except unit quaternions (free: [3..7), ball: [0..4)).
  std::vector<double> q(static_cast<std::size_t>(m.nq), 0.0);
  for (int j = 0; j < m.njnt; ++j) {
    const int t = m.jnt_type[static_cast<std::size_t>(j)];
    const std::size_t adr = static_cast<std::size_t>(m.jnt_qposadr[static_cast<std::size_t>(j)]);
    if (t == kJointFree) q[adr + 3] = 1;
    if (t == kJointBall) q[adr] = 1;
  }
  return q;
}
template <class F>
std::string errors_of(F&& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}
}  // namespace detail

inline std::string load_scene_text(const std::string& text) {
  return detail::errors_of([&] {
    const Scene s = parse_scene(text, kSceneSource, assets_dir());
    std::vector<double> q, v, ctrl, ctrl_vel;
    scene_initial_state(s, s.num_worlds - 1, q, v);
    scene_control(s, 0.25, s.num_worlds - 1, ctrl, ctrl_vel);
    detail::evaluate(s.model, q, v);
  });
}

// MJCF as written, then with unsupported elements dropped (reaches further into files that
// use tendons or equality constraints). Returns the first error ("" when both load).
inline std::string load_mjcf_text(const std::string& text, bool drop_unsupported) {
  return detail::errors_of([&] {
    ImportOptions o;
    o.drop_unsupported = drop_unsupported;
    ImportReport report;
    const Model m = load_mjcf_string(text, kMjcfSource, &report, o, assets_dir()).model;
    detail::evaluate(m, detail::reference_configuration(m), {});
    for (const auto& k : report.keyframes)
      if (static_cast<int>(k.qpos.size()) == m.nq) detail::evaluate(m, k.qpos, {});
  });
}

// URDF with a fixed base as written, then with a floating base and unsupported elements
// dropped.
inline std::string load_urdf_text(const std::string& text, bool floating_and_drop) {
  return detail::errors_of([&] {
    ImportOptions o;
    o.drop_unsupported = floating_and_drop;
    ImportReport report;
    const Model m = load_urdf_string(text, kUrdfSource, &report, o, floating_and_drop).model;
    detail::evaluate(m, detail::reference_configuration(m), {});
  });
}

// For the fuzzers: an error that does not name its input is a finding too.
inline void require_located(const std::string& message, const char* source) {
  if (located(message, source)) return;
  std::fprintf(stderr, "error message does not start with '%s:': %s\n", source, message.c_str());
  std::abort();
}

}  // namespace sap::fuzz
