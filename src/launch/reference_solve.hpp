// The reference linear solve of the split Newton loop on the host (linear_solver = reference):
// Eigen's LLT of each loaded Newton system, for the CPU and the emulated-team executors. It
// exists to cross-check our envelope Cholesky (kernels/cholesky.hpp) and to be measured
// against it; the CUDA twin (cuSOLVER batched) is in cuda/backend_cuda.cu.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <memory>

#include "kernels/newton.hpp"
#include "sap/backend/launch_cpu.hpp"
#include "sap/backend/launch_emu.hpp"
#include "sap/data.hpp"

namespace sap {

// Factors the n x n system held in the factor buffer (lower triangle of H, row-major with
// leading dimension ld, in precision Sl; the right-hand side after it) and overwrites the
// right-hand side with the solution. False when H is not numerically positive definite.
template <class Sl>
bool llt_solve_in_place(double* chol, int n, int ld) {
  using Mat = Eigen::Matrix<Sl, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Vec = Eigen::Matrix<Sl, Eigen::Dynamic, 1>;
  Sl* l = reinterpret_cast<Sl*>(chol);
  const Eigen::Map<const Mat, 0, Eigen::OuterStride<>> stored(l, n, n, Eigen::OuterStride<>(ld));
  const Mat h = stored.template triangularView<Eigen::Lower>();  // lower triangle only is valid
  const Eigen::LLT<Mat, Eigen::Lower> llt(h);
  if (llt.info() != Eigen::Success) return false;
  Eigen::Map<Vec> x(l + ld * ld, n);
  const Vec sol = llt.solve(x);
  if (!sol.allFinite()) return false;
  x = sol;
  return true;
}

// One solve per world that needs a direction, spread over the executor's threads.
template <class Exec>
int reference_solve_host(Exec& exec, bool f32, int nworld, int nv, int ld, Slab<double> chol, Slab<int> newton_int,
                         int* solve_ok) {
  int count = 0;
  for (int w = 0; w < nworld; ++w) count += newton_int(w)[kIterPhase] == kNewtonNeedsDirection;
  if (count == 0) return 0;
  parallel_for(exec, nworld, 1, [=](int w, int) {
    if (newton_int(w)[kIterPhase] != kNewtonNeedsDirection) return;
    solve_ok[w] = f32 ? llt_solve_in_place<float>(chol(w), nv, ld) : llt_solve_in_place<double>(chol(w), nv, ld);
  });
  return count;
}

inline int reference_solve(CpuExec& exec, std::shared_ptr<void>&, bool f32, int nworld, int nv, int ld,
                           Slab<double> chol, Slab<int> newton_int, int* solve_ok) {
  return reference_solve_host(exec, f32, nworld, nv, ld, chol, newton_int, solve_ok);
}

inline int reference_solve(EmuExec& exec, std::shared_ptr<void>&, bool f32, int nworld, int nv, int ld,
                           Slab<double> chol, Slab<int> newton_int, int* solve_ok) {
  return reference_solve_host(exec, f32, nworld, nv, ld, chol, newton_int, solve_ok);
}

}  // namespace sap
