// JSON scene loader (format version 1, docs/scene-format.md): the entry points and the order in
// which the top-level sections are read.
//
// The format follows the Warp implementation's YAML scenes: bodies with shapes, joints with
// parent/child transforms in the Warp style, builder defaults, a ground plane, initial joint
// coordinates. It is strict: unknown keys, wrong types and bad values are errors of the form
// "<file>: <json pointer>: <what was expected>".
//
// The loader is split by concern (scene_parser.hpp lists who reads what): json_reader.cpp
// checks values, scene_to_model.cpp builds the Model, scene_state_reader.cpp reads the initial
// state and controls; this file sequences them and reads "simulation".
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "sap/errors.hpp"
#include "scene/scene_parser.hpp"

namespace sap {
namespace scene_json {

namespace {
const std::vector<std::string> kRootKeys = {"schema_version",   "name",    "description",
                                            "simulation",       "builder", "ground",
                                            "bodies",           "joints",  "initial_joint_q",
                                            "initial_joint_qd", "assets",  "controls",
                                            "perturbation",     "tendons", "equalities"};
}  // namespace

// The sections are read in dependency order, not file order: simulation (dt is the builder's
// timestep), builder defaults, assets (imported first, so their bodies, joints and actuators
// come first in the model), bodies and joints, the ground; then, on the finalized model, the
// initial state (asset keyframes, then initial_joint_q/qd), controls and perturbation.

Scene SceneParser::parse(const json& root) {
  Scene s;
  r_.warnings = &s.warnings;
  r_.check_keys(root, "", kRootKeys, "a scene");
  const json& ver = r_.required(root, "", "schema_version", "the integer 1");
  if (!ver.is_number_integer() || ver.get<long long>() != 1)
    r_.fail("/schema_version", "expected schema version 1 (the only version this loader reads), got " + describe(ver));
  s.name = r_.string(r_.required(root, "", "name", "a non-empty string"), "/name");
  if (const json* d = JsonReader::get(root, "description")) s.description = r_.string(*d, "/description", false);

  if (const json* sim = JsonReader::get(root, "simulation")) parse_simulation(*sim, "/simulation", s);
  if (const json* b = JsonReader::get(root, "builder")) parse_builder(*b, "/builder");
  builder_.set_timestep(s.dt);
  if (const json* a = JsonReader::get(root, "assets")) parse_assets(*a, "/assets");
  if (const json* b = JsonReader::get(root, "bodies")) parse_bodies(*b, "/bodies");
  if (const json* j = JsonReader::get(root, "joints")) parse_joints(*j, "/joints");

  // Parents before children, otherwise in file order.
  std::vector<int> order;
  for (std::size_t b = 0; b < bodies_.size(); ++b) {
    std::vector<std::string> path;
    visit(static_cast<int>(b), order, path);
  }
  for (int b : order) add_body(b);
  if (const json* g = JsonReader::get(root, "ground")) add_ground(*g, "/ground");
  if (const json* t = JsonReader::get(root, "tendons")) parse_tendons(*t, "/tendons");
  if (const json* e = JsonReader::get(root, "equalities")) parse_equalities(*e, "/equalities");

  add_joint_drives();
  builder_.set_contact_rule(contact_rule_);

  // Run-time parts, on the finalized model (scene_state_reader.cpp).
  s.model = finalize();
  if (contact_rule_ == kContactRuleDrake) {  // MuJoCo's contact attributes of MJCF assets go unused: say so
    int mujoco_only = 0;
    for (int g = 0; g < s.model.ngeom; ++g) {
      const std::size_t i = static_cast<std::size_t>(g);
      mujoco_only += s.model.geom_condim[i] != 3 || s.model.geom_priority[i] != 0 || s.model.geom_gap[i] > 0;
    }
    for (int p = 0; p < s.model.npair; ++p) mujoco_only += s.model.pair_condim[static_cast<std::size_t>(p)] > 3;
    if (mujoco_only > 0)
      r_.warn("/builder/contact_rule",
              std::to_string(mujoco_only) +
                  " geom(s)/pair(s) of MJCF assets set condim, priority, gap or torsional/rolling friction, which the "
                  "scene's contact rule \"drake\" does not use (set \"contact_rule\": \"mujoco\" for MuJoCo's rules)");
  }
  s.qpos0 = s.model.qpos0;
  s.qvel0.assign(static_cast<std::size_t>(s.model.nv), 0.0);
  apply_asset_keyframes(s);
  // Initial states outside the joint limits (sap/scene.hpp): a URDF asset's zero moves to the
  // nearest limit; what the scene states (keyframes, initial_joint_q) is used as given.
  for (const AssetInfo& a : assets_)
    if (a.urdf) {
      const std::string note = urdf_start_within_limits(s.model, a.joint_begin, a.joint_end, s.qpos0, "");
      if (!note.empty()) r_.warn(a.ptr, note);
    }
  if (const json* q = JsonReader::get(root, "initial_joint_q")) initial_q(*q, "/initial_joint_q", s);
  {
    const std::string note = initial_state_limits_note(s.model, s.qpos0, "");
    if (!note.empty()) r_.warn(JsonReader::get(root, "initial_joint_q") ? "/initial_joint_q" : "", note);
  }
  if (const json* qd = JsonReader::get(root, "initial_joint_qd")) initial_qd(*qd, "/initial_joint_qd", s);
  parse_controls(JsonReader::get(root, "controls") ? *JsonReader::get(root, "controls") : json::object(), "/controls",
                 s);
  if (const json* p = JsonReader::get(root, "perturbation")) parse_perturbation(*p, "/perturbation", s);
  r_.warnings = nullptr;
  return s;
}

void SceneParser::parse_simulation(const json& sim, const std::string& ptr, Scene& s) {
  r_.check_keys(sim, ptr, {"dt", "num_worlds", "max_rigid_contact", "solver"}, "simulation");
  if (const json* v = JsonReader::get(sim, "dt")) s.dt = r_.positive(*v, at(ptr, "dt"));
  if (const json* v = JsonReader::get(sim, "num_worlds"))
    s.num_worlds = static_cast<int>(r_.integer(*v, at(ptr, "num_worlds"), 1, 1 << 24));
  if (const json* v = JsonReader::get(sim, "max_rigid_contact"))
    s.max_rigid_contact = static_cast<int>(r_.integer(*v, at(ptr, "max_rigid_contact"), 0, 1 << 24));
  if (const json* so = JsonReader::get(sim, "solver")) {
    const std::string sp = at(ptr, "solver");
    r_.require_object(*so, sp);
    for (auto it = so->begin(); it != so->end(); ++it) {
      const std::string kp = at(sp, it.key());
      const json& v = it.value();
      std::string text;
      if (v.is_string()) text = v.get<std::string>();
      else if (v.is_boolean()) text = v.get<bool>() ? "true" : "false";
      else if (v.is_number()) text = v.dump();  // shortest round-trip form, full precision
      else r_.fail(kp, "expected a string, number or boolean solver option value, got " + describe(v));
      try {
        set_solver_option(s.solver, it.key(), text);
      } catch (const std::exception& e) {
        r_.fail(kp, e.what());
      }
    }
    try {  // the preset expanded and every override applied: an unknown preset or an invalid value fails here
      (void)s.solver.resolve();
    } catch (const std::exception& e) {
      r_.fail(sp, e.what());
    }
  }
}

}  // namespace scene_json

Scene parse_scene(const std::string& json_text, const std::string& source, const std::string& base_dir) {
  scene_json::JsonReader r;
  r.file = source.empty() ? std::string("<string>") : source;
  const scene_json::json root = scene_json::parse_strict_json(json_text, r);
  scene_json::SceneParser parser(r, base_dir.empty() ? std::string(".") : base_dir);
  Scene s = parser.parse(root);
  return s;
}

Scene load_scene(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw std::runtime_error(path + ": not a regular file (expected a JSON scene file)");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw FileNotFoundError(path + ": cannot open the scene file", path);
  std::ostringstream text;
  text << f.rdbuf();
  const std::size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? std::string(".")
                                                     : (slash == 0 ? std::string("/") : path.substr(0, slash));
  Scene s = parse_scene(text.str(), path, dir);
  s.source = path;
  return s;
}

}  // namespace sap
