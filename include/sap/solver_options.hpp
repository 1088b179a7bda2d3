// Options of SolverSAP: a preset (approx32, approx64, drake) expands into per-stage precisions
// and modes; explicit fields override the expansion (one-factor experiments). Every option
// can be set by name from strings (JSON scenes, command lines); bad names or values throw
// with the accepted alternatives. The options themselves are rows of SAP_SOLVER_OPTIONS
// (solver_config.hpp): adding a row adds the field here, its parsing, checks and docs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sap/solver_config.hpp"

namespace sap {

// Canonical names of enumeration values ("fp32", "exact_root", ...).
#define SAP_DECLARE_TO_STRING(Enum, VALUES) const char* to_string(Enum value);
SAP_SOLVER_ENUMS(SAP_DECLARE_TO_STRING)
#undef SAP_DECLARE_TO_STRING

// User-facing options: a preset plus an optional override per option.
struct SolverOptions {
  Preset contact_preset_variant = Preset::Approx32;
#define SAP_OPTIONS_MEMBER(name, Type, default_value, valid, valid_text, doc) std::optional<Type> name;
  SAP_SOLVER_OPTIONS(SAP_OPTIONS_MEMBER)
#undef SAP_OPTIONS_MEMBER

  // Expands the preset, then applies every set override, row by row in table order. Throws
  // std::invalid_argument on an invalid value (e.g. rho outside (0, 1)), naming the option.
  SolverConfig resolve() const;
};

// Preset from its name or an alias (approx_32, approx-32, APPROX32, ...). Throws
// std::invalid_argument listing the accepted names otherwise.
Preset parse_preset(const std::string& name);
// Canonical preset name of a name or alias: to_string(parse_preset(name)).
std::string canonical_preset(const std::string& name);

// Sets one option from its string form, e.g. ("line_search_variant", "exact_root"),
// ("rho", "0.5"), ("use_f64_boundary_pose", "true"); the value is parsed and range-checked
// before it is stored. Throws std::invalid_argument naming the option and the accepted values.
void set_solver_option(SolverOptions& o, const std::string& key, const std::string& value);
// Names accepted by set_solver_option: contact_preset_variant, then the table's rows.
const std::vector<std::string>& solver_option_names();
// Calls f(name, value) for every row of a resolved configuration, in table order, with the
// row's own type (an enumeration, bool, int or double); for reports and JSON output.
template <class Visitor>
void visit_solver_config(const SolverConfig& c, Visitor&& f) {
#define SAP_VISIT_ROW(name, Type, default_value, valid, valid_text, doc) f(#name, c.name);
  SAP_SOLVER_OPTIONS(SAP_VISIT_ROW)
#undef SAP_VISIT_ROW
}
// The options table of docs/solver.md: one Markdown row per option with its values, the
// value under each preset and its meaning (a test keeps the docs equal to it).
std::string solver_options_markdown();

}  // namespace sap
