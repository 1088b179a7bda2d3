// URDF importer: links, joints, inertials and collision primitives mapped onto ModelBuilder.
// See docs/model-import.md for the supported subset and the conventions.
//
// A link's frame is the frame of the joint that attaches it to its parent (URDF convention), so
// the child body is placed at the joint origin and the joint anchor is the body origin. Bodies
// are created depth first from the root link, children in the document order of their joints.
#include <tinyxml2.h>

#include <Eigen/Dense>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "import/import_common.hpp"
#include "import/import_features.hpp"
#include "sap/mesh_asset.hpp"
#include "sap/mjcf.hpp"

namespace sap {
namespace {

using import::fail;
using tinyxml2::XMLElement;
namespace fs = std::filesystem;

// Where a URDF <mesh filename> points (docs/model-import.md, "Mesh files"): file:// and absolute
// paths as they are; other relative paths against the URDF's directory; package://pkg/rel
// against the first directory named `pkg` met going up from the URDF's directory (or a
// directory `pkg` inside one of them), then in the entries of SAP_PACKAGE_PATH and
// ROS_PACKAGE_PATH (colon-separated; an entry named `pkg`, or holding `pkg`). The first
// candidate that exists wins; `tried` lists every candidate for the error message.
std::string resolve_mesh_path(const std::string& uri, const std::string& urdf_path, std::vector<std::string>& tried) {
  // Non-throwing overloads throughout: a malformed filename (too long, bad characters) is a
  // missing mesh reported with the URDF's line, not a filesystem_error escaping the importer.
  std::error_code ec;
  fs::path urdf_dir = fs::absolute(fs::path(urdf_path), ec).parent_path();
  if (ec) urdf_dir = fs::path(urdf_path).parent_path();
  auto accept = [&](const fs::path& p) {
    tried.push_back(p.lexically_normal().string());
    std::error_code status_ec;
    return fs::is_regular_file(p, status_ec) && !status_ec;
  };
  const std::string pkg_prefix = "package://", file_prefix = "file://";
  if (uri.rfind(file_prefix, 0) == 0) return uri.substr(file_prefix.size());
  if (uri.rfind(pkg_prefix, 0) != 0) {
    const fs::path p = fs::path(uri).is_absolute() ? fs::path(uri) : urdf_dir / uri;
    accept(p);
    return p.lexically_normal().string();
  }
  const std::string rest = uri.substr(pkg_prefix.size());
  const std::size_t slash = rest.find('/');
  const std::string pkg = rest.substr(0, slash), rel = slash == std::string::npos ? "" : rest.substr(slash + 1);
  auto try_root = [&](const fs::path& d, std::string& out) {
    if (d.filename() == pkg && accept(d / rel)) return out = (d / rel).lexically_normal().string(), true;
    if (accept(d / pkg / rel)) return out = (d / pkg / rel).lexically_normal().string(), true;
    return false;
  };
  std::string found;
  for (fs::path d = urdf_dir;; d = d.parent_path()) {
    if (try_root(d, found)) return found;
    if (d == d.parent_path()) break;
  }
  for (const char* var : {"SAP_PACKAGE_PATH", "ROS_PACKAGE_PATH"}) {
    const char* env = std::getenv(var);
    if (!env) continue;
    std::string list = env;
    for (std::size_t a = 0; a <= list.size();) {
      const std::size_t b = std::min(list.find(':', a), list.size());
      if (b > a && try_root(fs::path(list.substr(a, b - a)), found)) return found;
      a = b + 1;
    }
  }
  return "";
}

struct ULink {
  const XMLElement* el = nullptr;
  const XMLElement* inertia_el = nullptr;  // <inertia>, for the line of inertia diagnostics
  import::Sym6 inertia_written{0, 0, 0, 0, 0, 0};  // as written, in the inertial frame
  Quat<double> inertial_quat;                       // the inertial frame in the link frame
  std::string name;
  double mass = 0;
  Vec3d com{0, 0, 0};
  import::Sym6 inertia{0, 0, 0, 0, 0, 0};
  std::vector<std::pair<const XMLElement*, GeomSpec>> geoms;
  int builder_index = 0;
};

struct UJoint {
  const XMLElement* el = nullptr;
  std::string name, type, parent, child;
  Transform origin;  // joint frame in the parent link frame = the child link frame at q = 0
  Vec3d axis{1, 0, 0};
  bool has_limit = false;
  double lower = 0, upper = 0;
  double damping = 0;
  double friction = 0;  // <dynamics friction>: dry friction torque/force (frictionloss)
  // <mimic joint multiplier offset>: q = multiplier q_joint + offset, onto the kEqJoint coupler
  const XMLElement* mimic = nullptr;
  std::string mimic_joint;
  double mimic_multiplier = 1, mimic_offset = 0;
};

class UrdfImporter {
 public:
  UrdfImporter(ModelBuilder& b, const ImportOptions& o, bool floating) : builder_(b), opt_(o), floating_(floating) {}

  // The file at `path`, or `text` when given (then `path` only names it in messages).
  void run(const std::string& path, ImportReport* report, const std::string* text = nullptr) {
    path_ = path;
    if (!text) import::require_regular_file(path, path);
    const tinyxml2::XMLError err = text ? doc_.Parse(text->data(), text->size()) : doc_.LoadFile(path.c_str());
    if (err == tinyxml2::XML_ERROR_FILE_NOT_FOUND || err == tinyxml2::XML_ERROR_FILE_COULD_NOT_BE_OPENED)
      import::fail_file_not_found(path, path);
    if (err != tinyxml2::XML_SUCCESS)
      fail(path + ":" + std::to_string(doc_.ErrorLineNum()), std::string("XML parse error: ") + doc_.ErrorStr());
    const XMLElement* robot = doc_.RootElement();
    if (!robot || std::strcmp(robot->Name(), "robot"))
      fail(import::location(path, robot),
           std::string("expected a <robot> root element, got <") + (robot ? robot->Name() : "nothing") + ">");
    for (const XMLElement* e = robot->FirstChildElement(); e; e = e->NextSiblingElement()) {
      const std::string t = e->Name();
      if (t == "link") read_link(e);
      else if (t == "joint") read_joint(e);
      else if (t == "material") continue;  // visual
      else if (t == "gazebo" || t == "transmission")
        rep_.warn(t, where(e), "<" + t + "> ignored: simulator/actuation extensions are not imported");
      else rep_.warn("elem:" + t, where(e), "<" + t + "> ignored: unknown URDF element");
    }
    if (links_.empty()) fail(where(robot), "the robot has no links");
    repair_inertia_rounding();
    bound_inertia();
    build();
    rep_.flush(report);
  }

 private:
  ModelBuilder& builder_;
  ImportOptions opt_;
  bool floating_;
  std::string path_;
  tinyxml2::XMLDocument doc_;
  import::Reporter rep_;
  std::vector<ULink> links_;
  std::map<std::string, int> link_index_;
  std::vector<UJoint> joints_;
  std::map<std::string, MeshAsset> meshes_;  // by resolved path and scale
  std::map<std::string, int> mesh_ids_;      // builder ids, same keys
  std::map<const XMLElement*, std::string> geom_mesh_;  // <mesh> element -> key in meshes_

  std::string where(const XMLElement* e) const { return import::location(path_, e); }
  std::string prefixed(const std::string& name) const { return name.empty() ? name : opt_.name_prefix + name; }
  void unsupported(const XMLElement* e, const std::string& what, const std::string& why) {
    if (!opt_.drop_unsupported)
      fail(where(e), what + " is not supported: " + why + " (ImportOptions::drop_unsupported drops it with a warning)");
    rep_.warn("dropped:" + what, where(e), what + " dropped: " + why);
  }
  // Notes the attributes of e that the feature table's element `key` does not list
  // (urdf_features.cpp); namespaced ones (xmlns:..., xacro:...) belong to other tools.
  void check_attributes(const XMLElement* e, const char* key) {
    if (!e) return;
    const import::ElementFeature& known = import::urdf_element(key);
    for (const tinyxml2::XMLAttribute* a = e->FirstAttribute(); a; a = a->Next())
      if ((!known.find(a->Name()) || known.find(a->Name())->noted) && !std::strchr(a->Name(), ':'))
        rep_.warn(std::string("attr:") + e->Name() + ":" + a->Name(), where(e),
                  std::string("attribute '") + a->Name() + "' of <" + e->Name() +
                      "> is not recognized and was ignored");
  }
  std::string required(const XMLElement* e, const char* attr) const {
    const char* v = e->Attribute(attr);
    if (!v || !*v) fail(where(e), std::string("<") + e->Name() + "> needs a '" + attr + "' attribute");
    return v;
  }
  double number(const XMLElement* e, const char* attr, double fallback, bool needed = false) const {
    double v = fallback;
    if (!import::read_double(path_, e, attr, v) && needed)
      fail(where(e), std::string("<") + e->Name() + "> needs a '" + attr + "' attribute");
    return v;
  }
  // <origin xyz rpy>: the frame of an element in its link (or parent link) frame; rpy are
  // fixed-axis angles, R = Rz(yaw) Ry(pitch) Rx(roll).
  Transform origin(const XMLElement* parent, const char* key) {
    Transform p;
    const XMLElement* o = parent->FirstChildElement("origin");
    if (!o) return p;
    check_attributes(o, key);
    import::read_fixed(path_, o, "xyz", 3, p.pos.v);
    Vec3<double> rpy = Vec3<double>::zero();
    if (import::read_fixed(path_, o, "rpy", 3, rpy.v)) p.quat = from_rpy(rpy);
    return p;
  }

  void read_link(const XMLElement* e) {
    ULink l;
    l.el = e;
    check_attributes(e, "link");
    l.name = required(e, "name");
    if (link_index_.count(l.name)) fail(where(e), "repeated link name '" + l.name + "'");
    if (const XMLElement* in = e->FirstChildElement("inertial")) {
      const Transform o = origin(in, "link/inertial/origin");
      const XMLElement* m = in->FirstChildElement("mass");
      if (!m) fail(where(in), "<inertial> needs a <mass>");
      check_attributes(m, "link/inertial/mass");
      l.mass = number(m, "value", 0, true);
      if (!(l.mass >= 0)) fail(where(m), "mass must be non-negative");
      const XMLElement* I = in->FirstChildElement("inertia");
      if (!I) fail(where(in), "<inertial> needs an <inertia>");
      check_attributes(I, "link/inertial/inertia");
      // URDF inertia is about the com in the inertial frame; rotate it into the link frame.
      const import::Sym6 local{number(I, "ixx", 0, true), number(I, "iyy", 0, true), number(I, "izz", 0, true),
                               number(I, "ixy", 0, true), number(I, "ixz", 0, true), number(I, "iyz", 0, true)};
      l.com = to_array(o.pos);
      l.inertia = import::rotate_inertia(o.quat, local);
      l.inertia_el = I;
      l.inertia_written = local;
      l.inertial_quat = o.quat;
    }
    for (const XMLElement* c = e->FirstChildElement("collision"); c; c = c->NextSiblingElement("collision")) {
      const XMLElement* geo = c->FirstChildElement("geometry");
      if (!geo || !geo->FirstChildElement()) fail(where(c), "<collision> needs a <geometry> with a shape");
      const XMLElement* shape = geo->FirstChildElement();
      const std::string t = shape->Name();
      check_attributes(c, "link/collision");
      if (t == "box" || t == "sphere" || t == "cylinder" || t == "capsule" || t == "mesh")
        check_attributes(shape, ("geometry/" + t).c_str());
      GeomSpec g;
      if (const char* nm = c->Attribute("name")) g.name = prefixed(nm);
      const Transform o = origin(c, "link/collision/origin");
      g.pos = to_array(o.pos);
      g.quat = to_array(o.quat);
      if (t == "box") {
        double s[3];
        if (!import::read_fixed(path_, shape, "size", 3, s)) fail(where(shape), "<box> needs a 'size'");
        g.type = kGeomBox;
        g.size = {0.5 * s[0], 0.5 * s[1], 0.5 * s[2]};  // URDF gives full extents
      } else if (t == "sphere") {
        g.type = kGeomSphere;
        g.size = {number(shape, "radius", 0, true), 0, 0};
      } else if (t == "cylinder" || t == "capsule") {
        g.type = t == "cylinder" ? kGeomCylinder : kGeomCapsule;
        // length is the full length of the cylindrical part, along the local z axis
        g.size = {number(shape, "radius", 0, true), 0.5 * number(shape, "length", 0, true), 0};
      } else if (t == "mesh") {
        // The convex hull of the mesh (URDF links carry their own inertials: no mass here);
        // the geom frame moves to the hull's principal frame, as for MJCF meshes.
        const std::string uri = required(shape, "filename");
        std::array<double, 3> scale{1, 1, 1};
        import::read_fixed(path_, shape, "scale", 3, scale.data());
        std::vector<std::string> tried;
        const std::string file = resolve_mesh_path(uri, path_, tried);
        std::string key = file + " scale " + std::to_string(scale[0]) + " " + std::to_string(scale[1]) + " " +
                          std::to_string(scale[2]);
        std::string problem;
        if (file.empty()) {
          problem = "mesh '" + uri + "' not found (tried";
          for (const std::string& p : tried) problem += " " + p;
          problem += "; set SAP_PACKAGE_PATH to the directory holding the package)";
        } else if (!meshes_.count(key)) {
          try {
            meshes_[key] = compile_mesh(fs::path(file).stem().string(), read_mesh_file(file), scale,
                                        MeshInertia::kConvex, file);
          } catch (const std::runtime_error& err) {
            problem = err.what();
          }
        }
        if (!problem.empty()) {
          unsupported(shape, "collision mesh", problem);
          continue;
        }
        const MeshAsset& a = meshes_.at(key);
        mesh_geom_pose(a.mass, g.pos, g.quat);
        g.type = kGeomMesh;
        g.size = a.half_extent;
        geom_mesh_[shape] = key;
      } else {
        fail(where(shape), "unknown collision geometry <" + t + "> (expected box, sphere, cylinder, capsule or mesh)");
      }
      const int need = g.type == kGeomMesh ? 0 : g.type == kGeomSphere ? 1 : g.type == kGeomBox ? 3 : 2;
      for (int k = 0; k < need; ++k)
        if (!(g.size[static_cast<std::size_t>(k)] > 0)) fail(where(shape), "<" + t + "> dimensions must be positive");
      g.friction = 1.0;  // URDF has no friction; MuJoCo's default
      l.geoms.push_back({shape, g});
    }
    if (e->FirstChildElement("visual"))
      rep_.warn("visual", where(e->FirstChildElement("visual")), "<visual> ignored: no effect on the dynamics");
    link_index_[l.name] = static_cast<int>(links_.size());
    links_.push_back(l);
  }

  void read_joint(const XMLElement* e) {
    UJoint j;
    j.el = e;
    check_attributes(e, "joint");
    j.name = required(e, "name");
    j.type = required(e, "type");
    static const std::set<std::string> types = {"revolute", "continuous", "prismatic", "fixed",
                                                "floating", "planar",     "spherical"};
    if (!types.count(j.type))
      fail(where(e), "joint '" + j.name + "': unknown type '" + j.type +
                         "' (expected revolute, continuous, prismatic, fixed, floating, spherical)");
    const XMLElement* p = e->FirstChildElement("parent");
    const XMLElement* c = e->FirstChildElement("child");
    if (!p || !c) fail(where(e), "joint '" + j.name + "' needs <parent link=...> and <child link=...>");
    check_attributes(p, "joint/parent");
    check_attributes(c, "joint/child");
    j.parent = required(p, "link");
    j.child = required(c, "link");
    j.origin = origin(e, "joint/origin");
    // The axis of a fixed (or floating/planar-as-fixed) joint has no meaning; valid URDFs give
    // <axis xyz="0 0 0"/> there (Go2, iCub, TIAGo), so it is only read for joints with one dof.
    const bool has_axis = j.type == "revolute" || j.type == "continuous" || j.type == "prismatic";
    if (const XMLElement* a = has_axis ? e->FirstChildElement("axis") : nullptr) {
      check_attributes(a, "joint/axis");
      if (!import::read_fixed(path_, a, "xyz", 3, j.axis.data())) fail(where(a), "<axis> needs 'xyz'");
      const double n = norm(vec3(j.axis));
      if (!(n > 1e-12)) fail(where(a), "joint axis must be non-zero");
      j.axis = {j.axis[0] / n, j.axis[1] / n, j.axis[2] / n};
    }
    if (const XMLElement* l = e->FirstChildElement("limit")) {
      check_attributes(l, "joint/limit");
      j.lower = number(l, "lower", 0);
      j.upper = number(l, "upper", 0);
      j.has_limit = true;
      if (l->Attribute("effort") || l->Attribute("velocity"))
        rep_.warn("effort", where(l),
                  "joint effort/velocity limits ignored: URDF declares no actuators (add them in the scene)");
    }
    if (const XMLElement* d = e->FirstChildElement("dynamics")) {
      check_attributes(d, "joint/dynamics");
      j.damping = number(d, "damping", 0);
      if (j.damping < 0) fail(where(d), "damping must be non-negative");
      j.friction = number(d, "friction", 0);
      if (j.friction < 0) fail(where(d), "friction must be non-negative");
    }
    if (const XMLElement* mi = e->FirstChildElement("mimic")) {
      check_attributes(mi, "joint/mimic");
      if (!has_axis) {  // a fixed (or floating/planar) joint has no coordinate to couple (TALOS's grippers)
        rep_.warn("mimic-fixed", where(mi), "<mimic> of a " + j.type + " joint ignored: it has no coordinate to couple");
      } else {
        j.mimic = mi;
      j.mimic_joint = required(mi, "joint");
      j.mimic_multiplier = number(mi, "multiplier", 1.0);
      j.mimic_offset = number(mi, "offset", 0.0);
      }
    }
    if (j.type == "planar")
      unsupported(e, "planar joint", "planar joints have no counterpart in the model (treated as fixed)");
    if (j.type == "revolute" || j.type == "prismatic") {
      if (!j.has_limit) fail(where(e), "joint '" + j.name + "': a " + j.type + " joint needs a <limit>");
      // lower > upper: unlimited, as pybullet and MuJoCo (validation_errors.json,
      // urdf_lower_above_upper) take it.
      if (!(j.lower <= j.upper)) {
        rep_.warn("limit-reversed", where(e->FirstChildElement("limit")),
                  "joint '" + j.name + "': limit lower " + fmt(j.lower) + " > upper " + fmt(j.upper) +
                      ": the joint is unlimited (as pybullet and MuJoCo take it)");
        j.has_limit = false;
      }
    }
    // spherical: a ball joint about the joint origin (pybullet's, MuJoCo's ball). Its <limit>
    // (a cone in pybullet, range[0] = 0 required by MuJoCo) is dropped as ball limits are.
    if (j.type == "spherical" && j.has_limit) {
      rep_.warn("ball-limit", where(e->FirstChildElement("limit")),
                "joint '" + j.name + "': spherical joint limit dropped: the model supports limits on hinge and "
                "slide joints only");
      j.has_limit = false;
    }
    joints_.push_back(j);
  }

  static std::string fmt(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", x);
    return buf;
  }

  // Inertia tensors that are not positive semi-definite (docs/model-import.md, "URDF inertia
  // repairs"). With λ the principal moments of a link (ascending) and s the largest principal
  // moment of any link in the file:
  //   λ0 >= -1e-12 λ2:  positive semi-definite to the tensor's own precision; kept as written
  //                     (Model::validate accepts it);
  //   λ0 >= -1e-12 s:   rounding noise relative to the robot's inertias (iCub's legs and head:
  //                     entries of +-2^-64 kg m^2 on a robot whose inertias reach 0.08 kg m^2);
  //                     replaced by the nearest positive semi-definite tensor in the Frobenius
  //                     norm, V max(Λ, 0) V^T (negative principal moments set to 0, axes kept),
  //                     with a note; an error when ImportOptions::repair_inertia_rounding is off;
  //   otherwise:        an error at the <inertia> line with the principal moments (TIAGo's
  //                     antennas: (-3.5e-8, 3.5e-8, 9.1e-8) kg m^2, a product of inertia larger
  //                     than the moments).
  // Decided and projected on the tensor as written (in the inertial frame), then rotated into the
  // link frame (the projection commutes with rotations).
  void repair_inertia_rounding() {
    auto tensor = [](const import::Sym6& I) {
      Eigen::Matrix3d T;
      T << I[0], I[3], I[4], I[3], I[1], I[5], I[4], I[5], I[2];
      return T;
    };
    double scale = 0;
    for (const ULink& l : links_) {
      if (!l.inertia_el) continue;
      const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es(tensor(l.inertia_written), Eigen::EigenvaluesOnly);
      scale = std::max(scale, es.eigenvalues()[2]);
    }
    for (ULink& l : links_) {
      if (!l.inertia_el) continue;
      const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es(tensor(l.inertia_written));
      const Eigen::Vector3d lam = es.eigenvalues();
      if (lam[0] >= -1e-12 * std::max(lam[2], 0.0)) continue;
      const std::string moments =
          "principal moments (" + fmt(lam[0]) + ", " + fmt(lam[1]) + ", " + fmt(lam[2]) + ") kg m^2";
      const std::string head = "link '" + l.name + "': inertia tensor is not positive semi-definite: " + moments;
      if (lam[0] < -1e-12 * scale)
        fail(where(l.inertia_el), head + "; the negative one exceeds rounding noise (1e-12 x " + fmt(scale) +
                                      " kg m^2, the largest principal moment in the file)");
      if (!opt_.repair_inertia_rounding)
        fail(where(l.inertia_el), head + ", within rounding noise (ImportOptions::repair_inertia_rounding is off)");
      const Eigen::Matrix3d T =
          es.eigenvectors() * lam.cwiseMax(0.0).asDiagonal() * es.eigenvectors().transpose();
      l.inertia = import::rotate_inertia(l.inertial_quat, {T(0, 0), T(1, 1), T(2, 2), T(0, 1), T(0, 2), T(1, 2)});
      rep_.warn("inertia-rounding", where(l.inertia_el),
                "inertia tensor not positive semi-definite by rounding noise only (negative principal moments "
                "within 1e-12 of the file's largest) repaired: set to the nearest positive semi-definite tensor");
    }
  }

  // A link in the depth-first order of build(), with the joint attaching it to its parent (-1
  // for the root).
  struct Item {
    int link, joint;
  };

  // ImportOptions::bound_inertia: MuJoCo's compiler boundinertia on every link with an
  // <inertial>, I = V max(Λ, b) V^T (axes kept), a note per link it changes.
  void bound_inertia() {
    const double b = opt_.bound_inertia;
    if (!(b > 0)) return;
    for (ULink& l : links_) {
      if (!l.inertia_el) continue;
      Eigen::Matrix3d T;
      T << l.inertia[0], l.inertia[3], l.inertia[4], l.inertia[3], l.inertia[1], l.inertia[5], l.inertia[4],
          l.inertia[5], l.inertia[2];
      const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es(T);
      if (es.eigenvalues()[0] >= b) continue;
      T = es.eigenvectors() * es.eigenvalues().cwiseMax(b).asDiagonal() * es.eigenvectors().transpose();
      l.inertia = {T(0, 0), T(1, 1), T(2, 2), T(0, 1), T(0, 2), T(1, 2)};
      rep_.warn("bound-inertia", where(l.inertia_el),
                "link '" + l.name + "': principal moments (" + fmt(es.eigenvalues()[0]) + ", " +
                    fmt(es.eigenvalues()[1]) + ", " + fmt(es.eigenvalues()[2]) + ") kg m^2 raised to at least " +
                    fmt(b) + " (ImportOptions::bound_inertia, MuJoCo's boundinertia)");
    }
  }

  // MuJoCo's compiler rejects a link whose inertia tensor is not zero but has a principal moment
  // below mjEPS = 1e-14 ("inertia must have positive eigenvalues": diag(1, 1, 0) of pybullet's
  // random URDFs, diag(1, 1, 2e-15); diag(1, 1, 1e-13) passes; tests/data/mujoco/
  // validation_errors.json); a free link with diag(1, 1, 0) makes our mass matrix singular. What
  // the solver needs is a regular rigid body: checked per rigid group that moves (a link with a
  // dof and the links welded to it by fixed joints, poses in the group root's frame; MuJoCo's
  // moving-body check groups so too), on the tensors after the rounding-noise projection and
  // ImportOptions::bound_inertia. Accepted, unlike MuJoCo: a rank-1 tensor of a link welded to
  // one that carries the inertia (ANYmal's 1 mg base, tests/data/welded_links_split.urdf), static
  // links, and point masses (all moments below 1e-14: iCub's projected rounding noise).
  void check_singular_inertia(const std::vector<Item>& order, const std::vector<int>& parent_of, bool root_is_world) {
    constexpr double kEps = 1e-14;  // mjEPS
    const std::size_t n = links_.size();
    std::vector<int> root(n, -1), dofs(n, 0);
    std::vector<Transform> pose(n);  // link frame in its group root's frame
    for (const Item& it : order) {
      const std::size_t l = static_cast<std::size_t>(it.link);
      const std::string type = it.joint >= 0 ? joints_[static_cast<std::size_t>(it.joint)].type : "";
      dofs[l] = it.joint >= 0 ? type != "fixed" && type != "planar" : floating_ && !root_is_world;
      if (dofs[l] || parent_of[l] < 0) {
        root[l] = it.link;
      } else {
        const std::size_t p = static_cast<std::size_t>(parent_of[l]);
        root[l] = root[p];
        pose[l] = pose[p] * joints_[static_cast<std::size_t>(it.joint)].origin;
      }
    }
    auto eigen = [](const Vec3<double>& v) { return Eigen::Vector3d(v[0], v[1], v[2]); };
    for (const Item& it : order) {
      const std::size_t g = static_cast<std::size_t>(it.link);
      if (!dofs[g]) continue;
      double m = 0;
      Eigen::Vector3d first = Eigen::Vector3d::Zero();
      std::string welded;
      for (std::size_t l = 0; l < n; ++l)
        if (root[l] == it.link) {
          m += links_[l].mass;
          first += links_[l].mass * eigen(pose[l].pos + rotate(pose[l].quat, vec3(links_[l].com)));
          if (l != g) welded += (welded.empty() ? "'" : ", '") + links_[l].name + "'";
        }
      if (!(m > 0)) continue;  // a massless subtree: the massless-link rule
      const Eigen::Vector3d c = first / m;
      Eigen::Matrix3d I = Eigen::Matrix3d::Zero();
      for (std::size_t l = 0; l < n; ++l) {
        if (root[l] != it.link) continue;
        const import::Sym6& J = links_[l].inertia;
        Eigen::Matrix3d T;
        T << J[0], J[3], J[4], J[3], J[1], J[5], J[4], J[5], J[2];
        const Quat<double>& q = pose[l].quat;
        const Eigen::Matrix3d R = Eigen::Quaterniond(q.w, q.x, q.y, q.z).normalized().toRotationMatrix();
        const Eigen::Vector3d d = eigen(pose[l].pos + rotate(q, vec3(links_[l].com))) - c;
        I += R * T * R.transpose() +
             links_[l].mass * (d.squaredNorm() * Eigen::Matrix3d::Identity() - d * d.transpose());
      }
      const Eigen::Vector3d lam = Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(0.5 * (I + I.transpose()),
                                                                                 Eigen::EigenvaluesOnly)
                                      .eigenvalues();
      if (lam[0] >= kEps || lam[2] < kEps) continue;
      const ULink& l = links_[g];
      fail(where(l.inertia_el ? l.inertia_el : l.el),
           "link '" + l.name + "' moves" + (welded.empty() ? "" : " (with the links welded to it: " + welded + ")") +
               " and its inertia about the centre of mass is singular: principal moments (" + fmt(lam[0]) + ", " +
               fmt(lam[1]) + ", " + fmt(lam[2]) +
               ") kg m^2, the smallest below 1e-14 (MuJoCo rejects it: 'inertia must have positive eigenvalues'); "
               "ImportOptions::bound_inertia raises the principal moments as MuJoCo's boundinertia does");
    }
  }

  void build() {
    std::map<std::string, int> parent_joint;
    std::map<std::string, std::vector<int>> children;
    for (std::size_t i = 0; i < joints_.size(); ++i) {
      const UJoint& j = joints_[i];
      if (!link_index_.count(j.parent))
        fail(where(j.el), "joint '" + j.name + "': unknown parent link '" + j.parent + "'");
      if (!link_index_.count(j.child))
        fail(where(j.el), "joint '" + j.name + "': unknown child link '" + j.child + "'");
      if (parent_joint.count(j.child))
        fail(where(j.el), "link '" + j.child + "' is the child of two joints ('" +
                              joints_[static_cast<std::size_t>(parent_joint[j.child])].name + "' and '" + j.name +
                              "')");
      parent_joint[j.child] = static_cast<int>(i);
      children[j.parent].push_back(static_cast<int>(i));
    }
    std::vector<int> roots;
    for (std::size_t i = 0; i < links_.size(); ++i)
      if (!parent_joint.count(links_[i].name)) roots.push_back(static_cast<int>(i));
    if (roots.size() != 1) {
      std::string names;
      for (int r : roots) names += (names.empty() ? "'" : ", '") + links_[static_cast<std::size_t>(r)].name + "'";
      fail(where(doc_.RootElement()),
           roots.empty() ? "the joints form a cycle (no root link)"
                         : "expected one root link, found " + std::to_string(roots.size()) + ": " + names);
    }
    // Pre-order traversal; collect bodies to compute tree masses before emitting geoms.

    std::vector<Item> order;
    std::vector<int> stack{roots[0]};
    std::vector<int> via{-1};
    std::set<int> seen;
    while (!stack.empty()) {
      const int l = stack.back(), jv = via.back();
      stack.pop_back();
      via.pop_back();
      if (!seen.insert(l).second) fail(where(links_[static_cast<std::size_t>(l)].el), "link reached twice (cycle)");
      order.push_back({l, jv});
      const auto it = children.find(links_[static_cast<std::size_t>(l)].name);
      if (it == children.end()) continue;
      for (auto r = it->second.rbegin(); r != it->second.rend(); ++r) {
        stack.push_back(link_index_[joints_[static_cast<std::size_t>(*r)].child]);
        via.push_back(*r);
      }
    }
    if (order.size() != links_.size()) fail(where(doc_.RootElement()), "some links are not connected to the root");

    // A root link named "world" is the world itself (a common URDF idiom).
    const bool root_is_world = links_[static_cast<std::size_t>(roots[0])].name == "world";
    if (root_is_world && floating_)
      rep_.warn("floating-world", where(links_[static_cast<std::size_t>(roots[0])].el),
                "floating_base ignored: the root link 'world' is the world itself");
    std::vector<int> moving(links_.size(), 0), parent_of(links_.size(), -1);
    for (const Item& it : order) {
      ULink& l = links_[static_cast<std::size_t>(it.link)];
      if (it.joint < 0) {
        moving[static_cast<std::size_t>(it.link)] = floating_ && !root_is_world;
        if (root_is_world) {
          if (l.mass > 0) rep_.warn("world-mass", where(l.el), "inertial of the 'world' link ignored");
          l.builder_index = 0;
          l.mass = 0;
          continue;
        }
      } else {
        const UJoint& j = joints_[static_cast<std::size_t>(it.joint)];
        const int p = link_index_[j.parent];
        parent_of[static_cast<std::size_t>(it.link)] = p;
        moving[static_cast<std::size_t>(it.link)] = moving[static_cast<std::size_t>(p)] ||
                                                    (j.type != "fixed" && j.type != "planar");
      }
    }
    // Mass of each kinematic tree (subtree of a child of the world).
    std::vector<double> subtree(links_.size(), 0.0);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const std::size_t l = static_cast<std::size_t>(it->link);
      subtree[l] += links_[l].mass;
      if (parent_of[l] >= 0) subtree[static_cast<std::size_t>(parent_of[l])] += subtree[l];
    }
    // A moving link with no mass in its subtree makes the mass matrix singular: it and every
    // link below it (all massless) get ImportOptions::massless_link_mass/_inertia, MuJoCo's
    // boundmass/boundinertia (docs/model-import.md, "URDF inertia repairs"), or it is an error.
    std::vector<int> bounded(links_.size(), 0);
    bool any_bounded = false;
    for (const Item& it : order) {
      const std::size_t l = static_cast<std::size_t>(it.link);
      const bool has_dofs = it.joint >= 0 ? (joints_[static_cast<std::size_t>(it.joint)].type != "fixed" &&
                                             joints_[static_cast<std::size_t>(it.joint)].type != "planar")
                                          : floating_ && !root_is_world;
      if (parent_of[l] >= 0 && bounded[static_cast<std::size_t>(parent_of[l])]) {
        bounded[l] = 1;
      } else if (has_dofs && !(subtree[l] > 0)) {
        if (!(opt_.massless_link_mass > 0))
          fail(where(links_[l].el), "link '" + links_[l].name +
                                        "' moves but has no mass in its subtree (add an <inertial>; "
                                        "ImportOptions::massless_link_mass is 0)");
        bounded[l] = 1;
      }
      if (!bounded[l]) continue;
      any_bounded = true;
      ULink& k = links_[l];
      k.mass = opt_.massless_link_mass;
      // Principal moments raised to at least the bound (MuJoCo's boundinertia); a massless link
      // usually has none, and then the tensor is bi 1.
      const double bi = std::max(opt_.massless_link_inertia, 0.0);
      Eigen::Matrix3d T;
      T << k.inertia[0], k.inertia[3], k.inertia[4], k.inertia[3], k.inertia[1], k.inertia[5], k.inertia[4],
          k.inertia[5], k.inertia[2];
      const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es(T);
      T = es.eigenvectors() * es.eigenvalues().cwiseMax(bi).asDiagonal() * es.eigenvectors().transpose();
      k.inertia = {T(0, 0), T(1, 1), T(2, 2), T(0, 1), T(0, 2), T(1, 2)};
      rep_.warn("massless-bound", where(k.el),
                "massless moving link given mass " + fmt(opt_.massless_link_mass) + " kg and inertia " + fmt(bi) +
                    " kg m^2 (ImportOptions::massless_link_mass/_inertia, as MuJoCo's boundmass/boundinertia): "
                    "no mass in its subtree");
    }
    if (any_bounded) {
      std::fill(subtree.begin(), subtree.end(), 0.0);
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const std::size_t l = static_cast<std::size_t>(it->link);
        subtree[l] += links_[l].mass;
        if (parent_of[l] >= 0) subtree[static_cast<std::size_t>(parent_of[l])] += subtree[l];
      }
    }
    check_singular_inertia(order, parent_of, root_is_world);
    std::vector<double> tree_mass(links_.size(), 0.0);
    for (const Item& it : order) {
      const std::size_t l = static_cast<std::size_t>(it.link);
      const int p = parent_of[l];
      const bool top = p < 0 || (root_is_world && p == roots[0]);
      tree_mass[l] = top ? subtree[l] : tree_mass[static_cast<std::size_t>(p)];
    }

    for (const Item& it : order) {
      ULink& l = links_[static_cast<std::size_t>(it.link)];
      if (it.joint < 0 && root_is_world) continue;
      BodySpec b;
      b.name = prefixed(l.name);
      b.mass = l.mass;
      b.com = l.com;
      b.inertia = l.inertia;
      if (it.joint >= 0) {
        const UJoint& j = joints_[static_cast<std::size_t>(it.joint)];
        b.parent = links_[static_cast<std::size_t>(link_index_[j.parent])].builder_index;
        b.pos = to_array(j.origin.pos);
        b.quat = to_array(j.origin.quat);
      }
      l.builder_index = builder_.add_body(b);
      if (it.joint < 0) {
        if (floating_) {
          JointSpec fj;
          fj.name = prefixed(l.name + "_floating_base");
          fj.type = kJointFree;
          builder_.add_joint(l.builder_index, fj);
        }
        continue;
      }
      const UJoint& j = joints_[static_cast<std::size_t>(it.joint)];
      if (j.type == "fixed" || j.type == "planar") continue;
      JointSpec s;
      s.name = prefixed(j.name);
      s.damping = j.damping;
      s.frictionloss = j.friction;  // dry friction: SAP box row (docs/sap-math.md §13)
      if (j.type == "floating") {
        if (b.parent != 0)
          fail(where(j.el), "joint '" + j.name + "': a floating joint must attach a link to the world");
        s.type = kJointFree;
      } else if (j.type == "spherical") {
        s.type = kJointBall;
      } else {
        s.type = j.type == "prismatic" ? kJointSlide : kJointHinge;
        s.axis = j.axis;
        s.limited = j.type != "continuous" && j.has_limit;
        if (s.limited) s.range = {j.lower, j.upper};
      }
      builder_.add_joint(l.builder_index, s);
    }

    // <mimic>: q_j = multiplier q_m + offset, MuJoCo's joint equality with polycoef
    // (offset, multiplier) about qpos0 = 0 (URDF joints have zero reference positions).
    for (const UJoint& j : joints_) {
      if (!j.mimic) continue;
      const int me = builder_.find_joint(prefixed(j.name));
      const int other = builder_.find_joint(prefixed(j.mimic_joint));
      if (other < 0) {
        bool exists = false;
        for (const UJoint& k : joints_) exists = exists || k.name == j.mimic_joint;
        const std::string why = "joint '" + j.name + "': <mimic> joint '" + j.mimic_joint + "' " +
                                (exists ? "has no degree of freedom (fixed)" : "does not exist");
        if (!opt_.drop_unsupported) fail(where(j.mimic), why + " (ImportOptions::drop_unsupported drops the <mimic>)");
        rep_.warn("dropped:mimic-target", where(j.mimic), "<mimic> dropped: " + why);
        continue;
      }
      if (other == me) fail(where(j.mimic), "joint '" + j.name + "': <mimic> of itself");
      const JointSpec& os = builder_.joint(other);
      if (os.type != kJointHinge && os.type != kJointSlide)
        fail(where(j.mimic), "joint '" + j.name + "': <mimic> joint '" + j.mimic_joint + "' must have one dof");
      EqualitySpec eq;
      eq.name = prefixed(j.name + "_mimic");
      eq.type = kEqJoint;
      eq.obj1 = me;
      eq.obj2 = other;
      eq.polycoef = {j.mimic_offset, j.mimic_multiplier, 0, 0, 0};
      builder_.add_equality(eq);
    }

    // Geoms with the contact rule of docs/model-import.md (MuJoCo's default solref 0.02 1); the
    // mass scale is the kinematic tree of the link.
    const double solref[2] = {0.02, 1.0};
    for (const Item& it : order) {
      ULink& l = links_[static_cast<std::size_t>(it.link)];
      const bool is_static = !moving[static_cast<std::size_t>(it.link)];
      for (auto& [el, g] : l.geoms) {
        const import::ContactMaterial cm = import::contact_material(solref,
                                                                    tree_mass[static_cast<std::size_t>(it.link)],
                                                                    is_static);
        g.stiffness = opt_.default_stiffness > 0 ? opt_.default_stiffness : cm.stiffness;
        g.dissipation = opt_.default_dissipation >= 0 ? opt_.default_dissipation : cm.dissipation;
        if (!is_static && !(g.stiffness > 0)) g.stiffness = import::kStaticStiffness;
        if (g.type == kGeomMesh) {
          const std::string& key = geom_mesh_.at(el);
          auto id = mesh_ids_.find(key);
          if (id == mesh_ids_.end()) {
            MeshSpec spec = meshes_.at(key).hull;
            spec.name = prefixed(spec.name + "_" + std::to_string(mesh_ids_.size()));
            id = mesh_ids_.emplace(key, builder_.add_mesh(spec)).first;
          }
          g.dataid = id->second;
        }
        builder_.add_geom(l.builder_index, g);
      }
    }
  }
};

}  // namespace

void add_urdf(const std::string& path, ModelBuilder& builder, ImportReport* report, const ImportOptions& options,
              bool floating_base) {
  UrdfImporter imp(builder, options, floating_base);
  imp.run(path, report);
}

void add_urdf_string(const std::string& xml, const std::string& source, ModelBuilder& builder, ImportReport* report,
                     const ImportOptions& options, bool floating_base) {
  UrdfImporter imp(builder, options, floating_base);
  imp.run(source.empty() ? std::string("<string>") : source, report, &xml);
}

}  // namespace sap
