// Options of SolverSAP: a preset (approx32, approx64, drake) expands into per-stage precisions
// and modes; explicit fields override the expansion (one-factor experiments). Every option
// can be set by name from strings (JSON scenes, command lines); bad names or values throw
// with the accepted alternatives.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sap {

enum class Precision { F32, F64 };
enum class ContactWeightMode { BodyInertia, DiagDelassus };
enum class ContactPointMode { WitnessPoint, ContactMidpoint };
enum class PositionIntegrationMode { Midpoint, SapEuler };
enum class LineSearchVariant { MonotoneDecay, ArmijoDecay, ExactRoot };
// Velocity at which free motion evaluates Coriolis/gyroscopic forces: v_n (Drake) or the
// midpoint (v_n + v*)/2 by fixed-point passes that reuse the factor of A.
enum class CoriolisMode { Explicit, Midpoint };
// Factorisation of the Newton system: our envelope Cholesky inside the fused solve kernel, or
// a library reference (Eigen's LLT on the CPU, cuSOLVER's batched potrf/potrs on CUDA) between
// the launches of a split Newton loop, to cross-check and measure ours.
enum class LinearSolver { Cholesky, Reference };

const char* to_string(Precision p);
const char* to_string(ContactWeightMode m);
const char* to_string(ContactPointMode m);
const char* to_string(PositionIntegrationMode m);
const char* to_string(LineSearchVariant v);
const char* to_string(CoriolisMode m);
const char* to_string(LinearSolver s);

// Fully resolved configuration used by the stages.
struct SolverConfig {
  std::string preset = "approx32";
  Precision free_motion_solve_precision = Precision::F32;
  Precision contact_solve_precision = Precision::F64;
  Precision contact_linear_solve_precision = Precision::F32;
  Precision sap_contact_weight_precision = Precision::F32;
  bool use_f64_boundary_pose = false;
  ContactWeightMode contact_weight_mode = ContactWeightMode::BodyInertia;
  ContactPointMode contact_point_mode = ContactPointMode::WitnessPoint;
  PositionIntegrationMode position_integration = PositionIntegrationMode::Midpoint;
  CoriolisMode coriolis = CoriolisMode::Midpoint;
  int coriolis_iterations = 2;  // fixed-point passes of the midpoint mode

  LineSearchVariant line_search_variant = LineSearchVariant::MonotoneDecay;
  LinearSolver linear_solver = LinearSolver::Cholesky;
  int max_iterations = 100;
  int line_search_max_iterations = 40;
  double rho = 0.8;
  double armijo_c = 1e-4;
  double line_search_relative_slop = 0;  // resolved: 1000 eps of the objective precision
  double cost_abs_tol = 0;               // resolved per line search (see SolverOptions)
  double cost_rel_tol = 5e-3;
  double abs_tol = 1e-14;  // momentum residual, sqrt(J)
  double rel_tol = 1e-6;

  double sigma = 1e-3;                 // friction regularisation
  double near_rigid_threshold = 1.0;   // beta for contacts (0 disables the floor)
  double limit_stiffness = 1e12;       // joint-limit constraint stiffness (Drake)
  double limit_near_rigid_threshold = 0.1;
  double pd_near_rigid_threshold = 0.1;
};

// User-facing options: a preset plus optional overrides.
struct SolverOptions {
  std::string contact_preset_variant = "approx32";
  std::optional<Precision> free_motion_solve_precision, contact_solve_precision, contact_linear_solve_precision,
      sap_contact_weight_precision;
  std::optional<bool> use_f64_boundary_pose;
  std::optional<ContactWeightMode> contact_weight_mode;
  std::optional<ContactPointMode> contact_point_mode;
  std::optional<PositionIntegrationMode> position_integration;
  std::optional<CoriolisMode> coriolis;
  std::optional<int> coriolis_iterations;

  LineSearchVariant line_search_variant = LineSearchVariant::MonotoneDecay;
  LinearSolver linear_solver = LinearSolver::Cholesky;
  std::optional<int> max_iterations, line_search_max_iterations;
  std::optional<double> rho, armijo_c, line_search_relative_slop, cost_abs_tol, cost_rel_tol, abs_tol, rel_tol;
  std::optional<double> sigma, near_rigid_threshold;

  // Expands the preset, then applies every set override. Throws on an unknown preset or an
  // invalid value (e.g. rho outside (0, 1)).
  SolverConfig resolve() const;
};

// Canonical preset name: approx32 (also approx_32, approx-32), approx64 (approx_64, approx-64),
// drake. Throws std::invalid_argument listing the accepted names otherwise.
std::string canonical_preset(const std::string& name);

// Sets one option from its string form, e.g. ("line_search_variant", "exact_root"),
// ("rho", "0.5"), ("use_f64_boundary_pose", "true"). Throws std::invalid_argument naming the
// option and the accepted values.
void set_solver_option(SolverOptions& o, const std::string& key, const std::string& value);
// Names accepted by set_solver_option.
const std::vector<std::string>& solver_option_names();

}  // namespace sap
