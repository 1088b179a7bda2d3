// Shared pieces of the MJCF and URDF importers (host only): located diagnostics, attribute
// parsing, composite mass properties and the contact-material rule. Rotation conventions
// (MJCF orientations, URDF rpy) are in rotation.hpp, on sap::Quat<double>.
#pragma once

#include <array>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "import/rotation.hpp"
#include "sap/mjcf.hpp"
#include "sap/model_builder.hpp"

namespace tinyxml2 {
class XMLElement;
}

namespace sap::import {

// Throws "<where>: cannot open file '<path>'" when `path` does not exist, and "... is not a
// regular file" for directories and devices (tinyxml2 would read a directory's size as a huge
// length, and a FIFO or /dev/stdin would block).
void require_regular_file(const std::string& where, const std::string& path);

// "<file>:<line>" of an element.
std::string location(const std::string& file, const tinyxml2::XMLElement* e);

// Throws std::runtime_error("<where>: <what>").
[[noreturn]] void fail(const std::string& where, const std::string& what);
// "<where>: cannot open file '<path>'" as a sap::FileNotFoundError.
[[noreturn]] void fail_file_not_found(const std::string& where, const std::string& path);

// Collects warnings. Each distinct `key` is reported once, at its first location, with the
// number of further occurrences appended ("<where>: <what> (N occurrences)").
class Reporter {
 public:
  void warn(const std::string& key, const std::string& where, const std::string& what);
  void flush(ImportReport* report) const;

 private:
  struct Entry {
    std::string text;
    int count = 0;
  };
  std::vector<std::string> order_;
  std::map<std::string, Entry> entries_;
};

// Whitespace-separated numbers; throws "<where>: attribute 'name' ..." on a non-number, on a
// non-finite value, or when the count is outside [min_count, max_count].
std::vector<double> parse_numbers(const std::string& where, const char* name, const char* text, int min_count,
                                  int max_count);
// Same for an optional attribute of an element: returns false when the attribute is absent.
bool read_numbers(const std::string& file, const tinyxml2::XMLElement* e, const char* name, int min_count,
                  int max_count, std::vector<double>& out);
// Reads exactly n numbers into out[0..n) when present.
bool read_fixed(const std::string& file, const tinyxml2::XMLElement* e, const char* name, int n, double* out);
bool read_double(const std::string& file, const tinyxml2::XMLElement* e, const char* name, double& out);
bool read_int(const std::string& file, const tinyxml2::XMLElement* e, const char* name, int& out);
// "true"/"false" (MJCF also accepts "auto" where `allow_auto`; returned as -1).
bool read_bool(const std::string& file, const tinyxml2::XMLElement* e, const char* name, int& out,
               bool allow_auto = false);
bool read_string(const tinyxml2::XMLElement* e, const char* name, std::string& out);

// Symmetric 3x3 tensors stored as xx yy zz xy xz yz.
using Sym6 = std::array<double, 6>;
// R diag(d) R^T for the rotation q (normalised first; rotation_matrix in rotation.hpp).
Sym6 rotate_diagonal_inertia(const Quat<double>& q, const Vec3d& diag);
// R I R^T for the rotation q (normalised first).
Sym6 rotate_inertia(const Quat<double>& q, const Sym6& inertia);

// One solid of uniform density placed in a body: mass, center, inertia about its center (body axes).
struct MassPart {
  double mass = 0;
  Vec3d pos{0, 0, 0};
  Sym6 inertia{0, 0, 0, 0, 0, 0};
};
// Mass, com and inertia about the com of the union of parts (parallel-axis theorem).
void combine_mass_parts(const std::vector<MassPart>& parts, double& mass, Vec3d& com, Sym6& inertia);

// Contact material rule (docs/model-import.md, "Contact parameters"). MuJoCo's soft contact with
// solref = (timeconst tc, dampratio zeta) and impedance d gives the constrained acceleration
// a = (1-d) a0 + d aref with aref = -(2/(dmax tc)) v - d/(dmax tc zeta)^2 r; at full impedance
// d = dmax the small oscillations about equilibrium have natural frequency w = 1/(tc zeta) and
// damping ratio zeta. SAP's compliant contact force is f = k(-phi) - k tau_d v (Kelvin-Voigt),
// so with an effective mass m the same oscillator has k = m w^2 and tau_d = 2 zeta / w.
// Per geom we store k_g = m_g w^2, where m_g is the mass of the kinematic tree the geom moves
// with (the series combination k0 k1/(k0+k1) of two geoms then gives k = m_reduced w^2), and
// tau_g = zeta / w = tc zeta^2 (the pair sum tau_0 + tau_1 gives 2 zeta / w for equal solrefs).
// Static geoms (welded to the world) have infinite mass: they get kStaticStiffness.
// A negative solref (-stiffness, -damping) prescribes w^2 = stiffness and 2 zeta w = damping
// directly (MuJoCo divides them by dmax^2 and dmax, and d = dmax multiplies them back).
constexpr double kStaticStiffness = 1e12;  // N/m; "rigid" against any moving geom
struct ContactMaterial {
  double stiffness, dissipation;
};
// Throws std::invalid_argument for a solref that gives no positive stiffness.
ContactMaterial contact_material(const double solref[2], double mass_scale, bool is_static);

}  // namespace sap::import
