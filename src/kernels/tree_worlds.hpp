// The tree passes (kernels/dynamics.hpp) of several worlds at once, one world per lane of a SIMD
// register: the CPU's free motion runs body velocities, the bias forces, the composite inertias
// and the mass matrix's rows of kWorldLanes worlds of one model side by side. Why: the passes
// walk the same tree with the same control flow in every world (the model's indices decide every
// branch), and each body's work is short chains of 3- and 6-vector arithmetic, so one world's
// pass leaves most of the arithmetic units idle; four worlds in the four lanes of an SSE register
// (fp32) share the loop control, the index loads and the latency chains.
//
// The passes' own code instantiated with S = LaneScalar<S> (kernels/world_lanes.hpp) computes
// each lane exactly as the one-lane code computes that world (the same bits). S(x) of a model
// parameter x is x rounded to S in every lane; the worlds' data (qvel, cdof, cinert) are
// gathered into lanes first and the results scattered back.
// Host code only, with the compiler's vector types: never compiled by nvcc.
#pragma once

#if !defined(__CUDACC__)

#include <cstddef>

#include "kernels/dynamics.hpp"
#include "kernels/world_lanes.hpp"

namespace sap {

// The lanes scratch of the tree passes: per-world inputs (qvel, cdof, cinert), the passes'
// per-body and per-dof scratch, and their outputs (bias, one row of M).
template <class S>
struct TreeWorlds {
  using L = LaneScalar<S>;
  L *qvel, *cdof, *cinert, *cvel, *cdof_dot, *cacc, *cfrc, *crb, *bias, *row;

  static std::size_t count(const ModelView& m) {
    return static_cast<std::size_t>(2 * m.nv + 12 * m.nv + 20 * m.nbody + 18 * m.nbody + m.nv_pad);
  }
  static std::size_t bytes(const ModelView& m) { return count(m) * sizeof(L); }
  static TreeWorlds at(void* scratch, const ModelView& m) {
    L* p = static_cast<L*>(scratch);
    TreeWorlds t;
    auto take = [&p](L*& a, int n) {
      a = p;
      p += n;
    };
    take(t.qvel, m.nv);
    take(t.bias, m.nv);
    take(t.cdof, 6 * m.nv);
    take(t.cdof_dot, 6 * m.nv);
    take(t.cinert, 10 * m.nbody);
    take(t.crb, 10 * m.nbody);
    take(t.cvel, 6 * m.nbody);
    take(t.cacc, 6 * m.nbody);
    take(t.cfrc, 6 * m.nbody);
    take(t.row, m.nv_pad);
    return t;
  }
};

}  // namespace sap

#endif  // !__CUDACC__
