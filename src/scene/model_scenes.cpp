// Scenes of bare model files (MJCF, URDF; declared in sap/mjcf.hpp): the importers' model
// (import/) with the defaults of a one-world scene, as Python's sap.load_mjcf gives them.
#include <Eigen/Geometry>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "import/mujoco_compiler_checks.hpp"
#include "sap/mjcf.hpp"
#include "sap/scene.hpp"

namespace sap {
namespace {

ModelBuilder mujoco_default_builder() {
  ModelBuilder b;
  b.set_timestep(0.002);  // MuJoCo's defaults, for files without <option>
  b.set_gravity({0, 0, -9.81});
  return b;
}

Model finalize_named(ModelBuilder& b, const std::string& name) {
  try {
    return b.finalize();
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(name + ": " + e.what());
  }
}

// MuJoCo's compiler check of moving bodies (import/mujoco_compiler_checks.hpp) on an MJCF
// model: each rigid group that moves (a body with joints and the bodies welded to it) needs mass
// and principal moments of inertia about its centre of mass of at least mjMINVAL. Poses at the
// reference configuration: a group's bodies are welded, so its principal moments do not depend
// on the joints.
void check_moving_bodies(const Model& m, const std::string& source) {
  const std::size_t n = static_cast<std::size_t>(m.nbody);
  std::vector<BodyMassInput> in(n);
  std::vector<Eigen::Quaterniond> q(n, Eigen::Quaterniond::Identity());
  std::vector<Eigen::Vector3d> p(n, Eigen::Vector3d::Zero());
  for (std::size_t b = 1; b < n; ++b) {
    const std::size_t parent = static_cast<std::size_t>(m.body_parentid[b]);
    const Eigen::Quaterniond ql(m.body_quat[4 * b], m.body_quat[4 * b + 1], m.body_quat[4 * b + 2], m.body_quat[4 * b + 3]);
    q[b] = q[parent] * ql.normalized();
    p[b] = p[parent] + q[parent] * Eigen::Vector3d(m.body_pos[3 * b], m.body_pos[3 * b + 1], m.body_pos[3 * b + 2]);
    const Eigen::Matrix3d R = q[b].toRotationMatrix();
    const double* I6 = &m.body_inertia[6 * b];  // xx yy zz xy xz yz, body axes
    Eigen::Matrix3d I;
    I << I6[0], I6[3], I6[4], I6[3], I6[1], I6[5], I6[4], I6[5], I6[2];
    const Eigen::Matrix3d Iw = R * I * R.transpose();
    const Eigen::Vector3d com = p[b] + R * Eigen::Vector3d(m.body_ipos[3 * b], m.body_ipos[3 * b + 1], m.body_ipos[3 * b + 2]);
    BodyMassInput& x = in[b];
    x.parent = static_cast<int>(parent);
    x.has_joint = m.body_jntnum[b] > 0;
    x.mass = m.body_mass[b];
    x.com = {com[0], com[1], com[2]};
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) x.inertia[static_cast<std::size_t>(3 * r + c)] = Iw(r, c);
  }
  const MovingBodyIssue issue = mujoco_check_moving_bodies(in);
  if (issue.body <= 0) return;
  char buf[160];
  std::snprintf(buf, sizeof buf, "mass %.3g kg and principal moments (%.3g, %.3g, %.3g) kg m^2", issue.mass,
                issue.principal[0], issue.principal[1], issue.principal[2]);
  throw std::runtime_error(source + ": body '" + m.body_names[static_cast<std::size_t>(issue.body)] +
                           "' moves (it has a joint) with the bodies welded to it, and has " + buf +
                           ": MuJoCo's compiler requires the mass and inertia of moving bodies to be at least 1e-15 "
                           "(mjMINVAL); give it an <inertial> or geoms with mass, or set <compiler boundmass "
                           "boundinertia>");
}

// One world; the model's time step (0.002 s when it has none), its reference configuration qpos0
// at rest (a URDF's: within the joint limits, see below), constant zero controls, the default solver options, the contact capacity estimated
// by the Simulator; the import notes as the scene's warnings.
Scene model_scene(Model model, const std::string& source, const char* kind, const ImportReport& notes) {
  Scene s;
  s.source = source;
  s.name = std::filesystem::path(source).stem().string();
  s.description = std::string(kind) + " model " + source;
  s.dt = model.timestep > 0 ? model.timestep : 0.002;
  s.num_worlds = 1;
  s.qpos0 = model.qpos0;
  s.qvel0.assign(static_cast<std::size_t>(model.nv), 0.0);
  s.controls.assign(static_cast<std::size_t>(model.nu), ControlSchedule{});
  s.warnings = notes.warnings;
  // The rule for initial states outside the joint limits (sap/scene.hpp): an MJCF file's qpos0
  // as given; a URDF's zero moved to the nearest limit (a URDF states no initial configuration).
  const std::string note = std::string(kind) == "URDF" ? urdf_start_within_limits(model, 0, model.njnt, s.qpos0, source)
                                                      : initial_state_limits_note(model, s.qpos0, source);
  if (!note.empty()) s.warnings.push_back(note);
  s.model = std::move(model);
  return s;
}

// The caller's report gets the notes as the importer gives them (before the model is finalised,
// which may throw).
const ImportReport& forward(const ImportReport& notes, ImportReport* report) {
  if (report) {
    report->warnings.insert(report->warnings.end(), notes.warnings.begin(), notes.warnings.end());
    report->keyframes.insert(report->keyframes.end(), notes.keyframes.begin(), notes.keyframes.end());
  }
  return notes;
}

std::string named(const std::string& source) { return source.empty() ? std::string("<string>") : source; }

}  // namespace

Scene load_mjcf(const std::string& path, ImportReport* report, const ImportOptions& options) {
  ModelBuilder b = mujoco_default_builder();
  ImportReport notes;
  add_mjcf(path, b, &notes, options);
  forward(notes, report);
  Model m = finalize_named(b, path);
  check_moving_bodies(m, path);
  return model_scene(std::move(m), path, "MJCF", notes);
}

Scene load_mjcf_string(const std::string& xml, const std::string& source, ImportReport* report,
                       const ImportOptions& options, const std::string& base_dir) {
  ModelBuilder b = mujoco_default_builder();
  ImportReport notes;
  add_mjcf_string(xml, source, b, &notes, options, base_dir);
  forward(notes, report);
  Model m = finalize_named(b, named(source));
  check_moving_bodies(m, named(source));
  return model_scene(std::move(m), named(source), "MJCF", notes);
}

Scene load_urdf(const std::string& path, ImportReport* report, const ImportOptions& options, bool floating_base) {
  ModelBuilder b;
  ImportReport notes;
  add_urdf(path, b, &notes, options, floating_base);
  forward(notes, report);
  return model_scene(finalize_named(b, path), path, "URDF", notes);
}

Scene load_urdf_string(const std::string& xml, const std::string& source, ImportReport* report,
                       const ImportOptions& options, bool floating_base) {
  ModelBuilder b;
  ImportReport notes;
  add_urdf_string(xml, source, b, &notes, options, floating_base);
  forward(notes, report);
  return model_scene(finalize_named(b, named(source)), named(source), "URDF", notes);
}

}  // namespace sap
