// The JSON scene loader's parser state, shared by the three files that read a scene
// (docs/scene-format.md):
//   scene_json.cpp         entry points (load_scene, parse_scene), the order of the top-level
//                          sections, "simulation";
//   scene_to_model.cpp     "builder", "assets", "bodies", "joints", "ground": the Warp-style
//                          bodies and joints converted to our body frames, into a ModelBuilder;
//   scene_state_reader.cpp "initial_joint_q", "initial_joint_qd", "controls", "perturbation":
//                          the run-time parts, read once the model is built.
// The values themselves are read and checked by JsonReader (json_reader.hpp).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "scene/json_reader.hpp"
#include "sap/mesh_asset.hpp"
#include "sap/model_builder.hpp"
#include "sap/scene.hpp"

namespace sap::scene_json {

enum class JType { Fixed, Revolute, Prismatic, Ball, Free };

// builder.defaults.joint / builder.defaults.shape (Warp's builder defaults).
struct JointDefaults {
  double armature = 0, damping = 0, target_ke = 0, target_kd = 0;
  bool has_effort = false;
  double effort = 0;
};
struct ShapeDefaults {
  double density = 1000, ke = 1e5, tau = 0.01, mu = 1.0, margin = 0;
  double hc_dissipation = kDefaultHuntCrossleyDissipation;  // s/m
};

// A body of "bodies" as read, before it is added to the builder (parents first).
struct BodyIn {
  std::string id, ptr;
  const json* j = nullptr;
  bool has_transform = false;
  Transform transform;
  int joint = -1;  // index in joints
  int index = -1;  // builder body index
  int state = 0;   // DFS: 0 new, 1 visiting, 2 done
  bool world_known = false;
  Transform world;      // world pose at q = 0
  bool moving = false;  // has a movable joint on its path to the world
};

// A joint of "joints" in Warp's terms: joint frames pj (in the parent) and cj (in the child),
// axis in the joint frame.
struct JointIn {
  std::string id, ptr;
  JType type = JType::Fixed;
  std::string parent, child;
  int parent_body = -1;  // index in bodies; -1 world; -2 asset body (parent_index)
  int parent_index = 0;  // builder index of an asset parent
  int child_body = -1;
  Transform pj, cj;
  Vec3<double> axis{{0, 0, 1}};
  bool limited = false;
  double lower = 0, upper = 0;
  double armature = 0, damping = 0, stiffness = 0, springref = 0, target_ke = 0, target_kd = 0;
  bool has_effort = false;
  double effort = 0;
  int builder_joint = -1;
};

// What an imported asset added to the builder, and its chosen keyframe.
struct AssetInfo {
  int joint_begin = 0, joint_end = 0;  // builder joint indices
  int act_begin = 0, act_end = 0;
  std::vector<double> keyframe_qpos, keyframe_ctrl;
  bool has_keyframe = false;
  bool urdf = false;  // a URDF states no initial configuration (sap/scene.hpp, urdf_start_within_limits)
  std::string ptr;
};

class SceneParser {
 public:
  SceneParser(JsonReader& r, std::string base_dir) : r_(r), base_dir_(std::move(base_dir)) {}
  Scene parse(const json& root);

 private:
  // scene_json.cpp
  void parse_simulation(const json& sim, const std::string& ptr, Scene& s);
  // scene_to_model.cpp
  void parse_builder(const json& b, const std::string& ptr);
  void parse_assets(const json& a, const std::string& ptr);
  void parse_bodies(const json& a, const std::string& ptr);
  void parse_joints(const json& a, const std::string& ptr);
  void visit(int b, std::vector<int>& order, std::vector<std::string>& path);
  void add_body(int b);
  void add_shapes(const BodyIn& body, int builder_body);
  void set_inertia(const json& v, const std::string& ptr, BodySpec& spec);
  void add_ground(const json& g, const std::string& ptr);
  void add_joint_drives();
  void parse_tendons(const json& a, const std::string& ptr);
  void parse_equalities(const json& a, const std::string& ptr);
  Model finalize();
  // scene_state_reader.cpp
  struct JointValue {
    const json* value;          // the entry's "value"
    std::string ptr;            // its pointer
    const JointIn* json_joint;  // the joint in "joints", or null for a joint of an asset
    int id, type;               // model joint id and type
  };
  JointValue joint_value(const json& e, const std::string& p, const char* section, const char* value_what,
                         const char* quantity, const Model& m, std::set<std::string>& seen) const;
  void apply_asset_keyframes(Scene& s) const;
  void initial_q(const json& a, const std::string& ptr, Scene& s);
  void initial_qd(const json& a, const std::string& ptr, Scene& s);
  void parse_controls(const json& c, const std::string& ptr, Scene& s);
  void parse_perturbation(const json& p, const std::string& ptr, Scene& s);

  const JointIn* json_joint(const std::string& name) const {
    auto it = joint_by_id_.find(name);
    return it == joint_by_id_.end() ? nullptr : &joints_[static_cast<std::size_t>(it->second)];
  }

  JsonReader& r_;
  std::string base_dir_;
  ModelBuilder builder_;
  int contact_rule_ = kContactRuleDrake;  // /builder/contact_rule
  std::map<std::string, std::pair<int, MeshMassProperties>> mesh_shapes_;  // "file|scale" -> builder mesh
  JointDefaults jdef_;
  ShapeDefaults sdef_;
  std::vector<BodyIn> bodies_;
  std::vector<JointIn> joints_;
  std::map<std::string, int> body_by_id_, joint_by_id_;
  std::vector<AssetInfo> assets_;
};

}  // namespace sap::scene_json
