#include "sap/solver_options.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>

namespace sap {

const char* to_string(Precision p) { return p == Precision::F32 ? "fp32" : "fp64"; }
const char* to_string(ContactWeightMode m) {
  return m == ContactWeightMode::BodyInertia ? "body_inertia" : "diag_delassus";
}
const char* to_string(ContactPointMode m) {
  return m == ContactPointMode::WitnessPoint ? "witness_point" : "contact_midpoint";
}
const char* to_string(PositionIntegrationMode m) {
  return m == PositionIntegrationMode::Midpoint ? "midpoint" : "sap_euler";
}
const char* to_string(CoriolisMode m) { return m == CoriolisMode::Explicit ? "explicit" : "midpoint"; }
const char* to_string(LinearSolver s) { return s == LinearSolver::Reference ? "reference" : "cholesky"; }

const char* to_string(LineSearchVariant v) {
  switch (v) {
    case LineSearchVariant::MonotoneDecay: return "monotone_decay";
    case LineSearchVariant::ArmijoDecay: return "armijo_decay";
    case LineSearchVariant::ExactRoot: return "exact_root";
  }
  return "?";
}

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

[[noreturn]] void bad_value(const std::string& key, const std::string& value, const std::string& expected) {
  throw std::invalid_argument("solver option '" + key + "': invalid value '" + value + "', expected " + expected);
}

Precision parse_precision(const std::string& key, const std::string& v) {
  const std::string s = lower(v);
  if (s == "fp32" || s == "f32" || s == "float32" || s == "float") return Precision::F32;
  if (s == "fp64" || s == "f64" || s == "float64" || s == "double") return Precision::F64;
  bad_value(key, v, "fp32|f32 or fp64|f64");
}

bool parse_bool(const std::string& key, const std::string& v) {
  const std::string s = lower(v);
  if (s == "true" || s == "1" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "0" || s == "no" || s == "off") return false;
  bad_value(key, v, "true or false");
}

double parse_double(const std::string& key, const std::string& v) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size() || !std::isfinite(x)) bad_value(key, v, "a finite number");
  return x;
}

int parse_int(const std::string& key, const std::string& v) {
  char* end = nullptr;
  const long x = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || end != v.c_str() + v.size() || x < 1 || x > 1000000) bad_value(key, v, "an integer in [1, 1000000]");
  return static_cast<int>(x);
}

}  // namespace

std::string canonical_preset(const std::string& name) {
  const std::string s = lower(name);
  if (s == "approx32" || s == "approx_32" || s == "approx-32") return "approx32";
  if (s == "approx64" || s == "approx_64" || s == "approx-64") return "approx64";
  if (s == "drake") return "drake";
  throw std::invalid_argument("unknown contact_preset_variant '" + name +
                              "', expected approx32 (approx_32, approx-32), approx64 (approx_64, approx-64) or drake");
}

SolverConfig SolverOptions::resolve() const {
  SolverConfig c;
  c.preset = canonical_preset(contact_preset_variant);
  if (c.preset == "approx32") {
    c.free_motion_solve_precision = Precision::F32;
    c.contact_solve_precision = Precision::F64;
    c.contact_linear_solve_precision = Precision::F32;
    c.sap_contact_weight_precision = Precision::F32;
    c.use_f64_boundary_pose = false;
    c.contact_weight_mode = ContactWeightMode::BodyInertia;
    c.contact_point_mode = ContactPointMode::WitnessPoint;
    c.position_integration = PositionIntegrationMode::Midpoint;
    c.coriolis = CoriolisMode::Midpoint;
  } else {
    c.free_motion_solve_precision = Precision::F64;
    c.contact_solve_precision = Precision::F64;
    c.contact_linear_solve_precision = Precision::F64;
    c.sap_contact_weight_precision = Precision::F64;
    c.use_f64_boundary_pose = true;
    const bool drake = c.preset == "drake";
    c.contact_weight_mode = drake ? ContactWeightMode::DiagDelassus : ContactWeightMode::BodyInertia;
    c.contact_point_mode = drake ? ContactPointMode::ContactMidpoint : ContactPointMode::WitnessPoint;
    c.position_integration = drake ? PositionIntegrationMode::SapEuler : PositionIntegrationMode::Midpoint;
    c.coriolis = drake ? CoriolisMode::Explicit : CoriolisMode::Midpoint;
  }
  // Overrides after expansion.
  if (free_motion_solve_precision) c.free_motion_solve_precision = *free_motion_solve_precision;
  if (contact_solve_precision) c.contact_solve_precision = *contact_solve_precision;
  if (contact_linear_solve_precision) c.contact_linear_solve_precision = *contact_linear_solve_precision;
  if (sap_contact_weight_precision) c.sap_contact_weight_precision = *sap_contact_weight_precision;
  if (use_f64_boundary_pose) c.use_f64_boundary_pose = *use_f64_boundary_pose;
  if (contact_weight_mode) c.contact_weight_mode = *contact_weight_mode;
  if (contact_point_mode) c.contact_point_mode = *contact_point_mode;
  if (position_integration) c.position_integration = *position_integration;
  if (coriolis) c.coriolis = *coriolis;
  c.coriolis_iterations = coriolis_iterations.value_or(2);

  c.line_search_variant = line_search_variant;
  c.linear_solver = linear_solver;
  const bool monotone = line_search_variant == LineSearchVariant::MonotoneDecay;
  c.cost_abs_tol = cost_abs_tol.value_or(monotone ? 0.0 : 1e-30);
  c.cost_rel_tol = cost_rel_tol.value_or(monotone ? 5e-3 : 1e-15);
  // exact_root promotes the default 40 line-search iterations to 100.
  c.line_search_max_iterations =
      line_search_max_iterations.value_or(line_search_variant == LineSearchVariant::ExactRoot ? 100 : 40);
  c.max_iterations = max_iterations.value_or(100);
  c.rho = rho.value_or(0.8);
  c.armijo_c = armijo_c.value_or(1e-4);
  const double eps = c.contact_solve_precision == Precision::F32 ? double(std::numeric_limits<float>::epsilon())
                                                                 : std::numeric_limits<double>::epsilon();
  c.line_search_relative_slop = line_search_relative_slop.value_or(1000.0 * eps);
  c.abs_tol = abs_tol.value_or(1e-14);
  c.rel_tol = rel_tol.value_or(1e-6);
  c.sigma = sigma.value_or(1e-3);
  c.near_rigid_threshold = near_rigid_threshold.value_or(1.0);

  auto require = [](bool ok, const std::string& key, double v, const char* expected) {
    if (!ok) bad_value(key, std::to_string(v), expected);
  };
  require(c.rho > 0 && c.rho < 1, "rho", c.rho, "a number in (0, 1)");
  require(c.armijo_c > 0 && c.armijo_c < 1, "armijo_c", c.armijo_c, "a number in (0, 1)");
  require(c.line_search_relative_slop >= 0, "line_search_relative_slop", c.line_search_relative_slop, "a number >= 0");
  require(c.cost_abs_tol >= 0, "cost_abs_tol", c.cost_abs_tol, "a number >= 0");
  require(c.cost_rel_tol >= 0, "cost_rel_tol", c.cost_rel_tol, "a number >= 0");
  require(c.abs_tol >= 0, "abs_tol", c.abs_tol, "a number >= 0");
  require(c.rel_tol >= 0, "rel_tol", c.rel_tol, "a number >= 0");
  require(c.sigma > 0, "sigma", c.sigma, "a number > 0");
  require(c.near_rigid_threshold >= 0, "near_rigid_threshold", c.near_rigid_threshold, "a number >= 0");
  return c;
}

const std::vector<std::string>& solver_option_names() {
  static const std::vector<std::string> names = {
      "contact_preset_variant", "free_motion_solve_precision", "contact_solve_precision",
      "contact_linear_solve_precision", "sap_contact_weight_precision", "use_f64_boundary_pose",
      "contact_weight_mode", "contact_point_mode", "position_integration", "coriolis", "coriolis_iterations",
      "line_search_variant", "linear_solver",
      "max_iterations", "line_search_max_iterations", "rho", "armijo_c", "line_search_relative_slop",
      "cost_abs_tol", "cost_rel_tol", "abs_tol", "rel_tol", "sigma", "near_rigid_threshold"};
  return names;
}

void set_solver_option(SolverOptions& o, const std::string& key, const std::string& value) {
  const std::string v = lower(value);
  if (key == "contact_preset_variant") {
    try {
      o.contact_preset_variant = canonical_preset(value);
    } catch (const std::invalid_argument&) {
      bad_value(key, value, "approx32 (approx_32, approx-32), approx64 (approx_64, approx-64) or drake");
    }
  } else if (key == "free_motion_solve_precision") {
    o.free_motion_solve_precision = parse_precision(key, value);
  } else if (key == "contact_solve_precision") {
    o.contact_solve_precision = parse_precision(key, value);
  } else if (key == "contact_linear_solve_precision") {
    o.contact_linear_solve_precision = parse_precision(key, value);
  } else if (key == "sap_contact_weight_precision") {
    o.sap_contact_weight_precision = parse_precision(key, value);
  } else if (key == "use_f64_boundary_pose") {
    o.use_f64_boundary_pose = parse_bool(key, value);
  } else if (key == "contact_weight_mode") {
    if (v == "body_inertia") o.contact_weight_mode = ContactWeightMode::BodyInertia;
    else if (v == "diag_delassus") o.contact_weight_mode = ContactWeightMode::DiagDelassus;
    else bad_value(key, value, "body_inertia or diag_delassus");
  } else if (key == "contact_point_mode") {
    if (v == "witness_point") o.contact_point_mode = ContactPointMode::WitnessPoint;
    else if (v == "contact_midpoint") o.contact_point_mode = ContactPointMode::ContactMidpoint;
    else bad_value(key, value, "witness_point or contact_midpoint");
  } else if (key == "position_integration") {
    if (v == "midpoint") o.position_integration = PositionIntegrationMode::Midpoint;
    else if (v == "sap_euler") o.position_integration = PositionIntegrationMode::SapEuler;
    else bad_value(key, value, "midpoint or sap_euler");
  } else if (key == "coriolis") {
    if (v == "explicit") o.coriolis = CoriolisMode::Explicit;
    else if (v == "midpoint") o.coriolis = CoriolisMode::Midpoint;
    else bad_value(key, value, "explicit or midpoint");
  } else if (key == "coriolis_iterations") {
    o.coriolis_iterations = parse_int(key, value);
  } else if (key == "line_search_variant") {
    if (v == "monotone_decay") o.line_search_variant = LineSearchVariant::MonotoneDecay;
    else if (v == "armijo_decay") o.line_search_variant = LineSearchVariant::ArmijoDecay;
    else if (v == "exact_root") o.line_search_variant = LineSearchVariant::ExactRoot;
    else bad_value(key, value, "monotone_decay, armijo_decay or exact_root");
  } else if (key == "linear_solver") {
    if (v == "cholesky") o.linear_solver = LinearSolver::Cholesky;
    else if (v == "reference") o.linear_solver = LinearSolver::Reference;
    else bad_value(key, value, "cholesky or reference");
  } else if (key == "max_iterations") {
    o.max_iterations = parse_int(key, value);
  } else if (key == "line_search_max_iterations") {
    o.line_search_max_iterations = parse_int(key, value);
  } else if (key == "rho") {
    o.rho = parse_double(key, value);
  } else if (key == "armijo_c") {
    o.armijo_c = parse_double(key, value);
  } else if (key == "line_search_relative_slop") {
    o.line_search_relative_slop = parse_double(key, value);
  } else if (key == "cost_abs_tol") {
    o.cost_abs_tol = parse_double(key, value);
  } else if (key == "cost_rel_tol") {
    o.cost_rel_tol = parse_double(key, value);
  } else if (key == "abs_tol") {
    o.abs_tol = parse_double(key, value);
  } else if (key == "rel_tol") {
    o.rel_tol = parse_double(key, value);
  } else if (key == "sigma") {
    o.sigma = parse_double(key, value);
  } else if (key == "near_rigid_threshold") {
    o.near_rigid_threshold = parse_double(key, value);
  } else {
    std::string all;
    for (const auto& n : solver_option_names()) all += (all.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown solver option '" + key + "', expected one of: " + all);
  }
}

}  // namespace sap
