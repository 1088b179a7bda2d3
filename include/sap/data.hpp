// Batched per-world arrays, world-major slabs. Kernels never do stride arithmetic: they go
// through slab accessors (d.qpos(w), d.M(w)), so the layout can change without touching physics.
#pragma once

#include <cstddef>
#include <type_traits>
#include <vector>

#include "sap/backend/buffer.hpp"
#include "sap/backend/hd.hpp"
#include "sap/model.hpp"

namespace sap {

// Values stored in fp64 or in fp32 (exactly the values an fp32 stage produced), read as fp64:
// the per-world arrays whose writer may run in fp32 keep half the bytes then (docs/gpu.md).
struct RealValues {
  const double* f64 = nullptr;
  const float* f32 = nullptr;
  SAP_HDI double operator[](long long k) const { return f32 ? double(f32[k]) : f64[k]; }
};

// A world-major slab: element block of world w starts at ptr + w * stride.
template <class T>
struct Slab {
  T* ptr = nullptr;
  long long stride = 0;
  SAP_HDI T* operator()(int w) const { return ptr + static_cast<long long>(w) * stride; }
};

template <class T>
class BatchedArray {
 public:
  void allocate(Backend b, int nworld, std::size_t per_world) {
    per_world_ = per_world;
    nworld_ = nworld;
    buf_.allocate(b, per_world * static_cast<std::size_t>(nworld));
  }
  Slab<T> slab() { return {buf_.data(), static_cast<long long>(per_world_)}; }
  Slab<const T> slab() const { return {buf_.data(), static_cast<long long>(per_world_)}; }
  std::size_t per_world() const { return per_world_; }
  int nworld() const { return nworld_; }
  Buffer<T>& buffer() { return buf_; }
  const Buffer<T>& buffer() const { return buf_; }
  // Host copy of one world's block.
  std::vector<T> world_to_host(int w) const {
    std::vector<T> h(per_world_);
    buf_.download(h.data(), per_world_, per_world_ * static_cast<std::size_t>(w));
    return h;
  }
  void world_from_host(int w, const T* src) { buf_.upload(src, per_world_, per_world_ * static_cast<std::size_t>(w)); }

 private:
  Buffer<T> buf_;
  std::size_t per_world_ = 0;
  int nworld_ = 0;
};

// Generalized state of all worlds: qpos (nq) and qvel (nv) per world, in fp64.
// act: actuator activations (Model::na per world; none without activation dynamics).
struct StateView {
  Slab<double> qpos, qvel, act;
};
struct ConstStateView {
  Slab<const double> qpos, qvel, act;
};

class State {
 public:
  State() = default;
  State(const Model& m, int nworld, Backend b);
  int nworld() const { return nworld_; }
  Backend backend() const { return backend_; }
  BatchedArray<double> qpos, qvel, act;
  StateView view() { return {qpos.slab(), qvel.slab(), act.slab()}; }
  ConstStateView view() const { return {qpos.slab(), qvel.slab(), act.slab()}; }
  // Sets every world to the model's default configuration with zero velocity and activation.
  void reset(const Model& m);
  void copy_from(const State& o);

 private:
  int nworld_ = 0;
  Backend backend_ = Backend::CPU;
};

// Inputs of one step, per world: actuator controls ctrl (nu: motor force, or position/velocity
// target), PD velocity targets ctrl_vel (nu, pd actuators), feed-forward actuator forces ctrl_ff
// (nu, position/velocity/pd actuators: added inside the PD law and clamped with it to the
// force range, as Drake's PD actuators do), applied generalized forces qfrc_applied (nv).
struct ControlView {
  Slab<const double> ctrl, ctrl_vel, ctrl_ff, qfrc_applied;
};

class Control {
 public:
  Control() = default;
  Control(const Model& m, int nworld, Backend b);
  BatchedArray<double> ctrl, ctrl_vel, ctrl_ff, qfrc_applied;
  ControlView view() const { return {ctrl.slab(), ctrl_vel.slab(), ctrl_ff.slab(), qfrc_applied.slab()}; }
};

// Per-world workspace of the dynamics stages. X(name, type, per-world count).
// clang-format off
#define SAP_DATA_ARRAYS(X)                                                               \
  /* kinematics (fp64 storage; fp32 stages store cast64(fl32(x))) */                     \
  X(xpos, double, nbody * 3)                                                             \
  X(xquat, double, nbody * 4)                                                            \
  X(xmat, double, nbody * 9)                                                             \
  X(xipos, double, nbody * 3)                                                            \
  X(xanchor, double, njnt * 3)                                                           \
  X(xaxis, double, njnt * 3)                                                             \
  X(cdof, double, nv * 6)     /* dof motion subspace, com-based (see spatial.hpp) */     \
  X(cdof_dot, double, nv * 6) /* time derivative of cdof */                              \
  X(cinert, double, nbody * 10)                                                          \
  X(crb, double, nbody * 10) /* composite inertia of the subtree */                     \
  X(cvel, double, nbody * 6)                                                             \
  X(cacc, double, nbody * 6)                                                             \
  X(cfrc, double, nbody * 6)                                                             \
  /* dynamics */                                                                         \
  X(M, double, nv_pad * nv_pad) /* mass matrix incl. armature (lower triangle valid) */   \
  X(qfrc_bias, double, nv)      /* Coriolis, centrifugal, gravity (RNEA, as MuJoCo) */   \
  X(qfrc_spring, double, nv)    /* -stiffness (q - springref) */                         \
  X(A, double, nv_pad * nv_pad) /* M + h D, padded with identity */                      \
  X(A32, float, 0)              /* A in fp32 (DataLayout::A_fp32; A is then empty) */    \
  X(v_star, double, nv)                                                                  \
  X(scratch_nv, double, nv)                                                              \
  X(chol, double, nv_pad * (nv_pad + 1)) /* factor + right-hand side, in the solve's precision */ \
  X(chol_first, int, nv_pad)             /* first non-zero column of each row (envelope) */ \
  /* tendons when one is spatial (Model::ntendata): lengths and dense moment arms dL/dq */ \
  X(ten_length, double, ntendata)                                                      \
  X(ten_moment, double, ntendata * nv)                                                 \
  /* stage 1b (kernels/actuation.hpp), sized 0 without the features: explicit forces     */ \
  /* (Model::nqfrc_extra), spatial tendons' (armature + h damping) J^T J (Model::nten_A), */ \
  /* each actuator's law input and the activations after the step (activation dynamics)  */ \
  X(qfrc_extra, double, nqfrc_extra)                                                    \
  X(ten_A, double, nten_A)                                                              \
  X(act_input, double, nuact)                                                           \
  X(act_next, double, na)
// clang-format on

struct DataSizes {
  int nbody = 0, njnt = 0, nq = 0, nv = 0, nv_pad = 0, ngeom = 0, nu = 0, ntendata = 0, nqfrc_extra = 0;
  int nten_A = 0, nuact = 0, na = 0;
  static DataSizes of(const ModelView& m) {
    return {m.nbody, m.njnt, m.nq, m.nv, m.nv_pad, m.ngeom, m.nu, m.ntendata, m.nqfrc_extra, m.nten_A, m.nuact, m.na};
  }
};

// The slabs of a Data: DataView (a stage's outputs and scratch: writable) and ConstDataView
// (a stage's inputs: every slab points to const). A DataView converts to a ConstDataView.
template <bool kConst>
struct DataViewOf {
  template <class T>
  using SlabOf = Slab<std::conditional_t<kConst, const T, T>>;
#define SAP_X(name, type, count) SlabOf<type> name;
  SAP_DATA_ARRAYS(SAP_X)
#undef SAP_X
  int A_f32 = 0;  // A lives in A32 (DataLayout::A_fp32)

  DataViewOf() = default;
  template <bool kOther, class = std::enable_if_t<kConst && !kOther>>
  SAP_HDI DataViewOf(const DataViewOf<kOther>& o) : A_f32(o.A_f32) {
#define SAP_X(name, type, count) this->name = {o.name.ptr, o.name.stride};
    SAP_DATA_ARRAYS(SAP_X)
#undef SAP_X
  }

  SAP_HDI RealValues A_values(int w) const {
    if (A_f32) return {nullptr, A32(w)};
    return {A(w), nullptr};
  }
  // f(A) with world w's A as a typed pointer (const float* or const double*), for loops over
  // its entries.
  template <class F>
  SAP_HDI void with_A(int w, F&& f) const {
    if (A_f32) f(static_cast<const float*>(A32(w)));
    else f(static_cast<const double*>(A(w)));
  }
};
using DataView = DataViewOf<false>;
using ConstDataView = DataViewOf<true>;

// Storage choices of a Data that leave every computed value unchanged (docs/gpu.md, memory):
//   mass_matrix_in_A  M shares A's storage: the free-motion kernel builds A = M + h D entry by
//                     entry in place (A[ij] from M[ij] only), and the solver reads only A after
//                     it. M then holds A after free motion. Off for DynamicsEvaluator (reads M).
//   chol_fp32         the Cholesky buffer holds fp32 factors only (both free_motion and the
//                     Newton linear solve run in fp32): half the bytes; it is reinterpreted as
//                     float by every user, so a double buffer of half the length suffices.
//   scratch           free-motion scratch (cdof_dot, crb, cvel, cacc, cfrc, qfrc_bias,
//                     qfrc_spring, scratch_nv: written and read only inside the free-motion
//                     stage) carved, in that order and as many as fit, out of an outside
//                     per-world region that is dead during free motion (the solver's Newton
//                     Hessian H, written only after constraint setup). Such arrays then hold
//                     garbage after the step. Empty region: none.
//   A_fp32            A = M + h D (with M in its storage) is stored in fp32, in A32: the
//                     free-motion stage runs in fp32, so every entry is an fp32 value; readers
//                     see the same values (DataView::A_values). Needs mass_matrix_in_A.
//   free_motion_on_chip  the free-motion scratch and the factor of A live in the team's shared
//                     memory (FreeMotionOnChip): those arrays get no per-world storage.
//   chol_on_chip      chol and chol_first get no per-world storage: every user of the factor
//                     buffer (free motion, the fused Newton solve) keeps it on chip.
struct DataLayout {
  bool mass_matrix_in_A = false;
  bool chol_fp32 = false;
  bool free_motion_on_chip = false;
  bool chol_on_chip = false;
  bool A_fp32 = false;
  Slab<double> scratch;          // per-world region (ptr, stride in doubles)
  long long scratch_size = 0;    // doubles per world usable in it
};

class Data {
 public:
  Data() = default;
  Data(const Model& m, int nworld, Backend b, const DataLayout& layout = {});
  int nworld() const { return nworld_; }
  const DataLayout& layout() const { return layout_; }
#define SAP_X(name, type, count) BatchedArray<type> name;
  SAP_DATA_ARRAYS(SAP_X)
#undef SAP_X
  DataView view();
  // A of every world as fp64 values, world-major (nv_pad^2 per world), from A or A32.
  std::vector<double> A_to_host() const;

 private:
  int nworld_ = 0;
  DataLayout layout_;
  // Offsets (doubles) in layout_.scratch of the arrays placed there; -1: own storage.
  long long off_cdof_dot_ = -1, off_crb_ = -1, off_cvel_ = -1, off_cacc_ = -1, off_cfrc_ = -1, off_qfrc_bias_ = -1,
            off_qfrc_spring_ = -1, off_scratch_nv_ = -1;
};

}  // namespace sap
