// Presets expand as the specification's table says, aliases normalise, explicit fields override
// after expansion, and bad names or values are clear errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "sap/solver_options.hpp"

using namespace sap;

TEST(SolverOptions, PresetsExpandAsSpecified) {
  SolverOptions o;
  SolverConfig c = o.resolve();  // default: approx32
  EXPECT_EQ(c.preset, Preset::Approx32);
  EXPECT_EQ(c.free_motion_solve_precision, Precision::F32);
  EXPECT_EQ(c.contact_solve_precision, Precision::F64);
  EXPECT_EQ(c.contact_linear_solve_precision, Precision::F32);
  EXPECT_EQ(c.sap_contact_weight_precision, Precision::F32);
  EXPECT_FALSE(c.use_f64_boundary_pose);
  EXPECT_EQ(c.contact_weight_mode, ContactWeightMode::BodyInertia);
  EXPECT_EQ(c.contact_point_mode, ContactPointMode::WitnessPoint);
  EXPECT_EQ(c.position_integration, PositionIntegrationMode::Midpoint);

  o.contact_preset_variant = Preset::Approx64;
  c = o.resolve();
  EXPECT_EQ(c.free_motion_solve_precision, Precision::F64);
  EXPECT_EQ(c.contact_linear_solve_precision, Precision::F64);
  EXPECT_EQ(c.sap_contact_weight_precision, Precision::F64);
  EXPECT_TRUE(c.use_f64_boundary_pose);
  EXPECT_EQ(c.contact_weight_mode, ContactWeightMode::BodyInertia);
  EXPECT_EQ(c.contact_point_mode, ContactPointMode::WitnessPoint);
  EXPECT_EQ(c.position_integration, PositionIntegrationMode::Midpoint);

  o.contact_preset_variant = Preset::Drake;
  c = o.resolve();
  EXPECT_TRUE(c.use_f64_boundary_pose);
  EXPECT_EQ(c.contact_weight_mode, ContactWeightMode::DiagDelassus);
  EXPECT_EQ(c.contact_point_mode, ContactPointMode::ContactMidpoint);
  EXPECT_EQ(c.position_integration, PositionIntegrationMode::SapEuler);
  EXPECT_EQ(c.coriolis, CoriolisMode::Explicit);
}

TEST(SolverOptions, AliasesNormalise) {
  for (const char* a : {"approx_32", "approx-32", "APPROX32"}) EXPECT_EQ(canonical_preset(a), "approx32");
  for (const char* a : {"approx_64", "approx-64"}) EXPECT_EQ(canonical_preset(a), "approx64");
  SolverOptions o;
  set_solver_option(o, "contact_preset_variant", "approx-64");
  EXPECT_EQ(o.resolve().preset, Preset::Approx64);
}

// One-factor experiments: an explicit field overrides the preset, nothing else changes.
TEST(SolverOptions, ExplicitFieldsOverrideAfterExpansion) {
  SolverOptions o;
  o.contact_preset_variant = Preset::Approx64;
  set_solver_option(o, "contact_weight_mode", "diag_delassus");
  const SolverConfig c = o.resolve();
  EXPECT_EQ(c.contact_weight_mode, ContactWeightMode::DiagDelassus);
  EXPECT_EQ(c.contact_point_mode, ContactPointMode::WitnessPoint);
  EXPECT_EQ(c.position_integration, PositionIntegrationMode::Midpoint);
  EXPECT_EQ(c.free_motion_solve_precision, Precision::F64);
}

TEST(SolverOptions, LineSearchDefaults) {
  SolverOptions o;
  SolverConfig c = o.resolve();
  EXPECT_EQ(c.line_search_variant, LineSearchVariant::MonotoneDecay);
  EXPECT_EQ(c.cost_abs_tol, 0.0);
  EXPECT_EQ(c.cost_rel_tol, 5e-3);
  EXPECT_EQ(c.line_search_max_iterations, 40);
  set_solver_option(o, "line_search_variant", "exact_root");
  c = o.resolve();
  EXPECT_EQ(c.line_search_max_iterations, 100);  // promoted default
  EXPECT_EQ(c.cost_abs_tol, 1e-30);
  EXPECT_EQ(c.cost_rel_tol, 1e-15);
  set_solver_option(o, "line_search_max_iterations", "7");
  EXPECT_EQ(o.resolve().line_search_max_iterations, 7);  // explicit value is kept
  set_solver_option(o, "line_search_variant", "armijo_decay");
  c = o.resolve();
  EXPECT_EQ(c.rho, 0.8);
  EXPECT_EQ(c.armijo_c, 1e-4);
  EXPECT_NEAR(c.line_search_relative_slop, 1000 * 2.220446049250313e-16, 1e-20);
}

TEST(SolverOptions, BadInputIsAClearError) {
  SolverOptions o;
  auto message = [&](const char* k, const char* v) {
    try {
      set_solver_option(o, k, v);
      o.resolve();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message("contact_preset_variant", "approx16").find("approx32"), std::string::npos);
  EXPECT_NE(message("line_search_variant", "golden").find("monotone_decay, armijo_decay or exact_root"),
            std::string::npos);
  EXPECT_NE(message("rho", "1.5").find("(0, 1)"), std::string::npos);
  o.rho.reset();
  EXPECT_NE(message("rho", "abc").find("a finite number"), std::string::npos);
  EXPECT_NE(message("max_iterations", "0").find("integer"), std::string::npos);
  EXPECT_NE(message("free_motion_solve_precision", "fp16").find("fp32"), std::string::npos);
  const std::string unknown = message("max_iter", "3");
  EXPECT_NE(unknown.find("unknown solver option 'max_iter'"), std::string::npos);
  EXPECT_NE(unknown.find("max_iterations"), std::string::npos);  // lists the accepted names
}

// The options table of docs/solver.md is generated from SAP_SOLVER_OPTIONS; this keeps the docs
// equal to it. To refresh the docs after changing the table: SAP_UPDATE_DOCS=1 ./test_solver_options
TEST(SolverOptions, DocsTableIsGenerated) {
  const std::string path = std::string(SAP_SOURCE_DIR) + "/docs/solver.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string begin = "<!-- options-table: generated by solver_options_markdown() -->\n";
  const std::string end = "<!-- options-table end -->";
  const std::size_t b = doc.find(begin), e = doc.find(end);
  ASSERT_NE(b, std::string::npos) << path << ": missing marker " << begin;
  ASSERT_NE(e, std::string::npos) << path << ": missing marker " << end;
  const std::string table = doc.substr(b + begin.size(), e - b - begin.size());
  const std::string expected = solver_options_markdown();
  if (table != expected && std::getenv("SAP_UPDATE_DOCS")) {
    std::ofstream(path) << doc.substr(0, b + begin.size()) << expected << doc.substr(e);
    GTEST_SKIP() << "rewrote the table of " << path;
  }
  EXPECT_EQ(table, expected) << "docs/solver.md is out of date; run SAP_UPDATE_DOCS=1 test_solver_options";
  // Every option appears, each in its own row of six cells (no '|' inside a cell).
  for (const std::string& name : solver_option_names())
    EXPECT_NE(expected.find("| `" + name + "` |"), std::string::npos) << name;
  std::istringstream rows(expected);
  for (std::string row; std::getline(rows, row);) EXPECT_EQ(std::count(row.begin(), row.end(), '|'), 7) << row;
}

// Each row's range check is applied by resolve() to values set from C++ as from strings.
TEST(SolverOptions, EveryRowIsRangeChecked) {
  SolverOptions o;
  o.limit_stiffness = -1.0;
  EXPECT_THROW(o.resolve(), std::invalid_argument);
  o.limit_stiffness.reset();
  o.coriolis_iterations = 0;
  EXPECT_THROW(o.resolve(), std::invalid_argument);
  o.coriolis_iterations.reset();
  set_solver_option(o, "pd_near_rigid_threshold", "-0.5");
  EXPECT_THROW(o.resolve(), std::invalid_argument);
  set_solver_option(o, "pd_near_rigid_threshold", "0.25");
  EXPECT_EQ(o.resolve().pd_near_rigid_threshold, 0.25);
}
