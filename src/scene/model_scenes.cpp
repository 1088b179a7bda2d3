// Scenes of bare model files (MJCF, URDF; declared in sap/mjcf.hpp): the importers' model
// (import/) with the defaults of a one-world scene, as Python's sap.load_mjcf gives them.
#include <filesystem>
#include <stdexcept>

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

// One world; the model's time step (0.002 s when it has none), its reference configuration qpos0
// at rest, constant zero controls, the default solver options, the contact capacity estimated
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
  return model_scene(finalize_named(b, path), path, "MJCF", notes);
}

Scene load_mjcf_string(const std::string& xml, const std::string& source, ImportReport* report,
                       const ImportOptions& options, const std::string& base_dir) {
  ModelBuilder b = mujoco_default_builder();
  ImportReport notes;
  add_mjcf_string(xml, source, b, &notes, options, base_dir);
  forward(notes, report);
  return model_scene(finalize_named(b, named(source)), named(source), "MJCF", notes);
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
