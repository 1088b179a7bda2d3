// The solver's options, defined once. SAP_SOLVER_OPTIONS below is the single table from which
// everything else is derived (MuJoCo's X-macro style, as the Model/Data arrays):
//   SolverConfig      the resolved values (this file; a plain struct the kernels receive as is)
//   SolverOptions     a preset plus an optional override per row (solver_options.hpp)
//   resolve()         preset expansion, defaults, range checks (solver_options.cpp)
//   set_solver_option the string setter behind JSON `simulation.solver`, `sap_bench --set`
//   docs table        solver_options_markdown(), kept in docs/solver.md by a test
// The enumerations are shared by host code and kernels: kernels compare against the same
// enumerators the user sets, with no translation layer.
// Formulas behind the options: docs/solver.md and docs/sap-math.md.
#pragma once

namespace sap {

// Enumerations of the option values: X(Enum, Enumerator, "name", "aliases"). The name is
// what set_solver_option accepts and to_string prints; aliases (space separated) are accepted
// too. Matching is case-insensitive.
// clang-format off
#define SAP_PRESET_VALUES(X)                            \
  X(Preset, Approx32, "approx32", "approx_32 approx-32") \
  X(Preset, Approx64, "approx64", "approx_64 approx-64") \
  X(Preset, Drake, "drake", "")
// clang-format on
// clang-format off
#define SAP_PRECISION_VALUES(X)                        \
  X(Precision, F32, "fp32", "f32 float32 float")       \
  X(Precision, F64, "fp64", "f64 float64 double")
// clang-format on
// Contact weight w_i of the near-rigid clamp: body inertias, or Drake's diag(J A^-1 J^T).
// clang-format off
#define SAP_CONTACT_WEIGHT_MODE_VALUES(X)                          \
  X(ContactWeightMode, BodyInertia, "body_inertia", "")            \
  X(ContactWeightMode, DiagDelassus, "diag_delassus", "")
// clang-format on
// Where a contact's Jacobian is taken: the witness point on body 2, or Drake's
// stiffness-weighted point between the witnesses.
// clang-format off
#define SAP_CONTACT_POINT_MODE_VALUES(X)                           \
  X(ContactPointMode, WitnessPoint, "witness_point", "")           \
  X(ContactPointMode, ContactMidpoint, "contact_midpoint", "")
// clang-format on
// q_{n+1} from the midpoint velocity (v_n + v_{n+1})/2, or Drake's q_{n+1} = q_n + h N v_{n+1}.
// clang-format off
#define SAP_POSITION_INTEGRATION_VALUES(X)                         \
  X(PositionIntegrationMode, Midpoint, "midpoint", "")             \
  X(PositionIntegrationMode, SapEuler, "sap_euler", "")
// clang-format on
// Velocity at which free motion evaluates Coriolis/gyroscopic forces: v_n (Drake) or the
// midpoint (v_n + v*)/2 by fixed-point passes that reuse the factor of A.
// clang-format off
#define SAP_CORIOLIS_VALUES(X)                   \
  X(CoriolisMode, Explicit, "explicit", "")      \
  X(CoriolisMode, Midpoint, "midpoint", "")
// clang-format on
// clang-format off
#define SAP_LINE_SEARCH_VALUES(X)                                  \
  X(LineSearchVariant, MonotoneDecay, "monotone_decay", "")        \
  X(LineSearchVariant, ArmijoDecay, "armijo_decay", "")            \
  X(LineSearchVariant, ExactRoot, "exact_root", "")
// clang-format on
// Factorisation of the Newton system: our envelope Cholesky inside the fused solve kernel, or
// a library reference (Eigen's LLT on the CPU, cuSOLVER's batched potrf/potrs on CUDA) between
// the launches of a split Newton loop, to cross-check and measure ours.
// clang-format off
#define SAP_LINEAR_SOLVER_VALUES(X)              \
  X(LinearSolver, Cholesky, "cholesky", "")      \
  X(LinearSolver, Reference, "reference", "")
// clang-format on

// Convex model of a contact (docs/solver.md, "Contact approximations"): SAP's regularised
// friction cone (Anitescu-type), or one of the two convex approximations of a Hunt-Crossley
// contact with regularised Coulomb friction of Castro, Han and Permenter (2023), as Drake's
// DiscreteContactApproximation::kSimilar / kLagged.
// clang-format off
#define SAP_CONTACT_APPROXIMATION_VALUES(X)      \
  X(ContactApproximation, Sap, "sap", "")        \
  X(ContactApproximation, Similar, "similar", "") \
  X(ContactApproximation, Lagged, "lagged", "")
// clang-format on

// Every enumeration above: X(Enum, VALUES_LIST).
// clang-format off
#define SAP_SOLVER_ENUMS(X)                                \
  X(Preset, SAP_PRESET_VALUES)                             \
  X(Precision, SAP_PRECISION_VALUES)                       \
  X(ContactWeightMode, SAP_CONTACT_WEIGHT_MODE_VALUES)     \
  X(ContactPointMode, SAP_CONTACT_POINT_MODE_VALUES)       \
  X(PositionIntegrationMode, SAP_POSITION_INTEGRATION_VALUES) \
  X(CoriolisMode, SAP_CORIOLIS_VALUES)                     \
  X(LineSearchVariant, SAP_LINE_SEARCH_VALUES)             \
  X(LinearSolver, SAP_LINEAR_SOLVER_VALUES)                 \
  X(ContactApproximation, SAP_CONTACT_APPROXIMATION_VALUES)
// clang-format on

#define SAP_ENUMERATOR(Enum, id, name, aliases) id,
#define SAP_DEFINE_ENUM(Enum, VALUES) enum class Enum : int { VALUES(SAP_ENUMERATOR) };
SAP_SOLVER_ENUMS(SAP_DEFINE_ENUM)
#undef SAP_DEFINE_ENUM
#undef SAP_ENUMERATOR

// The option table: X(name, Type, default, valid, "valid text", "meaning").
//   default  an expression of `preset` (the Preset being expanded) and `c` (the SolverConfig
//            whose earlier rows are already resolved); SAP_BY_PRESET(approx32, approx64, drake)
//            gives the three preset columns.
//   valid    a condition on the value `x`, "valid text" says it in words for error messages
//            and the docs (enumerations are checked by their value list).
// Rows resolve in table order, so a default may depend on rows above it.
#define SAP_BY_PRESET(approx32, approx64, drake) \
  (preset == Preset::Approx32 ? (approx32) : preset == Preset::Approx64 ? (approx64) : (drake))
#define SAP_ANY_VALUE true
#define SAP_MAX_COUNT 1000000

// clang-format off
#define SAP_SOLVER_OPTIONS(X)                                                                                   \
  /* Precisions of the stages (the spec's presets) */                                                         \
  X(free_motion_solve_precision, Precision, SAP_BY_PRESET(Precision::F32, Precision::F64, Precision::F64),     \
    SAP_ANY_VALUE, "", "stage 1: kinematics for M and bias, A = M + hD, v* = v + h A^-1 k")                    \
  X(contact_solve_precision, Precision, Precision::F64, SAP_ANY_VALUE, "",                                     \
    "stage 3 objective: cost, gradient, line search")                                                          \
  X(contact_linear_solve_precision, Precision, SAP_BY_PRESET(Precision::F32, Precision::F64, Precision::F64),  \
    SAP_ANY_VALUE, "", "Newton system H dv = -g: factorisation and solves")                                    \
  X(sap_contact_weight_precision, Precision, SAP_BY_PRESET(Precision::F32, Precision::F64, Precision::F64),    \
    SAP_ANY_VALUE, "", "stage 2: contact frames, Jacobians (stored in it), weights w_i, R_i, v_hat_i")                       \
  X(use_f64_boundary_pose, bool, SAP_BY_PRESET(false, true, true), SAP_ANY_VALUE, "",                          \
    "kinematics of stages 1-2 in fp64 (false: fp32, stored as cast64(fl32(x)))")                               \
  /* Model approximations */                                                                                   \
  X(contact_approximation, ContactApproximation, ContactApproximation::Lagged, SAP_ANY_VALUE, "",              \
    "contact model: Hunt-Crossley lagged (Drake's default; no gliding) or similar, or SAP's friction cone "    \
    "(docs/solver.md)")                                                                                        \
  X(contact_weight_mode, ContactWeightMode,                                                                    \
    SAP_BY_PRESET(ContactWeightMode::BodyInertia, ContactWeightMode::BodyInertia, ContactWeightMode::DiagDelassus), \
    SAP_ANY_VALUE, "", "weights w_i of the near-rigid clamp")                                                  \
  X(contact_point_mode, ContactPointMode,                                                                      \
    SAP_BY_PRESET(ContactPointMode::WitnessPoint, ContactPointMode::WitnessPoint, ContactPointMode::ContactMidpoint), \
    SAP_ANY_VALUE, "", "point at which contact Jacobians are taken")                                           \
  X(position_integration, PositionIntegrationMode,                                                             \
    SAP_BY_PRESET(PositionIntegrationMode::Midpoint, PositionIntegrationMode::Midpoint,                        \
                  PositionIntegrationMode::SapEuler),                                                          \
    SAP_ANY_VALUE, "", "position update q_{n+1} = Phi(q_n, v_n, v_{n+1}, h)")                                 \
  X(coriolis, CoriolisMode, SAP_BY_PRESET(CoriolisMode::Midpoint, CoriolisMode::Midpoint, CoriolisMode::Explicit), \
    SAP_ANY_VALUE, "", "velocity of the Coriolis/gyroscopic terms in v*")                                      \
  X(coriolis_iterations, int, SAP_BY_PRESET(1, 2, 2), x >= 1 && x <= SAP_MAX_COUNT, "an integer in [1, 1000000]", \
    "fixed-point passes of coriolis = midpoint")                                                               \
  /* Newton iteration and line search */                                                                      \
  X(line_search_variant, LineSearchVariant, LineSearchVariant::MonotoneDecay, SAP_ANY_VALUE, "",               \
    "line search along the Newton direction (docs/sap-math.md)")                                               \
  X(linear_solver, LinearSolver, LinearSolver::Cholesky, SAP_ANY_VALUE, "",                                    \
    "our fused envelope Cholesky, or the library reference of a split Newton loop (docs/gpu.md)")              \
  X(on_chip_bytes, int, 14080, x >= 0 && x <= 200000, "an integer in [0, 200000]",                           \
    "per-world bytes of team shared memory for the free-motion and Newton working sets (larger ones, and "    \
    "all with 0, stay in global memory); 14080 keeps 16 worlds on an H100 SM (docs/gpu.md)")                  \
  X(max_iterations, int, 100, x >= 1 && x <= SAP_MAX_COUNT, "an integer in [1, 1000000]",                      \
    "Newton iterations per step")                                                                              \
  X(line_search_max_iterations, int, c.line_search_variant == LineSearchVariant::ExactRoot ? 100 : 40,         \
    x >= 1 && x <= SAP_MAX_COUNT, "an integer in [1, 1000000]",                                                \
    "line-search evaluations per Newton iteration (exact_root: 100)")                                         \
  X(rho, double, 0.8, x > 0 && x < 1, "a number in (0, 1)", "backtracking factor of armijo_decay")             \
  X(armijo_c, double, 1e-4, x > 0 && x < 1, "a number in (0, 1)", "sufficient-decrease constant of armijo_decay") \
  X(line_search_relative_slop, double, 1000.0 * epsilon_of(c.contact_solve_precision), x >= 0, "a number >= 0", \
    "relative slop of the line searches' derivative tests (1000 eps of the objective precision)")             \
  X(cost_abs_tol, double, c.line_search_variant == LineSearchVariant::MonotoneDecay ? 0.0 : 1e-30, x >= 0,     \
    "a number >= 0", "absolute cost-stall tolerance (armijo_decay, exact_root: 1e-30)")                        \
  X(cost_rel_tol, double, c.line_search_variant == LineSearchVariant::MonotoneDecay ? 5e-3 : 1e-15, x >= 0,    \
    "a number >= 0", "relative cost-stall tolerance (armijo_decay, exact_root: 1e-15)")                        \
  X(abs_tol, double, 1e-14, x >= 0, "a number >= 0", "absolute tolerance eps_a of the momentum residual r = norm(D g)")      \
  X(rel_tol, double, 1e-6, x >= 0, "a number >= 0", "relative tolerance eps_r of the momentum residual r = norm(D g)")       \
  /* Constraint regularisation */                                                                             \
  X(sigma, double, 1e-3, x > 0, "a number > 0", "friction regularisation R_t = sigma w_i")                     \
  X(near_rigid_threshold, double, 1.0, x >= 0, "a number >= 0",                                                \
    "beta of contacts' near-rigid clamp (0 disables the floor)")                                               \
  X(stiction_tolerance, double, 1e-4, x > 0, "a number > 0",                                                   \
    "similar/lagged: slip speed v_s below which friction is regularised (m/s)")                               \
  X(limit_stiffness, double, 1e12, x > 0, "a number > 0", "joint-limit constraint stiffness (Drake's)")        \
  X(limit_near_rigid_threshold, double, 0.1, x >= 0, "a number >= 0", "beta of joint-limit rows")              \
  X(pd_near_rigid_threshold, double, 0.1, x >= 0, "a number >= 0", "beta of the implicit PD rows' gain clamp")  \
  X(equality_near_rigid_threshold, double, 0.1, x >= 0, "a number >= 0",                                       \
    "beta of equality-constraint rows (coupler, connect, weld; Drake's)")                                     \
  /* Robustness */                                                                                            \
  X(record_cost_trace, bool, false, SAP_ANY_VALUE, "",                                                         \
    "diagnostics: keep the cost at every Newton iterate (StepDiagnostics::cost_trace; 8 (max_iterations + 1) "  \
    "bytes per world)")                                                                                       \
  X(fp64_retry, bool, true, SAP_ANY_VALUE, "",                                                                 \
    "a world whose step with fp32 stages fails (factorisation, line search, non-finite) repeats it in fp64 (docs/solver.md)") \
  X(fp64_retry_capacity, int, 0, x >= 0 && x <= SAP_MAX_COUNT, "an integer in [0, 1000000]",                    \
    "worlds the fp64 retry steps at once (0: all worlds up to 64, else max(64, worlds / 16)); more failed "     \
    "worlds take more rounds, or inside a CUDA graph are counted as fp64_retry_overflow")
// clang-format on

// Machine epsilon of a precision (the slop default scales with it).
constexpr double epsilon_of(Precision p) {
  return p == Precision::F32 ? 1.1920928955078125e-07 : 2.220446049250313080847263336181640625e-16;
}

// Fully resolved configuration: one member per table row, plus the preset it came from. A
// plain struct (no strings), passed by value to the kernels. Obtain it from
// SolverOptions::resolve(); a default-constructed one is all zeros, not a preset.
struct SolverConfig {
  Preset preset = Preset::Approx32;
#define SAP_CONFIG_MEMBER(name, Type, default_value, valid, valid_text, doc) Type name{};
  SAP_SOLVER_OPTIONS(SAP_CONFIG_MEMBER)
#undef SAP_CONFIG_MEMBER
};

}  // namespace sap
