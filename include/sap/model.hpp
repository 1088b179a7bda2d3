// The model: everything shared read-only by all worlds. MuJoCo-style flat arrays named
// <entity>_<property>, bodies ordered parents before children, body 0 is the world.
//
// Conventions (see docs/conventions.md):
// - Quaternions are (w, x, y, z). Body poses: body_pos/body_quat place the body frame in its
//   parent frame at the joint reference configuration; then the body's joints are applied in
//   order, each about its anchor jnt_pos along jnt_axis (both in the body frame).
// - Free joint: qpos = [p_world (3), quat_world (4)], qvel = [v_world of the body origin (3),
//   angular velocity in the body frame (3)]. Ball joint: qpos = quaternion of the body frame
//   relative to its rest frame, qvel = angular velocity in the body frame. These are MuJoCo's
//   conventions, so MJCF models and MuJoCo's M and bias compare directly.
// - Hinge/slide: qpos is the angle/displacement relative to jnt_qpos0 (MuJoCo's `ref`).
#pragma once

#include <array>
#include <string>
#include <type_traits>
#include <vector>

#include "sap/backend/buffer.hpp"
#include "sap/backend/hd.hpp"

namespace sap {

enum JointType : int { kJointFree = 0, kJointBall = 1, kJointSlide = 2, kJointHinge = 3 };
// Convex shapes (sphere .. mesh) and the two infinite/terrain shapes (plane, hfield).
// kGeomEllipsoid: geom_size = semi-axes. kGeomMesh: the convex hull mesh geom_dataid (vertices in
// the geom frame). kGeomHfield: heightfield geom_dataid (hfield_* arrays).
enum GeomType : int {
  kGeomPlane = 0,
  kGeomSphere = 1,
  kGeomCapsule = 2,
  kGeomBox = 3,
  kGeomCylinder = 4,
  kGeomEllipsoid = 5,
  kGeomMesh = 6,
  kGeomHfield = 7,
};
enum ActuatorType : int {
  kActMotor = 0,     // generalized force gear * ctrl (clamped to ctrlrange, then forcerange)
  kActPosition = 1,  // implicit PD: Kp (ctrl - q) - Kd v, effort-limited
  kActVelocity = 2,  // implicit damper toward ctrl: Kd (ctrl - v), effort-limited
  kActPD = 3,        // implicit PD with position target ctrl and velocity target ctrl_vel
  kActMuscle = 4,    // MuJoCo's muscle: explicit force gain(l, l') act + bias(l) (kernels/actuator_dynamics.hpp)
};

// Servos (position, velocity, pd) are implicit PD rows; motors and muscles explicit forces.
SAP_HDI bool actuator_is_servo(int type) { return type == kActPosition || type == kActVelocity || type == kActPD; }

// Tendon path elements, numbered as MuJoCo's mjtWrap.
enum WrapType : int { kWrapNone = 0, kWrapJoint = 1, kWrapPulley = 2, kWrapSite = 3, kWrapSphere = 4, kWrapCylinder = 5 };

// Fluid model of a body (MuJoCo's mj_fluid): none (massless or no fluid), the inertia-box
// model, or the ellipsoid model of its geoms with fluidshape="ellipsoid".
enum FluidMode : int { kFluidNone = 0, kFluidInertiaBox = 1, kFluidEllipsoid = 2 };
// Coefficients per geom of the ellipsoid model (MuJoCo's geom_fluid layout): the interaction
// flag (1: ellipsoid), blunt drag, slender drag, angular drag, Kutta lift, Magnus lift, virtual
// mass (3), virtual inertia (3).
constexpr int kFluidCoefs = 12;

// Equality constraints, SAP holonomic constraints (docs/sap-math.md §12). eq_data per type:
//   kEqJoint   q1 - q1_0 = c0 + c1 x + c2 x^2 + c3 x^3 + c4 x^4,  x = q2 - q2_0 (q_0: jnt_qpos0);
//              data[0..4] = c (no joint 2: q1 - q1_0 = c0). One row.
//   kEqConnect point P of body 1 coincides with point Q of body 2: data[0..2] = p_1P (body-1
//              frame), data[3..5] = p_2Q (body-2 frame). Three rows.
//   kEqWeld    frame P of body 1 coincides with frame Q of body 2: data[0..2] p_1P, data[3..6]
//              q_1P, data[7..9] p_2Q, data[10..13] q_2Q. Six rows.
//   kEqTendon  L1 - L1_0 = c0 + c1 x + c2 x^2 + c3 x^3 + c4 x^4,  x = L2 - L2_0 (tendon lengths,
//              L_0 at qpos0); data[0..4] = c, data[5] = L1_0, data[6] = L2_0 (no tendon 2:
//              L1 - L1_0 = c0). One row (kernels/tendon_coupling.hpp).
enum EqualityType : int { kEqJoint = 0, kEqConnect = 1, kEqWeld = 2, kEqTendon = 3 };
constexpr int kEqDataSize = 14;
SAP_HDI int equality_rows(int type) { return type == kEqJoint || type == kEqTendon ? 1 : type == kEqConnect ? 3 : 6; }

// How a geom pair's contact parameters follow from its geoms' (a per-model setting,
// docs/model-import.md "Contact parameters"; src/model/contact_pairs.hpp):
//   kContactRuleDrake   (JSON scenes, URDF, the builder's default): friction 2 mu0 mu1 / (mu0 + mu1),
//                       stiffness in series, dissipation summed, contacts detected while
//                       dist < margin0 + margin1, Coulomb friction on every contact;
//   kContactRuleMujoco  (MJCF): MuJoCo's rules: the higher priority geom's parameters, else the
//                       element-wise maximum of friction and condim and solref/solimp mixed by
//                       solmix; margin and gap summed (detected while dist < margin + gap, the
//                       surface shifted out by margin); condim 1 frictionless, 4 and 6 with
//                       torsional and rolling friction.
enum ContactRule : int { kContactRuleDrake = 0, kContactRuleMujoco = 1 };
const char* contact_rule_name(int rule);

constexpr int kNumGeomTypes = 8;
// Hunt-Crossley dissipation d (s/m) of a geom that names none (contact_approximation = similar or
// lagged). Drake's plant derives its default from a penetration allowance delta as
// d = 1 / sqrt(g delta) (damping ratio 1/2 at the static penetration): 10.1 s/m for delta = 1 mm.
constexpr double kDefaultHuntCrossleyDissipation = 10.0;
const char* joint_type_name(int t);
const char* geom_type_name(int t);
const char* actuator_type_name(int t);
SAP_HDI int joint_nq(int type) { return type == kJointFree ? 7 : type == kJointBall ? 4 : 1; }
SAP_HDI int joint_nv(int type) { return type == kJointFree ? 6 : type == kJointBall ? 3 : 1; }

// Padding of dense per-world nv x nv matrices (Cholesky tile).
constexpr int kMatrixPad = 4;
inline int pad_nv(int nv) { return nv == 0 ? kMatrixPad : (nv + kMatrixPad - 1) / kMatrixPad * kMatrixPad; }

// X(name, type, count-expression): count in elements of the whole array.
// clang-format off
#define SAP_MODEL_ARRAYS(X)                                                     \
  /* bodies */                                                                  \
  X(body_parentid, int, nbody)                                                  \
  X(body_rootid, int, nbody) /* top-level ancestor; defines the kinematic tree */ \
  X(body_jntadr, int, nbody)                                                    \
  X(body_jntnum, int, nbody)                                                    \
  X(body_dofadr, int, nbody)                                                    \
  X(body_dofnum, int, nbody)                                                    \
  X(body_pos, double, nbody * 3)                                                \
  X(body_quat, double, nbody * 4)                                               \
  X(body_ipos, double, nbody * 3)    /* center of mass in body frame */         \
  X(body_inertia, double, nbody * 6) /* about the com, body axes: xx yy zz xy xz yz */ \
  X(body_mass, double, nbody)                                                   \
  X(body_gravcomp, double, ngravcomp) /* gravity compensation gc: force -gc m g at the com */ \
  /* depth levels (world 0, its children 1, ...) for level-parallel tree passes; computed at */ \
  /* finalize. level_body lists bodies 1..nbody-1 by level, within a level grouped by parent  */ \
  /* (in the parent's level order) and by id; level L is [level_bodyadr[L-1], level_bodyadr[L]). */ \
  X(level_bodyadr, int, nlevel + 1) /* level L (1-based) starts at level_bodyadr[L - 1] */ \
  X(level_body, int, nbody - 1)                                                 \
  X(body_childadr, int, nbody) /* children of b: level_body[adr, adr + num), ids ascending */ \
  X(body_childnum, int, nbody)                                                  \
  /* the non-zero columns of row i of A = M + h D, ascending, when A has the kinematic tree's */ \
  /* sparsity (Model::compute_A_sparsity): A_colind[A_rowadr[i], A_rowadr[i + 1]) */ \
  X(A_rowadr, int, nA_colind > 0 ? nv + 1 : 0)                                  \
  X(A_colind, int, nA_colind)                                                   \
  /* joints */                                                                  \
  X(jnt_type, int, njnt)                                                        \
  X(jnt_bodyid, int, njnt)                                                      \
  X(jnt_qposadr, int, njnt)                                                     \
  X(jnt_dofadr, int, njnt)                                                      \
  X(jnt_pos, double, njnt * 3)                                                  \
  X(jnt_axis, double, njnt * 3)                                                 \
  X(jnt_qpos0, double, njnt)    /* reference angle/offset of hinge/slide */     \
  X(jnt_limited, int, njnt)                                                     \
  X(jnt_range, double, njnt * 2)                                                \
  X(jnt_stiffness, double, njnt) /* spring toward jnt_springref (hinge/slide) */ \
  X(jnt_springref, double, njnt)                                                \
  /* dofs */                                                                    \
  X(dof_bodyid, int, nv)                                                        \
  X(dof_jntid, int, nv)                                                         \
  X(dof_parentid, int, nv) /* previous dof on the path to the root, -1 at a root */ \
  X(dof_armature, double, nv)                                                   \
  X(dof_damping, double, nv)                                                    \
  X(dof_frictionloss, double, nv) /* dry friction f: |impulse| <= h f (SAP box row) */ \
  /* default configuration */                                                   \
  X(qpos0, double, nq)                                                          \
  /* geoms */                                                                   \
  X(geom_type, int, ngeom)                                                      \
  X(geom_bodyid, int, ngeom)                                                    \
  X(geom_contype, int, ngeom)                                                   \
  X(geom_conaffinity, int, ngeom)                                               \
  X(geom_pos, double, ngeom * 3)                                                \
  X(geom_quat, double, ngeom * 4)                                               \
  X(geom_size, double, ngeom * 3) /* sphere r; capsule/cylinder r, half-length; box half-extents */ \
  X(geom_rbound, double, ngeom)   /* bounding-sphere radius about geom_pos; 0 for planes */ \
  X(geom_margin, double, ngeom)   /* contacts are generated while phi < margin0 + margin1 */ \
  X(geom_friction, double, ngeom)                                               \
  X(geom_stiffness, double, ngeom) /* point-contact stiffness k (N/m) */        \
  X(geom_dissipation, double, ngeom) /* dissipation time scale tau_d (s) */     \
  X(geom_hc_dissipation, double, ngeom) /* Hunt-Crossley dissipation d (s/m) */ \
  /* MuJoCo's contact attributes (used under kContactRuleMujoco; docs/model-import.md) */ \
  X(geom_condim, int, ngeom)    /* contact dimension 1, 3, 4 or 6 */          \
  X(geom_priority, int, ngeom)  /* the higher priority geom's parameters win */ \
  X(geom_friction_spin, double, ngeom) /* torsional coefficient (m), condim >= 4 */ \
  X(geom_friction_roll, double, ngeom) /* rolling coefficient (m), condim 6 */  \
  X(geom_solmix, double, ngeom) /* weight of this geom's solref in a mix */     \
  X(geom_solref, double, ngeom * 2) /* solref behind geom_stiffness/dissipation; (0, 0): none */ \
  X(geom_gap, double, ngeom)    /* detected, not active, while margin <= dist < margin + gap */ \
  X(geom_dataid, int, ngeom) /* mesh id (kGeomMesh), hfield id (kGeomHfield), else -1 */ \
  /* convex meshes: the hull of each mesh asset, vertices in the geom frame (scale applied) */ \
  X(mesh_vertadr, int, nmesh)   /* first vertex in mesh_vert */                 \
  X(mesh_vertnum, int, nmesh)                                                   \
  X(mesh_faceadr, int, nmesh)   /* first triangle in mesh_face */               \
  X(mesh_facenum, int, nmesh)                                                   \
  X(mesh_vert, double, nmeshvert * 3)                                           \
  X(mesh_face, int, nmeshface * 3) /* vertex ids local to the mesh, CCW seen from outside */ \
  X(mesh_vert_edgeadr, int, nmeshvert) /* hull adjacency for hill-climbing support search: */ \
  X(mesh_vert_edgenum, int, nmeshvert) /*   neighbours of vertex v are mesh_edge[adr, adr+num) */ \
  X(mesh_edge, int, nmeshedge)         /*   as vertex ids local to the mesh */  \
  /* heightfields (MJCF <hfield>): elevation z = size[2] * data, data in [0, 1], row-major, */ \
  /* row r at y = (2 r / (nrow - 1) - 1) size[1], column c at x = (2 c / (ncol - 1) - 1) size[0] */ \
  X(hfield_size, double, nhfield * 4) /* x, y half-extents, top elevation, base depth */ \
  X(hfield_nrow, int, nhfield)                                                  \
  X(hfield_ncol, int, nhfield)                                                  \
  X(hfield_adr, int, nhfield)                                                   \
  X(hfield_data, double, nhfielddata)                                           \
  /* candidate collision pairs (precomputed at finalize) */                     \
  X(pair_geom0, int, npair)                                                     \
  X(pair_geom1, int, npair)                                                     \
  X(pair_friction, double, npair) /* explicit pair's friction; -1: combined from the geoms */ \
  X(pair_margin, double, npair)   /* explicit pair's margin; -1: geom_margin sum */ \
  X(pair_condim, int, npair)      /* explicit pair's condim; -1: combined */    \
  X(pair_friction_ext, double, npair * 4) /* with pair_friction >= 0: t2, spin, roll1, roll2 */ \
  X(pair_gap, double, npair)      /* explicit pair's gap; -1: combined */       \
  X(pair_solref, double, npair * 2) /* explicit pair's solref; (0, 0): combined */ \
  /* actuators (each acts on one dof) */                                        \
  X(actuator_type, int, nu)                                                     \
  X(actuator_dofadr, int, nu)                                                   \
  X(actuator_gear, double, nu)                                                  \
  X(actuator_kp, double, nu)                                                    \
  X(actuator_kd, double, nu)                                                    \
  X(actuator_ctrllimited, int, nu)                                              \
  X(actuator_ctrlrange, double, nu * 2)                                         \
  X(actuator_forcelimited, int, nu)                                             \
  X(actuator_forcerange, double, nu * 2)                                         \
  X(actuator_tendonid, int, nu) /* -1: joint transmission; else the tendon it drives */ \
  /* activation dynamics (kernels/actuator_dynamics.hpp): the actuator's input is its */ \
  /* activation act (per-world state, na values) instead of ctrl; nuact = nu when an actuator */ \
  /* has dynamics, else 0 */                                                      \
  X(actuator_actadr, int, nuact)     /* -1: no dynamics (input ctrl) */           \
  X(actuator_dyntype, int, nuact)    /* ActuatorDynType */                        \
  X(actuator_dynprm, double, nuact * 3)                                           \
  X(actuator_actlimited, int, nuact)                                              \
  X(actuator_actrange, double, nuact * 2)                                         \
  X(actuator_actearly, int, nuact)   /* input: the activation after the step */  \
  /* muscles (kActMuscle): MuJoCo's gainprm (range, force, scale, lmin, lmax, vmax, fpmax, */ \
  /* fvmax), the actuator's length range and acc0 = |M(qpos0)^-1 moment| */         \
  X(actuator_muscleprm, double, nuact * 9)                                        \
  X(actuator_lengthrange, double, nuact * 2)                                      \
  X(actuator_acc0, double, nuact)                                                 \
  /* tendons (MuJoCo's layout): path elements [tendon_adr, + tendon_num) of the wrap arrays. A */ \
  /* fixed tendon's are joints (wrap_type kWrapJoint, wrap_objid a hinge/slide joint, wrap_prm  */ \
  /* its coefficient): L = sum coef q. A spatial tendon's are sites, wrapping geoms (wrap_prm: */ \
  /* the sidesite, -1 none) and pulleys (wrap_prm: divisor), kernels/spatial_tendon.hpp; its  */ \
  /* length and moment arms are per-world data (ten_length, ten_moment), like every tendon's  */ \
  /* when one is spatial (ntendata = ntendon, else 0). */                        \
  X(tendon_adr, int, ntendon)                                                   \
  X(tendon_num, int, ntendon)                                                   \
  X(tendon_limited, int, ntendon)                                               \
  X(tendon_range, double, ntendon * 2)                                          \
  X(tendon_stiffness, double, ntendon) /* spring -k (L - lengthspring), explicit */ \
  X(tendon_lengthspring, double, ntendon * 2) /* rest lengths [lower, upper]: a dead band */ \
  X(tendon_damping, double, ntendon) /* -b dL/dt, implicit like dof_damping */  \
  X(tendon_armature, double, ntendon) /* inertia a J_t^T J_t added to M */      \
  X(tendon_frictionloss, double, ntendon) /* dry friction on dL/dt: a SAP box row */ \
  X(wrap_type, int, nwrap)           /* WrapType */                             \
  X(wrap_objid, int, nwrap)          /* joint, site or geom */                  \
  X(wrap_prm, double, nwrap)         /* coefficient, sidesite or divisor */     \
  /* sites: points fixed to bodies (the path points of spatial tendons) */      \
  X(site_bodyid, int, nsite)                                                    \
  X(site_pos, double, nsite * 3)     /* in the body frame */                    \
  /* equality constraints (EqualityType; eq_data layout there) */               \
  X(eq_type, int, neq)                                                          \
  X(eq_obj1id, int, neq) /* joint (kEqJoint), tendon (kEqTendon) or body */     \
  X(eq_obj2id, int, neq) /* joint (-1: none) or body (0: world) */              \
  X(eq_active, int, neq)                                                        \
  X(eq_solref, double, neq * 2) /* MuJoCo solref; (0, 0): rigid (near-rigid regime) */ \
  X(eq_data, double, neq * kEqDataSize)                                         \
  /* fluid forces (kernels/fluid_forces.hpp): nfluidbody = nbody when the model has a fluid */ \
  /* (fluid_density or fluid_viscosity > 0), else 0; nfluidgeom = ngeom when a geom uses the */ \
  /* ellipsoid model, else 0 */                                                 \
  X(body_fluid_mode, int, nfluidbody)  /* kFluidNone, kFluidInertiaBox, kFluidEllipsoid */ \
  X(body_fluid_inertia, double, nfluidbody * 3) /* principal moments about the com */ \
  X(body_fluid_iquat, double, nfluidbody * 4)   /* their axes in the body frame */ \
  X(geom_fluid, double, nfluidgeom * kFluidCoefs) /* MuJoCo's geom_fluid layout */
// clang-format on

// Non-owning view of the model arrays (host or device pointers), passed by value to kernels.
struct ModelView {
  int nlevel = 0;  // depth of the deepest body (levels 1..nlevel)
  int nbody = 0, njnt = 0, nq = 0, nv = 0, nv_pad = 0, ngeom = 0, npair = 0, nu = 0;
  int ntendon = 0, nwrap = 0, neq = 0;
  int nmesh = 0, nmeshvert = 0, nmeshface = 0, nmeshedge = 0, nhfield = 0, nhfielddata = 0;
  int nfluidbody = 0, nfluidgeom = 0, nsite = 0, ntendata = 0, na = 0, nuact = 0;
  // Stage 1b (kernels/actuation.hpp) sizes, 0 for models without the features: nqfrc_extra = nv
  // when explicit forces beyond the joint springs and motors exist (fluids, muscles, gravity
  // compensation, ball/free springs, springs, dampers and motors of spatial tendons);
  // nten_A = nv_pad^2 when a spatial tendon has damping or armature (its dense J^T J term of A);
  // ngravcomp = nbody when a body has gravity compensation.
  int nqfrc_extra = 0, nten_A = 0, ngravcomp = 0;
  // Structural non-zeros of A = M + h D (ancestor and descendant dofs of each dof, the diagonal)
  // when no tendon couples dofs through A; 0 otherwise (A is then treated as dense).
  int nA_colind = 0;
  double gravity[3] = {0, 0, 0};
  double fluid_density = 0, fluid_viscosity = 0, fluid_wind[3] = {0, 0, 0};  // MuJoCo's <option>
#define SAP_X(name, type, count) const type* name = nullptr;
  SAP_MODEL_ARRAYS(SAP_X)
#undef SAP_X
};

// Per-world model parameters (domain randomisation, Simulator::set_world_params): world w with
// slot[w] >= 0 reads its body masses, inertias, actuator gains and gravity from the slot's rows;
// worlds with slot -1 (default parameters) all read the shared ModelView. slot == nullptr: no
// world has parameters of its own. Arrays on the model's backend, nslot rows each.
struct WorldModelView {
  const int* slot = nullptr;         // nworld
  const double* mass = nullptr;      // nslot x nbody
  const double* inertia = nullptr;   // nslot x 6 nbody
  const double* kp = nullptr;        // nslot x nu
  const double* kd = nullptr;        // nslot x nu
  const double* gear = nullptr;      // nslot x nu
  const double* gravity = nullptr;   // nslot x 3
  // Points m at world w's parameters (no change for a default world).
  SAP_HDI void apply(ModelView& m, int w) const {
    const int s = slot[w];
    if (s < 0) return;
    m.body_mass = mass + static_cast<long long>(s) * m.nbody;
    m.body_inertia = inertia + static_cast<long long>(s) * 6 * m.nbody;
    m.actuator_kp = kp + static_cast<long long>(s) * m.nu;
    m.actuator_kd = kd + static_cast<long long>(s) * m.nu;
    m.actuator_gear = gear + static_cast<long long>(s) * m.nu;
    for (int k = 0; k < 3; ++k) m.gravity[k] = gravity[3 * s + k];
  }
  // World w's rows of the per-world arrays, for kernels that read them at their points of use
  // (ReadsWorldModel): m's arrays for a default world or when no world has parameters.
  SAP_HDI int slot_of(int w) const { return slot ? slot[w] : -1; }
  SAP_HDI const double* body_mass_of(const ModelView& m, int w) const {
    const int s = slot_of(w);
    return s < 0 ? m.body_mass : mass + static_cast<long long>(s) * m.nbody;
  }
  SAP_HDI const double* body_inertia_of(const ModelView& m, int w) const {
    const int s = slot_of(w);
    return s < 0 ? m.body_inertia : inertia + static_cast<long long>(s) * 6 * m.nbody;
  }
  SAP_HDI const double* actuator_kp_of(const ModelView& m, int w) const {
    const int s = slot_of(w);
    return s < 0 ? m.actuator_kp : kp + static_cast<long long>(s) * m.nu;
  }
  SAP_HDI const double* actuator_kd_of(const ModelView& m, int w) const {
    const int s = slot_of(w);
    return s < 0 ? m.actuator_kd : kd + static_cast<long long>(s) * m.nu;
  }
  SAP_HDI const double* actuator_gear_of(const ModelView& m, int w) const {
    const int s = slot_of(w);
    return s < 0 ? m.actuator_gear : gear + static_cast<long long>(s) * m.nu;
  }
};

// A kernel with a member `WorldModelView world_model` reads the per-world arrays through it
// (world_model.body_mass_of(m, w), ...) where it uses them, never through m (nor m.gravity, which
// it must not read), so its wrapper sets world_model instead of re-pointing m: the re-pointed
// arrays of a copied ModelView stay live in registers for the whole kernel (constraint setup in
// fp64: 152 registers per thread, 12 resident warps per SM, against 124 and 16; docs/gpu.md).
template <class K, class = void>
struct ReadsWorldModel : std::false_type {};
template <class K>
struct ReadsWorldModel<K, std::void_t<decltype(&K::world_model)>> : std::true_type {};

// A kernel (a functor with a ModelView member m, called as f(world, i) or f(world, team)) that
// runs with each world's own model parameters: a copy of the kernel per world with m re-pointed,
// or with world_model set (ReadsWorldModel).
template <class K>
struct PerWorldModelKernel {
  K k;
  WorldModelView wm;
  template <class A>
  SAP_HD void operator()(int w, A&& a) const {
    K kw = k;
    if constexpr (ReadsWorldModel<K>::value) kw.world_model = wm;
    else wm.apply(kw.m, w);
    kw(w, a);
  }
};

// Host-side model. Built by ModelBuilder (scene_json, mjcf, urdf); validated at finalize.
struct Model {
  int nlevel = 0;  // depth of the deepest body (levels 1..nlevel); level arrays by compute_levels()
  int nbody = 0, njnt = 0, nq = 0, nv = 0, nv_pad = 0, ngeom = 0, npair = 0, nu = 0;
  int ntendon = 0, nwrap = 0, neq = 0;
  int nmesh = 0, nmeshvert = 0, nmeshface = 0, nmeshedge = 0, nhfield = 0, nhfielddata = 0;
  int nfluidbody = 0, nfluidgeom = 0, nsite = 0, ntendata = 0, na = 0, nuact = 0;
  // Stage 1b (kernels/actuation.hpp) sizes, 0 for models without the features: nqfrc_extra = nv
  // when explicit forces beyond the joint springs and motors exist (fluids, muscles, gravity
  // compensation, ball/free springs, springs, dampers and motors of spatial tendons);
  // nten_A = nv_pad^2 when a spatial tendon has damping or armature (its dense J^T J term of A);
  // ngravcomp = nbody when a body has gravity compensation.
  int nqfrc_extra = 0, nten_A = 0, ngravcomp = 0;
  // Structural non-zeros of A = M + h D (ancestor and descendant dofs of each dof, the diagonal)
  // when no tendon couples dofs through A; 0 otherwise (A is then treated as dense).
  int nA_colind = 0;
  std::array<double, 3> gravity{0.0, 0.0, -9.81};
  double fluid_density = 0, fluid_viscosity = 0;  // kg/m^3, Pa s
  std::array<double, 3> fluid_wind{0.0, 0.0, 0.0};  // m/s, world
  double timestep = 0.001;  // default step of the source file; the solver takes dt per step
  int contact_rule = kContactRuleDrake;  // ContactRule: how pairs combine their geoms' contact parameters

#define SAP_X(name, type, count) std::vector<type> name;
  SAP_MODEL_ARRAYS(SAP_X)
#undef SAP_X

  std::vector<std::string> body_names, jnt_names, geom_names, actuator_names, tendon_names, eq_names;
  std::vector<std::string> mesh_names, hfield_names, site_names;

  int body_id(const std::string& name) const;      // -1 when absent
  int joint_id(const std::string& name) const;     // -1 when absent
  int geom_id(const std::string& name) const;      // -1 when absent
  int actuator_id(const std::string& name) const;  // -1 when absent
  int tendon_id(const std::string& name) const;    // -1 when absent
  int ntree() const;                               // number of top-level bodies with dofs
  // Fills nlevel, level_bodyadr, level_body, body_childadr, body_childnum from body_parentid.
  void compute_levels();
  // Fills nA_colind, A_rowadr, A_colind from dof_parentid and the tendons (after nten_A is set).
  void compute_A_sparsity();

  // Host view of the arrays (pointers into this object).
  ModelView view() const;
  // Throws std::runtime_error describing the first inconsistency (array sizes, indices,
  // ordering, non-positive mass on a moving body, non-unit axes, ...).
  void validate() const;
};

// A copy of a Model on one backend, with a view of it.
class ModelStorage {
 public:
  ModelStorage() = default;
  ModelStorage(const Model& m, Backend b);
  const ModelView& view() const { return view_; }

 private:
#define SAP_X(name, type, count) Buffer<type> name##_;
  SAP_MODEL_ARRAYS(SAP_X)
#undef SAP_X
  ModelView view_;
};

}  // namespace sap
