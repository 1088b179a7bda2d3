// Stage 1: kinematics and free motion (docs/sap-math.md §1).
//   A  = M(q) + h diag(D)                       (M includes armature)
//   k  = tau_applied + tau_motor + tau_spring - bias(q, v) - D v
//   v* = v + h A^-1 k                             (damping implicit through h D in A)
#pragma once

#include "kernels/cholesky.hpp"
#include "kernels/cholesky_worlds.hpp"
#include "kernels/dynamics.hpp"
#include "kernels/kinematics.hpp"
#include "kernels/tree_worlds.hpp"
#include "sap/status.hpp"

namespace sap {

// Body poses, com-based inertias and dof subspaces of every world at state_in. The poses are
// the fp64 forward kinematics, rounded to S (the boundary pose's precision: fp32 unless
// use_f64_boundary_pose), the com quantities computed in S. kPosesGiven: d's poses are already
// forward_kinematics<double> of qpos_in (the collision stage's); a kernel of its own, so that
// the registers of the fp64 forward kinematics are not held where it does not run.
template <class S, bool kPosesGiven = false>
struct KinematicsKernel {
  // in
  ModelView m;
  Slab<const double> qpos_in;
  // out
  DataView d;  // xpos, xquat, xmat, xipos, xanchor, xaxis, cinert, cdof
  const int* status = nullptr;  // per world: a skipped world (kStatusSkipped) is not computed

  // Forward kinematics level-parallel over the team (lanes = the bodies of one depth level),
  // then the com quantities strided over bodies and joints.
  template <class Team>
  SAP_HD void operator()(int w, Team& team) const {
    if (status && (status[w] & kStatusSkipped)) return;  // the whole team: uniform
    if (!kPosesGiven) {
      forward_kinematics<double>(team, m, qpos_in(w), d.xpos(w), d.xquat(w), d.xmat(w), d.xipos(w), d.xanchor(w),
                                 d.xaxis(w));
      team.sync();
    }
    if (sizeof(S) < sizeof(double)) {
      round_poses<S>(team, m, d.xpos(w), d.xquat(w), d.xmat(w), d.xipos(w), d.xanchor(w), d.xaxis(w));
      team.sync();
    }
    com_quantities<S>(team, m, d.xpos(w), d.xmat(w), d.xipos(w), d.xanchor(w), d.xaxis(w), d.cinert(w), d.cdof(w));
  }
};

// The free-motion working set in the team's shared memory (FreeMotionKernel::on_chip): the
// tree-pass scratch (cdof_dot, crb, cvel, cacc, cfrc in the kernel's scalar: fp32 for the fp32
// free motion, FreeMotionKernel::TreeScratch; qfrc_bias, qfrc_spring, scratch_nv), the factor of
// A with its right-hand side and the factor's envelope. Offsets in doubles from the team's
// shared memory. Only where the values live changes, not how they are computed: on CUDA
// they stay on the SM instead of crossing DRAM, on the CPU they are one thread's scratch, reused
// world after world, instead of per-world arrays (docs/gpu.md, "working set on chip").
struct FreeMotionOnChip {
  long long cdof_dot = 0, crb = 0, cvel = 0, cacc = 0, cfrc = 0, qfrc_bias = 0, qfrc_spring = 0, scratch_nv = 0;
  long long chol = 0, first = 0, cdof = 0, doubles = 0;
  // f32: the free motion is fp32 (free_motion_solve_precision): the tree-pass scratch and the
  // factor hold two entries per double. cdof_copy: a copy of cdof in S after the rest
  // (FreeMotionKernel::copies_cdof: fp32 on one lane only, so the GPU's bytes are unchanged).
  SAP_HDI static FreeMotionOnChip layout(int nv, int nbody, int ld, bool f32, bool cdof_copy = false) {
    FreeMotionOnChip o;
    long long at = 0;
    auto take = [&at](long long& off, long long n) {
      off = at;
      at += n;
    };
    auto take_scalars = [&](long long& off, long long n) { take(off, f32 ? (n + 1) / 2 : n); };
    take_scalars(o.cdof_dot, 6LL * nv);
    take_scalars(o.crb, 10LL * nbody);
    take_scalars(o.cvel, 6LL * nbody);
    take_scalars(o.cacc, 6LL * nbody);
    take_scalars(o.cfrc, 6LL * nbody);
    take(o.qfrc_bias, nv);
    take(o.qfrc_spring, nv);
    take(o.scratch_nv, nv);
    const long long nchol = static_cast<long long>(ld) * (ld + 1);
    take_scalars(o.chol, nchol);
    take(o.first, (ld + 1) / 2);
    if (cdof_copy) take_scalars(o.cdof, 6LL * nv);
    o.doubles = at;
    return o;
  }
  long long bytes() const { return 8 * doubles; }
};

// coriolis_passes = 0: bias at v_n (Drake). k > 0: k fixed-point passes re-evaluating the
// velocity-dependent bias at the midpoint vbar = (v_n + v*)/2 and re-solving with the same
// factor of A. With the midpoint position map this conserves the angular momentum of a
// torque-free body to O(h^3) per step instead of O(h^2) (docs/conventions.md).
template <class S>
struct FreeMotionKernel {
  // in
  ModelView m;
  ConstStateView state_in;  // q_n, v_n
  ControlView control;      // motor controls, qfrc_applied
  double h;
  int coriolis_passes;  // 0: explicit Coriolis at v_n; else midpoint fixed-point passes
  // in/out
  DataView d;   // in: kinematics (KinematicsKernel); out: M, A, v_star, chol (the factor of A)
  int* status;  // per world, OR-ed with failure bits
  // The scratch and the factor in the team's shared memory (FreeMotionOnChip, launched with
  // its bytes) instead of d's per-world arrays.
  bool on_chip = false;

  // The tree passes' per-body and per-dof scratch of one world, in S's own storage (fp32 values
  // in fp32 storage: no conversion at each Vec6 load and store; the same values).
  struct TreeScratch {
    S *cdof_dot, *crb, *cvel, *cacc, *cfrc;
  };

  // One lane (the CPU) with the working set on chip: the fp32 tree passes read a copy of cdof
  // in fp32 storage, made once per world-step (FreeMotionOnChip::cdof), where d's cdof holds
  // the same fp32 values in fp64 storage for the later stages and each of its ~10 loads per dof
  // and pass converts. The same values. Not in a GPU team: the copy's pointer cost the fused
  // free-motion kernel 14 registers (126, 18 -> 16 warps/SM), so a team reads d's cdof.
  template <class Team>
  SAP_HDI static constexpr bool copies_cdof() {
    return sizeof(S) < sizeof(double) && one_lane_team<Team>();
  }

  // d with the scratch and factor slabs pointing into the team's shared memory when on_chip
  // (stride 0: every world of the team's launch slot uses the same bytes).
  template <class Team>
  SAP_HD DataView working_set(Team& team) const {
    DataView v = d;
    if (!on_chip) return v;
    const FreeMotionOnChip o =
        FreeMotionOnChip::layout(m.nv, m.nbody, m.nv_pad, sizeof(S) == 4, copies_cdof<Team>());
    double* base = reinterpret_cast<double*>(team.shared_mem());
    v.cdof_dot = {base + o.cdof_dot, 0};
    v.crb = {base + o.crb, 0};
    v.cvel = {base + o.cvel, 0};
    v.cacc = {base + o.cacc, 0};
    v.cfrc = {base + o.cfrc, 0};
    v.qfrc_bias = {base + o.qfrc_bias, 0};
    v.qfrc_spring = {base + o.qfrc_spring, 0};
    v.scratch_nv = {base + o.scratch_nv, 0};
    v.chol = {base + o.chol, 0};
    v.chol_first = {reinterpret_cast<int*>(base + o.first), 0};
    return v;
  }

  // World w's tree scratch in the working set dw (an fp64 slab holds at least as many entries
  // of S).
  static SAP_HDI TreeScratch tree_scratch(const DataView& dw, int w) {
    return {reinterpret_cast<S*>(dw.cdof_dot(w)), reinterpret_cast<S*>(dw.crb(w)), reinterpret_cast<S*>(dw.cvel(w)),
            reinterpret_cast<S*>(dw.cacc(w)), reinterpret_cast<S*>(dw.cfrc(w))};
  }

  // M (rows in parallel, then symmetrised) and A = M + h D, plus the fixed tendons' armature
  // and damping (a + h b) J_t^T J_t and the spatial tendons' (stage 1b's ten_A), in storage T
  // (M and A may share it: A[ij] is computed from M[ij] only).
  // kRows = false: M's rows are already in M (the CPU's worlds side by side compute them in
  // lanes, assembly_tree_side_by_side).
  template <bool kRows = true, class Team, class C, class T>
  SAP_HD void assemble_A(int w, Team& team, const C* cdof, const S* crb, T* M, T* A) const {
    const int nv = m.nv, ld = m.nv_pad;
    if constexpr (kRows) {
      for (int i = team.rank(); i < nv; i += team.size()) mass_matrix_row<S>(m, cdof, crb, i, M);
      team.sync();
    }
    bool tiled = false;  // one lane, large nv: in cache tiles
#if !defined(__CUDA_ARCH__)
    if constexpr (one_lane_team<Team>()) tiled = nv >= kCholeskyRowOrderMin;
    if (tiled) mass_matrix_symmetrize_tiled(m, M);
#endif
    if (!tiled)
      for (int i = team.rank(); i < ld; i += team.size()) mass_matrix_symmetrize_row<S>(m, i, M);
    team.sync();
    if (team.size() == 1) {  // one lane (the CPU): row by row, no index division; the same values
      for (int i = 0; i < ld; ++i) {
        if (A != M)
          for (int j = 0; j < ld; ++j) A[i * ld + j] = M[i * ld + j];
        if (i < nv) A[i * ld + i] = T(S(M[i * ld + i]) + S(h) * S(m.dof_damping[i]));
        if (m.nten_A > 0)
          for (int j = 0; j < ld; ++j) A[i * ld + j] = T(S(A[i * ld + j]) + S(d.ten_A(w)[i * ld + j]));
      }
    } else {  // entries strided over the lanes (coalesced)
      for (int idx = team.rank(); idx < ld * ld; idx += team.size()) {
        const int i = idx / ld, j = idx % ld;
        A[idx] = (i == j && i < nv) ? T(S(M[idx]) + S(h) * S(m.dof_damping[i])) : M[idx];
        if (m.nten_A > 0) A[idx] = T(S(A[idx]) + S(d.ten_A(w)[idx]));
      }
    }
    team.sync();
    if (m.ntendon > 0 && team.rank() == 0) {  // one-lane: fixed-tendon armature and damping in A (a scatter)
      for (int t = 0; t < m.ntendon; ++t) {  // (a + h b) J_t^T J_t (both triangles: A is full)
        const S k = S(m.tendon_armature[t]) + S(h) * S(m.tendon_damping[t]);
        if (k == S(0)) continue;
        for_each_fixed_tendon_dof(m, t, [&](int da, double ca) {
          for_each_fixed_tendon_dof(m, t, [&](int db, double cb) {
            const int idx = da * ld + db;
            A[idx] = T(S(A[idx]) + k * S(ca) * S(cb));
          });
        });
      }
    }
    if (m.ntendon > 0) team.sync();
  }

  template <class Team>
  SAP_HD void operator()(int w, Team& team) const {
    // A skipped world is not computed (the whole team returns: uniform). Every lane reads the
    // status here, long before rank 0 ORs its bits in below (barriers in between).
    if (status[w] & kStatusSkipped) return;
    const DataView dw = working_set(team);
    if constexpr (copies_cdof<Team>()) {
      if (on_chip) {
        world_step(w, team, dw, cdof_copy(w, team));
        return;
      }
    }
    world_step(w, team, dw, d.cdof(w));
  }

  // World w's cdof copied into the team's scratch in S (copies_cdof, on chip).
  template <class Team>
  SAP_HD const S* cdof_copy(int w, Team& team) const {
    const FreeMotionOnChip o = FreeMotionOnChip::layout(m.nv, m.nbody, m.nv_pad, true, true);
    S* copy = reinterpret_cast<S*>(reinterpret_cast<double*>(team.shared_mem()) + o.cdof);
    const double* cdof = d.cdof(w);
    for (int k = 0; k < 6 * m.nv; ++k) copy[k] = S(cdof[k]);
    return copy;
  }

#if !defined(__CUDACC__)
  // The CPU's free motion of worlds w0 .. w0 + g - 1 (g <= kWorldLanes; one team of one lane
  // each, every team with its own scratch) side by side: each world's assembly, then the factors
  // of A taken together, one world per SIMD lane (kernels/cholesky_worlds.hpp), when their
  // envelopes agree (else each alone), then each world's passes; for the fp32 free motion on chip
  // the tree passes too (kernels/tree_worlds.hpp). The worlds share no data: each world's
  // arithmetic is operator()'s, bitwise. lanes: world_lanes_bytes() of scratch.
  template <class Team>
  void run_worlds(int w0, int g, Team* teams, void* lanes) const {
    if constexpr (copies_cdof<Team>()) {
      if (on_chip && !(tree_in_lanes() && g >= 2)) {  // lanes gather cdof themselves
        const S* copies[kWorldLanes];
        for (int l = 0; l < g; ++l) copies[l] = cdof_copy(w0 + l, teams[l]);
        steps_side_by_side(w0, g, teams, lanes, copies);
        return;
      }
    }
    const double* cdofs[kWorldLanes];
    for (int l = 0; l < g; ++l) cdofs[l] = d.cdof(w0 + l);
    steps_side_by_side(w0, g, teams, lanes, cdofs);
  }

  // The factors' lanes, then (tree_in_lanes) the tree passes' lanes.
  std::size_t world_lanes_bytes() const {
    return sap::world_lanes_bytes<S>(m.nv_pad) + (tree_in_lanes() ? TreeWorlds<S>::bytes(m) : 0);
  }
  TreeWorlds<S> tree_lanes(void* lanes) const {
    return TreeWorlds<S>::at(static_cast<char*>(lanes) + sap::world_lanes_bytes<S>(m.nv_pad), m);
  }

  // The tree passes in lanes: the fp32 free motion with its working set on chip (the passes'
  // scratch is then the team's, which no later stage reads).
  bool tree_in_lanes() const { return sizeof(S) == sizeof(float) && on_chip; }

  // The bias at velocities v[k] of count worlds side by side (their cdof and cinert already in
  // t): body velocities and bias forces in lanes, world k's bias to bias[k]; bitwise the one-lane
  // body_velocities and bias_forces of each world.
  template <class Team>
  void bias_side_by_side(Team& team, const TreeWorlds<S>& t, const double* const* v, double* const* bias,
                         int count) const {
    using L = LaneScalar<S>;
    gather_lanes(t.qvel, v, count, m.nv);
    body_velocities<L>(team, m, t.qvel, t.cdof, t.cvel, t.cdof_dot);
    bias_forces<L>(team, m, t.qvel, t.cdof, t.cdof_dot, t.cinert, t.cvel, t.cacc, t.cfrc, t.bias);
    scatter_lanes(t.bias, bias, count, m.nv);
  }

  // M's rows (composite inertias, then mass_matrix_row) of count worlds side by side into M[k]:
  // their lower triangles (entries j <= i), the rest being assemble_A's (mass_matrix_symmetrize_row
  // copies each upper entry from the lower one).
  template <class Team, class T>
  void mass_rows_side_by_side(Team& team, const TreeWorlds<S>& t, T* const* M, int count) const {
    using L = LaneScalar<S>;
    composite_inertias<L>(team, m, t.cinert, t.crb);
    for (int i = 0; i < m.nv; ++i) {
      mass_matrix_row_into<L>(m, t.cdof, t.crb, i, t.row);
      T* row[kWorldLanes];
      for (int k = 0; k < count; ++k) row[k] = M[k] + i * m.nv_pad;
      scatter_lanes(t.row, row, count, i + 1);
    }
  }

  template <class Team, class C>
  void steps_side_by_side(int w0, int g, Team* teams, void* lanes, C* const* cdof) const {
    int live[kWorldLanes], count = 0;  // the worlds not skipped, and their working sets
    DataView dw[kWorldLanes];
    for (int l = 0; l < g; ++l)
      if (!(status[w0 + l] & kStatusSkipped)) {
        dw[count] = working_set(teams[l]);
        live[count++] = l;
      }
    int wk[kWorldLanes];  // world of live world k
    const double* v[kWorldLanes];
    double* bias[kWorldLanes];
    for (int k = 0; k < count; ++k) {
      wk[k] = w0 + live[k];
      bias[k] = dw[k].qfrc_bias(wk[k]);
    }
    // Assembly: the tree passes (in lanes, or each world's own with kTree), then each world's rest.
    const bool in_lanes = tree_in_lanes() && count >= 2;
    const TreeWorlds<S> t = in_lanes ? tree_lanes(lanes) : TreeWorlds<S>{};
    Team& team = teams[count > 0 ? live[0] : 0];  // the lanes run on one team
    if (in_lanes) {
      const C* cd[kWorldLanes];
      const double* cinert[kWorldLanes];
      for (int k = 0; k < count; ++k) {
        cd[k] = cdof[live[k]];
        cinert[k] = d.cinert(wk[k]);
        v[k] = state_in.qvel(wk[k]);
      }
      gather_lanes(t.cdof, cd, count, 6 * m.nv);
      gather_lanes(t.cinert, cinert, count, 10 * m.nbody);
      bias_side_by_side(team, t, v, bias, count);
      if (d.A_f32) {
        float* M[kWorldLanes];
        for (int k = 0; k < count; ++k) M[k] = d.A32(wk[k]);
        mass_rows_side_by_side(team, t, M, count);
      } else {
        double* M[kWorldLanes];
        for (int k = 0; k < count; ++k) M[k] = d.M(wk[k]);
        mass_rows_side_by_side(team, t, M, count);
      }
    }
    S* a[kWorldLanes];
    for (int k = 0; k < count; ++k) {
      if (in_lanes) world_step<kAssembleA>(wk[k], teams[live[k]], dw[k], cdof[live[k]]);
      else world_step<kAssembleA | kTree>(wk[k], teams[live[k]], dw[k], cdof[live[k]]);
      a[k] = reinterpret_cast<S*>(dw[k].chol(wk[k]));
    }
    bool ok[kWorldLanes];
    int* first0 = count > 0 ? dw[0].chol_first(wk[0]) : nullptr;
    using V = typename WorldLanes<S>::V;
    V* factor = static_cast<V*>(lanes);  // the four factors in lanes (in_lanes), ld * ld + ld vectors
    if (in_lanes) {  // the factors stay in lanes for the passes' solves
      const bool together = load_world_lanes<S>(a, count, m.nv, m.nv_pad, factor, first0) &&
                            cholesky_factor_lanes<S>(factor, m.nv, m.nv_pad, first0);
      if (together) {
        for (int k = 0; k < count; ++k) ok[k] = true;
        passes_side_by_side(wk, teams, live, count, dw, t, a, factor, first0, ok);
        return;
      }
    } else if (count >= 2 && cholesky_factor_worlds<S>(a, count, m.nv, m.nv_pad, factor, first0)) {
      for (int k = 0; k < count; ++k) {  // every world's envelope, which its passes' solves read
        int* first = dw[k].chol_first(wk[k]);
        if (first != first0)
          for (int i = 0; i < m.nv; ++i) first[i] = first0[i];
        ok[k] = true;
      }
      for (int k = 0; k < count; ++k) world_step<kPasses>(wk[k], teams[live[k]], dw[k], cdof[live[k]], ok[k]);
      return;
    }
    for (int k = 0; k < count; ++k) ok[k] = cholesky_factor<S>(teams[live[k]], a[k], m.nv, m.nv_pad, dw[k].chol_first(wk[k]));
    if (in_lanes) passes_side_by_side(wk, teams, live, count, dw, t, a, nullptr, nullptr, ok);
    else
      for (int k = 0; k < count; ++k) world_step<kPasses>(wk[k], teams[live[k]], dw[k], cdof[live[k]], ok[k]);
  }

  // world_step's passes of count worlds side by side, phase by phase (pass_bias_velocity, ...):
  // the biases in lanes, and the solves in lanes with the factors `factor` (common envelope
  // first) when given, else each world's own factor a[k]. ok[k]: world k's factor succeeded.
  template <class Team>
  void passes_side_by_side(const int* wk, Team* teams, const int* live, int count, const DataView* dw,
                           const TreeWorlds<S>& t, S* const* a, const typename WorldLanes<S>::V* factor,
                           const int* first, const bool* ok) const {
    using V = typename WorldLanes<S>::V;
    const int nv = m.nv, ld = m.nv_pad;
    PassState st[kWorldLanes];
    bool more[kWorldLanes];
    int running = 0;
    for (int k = 0; k < count; ++k) running += more[k] = ok[k];
    V* xl = factor ? const_cast<V*>(factor) + ld * ld : nullptr;
    while (running > 0) {
      const double* vb[kWorldLanes];
      double* bias[kWorldLanes] = {};
      bool any_bias = false;
      for (int k = 0; k < count; ++k) {
        vb[k] = more[k] ? pass_bias_velocity(wk[k], teams[live[k]], st[k]) : nullptr;
        if (vb[k]) {
          bias[k] = dw[k].qfrc_bias(wk[k]);
          any_bias = true;
        } else {
          vb[k] = state_in.qvel(wk[k]);  // a stand-in, its lane's result dropped
        }
      }
      if (any_bias) bias_side_by_side(teams[live[0]], t, vb, bias, count);
      S* x[kWorldLanes];
      for (int k = 0; k < count; ++k) {
        x[k] = a[k] + ld * ld;
        if (more[k]) pass_rhs(wk[k], teams[live[k]], dw[k], x[k]);
      }
      if (factor) {
        for (int i = 0; i < nv; ++i)
          for (int l = 0; l < kWorldLanes; ++l) xl[i][l] = x[l < count ? l : 0][i];
        cholesky_solve_lanes<S>(factor, xl, nv, ld, first);
        for (int k = 0; k < count; ++k)
          if (more[k])
            for (int i = 0; i < nv; ++i) x[k][i] = xl[i][k];
      } else {
        for (int k = 0; k < count; ++k)
          if (more[k]) cholesky_solve<S>(teams[live[k]], a[k], x[k], nv, ld, dw[k].chol_first(wk[k]));
      }
      for (int k = 0; k < count; ++k)
        if (more[k] && !pass_update(wk[k], teams[live[k]], x[k], st[k])) {
          more[k] = false;
          --running;
        }
    }
    for (int k = 0; k < count; ++k) pass_status(wk[k], teams[live[k]], ok[k], st[k]);
  }
#endif

  // The free motion of world w, with the working set dw and cdof in its storage C (d's, or the
  // one-lane copy): kParts = kWholeStep. The CPU's worlds side by side (steps_side_by_side) run
  // it in parts around the work they do together: kAssembleA (k0 and A, loaded for the factor;
  // with kTree the tree passes before it: the bias at v_n and M's rows), then the factors of A,
  // then kPasses (`factored`: the factor's result), or the passes' phases side by side
  // (passes_side_by_side). One body, so that the whole step compiles as one function on the GPU.
  enum : int { kAssembleA = 1, kTree = 2, kPasses = 4, kWholeStep = 7 };
  template <int kParts = kWholeStep, class Team, class C>
  SAP_HD void world_step(int w, Team& team, const DataView& dw, const C* cdof, bool factored = false) const {
    const int nv = m.nv, ld = m.nv_pad;
    const TreeScratch t = tree_scratch(dw, w);
    const double* qvel = state_in.qvel(w);
    double* k0 = dw.scratch_nv(w);  // explicit forces without the bias
    S* L = reinterpret_cast<S*>(dw.chol(w));
    S* x = L + ld * ld;
    if constexpr ((kParts & kAssembleA) != 0) {
      // Tree passes level-parallel (lanes = the bodies of one depth level, a barrier between
      // levels), the per-dof terms strided over the lanes.
      if constexpr ((kParts & kTree) != 0) {
        body_velocities<S>(team, m, qvel, cdof, t.cvel, t.cdof_dot);
        bias_forces<S>(team, m, qvel, cdof, t.cdof_dot, d.cinert(w), t.cvel, t.cacc, t.cfrc, dw.qfrc_bias(w));
        composite_inertias<S>(team, m, d.cinert(w), t.crb);
      }
      spring_forces<S>(team, m, state_in.qpos(w), dw.qfrc_spring(w));
      team.sync();
      const double* applied = control.qfrc_applied(w);
      for (int i = team.rank(); i < nv; i += team.size())
        k0[i] = double(S(applied[i]) + S(dw.qfrc_spring(w)[i]) - S(m.dof_damping[i]) * S(qvel[i]));
      if (m.nqfrc_extra > 0)  // stage 1b's explicit forces (kernels/actuation.hpp) at v_n
        for (int i = team.rank(); i < nv; i += team.size()) k0[i] = double(S(k0[i]) + S(d.qfrc_extra(w)[i]));
      bool has_scatter = m.ntendon > 0;
      for (int u = 0; u < m.nu && !has_scatter; ++u) has_scatter = m.actuator_type[u] == kActMotor;
      if (has_scatter) {
        team.sync();
        if (team.rank() == 0) {  // one-lane: motor forces and tendon damping (scatter onto dofs)
          // Motors on dofs and fixed tendons (spatial tendons' motors: stage 1b).
          const double* ctrl = control.ctrl(w);
          for (int u = 0; u < m.nu; ++u)
            if (m.actuator_type[u] == kActMotor) {
              const int t = m.actuator_tendonid ? m.actuator_tendonid[u] : -1;
              const S f = motor_force<S>(m, u, actuator_law_input<S>(m, u, ctrl, d.act_input(w)));
              if (t < 0) {
                const int dof = m.actuator_dofadr[u];
                k0[dof] = double(S(k0[dof]) + f);
              } else {  // tendon transmission: J_t^T (gear ctrl)
                for_each_fixed_tendon_dof(m, t, [&](int dof, double c) { k0[dof] = double(S(k0[dof]) + S(c) * f); });
              }
            }
          // Fixed-tendon damping b: -J_t^T b J_t v here, h b J_t^T J_t in A below (implicit, as
          // dof_damping; spatial tendons: stage 1b).
          for (int t = 0; t < m.ntendon; ++t) {
            if (m.tendon_damping[t] == 0) continue;
            S Ld = S(0);
            for_each_fixed_tendon_dof(m, t, [&](int dof, double c) { Ld += S(c) * S(qvel[dof]); });
            for_each_fixed_tendon_dof(m, t, [&](int dof, double c) {
              k0[dof] = double(S(k0[dof]) - S(m.tendon_damping[t]) * S(c) * Ld);
            });
          }
        }
      }
      team.sync();
      // Factor A once in precision S, in reversed dof order (cholesky_load_reversed: no fill on a
      // tree); each pass solves A a = k0 - bias and sets v* = v + h a.
      if (d.A_f32) {  // A in fp32 storage (DataLayout::A_fp32), M in it
        assemble_A<(kParts & kTree) != 0>(w, team, cdof, t.crb, d.A32(w), d.A32(w));
        cholesky_load_reversed<S>(team, d.A32(w), L, nv, ld);
      } else {
        assemble_A<(kParts & kTree) != 0>(w, team, cdof, t.crb, d.M(w), d.A(w));
        cholesky_load_reversed<S>(team, d.A(w), L, nv, ld);
      }
    }
    bool ok = factored;
    if constexpr (kParts == kWholeStep) ok = cholesky_factor<S>(team, L, nv, ld, dw.chol_first(w));
    if constexpr ((kParts & kPasses) == 0) return;
    PassState st;
    while (ok) {
      if (st.pass > 0) {
        const double* v_bias = pass_bias_velocity(w, team, st);
        body_velocities<S>(team, m, v_bias, cdof, t.cvel, t.cdof_dot);
        bias_forces<S>(team, m, v_bias, cdof, t.cdof_dot, d.cinert(w), t.cvel, t.cacc, t.cfrc, dw.qfrc_bias(w));
      }
      pass_rhs(w, team, dw, x);
      cholesky_solve<S>(team, L, x, nv, ld, dw.chol_first(w));
      if (!pass_update(w, team, x, st)) break;
    }
    pass_status(w, team, ok, st);
  }

  // The passes of world_step, phase by phase (the CPU's worlds side by side run each phase of
  // their passes together: steps_side_by_side). Pass k of world w: pass_bias_velocity (k >= 1:
  // vbar into v_star, and the velocities at which the bias is taken; null at pass 0, whose bias
  // at v_n the assembly formed), the bias there, pass_rhs, the solve with the factor of A,
  // pass_update (v*; false when no pass follows), and after the last pass_status.
  struct PassState {
    int pass = 0;
    double delta_prev = 0;
    bool explicit_fallback = false;
  };
  template <class Team>
  SAP_HDI const double* pass_bias_velocity(int w, Team& team, const PassState& st) const {
    if (st.pass == 0) return nullptr;
    const double* qvel = state_in.qvel(w);
    double* v_star = d.v_star(w);  // temporarily vbar; overwritten by the pass's solution
    for (int i = team.rank(); i < m.nv; i += team.size()) v_star[i] = double(S(0.5) * (S(qvel[i]) + S(v_star[i])));
    team.sync();
    return st.explicit_fallback ? qvel : v_star;
  }
  // x <- k0 - bias in the factor's (reversed) dof order.
  template <class Team>
  SAP_HDI void pass_rhs(int w, Team& team, const DataView& dw, S* x) const {
    team.sync();
    const double* k0 = dw.scratch_nv(w);
    for (int i = team.rank(); i < m.nv; i += team.size()) x[m.nv - 1 - i] = S(k0[i]) - S(dw.qfrc_bias(w)[i]);
    team.sync();
  }
  // The midpoint passes are a fixed-point iteration v* <- F(v*) = v + h A^-1 (k - C((v + v*)/2));
  // it contracts while h |A^-1 dC/dv| / 2 < 1, i.e. at joint speeds well below 1/h (500 rad/s
  // at h = 2 ms). Beyond, the passes amplify the speed step after step (a joint started 1.1 rad
  // outside its limit, tests/test_initial_limits.cpp). The explicit v* of pass 0 is F(v_n), so
  // with delta_0 = max |v*_0 - v_n| (taken in pass 1, from its vbar) and delta_k =
  // max |v*_k - v*_{k-1}| of pass k >= 1, delta_k / delta_{k-1} bounds F's Lipschitz factor
  // from below from the first pass on: a pass that moves more than half as much as the one
  // before (and more than 1e-3 (1 + max |v*|), so never at rounding level) contracts too slowly
  // to trust, and the step takes the explicit v* instead (pass 0 again: Drake's Coriolis at
  // v_n). At ordinary speeds the factor is ~h |v| << 1/2.
  template <class Team>
  SAP_HDI bool pass_update(int w, Team& team, const S* x, PassState& st) const {
    const int nv = m.nv;
    const double* qvel = state_in.qvel(w);
    double* v_star = d.v_star(w);
    double delta = 0, delta0 = 0, vmax = 0;
    for (int i = team.rank(); i < nv; i += team.size()) {
      const double v_new = double(S(qvel[i]) + S(h) * x[nv - 1 - i]);
      const double v_prev = 2.0 * v_star[i] - qvel[i];  // v*_{k-1} = 2 vbar - v (k >= 1)
      delta = max_(delta, abs_(v_new - v_prev));
      delta0 = max_(delta0, abs_(v_prev - qvel[i]));  // at pass 1: |v*_0 - v_n|
      vmax = max_(vmax, abs_(v_new));
      v_star[i] = v_new;
    }
    if (st.pass == 0 || st.explicit_fallback) {
      team.sync();
      return !st.explicit_fallback && ++st.pass <= coriolis_passes;
    }
    delta = team.reduce_max(delta);
    if (st.pass == 1) st.delta_prev = team.reduce_max(delta0);
    vmax = team.reduce_max(vmax);
    if (delta > 0.5 * st.delta_prev && delta > 1e-3 * (1.0 + vmax)) st.explicit_fallback = true;  // the pass again, bias at v_n
    else ++st.pass;
    st.delta_prev = delta;
    team.sync();
    return st.pass <= coriolis_passes;
  }
  template <class Team>
  SAP_HDI void pass_status(int w, Team& team, bool ok, const PassState& st) const {
    const double* v_star = d.v_star(w);
    bool finite = ok;
    for (int i = team.rank(); i < m.nv; i += team.size())
      if (!isfinite_(v_star[i])) finite = false;
    const int nonfinite = team.reduce_sum(finite ? 0 : 1);
    if (team.rank() == 0) {  // one-lane: status bits
      if (!ok) status[w] |= kStatusFactorizationFailed;
      if (nonfinite) status[w] |= kStatusNonFinite;
      if (st.explicit_fallback) status[w] |= kStatusCoriolisFallback;
    }
    team.sync();
  }
};

}  // namespace sap
