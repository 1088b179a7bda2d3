// MJCF (MuJoCo XML) and URDF import into a ModelBuilder (src/import/), and the files as
// one-world Scenes (src/scene/model_scenes.cpp). Unsupported elements are reported
// once each with their line number (ImportReport) and either ignored, when they cannot change
// the dynamics, or rejected with a std::runtime_error "<file>:<line>: <what was expected>".
#pragma once

#include <string>
#include <vector>

#include "sap/model.hpp"
#include "sap/model_builder.hpp"
#include "sap/scene.hpp"

namespace sap {

struct ImportReport {
  std::vector<std::string> warnings;  // "<file>:<line>: <element> ignored: <why>"
  // Keyframes of the file (MJCF <keyframe>): name, qpos (nq of the imported model), ctrl (nu).
  struct Keyframe {
    std::string name;
    std::vector<double> qpos, ctrl;
  };
  std::vector<Keyframe> keyframes;
};

// Notes (ImportReport::warnings, Scene::warnings) grouped by kind: the text without its
// location and " (N occurrences)" suffix; count sums the occurrences; first is the first note
// of the kind as written. Kinds that drop elements ("... dropped: ...") come first, then by
// decreasing count.
struct NoteGroup {
  std::string kind;
  int count = 0;
  std::string first;
};
std::vector<NoteGroup> group_notes(const std::vector<std::string>& notes);

struct ImportOptions {
  // Contact material for geoms whose solref the file leaves unset (all URDF geoms); otherwise
  // k and tau_d follow the solref/mass rule of docs/model-import.md ("Contact parameters").
  double default_stiffness = 0;     // > 0: stiffness k (N/m) of such geoms; 0: the rule with MuJoCo's default solref
  double default_dissipation = -1;  // >= 0: dissipation time scale tau_d (s) of such geoms; < 0: the rule
  std::string name_prefix;          // prepended to every body/joint/geom/actuator name
  // Elements that change the dynamics but have no counterpart in our model (tendons, equality
  // constraints, colliding meshes, joint friction loss, ...) are rejected with an error by
  // default; when true they are dropped with a warning instead (e.g. to compare M and bias of
  // MuJoCo's humanoid, whose fixed tendons only act at their limits).
  bool drop_unsupported = false;
  // URDF inertia repairs (docs/model-import.md, "URDF inertia repairs"), each reported as a
  // note counted per kind:
  // * a link's inertia tensor that is not positive semi-definite only by rounding noise (its
  //   negative principal moments are within 1e-12 of the largest principal moment of any link
  //   in the file: iCub's +-5e-20 kg m^2 entries) is replaced by the nearest positive
  //   semi-definite tensor (negative principal moments set to 0). false: an error. Larger
  //   violations are always errors.
  bool repair_inertia_rounding = true;
  // * a link that moves but has no mass in its whole subtree (the mass matrix would be
  //   singular: Romeo's finger phalanges) gets, like every massless link of that subtree, this
  //   mass (kg) at its inertial origin and this isotropic rotational inertia (kg m^2): MuJoCo's
  //   compiler boundmass/boundinertia, applied to those links only. 0: an error.
  double massless_link_mass = 1e-3;
  double massless_link_inertia = 1e-7;
  // * a moving rigid group (a link with a dof and the links welded to it) whose inertia about
  //   its centre of mass is singular, a principal moment below 1e-14 (MuJoCo's mjEPS) while the
  //   largest is not (a rod or a plate: pybullet's random URDFs give free links diag(1, 1, 0)),
  //   is an error, as MuJoCo rejects it; > 0: every link's principal moments are raised to at
  //   least this (kg m^2), MuJoCo's compiler boundinertia, with a note per raised link. Point
  //   masses (all moments below 1e-14) are left as they are.
  double bound_inertia = 0;
};

// Appends the model in `path` to `builder` (top-level bodies attach to the world).
void add_mjcf(const std::string& path, ModelBuilder& builder, ImportReport* report = nullptr,
              const ImportOptions& options = {});
// The file as a one-world Scene, as Python's sap.load_mjcf: its model (from MuJoCo's defaults,
// then the file), the file's time step, qpos0 at rest, constant zero controls, the default
// solver options; the import notes in Scene::warnings (and appended to *report). The model
// alone: load_mjcf(...).model.
Scene load_mjcf(const std::string& path, ImportReport* report = nullptr, const ImportOptions& options = {});

// The same from XML text: `source` names it in errors ("<source>:<line>: ..."); <include>
// files are resolved relative to `base_dir`.
void add_mjcf_string(const std::string& xml, const std::string& source, ModelBuilder& builder,
                     ImportReport* report = nullptr, const ImportOptions& options = {},
                     const std::string& base_dir = ".");
Scene load_mjcf_string(const std::string& xml, const std::string& source, ImportReport* report = nullptr,
                       const ImportOptions& options = {}, const std::string& base_dir = ".");

void add_urdf(const std::string& path, ModelBuilder& builder, ImportReport* report = nullptr,
              const ImportOptions& options = {}, bool floating_base = false);
// A URDF file as a one-world Scene (as load_mjcf; the model's time step is the builder's).
Scene load_urdf(const std::string& path, ImportReport* report = nullptr, const ImportOptions& options = {},
                bool floating_base = false);
// URDF from XML text; `source` names it in errors, and relative and package:// mesh paths
// resolve from its directory as if the text were the file `source`.
void add_urdf_string(const std::string& xml, const std::string& source, ModelBuilder& builder,
                     ImportReport* report = nullptr, const ImportOptions& options = {}, bool floating_base = false);
Scene load_urdf_string(const std::string& xml, const std::string& source, ImportReport* report = nullptr,
                       const ImportOptions& options = {}, bool floating_base = false);

}  // namespace sap
