// The MJCF importer (add_mjcf, load_mjcf in sap/mjcf.hpp): the subset of MuJoCo's XML format used
// by rigid robots, mapped onto ModelBuilder. See docs/model-import.md for the supported subset
// and the conventions. Internal to src/import/; the importer's parts:
//   mjcf_document.cpp   includes, compiler/option/default sections, attribute readers, keyframes
//   mjcf_bodies.cpp     the body tree (bodies, inertials, joints, geoms), mass properties, the
//                       emission into the builder, contact pairs and exclusions
//   mjcf_actuation.cpp  tendons, equality constraints, actuators
//   mjcf_assets.cpp     <asset> meshes and heightfields
//
// The reader mirrors MuJoCo's order of processing (MjcfImporter::run): includes are expanded
// first; then compiler, option and default sections are read wherever they appear; then the
// world body tree (every <worldbody> in document order), contact exclusions, actuators and
// keyframes. Bodies are created in depth-first document order, joints and geoms grouped by
// body, which reproduces MuJoCo's body, joint, dof and geom numbering.
#pragma once

#include <tinyxml2.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "import/import_common.hpp"
#include "import/mjcf_assets.hpp"
#include "sap/backend/hd.hpp"
#include "sap/mjcf.hpp"

namespace sap::import::mjcf {

namespace fs = std::filesystem;
using import::fail;
using tinyxml2::XMLElement;

// An element of the include-expanded document: <include> elements are replaced by the children
// of the included file's <mujoco> root, so `file` says where each element was written.
struct Node {
  const XMLElement* el = nullptr;
  int file = 0;
  std::vector<Node> children;
  const char* tag() const { return el->Name(); }
};

// Frame composition (MJCF <frame> and body-relative poses): a b, with the product quaternion
// renormalised at every level as MuJoCo's compiler does (deep trees do not drift off unit).
inline Transform compose(const Transform& a, const Transform& b) {
  return {a.pos + rotate(a.quat, b.pos), normalized_or_throw(a.quat * b.quat)};
}

// Orientation as written: quat, or one of MuJoCo's alternatives (resolved with the compiler
// settings, which are global in MJCF).
struct Orientation {
  enum Kind { kNone, kQuat, kAxisAngle, kXYAxes, kZAxis, kEuler } kind = kNone;
  double v[6] = {0, 0, 0, 0, 0, 0};
};

struct JointAttrs {
  int type = kJointHinge;
  Vec3d pos{0, 0, 0}, axis{0, 0, 1};
  int limited = -1;  // -1 auto
  double range[2] = {0, 0};
  double ref = 0, springref = 0, stiffness = 0, damping = 0, armature = 0, frictionloss = 0;
  double springdamper[2] = {0, 0};
  int actuatorfrclimited = -1;
  double actuatorfrcrange[2] = {0, 0};
  int actuatorgravcomp = 0;
  bool limit_softness = false;     // solreflimit/solimplimit/margin given
  bool friction_softness = false;  // solreffriction/solimpfriction given
};

struct GeomAttrs {
  std::string type = "sphere";
  double size[3] = {0, 0, 0};
  int contype = 1, conaffinity = 1, condim = 3, priority = 0, group = 0;
  double friction[3] = {1, 0.005, 0.0001};
  double solmix = 1;
  double solref[2] = {0.02, 1};
  bool solref_set = false;
  double solimp[5] = {0.9, 0.95, 0.001, 0.5, 2};
  bool solimp_set = false;
  double margin = 0, gap = 0;
  double mass = -1, density = 1000;
  bool has_fromto = false;
  double fromto[6] = {0, 0, 0, 0, 0, 0};
  Vec3d pos{0, 0, 0};
  Orientation orient;
  std::string mesh, shellinertia, fluidshape;
  std::array<double, 5> fluidcoef{0.5, 0.25, 1.5, 1.0, 1.0};  // MuJoCo's defaults
};

// MuJoCo's actuator parameters after the shortcut elements (motor/position/velocity/general)
// have been applied in order, defaults first.
struct ActAttrs {
  double gear = 1;
  double delay = 0;  // MuJoCo 4.0's control delay (s)
  int ctrllimited = -1, forcelimited = -1;
  double ctrlrange[2] = {0, 0}, forcerange[2] = {0, 0};
  std::string dyntype = "none", gaintype = "fixed", biastype = "none";
  double gainprm[10] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  double biasprm[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  double inheritrange = 0, dampratio = 0;
  bool timeconst = false;
  double dynprm[3] = {1, 0, 0};
  int actlimited = -1, actearly = 0;
  double actrange[2] = {0, 0};
  double lengthrange[2] = {0, 0};
};

struct DefaultClass {
  std::string name;
  int parent = -1;
  std::vector<const Node*> joint, geom, actuator, tendon, equality;
  std::vector<const Node*> mesh = {};  // <default><mesh> (mjcf_assets.cpp)
  std::vector<const Node*> pair = {};  // <default><pair> (read_contact_pair)
  std::vector<const Node*> site = {};  // <default><site>: only its type is read (read_site)
};

struct PGeom {
  const Node* node = nullptr;
  GeomSpec spec;
  double solref[2] = {0.02, 1};
  bool solref_set = false;
  bool add = true;  // a supported primitive (added to the model)
  std::string asset;  // mesh or hfield name (kGeomMesh, kGeomHfield)
};
struct PBody {
  const Node* node = nullptr;
  std::string name;
  int parent = -1;  // local index
  Transform pose;
  bool has_inertial = false;
  double mass = 0;
  Vec3d com{0, 0, 0};
  import::Sym6 inertia{0, 0, 0, 0, 0, 0};
  std::vector<import::MassPart> geom_mass;  // geoms contributing to inertia-from-geoms
  const Node* massive_mesh = nullptr;       // a mesh/hfield geom with mass (cannot be integrated)
  std::vector<JointSpec> joints;
  std::vector<const Node*> joint_nodes;
  std::vector<PGeom> geoms;
  std::vector<std::pair<std::string, Vec3d>> sites;  // name, position in the body frame
  double gravcomp = 0;
  int builder_index = 0;
};

inline const std::set<std::string>& actuator_tags() {
  static const std::set<std::string> s = {"general", "motor",    "position",   "velocity", "intvelocity",
                                          "damper",  "cylinder", "muscle",     "adhesion", "plugin",
                                          "dcmotor", "pid",      "orientation"};
  return s;
}

class MjcfImporter {
 public:
  MjcfImporter(ModelBuilder& b, const ImportOptions& o) : builder_(b), opt_(o) {}

  // The file at `path`, or `text` when given (then `path` only names it in messages and
  // `base_dir` is where its includes are resolved). MuJoCo's order of processing.
  void run(const std::string& path, ImportReport* report, const std::string* text = nullptr,
           const std::string& base_dir = ".") {
    Node root = load_root(path, text, base_dir);
    builder_.set_contact_rule(kContactRuleMujoco);  // pairs combine their geoms as MuJoCo (model/contact_pairs.hpp)
    read_globals(root);
    read_bodies(root);
    compute_inertia();
    emit_bodies();
    read_contact(root);
    read_tendons(root);
    read_equalities(root);
    read_actuators(root);
    apply_actuator_force_ranges();
    read_keyframes(root, report);
    rep_.flush(report);
  }

 private:
  ModelBuilder& builder_;
  ImportOptions opt_;
  import::MjcfAssets assets_;  // <asset> meshes and heightfields (mjcf_assets.cpp)
  import::Reporter rep_;
  std::vector<std::unique_ptr<tinyxml2::XMLDocument>> docs_;
  std::vector<std::string> files_;
  std::vector<std::string> dirs_;  // where each document's includes are resolved

  // compiler
  bool degree_ = true;
  std::string eulerseq_ = "xyz";
  bool autolimits_ = true;
  int inertiafromgeom_ = -1;  // -1 auto, 0 false, 1 true
  int group_lo_ = 0, group_hi_ = 5;
  double boundmass_ = 0, boundinertia_ = 0, settotalmass_ = -1;
  bool balanceinertia_ = false;
  // option flags
  bool no_contact_ = false, no_limit_ = false, no_spring_ = false, no_damper_ = false;
  bool no_equality_ = false, no_frictionloss_ = false, no_clampctrl_ = false;

  std::vector<DefaultClass> classes_;
  std::map<std::string, int> class_index_;

  std::vector<PBody> bodies_;  // local; [0] is the world
  std::map<std::string, int> body_by_name_;
  struct JointRef {
    int builder_index, type;
    bool limited;
    double range[2];
  };
  std::map<std::string, JointRef> joint_by_name_;
  std::map<std::string, int> tendon_by_name_;  // builder index
  std::map<std::string, int> site_by_name_;    // builder index
  std::vector<int> site_body_, geom_body_;     // builder body of each builder site / geom
  // actuatorfrcrange of joints (by prefixed name) and tendons (by builder index), and whether a
  // joint has actuatorgravcomp: applied to the actuators by apply_actuator_force_ranges.
  struct ForceRange {
    double lo = 0, hi = 0;
    const Node* node = nullptr;
    bool gravcomp = false, limited = false;
  };
  std::map<std::string, ForceRange> joint_frcrange_;
  std::map<int, ForceRange> tendon_frcrange_;
  void apply_actuator_force_ranges();
  int nq_ = 0, nu_ = 0;
  std::vector<double> qpos0_;
  std::vector<std::pair<int, int>> quat_adr_;  // (qpos address in this file, joint type)

  // ---------------------------------------------------------------- diagnostics (mjcf_document.cpp)
  std::string where(const Node& n) const { return import::location(files_[static_cast<std::size_t>(n.file)], n.el); }
  const std::string& file(const Node& n) const { return files_[static_cast<std::size_t>(n.file)]; }
  void ignored(const Node& n, const std::string& what, const std::string& why);
  void unsupported(const Node& n, const std::string& what, const std::string& why);
  // Notes every attribute of n that the feature table's element `element_key` does not list
  // (mjcf_features.cpp: the single list of what each element accepts).
  void check_attributes(const Node& n, const char* element_key);
  std::string prefixed(const std::string& name) const { return name.empty() ? name : opt_.name_prefix + name; }


  // ---------------------------------------------------------------- loading and includes (mjcf_document.cpp)
  int load_file(const std::string& path, const std::string& where_from, const std::string* text = nullptr,
                const std::string& dir = ".");
  void expand(const XMLElement* parent, int f, std::vector<Node>& out, std::vector<std::string>& stack);
  static std::string canonical_key(const std::string& path);
  Node load_root(const std::string& path, const std::string* text, const std::string& base_dir);

  // ---------------------------------------------------------------- compiler, option, defaults (mjcf_document.cpp)
  void read_globals(const Node& root);
  void read_compiler(const Node& n);
  void read_option(const Node& n);
  void read_default(const Node& n, int parent);
  std::vector<int> class_chain(int c) const;
  int find_class(const Node& n, const std::string& name) const;
  int element_class(const Node& n, int childclass) const;

  // ---------------------------------------------------------------- attribute readers (mjcf_document.cpp;
  // apply_actuator: mjcf_actuation.cpp)
  double angle_scale() const { return degree_ ? kPi / 180.0 : 1.0; }

  void read_orientation(const Node& n, Orientation& o);
  Quat<double> resolve(const Node& n, const Orientation& o) const;
  Transform read_pose(const Node& n);
  void read_site(const Node& n, int body, int cls, const Transform& frame);
  // MuJoCo's frame of a geom or site given by fromto (x0 y0 z0 x1 y1 z1): at the midpoint, its z
  // axis from the second point to the first (the minimal rotation); returns the length. `local`
  // comes in with the element's pos (an error unless zero, as in MuJoCo) and goes out as the frame.
  double fromto_frame(const Node& n, const double fromto[6], Transform& local) const;
  void apply_joint(const Node& n, JointAttrs& a);
  void apply_geom(const Node& n, GeomAttrs& g);
  void apply_actuator(const Node& n, ActAttrs& a);

  // ---------------------------------------------------------------- bodies (mjcf_bodies.cpp)
  void read_bodies(const Node& root);
  void read_body_children(const Node& n, int body, int childclass, const Transform& frame);
  void read_body(const Node& n, int parent, int childclass, const Transform& frame);
  void read_inertial(const Node& n, int body);
  void read_joint(const Node& n, int body, int cls, const Transform& frame);
  void read_geom(const Node& n, int body, int cls, const Transform& frame);
  bool body_is_static(int b) const;

  // ---------------------------------------------------------------- mass properties (mjcf_bodies.cpp)
  void compute_inertia();

  // ---------------------------------------------------------------- emission, contacts (mjcf_bodies.cpp)
  void emit_bodies();
  void read_contact(const Node& root);
  void read_contact_pair(const Node& c);

  // ---------------------------------------------------------------- tendons, equalities, actuators
  // (mjcf_actuation.cpp)
  // Fixed tendons (<tendon><fixed>): L = sum coef q over hinge/slide joints, with a limit (SAP
  // limit rows on L), a spring and a damper. Spatial tendons have no counterpart.
  struct TendonAttrs {
    int limited = -1;  // -1 auto
    double range[2] = {0, 0};
    bool has_range = false;
    double stiffness = 0, damping = 0, frictionloss = 0, armature = 0;
    double springlength[2] = {-1, -1};
    int actuatorfrclimited = -1;  // -1 auto
    double actuatorfrcrange[2] = {0, 0};
    bool limit_softness = false, friction_softness = false;  // solreflimit/solimplimit, solreffriction/solimpfriction
  };
  // The tendon properties shared by fixed and spatial tendons (limits, spring with its dead
  // band, damping, armature, dry friction, actuator force range).
  void set_tendon_properties(const Node& c, const std::string& label, const TendonAttrs& a, TendonSpec& ts);
  void record_tendon_force_range(const Node& c, const TendonAttrs& a, int id);
  void apply_tendon(const Node& n, TendonAttrs& a);
  void read_tendons(const Node& root);
  // Spatial tendon (<tendon><spatial>, kernels/spatial_tendon.hpp): a path of sites, with
  // sphere/cylinder geoms (and their sidesites) between two sites and pulleys.
  void read_spatial_tendon(const Node& c);
  // Equality constraints: joint (polynomial coupler), connect (ball) and weld, as SAP
  // holonomic constraints whose compliance follows solref (docs/model-import.md).
  struct EqAttrs {
    int active = 1;
    double solref[2] = {0.02, 1};
  };
  void apply_equality(const Node& n, EqAttrs& a);
  void read_equalities(const Node& root);
  void read_actuators(const Node& root);
  void read_actuator(const Node& n);

  // ---------------------------------------------------------------- keyframes (mjcf_document.cpp)
  void read_keyframes(const Node& root, ImportReport* report);
};

}  // namespace sap::import::mjcf
