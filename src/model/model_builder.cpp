#include "sap/model_builder.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include <Eigen/Dense>

#include "kernels/fluid_forces.hpp"
#include "kernels/kinematics.hpp"
#include "kernels/passive_forces.hpp"
#include "kernels/spatial_tendon.hpp"
#include "sap/dynamics.hpp"
#include "sap/math/quat.hpp"

namespace sap {

namespace {
// Every tendon's length at configuration q (fixed: sum coef q; spatial: kernels/spatial_tendon.hpp
// on the body poses of q).
std::vector<double> tendon_lengths(const Model& model, const std::vector<double>& q) {
  const ModelView m = model.view();
  std::vector<double> xpos(3 * static_cast<std::size_t>(m.nbody)), xquat(4 * static_cast<std::size_t>(m.nbody)),
      xmat(9 * static_cast<std::size_t>(m.nbody)), xipos(3 * static_cast<std::size_t>(m.nbody)),
      xanchor(3 * static_cast<std::size_t>(m.njnt)), xaxis(3 * static_cast<std::size_t>(m.njnt));
  forward_kinematics<double>(m, q.data(), xpos.data(), xquat.data(), xmat.data(), xipos.data(), xanchor.data(),
                             xaxis.data());
  std::vector<double> L(static_cast<std::size_t>(m.ntendon), 0.0);
  for (int t = 0; t < m.ntendon; ++t) {
    const int adr = m.tendon_adr[t], num = m.tendon_num[t];
    if (m.wrap_type[adr] != kWrapJoint) {
      L[static_cast<std::size_t>(t)] = spatial_tendon_path<double>(
          spatial_path_view(m), adr, num, xpos.data(), xmat.data(),
          [](const PathPoint<double>&, const PathPoint<double>&, const Vec3<double>&, double) {});
      continue;
    }
    for (int k = adr; k < adr + num; ++k)
      L[static_cast<std::size_t>(t)] += m.wrap_prm[k] * q[static_cast<std::size_t>(m.jnt_qposadr[m.wrap_objid[k]])];
  }
  return L;
}

// The tendons' moment arms at qpos0 (fp64, one world; ten_moment's layout): what the compiler's
// qpos0 quantities (tendon armature in M, actuator_acc0) are formed from.
std::vector<double> tendon_moments_qpos0(const Model& model) {
  const ModelView m = model.view();
  const std::size_t nb = static_cast<std::size_t>(m.nbody), nj = static_cast<std::size_t>(m.njnt);
  std::vector<double> xpos(3 * nb), xquat(4 * nb), xmat(9 * nb), xipos(3 * nb), xanchor(3 * nj), xaxis(3 * nj),
      cinert(10 * nb), cdof(6 * static_cast<std::size_t>(m.nv)), ten_length(static_cast<std::size_t>(m.ntendata)),
      ten_moment(static_cast<std::size_t>(m.ntendata) * static_cast<std::size_t>(m.nv));
  forward_kinematics<double>(m, model.qpos0.data(), xpos.data(), xquat.data(), xmat.data(), xipos.data(), xanchor.data(),
                             xaxis.data());
  com_quantities<double>(m, xpos.data(), xmat.data(), xipos.data(), xanchor.data(), xaxis.data(), cinert.data(), cdof.data());
  SerialTeam one;
  tendon_kinematics<double>(one, m, xpos.data(), xmat.data(), cdof.data(), ten_length.data(), ten_moment.data());
  return ten_moment;
}

// MuJoCo's mass matrix at qpos0 (qM, what its compiler's dof_invweight0 and actuator_acc0 use):
// M with the dofs' armature plus every tendon's armature a J_t^T J_t.
Eigen::MatrixXd mass_matrix_qpos0(const Model& model) {
  DynamicsEvaluator ev(model);
  ev.compute(model.qpos0.data());
  Eigen::MatrixXd M = ev.mass_matrix();
  const ModelView m = model.view();
  bool any = false;
  for (int t = 0; t < m.ntendon; ++t) any |= m.tendon_armature[t] != 0;
  if (!any) return M;
  const std::vector<double> ten_moment = tendon_moments_qpos0(model);
  for (int t = 0; t < m.ntendon; ++t) {
    if (m.tendon_armature[t] == 0) continue;
    Eigen::VectorXd J = Eigen::VectorXd::Zero(m.nv);
    for_each_tendon_dof(m, t, ten_moment.data(), [&](int dof, double c) { J[dof] += c; });
    M += m.tendon_armature[t] * J * J.transpose();
  }
  return M;
}
}  // namespace

GeomMass geom_mass_properties(int type, const Vec3d& s, double rho) {
  GeomMass g;
  const double pi = kPi;
  switch (type) {
    case kGeomSphere: {
      g.mass = rho * 4.0 / 3.0 * pi * s[0] * s[0] * s[0];
      const double i = 0.4 * g.mass * s[0] * s[0];
      g.inertia_diag = {i, i, i};
      break;
    }
    case kGeomBox: {
      g.mass = rho * 8.0 * s[0] * s[1] * s[2];
      g.inertia_diag = {g.mass / 3.0 * (s[1] * s[1] + s[2] * s[2]), g.mass / 3.0 * (s[0] * s[0] + s[2] * s[2]),
                        g.mass / 3.0 * (s[0] * s[0] + s[1] * s[1])};
      break;
    }
    case kGeomCylinder: {
      const double r = s[0], h = s[1];
      g.mass = rho * pi * r * r * 2.0 * h;
      const double ixx = g.mass * (3.0 * r * r + 4.0 * h * h) / 12.0;
      g.inertia_diag = {ixx, ixx, 0.5 * g.mass * r * r};
      break;
    }
    case kGeomCapsule: {
      // Cylinder of half-length h plus two hemispheres; hemisphere com sits 3r/8 from its face.
      const double r = s[0], h = s[1];
      const double mc = rho * pi * r * r * 2.0 * h;
      const double ms = rho * 4.0 / 3.0 * pi * r * r * r;
      g.mass = mc + ms;
      const double izz = 0.5 * mc * r * r + 0.4 * ms * r * r;
      const double ixx = mc * (r * r / 4.0 + h * h / 3.0) + ms * (0.4 * r * r + h * h + 0.75 * h * r);
      g.inertia_diag = {ixx, ixx, izz};
      break;
    }
    case kGeomEllipsoid: {
      const double a = s[0], b = s[1], c = s[2];
      g.mass = rho * 4.0 / 3.0 * pi * a * b * c;
      g.inertia_diag = {0.2 * g.mass * (b * b + c * c), 0.2 * g.mass * (a * a + c * c), 0.2 * g.mass * (a * a + b * b)};
      break;
    }
    default: break;  // planes and heightfields have no mass; meshes: from the asset (importer)
  }
  return g;
}

double geom_bounding_radius(int type, const Vec3d& s) {
  switch (type) {
    case kGeomSphere: return s[0];
    case kGeomCapsule: return s[0] + s[1];
    case kGeomCylinder: return std::sqrt(s[0] * s[0] + s[1] * s[1]);
    case kGeomBox: return std::sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
    case kGeomEllipsoid: return std::max(s[0], std::max(s[1], s[2]));
    default: return 0.0;  // planes, heightfields (unbounded here); meshes: from their vertices
  }
}

int ModelBuilder::add_mesh(const MeshSpec& mesh) {
  const std::string who = "mesh '" + mesh.name + "'";
  if (mesh.vert.size() < 4 || mesh.face.size() < 4)
    throw std::runtime_error(who + ": a convex mesh needs at least 4 vertices and 4 faces, got " +
                             std::to_string(mesh.vert.size()) + " and " + std::to_string(mesh.face.size()));
  for (const auto& v : mesh.vert)
    if (!std::isfinite(v[0]) || !std::isfinite(v[1]) || !std::isfinite(v[2]))
      throw std::runtime_error(who + ": vertex is not finite");
  for (const auto& f : mesh.face)
    for (int k : f)
      if (k < 0 || k >= static_cast<int>(mesh.vert.size()))
        throw std::runtime_error(who + ": face index " + std::to_string(k) + " out of range");
  meshes_.push_back(mesh);
  return nmesh() - 1;
}

int ModelBuilder::add_hfield(const HfieldSpec& h) {
  const std::string who = "hfield '" + h.name + "'";
  if (h.nrow < 2 || h.ncol < 2 || h.data.size() != static_cast<std::size_t>(h.nrow) * static_cast<std::size_t>(h.ncol))
    throw std::runtime_error(who + ": needs nrow, ncol >= 2 and nrow * ncol elevations");
  if (!(h.size[0] > 0 && h.size[1] > 0 && h.size[2] >= 0 && h.size[3] >= 0))
    throw std::runtime_error(who + ": size must be (x > 0, y > 0, top >= 0, base >= 0)");
  for (double z : h.data)
    if (!(z >= 0 && z <= 1)) throw std::runtime_error(who + ": elevation data must lie in [0, 1]");
  hfields_.push_back(h);
  return static_cast<int>(hfields_.size()) - 1;
}

// Flattens meshes (with the vertex adjacency of their triangles) and heightfields.
void ModelBuilder::finalize_meshes(Model& m) const {
  for (const MeshSpec& mesh : meshes_) {
    const int nv = static_cast<int>(mesh.vert.size());
    m.mesh_names.push_back(mesh.name);
    m.mesh_vertadr.push_back(m.nmeshvert);
    m.mesh_vertnum.push_back(nv);
    m.mesh_faceadr.push_back(m.nmeshface);
    m.mesh_facenum.push_back(static_cast<int>(mesh.face.size()));
    std::vector<std::set<int>> nbr(static_cast<std::size_t>(nv));
    for (const auto& f : mesh.face) {
      m.mesh_face.insert(m.mesh_face.end(), f.begin(), f.end());
      for (int k = 0; k < 3; ++k) {
        nbr[static_cast<std::size_t>(f[k])].insert(f[(k + 1) % 3]);
        nbr[static_cast<std::size_t>(f[k])].insert(f[(k + 2) % 3]);
      }
    }
    for (int v = 0; v < nv; ++v) {
      const auto& p = mesh.vert[static_cast<std::size_t>(v)];
      m.mesh_vert.insert(m.mesh_vert.end(), p.begin(), p.end());
      m.mesh_vert_edgeadr.push_back(m.nmeshedge);
      m.mesh_vert_edgenum.push_back(static_cast<int>(nbr[static_cast<std::size_t>(v)].size()));
      for (int u : nbr[static_cast<std::size_t>(v)]) m.mesh_edge.push_back(u);
      m.nmeshedge += static_cast<int>(nbr[static_cast<std::size_t>(v)].size());
    }
    m.nmeshvert += nv;
    m.nmeshface += static_cast<int>(mesh.face.size());
    ++m.nmesh;
  }
  for (const HfieldSpec& h : hfields_) {
    m.hfield_names.push_back(h.name);
    m.hfield_size.insert(m.hfield_size.end(), h.size.begin(), h.size.end());
    m.hfield_nrow.push_back(h.nrow);
    m.hfield_ncol.push_back(h.ncol);
    m.hfield_adr.push_back(m.nhfielddata);
    m.hfield_data.insert(m.hfield_data.end(), h.data.begin(), h.data.end());
    m.nhfielddata += static_cast<int>(h.data.size());
    ++m.nhfield;
  }
}

ModelBuilder::ModelBuilder() {
  BodySpec world;
  world.name = "world";
  world.parent = -1;
  bodies_.push_back(world);
}

int ModelBuilder::add_body(const BodySpec& b) {
  if (b.parent < 0 || b.parent >= nbody())
    throw std::runtime_error("body '" + b.name + "': parent index " + std::to_string(b.parent) +
                             " does not name an existing body");
  bodies_.push_back(b);
  return nbody() - 1;
}

int ModelBuilder::add_joint(int body, const JointSpec& j) {
  if (body <= 0 || body >= nbody())
    throw std::runtime_error("joint '" + j.name + "': body index " + std::to_string(body) + " is not a movable body");
  joints_.push_back({body, j});
  return njoint() - 1;
}

int ModelBuilder::add_geom(int body, const GeomSpec& g) {
  if (body < 0 || body >= nbody())
    throw std::runtime_error("geom '" + g.name + "': body index " + std::to_string(body) + " out of range");
  geoms_.push_back({body, g});
  return ngeom() - 1;
}

int ModelBuilder::add_actuator(const ActuatorSpec& a) {
  actuators_.push_back(a);
  return static_cast<int>(actuators_.size()) - 1;
}

int ModelBuilder::add_tendon(const TendonSpec& t) {
  tendons_.push_back(t);
  return static_cast<int>(tendons_.size()) - 1;
}

int ModelBuilder::add_equality(const EqualitySpec& e) {
  equalities_.push_back(e);
  return static_cast<int>(equalities_.size()) - 1;
}

int ModelBuilder::add_site(const SiteSpec& s) {
  sites_.push_back(s);
  return static_cast<int>(sites_.size()) - 1;
}

int ModelBuilder::find_site(const std::string& name) const {
  for (std::size_t i = 0; i < sites_.size(); ++i)
    if (sites_[i].name == name) return static_cast<int>(i);
  return -1;
}

int ModelBuilder::find_tendon(const std::string& name) const {
  for (std::size_t i = 0; i < tendons_.size(); ++i)
    if (tendons_[i].name == name) return static_cast<int>(i);
  return -1;
}

int ModelBuilder::find_body(const std::string& name) const {
  for (int i = 0; i < nbody(); ++i)
    if (bodies_[static_cast<std::size_t>(i)].name == name) return i;
  return -1;
}
int ModelBuilder::find_joint(const std::string& name) const {
  for (int i = 0; i < njoint(); ++i)
    if (joints_[static_cast<std::size_t>(i)].spec.name == name) return i;
  return -1;
}

int ModelBuilder::find_geom(const std::string& name) const {
  for (int i = 0; i < ngeom(); ++i)
    if (geoms_[static_cast<std::size_t>(i)].spec.name == name) return i;
  return -1;
}

namespace {

template <class T>
void append(std::vector<T>& v, std::initializer_list<T> xs) {
  v.insert(v.end(), xs);
}

// Sum of the mass properties of a body's geoms, in the body frame.
void inertia_from_geoms(const std::vector<const GeomSpec*>& geoms, const std::vector<MeshSpec>& meshes, double& mass,
                        Vec3d& com, std::array<double, 6>& inertia) {
  struct Part {
    double m;
    Vec3<double> p;
    Mat3<double> I;  // about the part's center, body axes
  };
  std::vector<Part> parts;
  mass = 0;
  Vec3<double> c = Vec3<double>::zero();
  for (const GeomSpec* g : geoms) {
    if (g->type == kGeomPlane) continue;
    GeomMass gm = geom_mass_properties(g->type, g->size, g->density);
    if (g->type == kGeomMesh && g->dataid >= 0 && g->dataid < static_cast<int>(meshes.size())) {
      // The mesh's own solid (MeshSpec::volume, ::inertia about the mesh origin, mesh axes).
      const MeshSpec& ms = meshes[static_cast<std::size_t>(g->dataid)];
      gm.mass = g->density * ms.volume;
      for (int k = 0; k < 3; ++k) gm.inertia_diag[static_cast<std::size_t>(k)] = g->density * ms.inertia[static_cast<std::size_t>(k)];
    }
    if (g->mass >= 0) {  // explicit mass: scale the uniform-density result
      const double scale = gm.mass > 0 ? g->mass / gm.mass : 0.0;
      gm.mass = g->mass;
      for (double& x : gm.inertia_diag) x *= scale;
    }
    const Mat3<double> R = to_matrix(normalized(Quat<double>::load(g->quat.data())));
    const Mat3<double> I = R * Mat3<double>::diagonal(Vec3<double>::load(gm.inertia_diag.data())) * transpose(R);
    parts.push_back({gm.mass, Vec3<double>::load(g->pos.data()), I});
    mass += gm.mass;
    c += gm.mass * Vec3<double>::load(g->pos.data());
  }
  if (mass > 0) c *= 1.0 / mass;
  Mat3<double> Ic = Mat3<double>::zero();
  for (const Part& p : parts) {
    const Vec3<double> d = p.p - c;
    // Parallel axis: I += m (|d|^2 1 - d d^T)
    Mat3<double> shift = Mat3<double>::zero();
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k) shift(r, k) = (r == k ? dot(d, d) : 0.0) - d[r] * d[k];
    Ic = Ic + p.I + p.m * shift;
  }
  com = {c[0], c[1], c[2]};
  inertia = {Ic(0, 0), Ic(1, 1), Ic(2, 2), Ic(0, 1), Ic(0, 2), Ic(1, 2)};
}

}  // namespace

// Fluid arrays (MuJoCo's mj_fluid): every body with mass gets the inertia-box model, or the
// ellipsoid model when one of its geoms asks for it; the inertia box needs the body's principal
// moments and axes: the body axes when the inertia tensor is diagonal there (MuJoCo's frame for
// a body of one geom whose axes are the body's, up to a permutation and signs, which leave the
// model unchanged), else the eigenvectors of the tensor (with a repeated moment the eigenvectors
// in its plane are a choice, possibly not MuJoCo's).
void ModelBuilder::finalize_fluid(Model& m) const {
  m.fluid_density = fluid_density_;
  m.fluid_viscosity = fluid_viscosity_;
  m.fluid_wind = fluid_wind_;
  if (!(fluid_density_ > 0 || fluid_viscosity_ > 0)) return;
  m.nfluidbody = m.nbody;
  m.body_fluid_mode.assign(static_cast<std::size_t>(m.nbody), kFluidNone);
  m.body_fluid_inertia.assign(3 * static_cast<std::size_t>(m.nbody), 0.0);
  m.body_fluid_iquat.assign(4 * static_cast<std::size_t>(m.nbody), 0.0);
  bool any_ellipsoid = false;
  for (const GeomEntry& ge : geoms_) any_ellipsoid |= ge.spec.fluid_ellipsoid;
  if (any_ellipsoid) {
    m.nfluidgeom = m.ngeom;
    m.geom_fluid.assign(static_cast<std::size_t>(kFluidCoefs) * static_cast<std::size_t>(m.ngeom), 0.0);
  }
  for (int g = 0; g < static_cast<int>(geoms_.size()); ++g) {
    const GeomSpec& s = geoms_[static_cast<std::size_t>(g)].spec;
    if (!s.fluid_ellipsoid) continue;
    double* c = &m.geom_fluid[static_cast<std::size_t>(kFluidCoefs) * static_cast<std::size_t>(g)];
    c[0] = 1;
    for (int k = 0; k < 5; ++k) c[1 + k] = s.fluid_coef[static_cast<std::size_t>(k)];
    const Vec3<double> axes = fluid_semi_axes<double>(s.type, s.size.data());
    ellipsoid_virtual_mass(axes.v, c + 6, c + 9);
  }
  for (int b = 1; b < m.nbody; ++b) {
    const std::size_t ub = static_cast<std::size_t>(b);
    if (m.body_mass[ub] < kMjMinVal) continue;
    bool ellipsoid = false;
    for (int g = 0; g < m.nfluidgeom; ++g)
      ellipsoid |= m.geom_bodyid[static_cast<std::size_t>(g)] == b &&
                   m.geom_fluid[static_cast<std::size_t>(kFluidCoefs) * static_cast<std::size_t>(g)] > 0;
    m.body_fluid_mode[ub] = ellipsoid ? kFluidEllipsoid : kFluidInertiaBox;
    const double* I = &m.body_inertia[6 * ub];
    Quat<double> q = Quat<double>::identity();
    double moments[3] = {I[0], I[1], I[2]};
    if (I[3] != 0 || I[4] != 0 || I[5] != 0) {
      Eigen::Matrix3d T;
      T << I[0], I[3], I[4], I[3], I[1], I[5], I[4], I[5], I[2];
      const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(T);
      Eigen::Matrix3d R = eig.eigenvectors();
      if (R.determinant() < 0) R.col(2) *= -1;
      Mat3<double> Rm;
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) Rm(r, c) = R(r, c);
      q = from_matrix(Rm);
      for (int k = 0; k < 3; ++k) moments[k] = eig.eigenvalues()[k];
    }
    for (int k = 0; k < 3; ++k) m.body_fluid_inertia[3 * ub + static_cast<std::size_t>(k)] = moments[k];
    q.store(&m.body_fluid_iquat[4 * ub]);
  }
}

// Joints with a springdamper: MuJoCo's compile-time stiffness and damping from the joint's
// inverse inertia at qpos0 (dof_invweight0 of the mass matrix with armature).
void ModelBuilder::finalize_springdampers(Model& m, const std::vector<int>& joint_final) const {
  bool any = false;
  for (const JointEntry& je : joints_) any |= je.spec.springdamper[0] > 0;
  if (!any) return;
  const Eigen::Matrix<double, -1, -1, Eigen::RowMajor> Minv = mass_matrix_qpos0(m).inverse();
  std::vector<double> invweight(static_cast<std::size_t>(m.nv));
  dof_invweight0(m, Minv.data(), invweight.data());
  for (std::size_t jb = 0; jb < joints_.size(); ++jb) {
    const JointSpec& js = joints_[jb].spec;
    if (!(js.springdamper[0] > 0)) continue;
    const int j = joint_final[jb];
    const int a = m.jnt_dofadr[static_cast<std::size_t>(j)], n = joint_nv(m.jnt_type[static_cast<std::size_t>(j)]);
    double k, b;
    springdamper_gains(js.springdamper[0], js.springdamper[1], &invweight[static_cast<std::size_t>(a)], n, &k, &b);
    m.jnt_stiffness[static_cast<std::size_t>(j)] = js.springdamper_spring ? k : 0.0;
    for (int i = a; i < a + n; ++i) m.dof_damping[static_cast<std::size_t>(i)] = js.springdamper_damper ? b : 0.0;
  }
  m.validate();
}

// Tendon lengths that need the kinematics: the tendon equalities' lengths at qpos0 and the
// rest lengths given as MuJoCo's springlength -1 (the length at qpos_spring: hinge and slide
// joints at their springref).
void ModelBuilder::finalize_tendon_lengths(Model& m) const {
  if (m.ntendon == 0) return;
  const std::vector<double> L0 = tendon_lengths(m, m.qpos0);
  for (int e = 0; e < m.neq; ++e) {
    if (m.eq_type[static_cast<std::size_t>(e)] != kEqTendon) continue;
    double* data = &m.eq_data[static_cast<std::size_t>(kEqDataSize) * static_cast<std::size_t>(e)];
    const int t1 = m.eq_obj1id[static_cast<std::size_t>(e)], t2 = m.eq_obj2id[static_cast<std::size_t>(e)];
    data[5] = L0[static_cast<std::size_t>(t1)];
    data[6] = t2 >= 0 ? L0[static_cast<std::size_t>(t2)] : 0.0;
  }
  bool any = false;
  for (const TendonSpec& t : tendons_) any |= t.lengthspring_at_springref;
  if (!any) return;
  std::vector<double> q_spring = m.qpos0;
  for (int j = 0; j < m.njnt; ++j)
    if (m.jnt_type[static_cast<std::size_t>(j)] == kJointHinge || m.jnt_type[static_cast<std::size_t>(j)] == kJointSlide)
      q_spring[static_cast<std::size_t>(m.jnt_qposadr[static_cast<std::size_t>(j)])] = m.jnt_springref[static_cast<std::size_t>(j)];
  const std::vector<double> Ls = tendon_lengths(m, q_spring);
  for (std::size_t t = 0; t < tendons_.size(); ++t)
    if (tendons_[t].lengthspring_at_springref) m.tendon_lengthspring[2 * t] = m.tendon_lengthspring[2 * t + 1] = Ls[t];
}

// The sizes that launch stage 1b (kernels/actuation.hpp) and its per-world arrays, 0 for a
// model without its features, so that such a model's kernels and memory stay as they were.
void ModelBuilder::finalize_stage1b_sizes(Model& m) const {
  bool explicit_forces = m.nfluidbody > 0 || m.ngravcomp > 0, tendon_A = false;
  for (int u = 0; u < m.nu; ++u) {
    const int t = m.actuator_tendonid[static_cast<std::size_t>(u)], type = m.actuator_type[static_cast<std::size_t>(u)];
    explicit_forces |= type == kActMuscle || (type == kActMotor && t >= 0 && tendon_is_spatial(m.view(), t));
  }
  for (int j = 0; j < m.njnt; ++j) {
    const int type = m.jnt_type[static_cast<std::size_t>(j)];
    explicit_forces |= (type == kJointBall || type == kJointFree) && m.jnt_stiffness[static_cast<std::size_t>(j)] != 0;
  }
  for (int t = 0; t < m.ntendon; ++t) {
    if (!tendon_is_spatial(m.view(), t)) continue;
    const std::size_t ut = static_cast<std::size_t>(t);
    explicit_forces |= m.tendon_stiffness[ut] != 0 || m.tendon_damping[ut] != 0;
    tendon_A |= m.tendon_damping[ut] != 0 || m.tendon_armature[ut] != 0;
  }
  m.nqfrc_extra = explicit_forces ? m.nv : 0;
  m.nten_A = tendon_A ? m.nv_pad * m.nv_pad : 0;
}

// acc0 of every actuator with dynamics (MuJoCo's set0): |M(qpos0)^-1 moment(qpos0)|, the
// acceleration a unit actuator force gives at the reference configuration; a muscle with
// force < 0 has the peak force scale / acc0.
void ModelBuilder::finalize_acc0(Model& model) const {
  if (model.nuact == 0) return;
  const Eigen::LDLT<Eigen::MatrixXd> M(mass_matrix_qpos0(model));
  const ModelView m = model.view();
  const std::vector<double> ten_moment = tendon_moments_qpos0(model);
  for (int u = 0; u < m.nu; ++u) {
    Eigen::VectorXd moment = Eigen::VectorXd::Zero(m.nv);
    const int t = m.actuator_tendonid[u];
    if (t < 0) moment[m.actuator_dofadr[u]] = m.actuator_gear[u];
    else for_each_tendon_dof(m, t, ten_moment.data(), [&](int dof, double c) { moment[dof] = m.actuator_gear[u] * c; });
    model.actuator_acc0[static_cast<std::size_t>(u)] = M.solve(moment).norm();
  }
}

Model ModelBuilder::finalize() const {
  Model m;
  m.gravity = gravity_;
  m.timestep = timestep_;
  m.contact_rule = contact_rule_;
  m.nbody = nbody();

  // Joints grouped by body in body order (stable: a body's joints keep their order).
  std::vector<int> jorder(joints_.size());
  for (std::size_t i = 0; i < jorder.size(); ++i) jorder[i] = static_cast<int>(i);
  std::stable_sort(jorder.begin(), jorder.end(), [&](int a, int b) {
    return joints_[static_cast<std::size_t>(a)].body < joints_[static_cast<std::size_t>(b)].body;
  });
  std::vector<int> joint_final(joints_.size());
  for (std::size_t i = 0; i < jorder.size(); ++i)
    joint_final[static_cast<std::size_t>(jorder[i])] = static_cast<int>(i);

  std::vector<std::vector<const GeomSpec*>> body_geoms(bodies_.size());
  for (const GeomEntry& g : geoms_) body_geoms[static_cast<std::size_t>(g.body)].push_back(&g.spec);

  // Bodies.
  std::vector<int> body_static(bodies_.size(), 0);
  std::size_t jcursor = 0;
  for (int b = 0; b < m.nbody; ++b) {
    const BodySpec& bs = bodies_[static_cast<std::size_t>(b)];
    m.body_names.push_back(bs.name);
    m.body_parentid.push_back(b == 0 ? 0 : bs.parent);
    m.body_rootid.push_back(b == 0 ? 0 : (bs.parent == 0 ? b : m.body_rootid[static_cast<std::size_t>(bs.parent)]));
    m.body_jntadr.push_back(m.njnt);
    int nj = 0, nd = 0;
    const int dofadr = m.nv;
    while (jcursor < jorder.size() && joints_[static_cast<std::size_t>(jorder[jcursor])].body == b) {
      const JointSpec& js = joints_[static_cast<std::size_t>(jorder[jcursor])].spec;
      if (js.type < kJointFree || js.type > kJointHinge)
        throw std::runtime_error("joint '" + js.name + "': unknown joint type " + std::to_string(js.type));
      m.jnt_names.push_back(js.name);
      m.jnt_type.push_back(js.type);
      m.jnt_bodyid.push_back(b);
      m.jnt_qposadr.push_back(m.nq);
      m.jnt_dofadr.push_back(m.nv);
      append(m.jnt_pos, {js.pos[0], js.pos[1], js.pos[2]});
      append(m.jnt_axis, {js.axis[0], js.axis[1], js.axis[2]});
      m.jnt_qpos0.push_back(js.qpos0);
      m.jnt_limited.push_back(js.limited ? 1 : 0);
      append(m.jnt_range, {js.range[0], js.range[1]});
      m.jnt_stiffness.push_back(js.stiffness);
      m.jnt_springref.push_back(js.springref);
      // Default configuration.
      if (js.type == kJointFree) {
        // World pose of the body at the reference configuration of its (world) parent.
        append(m.qpos0, {bs.pos[0], bs.pos[1], bs.pos[2], bs.quat[0], bs.quat[1], bs.quat[2], bs.quat[3]});
      } else if (js.type == kJointBall) {
        append(m.qpos0, {1.0, 0.0, 0.0, 0.0});
      } else {
        m.qpos0.push_back(js.qpos0);
      }
      for (int k = 0; k < joint_nv(js.type); ++k) {
        m.dof_bodyid.push_back(b);
        m.dof_jntid.push_back(m.njnt);
        m.dof_armature.push_back(js.armature);
        m.dof_damping.push_back(js.damping);
        m.dof_frictionloss.push_back(js.frictionloss);
      }
      m.nq += joint_nq(js.type);
      m.nv += joint_nv(js.type);
      nd += joint_nv(js.type);
      ++m.njnt;
      ++nj;
      ++jcursor;
    }
    m.body_jntnum.push_back(nj);
    m.body_dofadr.push_back(nd > 0 ? dofadr : -1);
    m.body_dofnum.push_back(nd);
    body_static[static_cast<std::size_t>(b)] = b == 0 || (nd == 0 && body_static[static_cast<std::size_t>(bs.parent)]);

    append(m.body_pos, {bs.pos[0], bs.pos[1], bs.pos[2]});
    const Quat<double> q = normalized(Quat<double>::load(bs.quat.data()));
    append(m.body_quat, {q.w, q.x, q.y, q.z});
    double mass = bs.mass;
    Vec3d com = bs.com;
    std::array<double, 6> inertia = bs.inertia;
    if (bs.inertia_from_geoms) inertia_from_geoms(body_geoms[static_cast<std::size_t>(b)], meshes_, mass, com, inertia);
    append(m.body_ipos, {com[0], com[1], com[2]});
    m.body_inertia.insert(m.body_inertia.end(), inertia.begin(), inertia.end());
    m.body_mass.push_back(b == 0 ? 0.0 : mass);
    if (bs.gravcomp != 0) m.ngravcomp = 1;  // sized below
  }
  // dof_parentid: previous dof in the same body, else the last dof of the nearest ancestor with dofs.
  for (int i = 0; i < m.nv; ++i) {
    const int b = m.dof_bodyid[static_cast<std::size_t>(i)];
    if (i > m.body_dofadr[static_cast<std::size_t>(b)]) {
      m.dof_parentid.push_back(i - 1);
      continue;
    }
    int p = m.body_parentid[static_cast<std::size_t>(b)];
    while (p > 0 && m.body_dofnum[static_cast<std::size_t>(p)] == 0) p = m.body_parentid[static_cast<std::size_t>(p)];
    m.dof_parentid.push_back(
        p > 0 ? m.body_dofadr[static_cast<std::size_t>(p)] + m.body_dofnum[static_cast<std::size_t>(p)] - 1 : -1);
  }
  m.nv_pad = pad_nv(m.nv);

  // Moving bodies must carry mass somewhere in their subtree, else M is singular.
  std::vector<double> subtree_mass(m.body_mass);
  for (int b = m.nbody - 1; b > 0; --b)
    subtree_mass[static_cast<std::size_t>(m.body_parentid[static_cast<std::size_t>(b)])] +=
        subtree_mass[static_cast<std::size_t>(b)];
  for (int b = 1; b < m.nbody; ++b)
    if (m.body_dofnum[static_cast<std::size_t>(b)] > 0 && !(subtree_mass[static_cast<std::size_t>(b)] > 0))
      throw std::runtime_error("body '" + m.body_names[static_cast<std::size_t>(b)] +
                               "': a moving body needs positive mass in its subtree, got " +
                               std::to_string(subtree_mass[static_cast<std::size_t>(b)]));

  // Geoms.
  for (const GeomEntry& ge : geoms_) {
    const GeomSpec& g = ge.spec;
    m.geom_names.push_back(g.name);
    m.geom_type.push_back(g.type);
    m.geom_bodyid.push_back(ge.body);
    m.geom_contype.push_back(g.contype);
    m.geom_conaffinity.push_back(g.conaffinity);
    append(m.geom_pos, {g.pos[0], g.pos[1], g.pos[2]});
    const Quat<double> q = normalized(Quat<double>::load(g.quat.data()));
    append(m.geom_quat, {q.w, q.x, q.y, q.z});
    append(m.geom_size, {g.size[0], g.size[1], g.size[2]});
    m.geom_rbound.push_back(geom_bounding_radius(g.type, g.size));
    m.geom_margin.push_back(g.margin);
    m.geom_friction.push_back(g.friction);
    m.geom_stiffness.push_back(g.stiffness);
    m.geom_dissipation.push_back(g.dissipation);
    m.geom_hc_dissipation.push_back(g.hc_dissipation);
    m.geom_dataid.push_back(g.dataid);
    m.geom_condim.push_back(g.condim);
    m.geom_priority.push_back(g.priority);
    m.geom_friction_spin.push_back(g.friction_spin);
    m.geom_friction_roll.push_back(g.friction_roll);
    m.geom_solmix.push_back(g.solmix);
    append(m.geom_solref, {g.solref[0], g.solref[1]});
    m.geom_gap.push_back(g.gap);
    if (g.type == kGeomMesh && g.dataid >= 0 && g.dataid < nmesh()) {
      double r2 = 0;
      for (const auto& v : mesh(g.dataid).vert) r2 = std::max(r2, v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
      m.geom_rbound.back() = std::sqrt(r2);
    }
  }
  m.ngeom = static_cast<int>(geoms_.size());
  finalize_meshes(m);

  // Candidate collision pairs, ordered so that geom type(g0) <= type(g1).
  std::set<std::pair<int, int>> excluded;
  for (auto [a, b] : filter_.exclude_body_pairs) excluded.insert({std::min(a, b), std::max(a, b)});
  // Explicit pairs first (as MuJoCo lists them), ordered by geom type like the automatic ones.
  std::set<std::pair<int, int>> explicit_set;
  for (const CollisionFilter::ExplicitPair& e : filter_.explicit_pairs) {
    if (e.geom0 < 0 || e.geom0 >= m.ngeom || e.geom1 < 0 || e.geom1 >= m.ngeom || e.geom0 == e.geom1)
      throw std::runtime_error("explicit contact pair (" + std::to_string(e.geom0) + ", " + std::to_string(e.geom1) +
                               "): needs two different existing geoms");
    if (!explicit_set.insert({std::min(e.geom0, e.geom1), std::max(e.geom0, e.geom1)}).second) continue;
    int a = e.geom0, b = e.geom1;
    if (m.geom_type[static_cast<std::size_t>(a)] > m.geom_type[static_cast<std::size_t>(b)]) std::swap(a, b);
    m.pair_geom0.push_back(a);
    m.pair_geom1.push_back(b);
    m.pair_friction.push_back(e.friction);
    m.pair_margin.push_back(e.margin);
    m.pair_condim.push_back(e.condim);
    append(m.pair_friction_ext, {e.friction_ext[0], e.friction_ext[1], e.friction_ext[2], e.friction_ext[3]});
    m.pair_gap.push_back(e.gap);
    append(m.pair_solref, {e.solref[0], e.solref[1]});
  }
  for (int g0 = 0; g0 < m.ngeom; ++g0) {
    for (int g1 = g0 + 1; g1 < m.ngeom; ++g1) {
      if (explicit_set.count({g0, g1})) continue;
      const int b0 = m.geom_bodyid[static_cast<std::size_t>(g0)], b1 = m.geom_bodyid[static_cast<std::size_t>(g1)];
      if (b0 == b1) continue;
      if (body_static[static_cast<std::size_t>(b0)] && body_static[static_cast<std::size_t>(b1)]) continue;
      const int ct0 = m.geom_contype[static_cast<std::size_t>(g0)],
                ca0 = m.geom_conaffinity[static_cast<std::size_t>(g0)];
      const int ct1 = m.geom_contype[static_cast<std::size_t>(g1)],
                ca1 = m.geom_conaffinity[static_cast<std::size_t>(g1)];
      if (!(ct0 & ca1) && !(ct1 & ca0)) continue;
      if (excluded.count({std::min(b0, b1), std::max(b0, b1)})) continue;
      if (filter_.filter_parent) {
        // A body and its parent do not collide, unless the parent is the world; with
        // filter_static_parent = false (MuJoCo) also not when the parent is welded to the world.
        auto filtered = [&](int parent) {
          return parent != 0 && (filter_.filter_static_parent || !body_static[static_cast<std::size_t>(parent)]);
        };
        const int p0 = m.body_parentid[static_cast<std::size_t>(b0)],
                  p1 = m.body_parentid[static_cast<std::size_t>(b1)];
        if ((p0 == b1 && filtered(b1)) || (p1 == b0 && filtered(b0))) continue;
      }
      int a = g0, b = g1;
      if (m.geom_type[static_cast<std::size_t>(a)] > m.geom_type[static_cast<std::size_t>(b)]) std::swap(a, b);
      if (m.geom_type[static_cast<std::size_t>(a)] == kGeomPlane &&
          m.geom_type[static_cast<std::size_t>(b)] == kGeomPlane)
        continue;
      m.pair_geom0.push_back(a);
      m.pair_geom1.push_back(b);
      m.pair_friction.push_back(-1);
      m.pair_margin.push_back(-1);
      m.pair_condim.push_back(-1);
      append(m.pair_friction_ext, {-1.0, -1.0, -1.0, -1.0});
      m.pair_gap.push_back(-1);
      append(m.pair_solref, {0.0, 0.0});
    }
  }
  m.npair = static_cast<int>(m.pair_geom0.size());

  // Sites.
  for (const SiteSpec& st : sites_) {
    if (st.body < 0 || st.body >= m.nbody) throw std::runtime_error("site '" + st.name + "': body index out of range");
    m.site_names.push_back(st.name);
    m.site_bodyid.push_back(st.body);
    append(m.site_pos, {st.pos[0], st.pos[1], st.pos[2]});
    ++m.nsite;
  }

  // Tendons: fixed (joints) or spatial (a path).
  for (const TendonSpec& t : tendons_) {
    if (t.joints.empty() && t.path.empty()) throw std::runtime_error("tendon '" + t.name + "': no joints and no path");
    m.tendon_names.push_back(t.name);
    m.tendon_adr.push_back(m.nwrap);
    m.tendon_num.push_back(static_cast<int>(t.path.empty() ? t.joints.size() : t.path.size()));
    m.tendon_limited.push_back(t.limited ? 1 : 0);
    append(m.tendon_range, {t.range[0], t.range[1]});
    m.tendon_stiffness.push_back(t.stiffness);
    append(m.tendon_lengthspring, {t.lengthspring, t.has_deadband ? t.lengthspring_upper : t.lengthspring});
    m.tendon_damping.push_back(t.damping);
    m.tendon_armature.push_back(t.armature);
    m.tendon_frictionloss.push_back(t.frictionloss);
    for (const WrapSpec& e : t.path) {
      m.wrap_type.push_back(e.type);
      m.wrap_objid.push_back(e.obj);
      m.wrap_prm.push_back(e.type == kWrapPulley ? e.divisor : e.type == kWrapSite ? 0.0 : double(e.sidesite));
      ++m.nwrap;
    }
    if (!t.path.empty()) m.ntendata = static_cast<int>(tendons_.size());
    for (auto [j, c] : t.joints) {
      if (j < 0 || j >= njoint())
        throw std::runtime_error("tendon '" + t.name + "': joint index " + std::to_string(j) + " out of range");
      m.wrap_type.push_back(kWrapJoint);
      m.wrap_objid.push_back(joint_final[static_cast<std::size_t>(j)]);
      m.wrap_prm.push_back(c);
      ++m.nwrap;
    }
    ++m.ntendon;
  }

  // Equality constraints. Body poses in the reference configuration (qpos0): every joint is at
  // its reference, so a body's world pose is the product of the body_pos/body_quat chain.
  std::vector<Vec3<double>> ref_pos(static_cast<std::size_t>(m.nbody), Vec3<double>::zero());
  std::vector<Quat<double>> ref_quat(static_cast<std::size_t>(m.nbody), Quat<double>::identity());
  for (int b = 1; b < m.nbody; ++b) {
    const std::size_t p = static_cast<std::size_t>(m.body_parentid[static_cast<std::size_t>(b)]);
    const Vec3<double> bp = Vec3<double>::load(&m.body_pos[3 * static_cast<std::size_t>(b)]);
    const Quat<double> bq = Quat<double>::load(&m.body_quat[4 * static_cast<std::size_t>(b)]);
    ref_pos[static_cast<std::size_t>(b)] = ref_pos[p] + rotate(ref_quat[p], bp);
    ref_quat[static_cast<std::size_t>(b)] = normalized(ref_quat[p] * bq);
  }
  for (const EqualitySpec& e : equalities_) {
    std::array<double, kEqDataSize> data{};
    int o1 = e.obj1, o2 = e.obj2;
    if (e.type == kEqJoint) {
      if (o1 < 0 || o1 >= njoint() || o2 < -1 || o2 >= njoint())
        throw std::runtime_error("equality '" + e.name + "': joint index out of range");
      o1 = joint_final[static_cast<std::size_t>(o1)];
      o2 = o2 >= 0 ? joint_final[static_cast<std::size_t>(o2)] : -1;
      for (int k = 0; k < 5; ++k) data[static_cast<std::size_t>(k)] = e.polycoef[static_cast<std::size_t>(k)];
    } else if (e.type == kEqTendon) {
      if (o1 < 0 || o1 >= m.ntendon || o2 < -1 || o2 >= m.ntendon)
        throw std::runtime_error("equality '" + e.name + "': tendon index out of range");
      for (int k = 0; k < 5; ++k) data[static_cast<std::size_t>(k)] = e.polycoef[static_cast<std::size_t>(k)];
      // data[5], data[6]: the tendons' lengths at qpos0 (finalize_tendon_lengths).
    } else if (e.type == kEqConnect || e.type == kEqWeld) {
      if (o1 < 0 || o1 >= m.nbody || o2 < 0 || o2 >= m.nbody)
        throw std::runtime_error("equality '" + e.name + "': body index out of range");
      const Vec3<double> p1 = ref_pos[static_cast<std::size_t>(o1)], p2 = ref_pos[static_cast<std::size_t>(o2)];
      const Quat<double> q1 = ref_quat[static_cast<std::size_t>(o1)], q2 = ref_quat[static_cast<std::size_t>(o2)];
      if (e.type == kEqConnect) {
        const Vec3<double> a1 = Vec3<double>::load(e.pos1.data());
        const Vec3<double> a2 = e.has_pos2 ? Vec3<double>::load(e.pos2.data())
                                           : rotate_inverse(q2, p1 + rotate(q1, a1) - p2);
        a1.store(&data[0]);
        a2.store(&data[3]);
      } else {
        const Vec3<double> pq = Vec3<double>::load(e.pos2.data());
        const Quat<double> qq = normalized(Quat<double>::load(e.quat2.data()));
        Vec3<double> pp = Vec3<double>::load(e.pos1.data());
        Quat<double> qp = normalized(Quat<double>::load(e.quat1.data()));
        if (!e.has_frame1) {  // X_1P = X_W1^-1 X_W2 X_2Q at qpos0
          const Vec3<double> xq = p2 + rotate(q2, pq);
          pp = rotate_inverse(q1, xq - p1);
          qp = normalized(conjugate(q1) * q2 * qq);
        }
        pp.store(&data[0]);
        qp.store(&data[3]);
        pq.store(&data[7]);
        qq.store(&data[10]);
      }
    } else {
      throw std::runtime_error("equality '" + e.name + "': unknown type " + std::to_string(e.type));
    }
    m.eq_names.push_back(e.name);
    m.eq_type.push_back(e.type);
    m.eq_obj1id.push_back(o1);
    m.eq_obj2id.push_back(o2);
    m.eq_active.push_back(e.active ? 1 : 0);
    append(m.eq_solref, {e.solref[0], e.solref[1]});
    m.eq_data.insert(m.eq_data.end(), data.begin(), data.end());
    ++m.neq;
  }

  // Actuators: a hinge/slide joint or a fixed tendon (whose first joint's dof names it in
  // actuator_dofadr), with the same type and gain checks.
  auto append_actuator = [&m](const ActuatorSpec& a, int dofadr, int tendon) {
    if (a.type < kActMotor || a.type > kActMuscle)
      throw std::runtime_error("actuator '" + a.name + "': unknown actuator type");
    if ((a.type == kActPosition || a.type == kActPD) && !(a.kp > 0 || a.kd > 0))
      throw std::runtime_error("actuator '" + a.name + "': a position/pd actuator needs kp > 0 or kd > 0");
    if (a.type == kActVelocity && !(a.kd > 0))
      throw std::runtime_error("actuator '" + a.name + "': a velocity actuator needs kd > 0");
    m.actuator_names.push_back(a.name);
    m.actuator_type.push_back(a.type);
    m.actuator_dofadr.push_back(dofadr);
    m.actuator_tendonid.push_back(tendon);
    m.actuator_gear.push_back(a.gear);
    m.actuator_kp.push_back(a.kp);
    m.actuator_kd.push_back(a.kd);
    m.actuator_ctrllimited.push_back(a.ctrllimited ? 1 : 0);
    append(m.actuator_ctrlrange, {a.ctrlrange[0], a.ctrlrange[1]});
    m.actuator_forcelimited.push_back(a.forcelimited ? 1 : 0);
    append(m.actuator_forcerange, {a.forcerange[0], a.forcerange[1]});
  };
  bool any_dynamics = false;
  for (const ActuatorSpec& a : actuators_) any_dynamics |= a.dyntype != 0;
  if (any_dynamics) {  // activation state: one per actuator with dynamics
    for (const ActuatorSpec& a : actuators_) {
      if (a.dyntype < 0 || a.dyntype > 4)
        throw std::runtime_error("actuator '" + a.name + "': unknown activation dynamics " + std::to_string(a.dyntype));
      if ((a.dyntype == 2 || a.dyntype == 3) && !(a.dynprm[0] > 0))
        throw std::runtime_error("actuator '" + a.name + "': a filter needs a positive time constant");
      if (a.actlimited && !(a.actrange[0] <= a.actrange[1]))
        throw std::runtime_error("actuator '" + a.name + "': actrange lower bound exceeds upper bound");
      m.actuator_actadr.push_back(a.dyntype != 0 ? m.na++ : -1);
      m.actuator_dyntype.push_back(a.dyntype);
      append(m.actuator_dynprm, {a.dynprm[0], a.dynprm[1], a.dynprm[2]});
      m.actuator_actlimited.push_back(a.actlimited ? 1 : 0);
      append(m.actuator_actrange, {a.actrange[0], a.actrange[1]});
      m.actuator_actearly.push_back(a.actearly ? 1 : 0);
      if (a.type == kActMuscle && !(a.lengthrange[0] < a.lengthrange[1]))
        throw std::runtime_error("actuator '" + a.name + "': a muscle needs lengthrange[0] < lengthrange[1]");
      m.actuator_muscleprm.insert(m.actuator_muscleprm.end(), a.muscleprm.begin(), a.muscleprm.end());
      append(m.actuator_lengthrange, {a.lengthrange[0], a.lengthrange[1]});
      m.actuator_acc0.push_back(0.0);  // finalize_acc0
    }
    m.nuact = static_cast<int>(actuators_.size());
  }
  for (const ActuatorSpec& a : actuators_) {
    if (a.tendon >= 0) {
      if (a.tendon >= m.ntendon)
        throw std::runtime_error("actuator '" + a.name + "': tendon index " + std::to_string(a.tendon) +
                                 " out of range");
      // A spatial tendon has no first joint: its actuators name dof 0 (the tendon is what they act on).
      const std::size_t adr = static_cast<std::size_t>(m.tendon_adr[static_cast<std::size_t>(a.tendon)]);
      const int first_joint = m.wrap_type[adr] == kWrapJoint ? m.wrap_objid[adr] : -1;
      append_actuator(a, first_joint >= 0 ? m.jnt_dofadr[static_cast<std::size_t>(first_joint)] : 0, a.tendon);
      continue;
    }
    if (a.joint < 0 || a.joint >= njoint())
      throw std::runtime_error("actuator '" + a.name + "': joint index " + std::to_string(a.joint) + " out of range");
    const int j = joint_final[static_cast<std::size_t>(a.joint)];
    const int jt = m.jnt_type[static_cast<std::size_t>(j)];
    if (jt != kJointHinge && jt != kJointSlide)
      throw std::runtime_error("actuator '" + a.name + "': joint '" + m.jnt_names[static_cast<std::size_t>(j)] +
                               "' must be a hinge or slide joint, it is " + joint_type_name(jt));
    append_actuator(a, m.jnt_dofadr[static_cast<std::size_t>(j)], -1);
  }
  m.nu = static_cast<int>(actuators_.size());
  finalize_fluid(m);
  if (m.ngravcomp > 0) {
    m.ngravcomp = m.nbody;
    for (const BodySpec& bs : bodies_) m.body_gravcomp.push_back(bs.gravcomp);
  }
  m.compute_levels();

  m.validate();
  finalize_springdampers(m, joint_final);
  finalize_tendon_lengths(m);
  finalize_acc0(m);
  finalize_stage1b_sizes(m);
  return m;
}

}  // namespace sap
