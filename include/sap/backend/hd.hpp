// Host/device portability layer. This is the only header that looks at __CUDACC__.
//
// Physics bodies are written once as SAP_HD functions templated on the scalar S (float or
// double) and compiled by g++ for the CPU backend and by nvcc for the CUDA backend. They use
// the scalar helpers below instead of std:: math so that fp32 code never promotes to fp64.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define SAP_HD __host__ __device__
#define SAP_DEVICE __device__
#define SAP_FORCEINLINE __forceinline__
#else
#define SAP_HD
#define SAP_DEVICE
#define SAP_FORCEINLINE inline
#endif

#define SAP_HDI SAP_HD SAP_FORCEINLINE

namespace sap {

// S(0.5)-style literals: write numeric constants as S(x) inside templated physics.

SAP_HDI float sqrt_(float x) { return ::sqrtf(x); }
SAP_HDI double sqrt_(double x) { return ::sqrt(x); }
SAP_HDI float abs_(float x) { return ::fabsf(x); }
SAP_HDI double abs_(double x) { return ::fabs(x); }
SAP_HDI float sin_(float x) { return ::sinf(x); }
SAP_HDI double sin_(double x) { return ::sin(x); }
SAP_HDI float cos_(float x) { return ::cosf(x); }
SAP_HDI double cos_(double x) { return ::cos(x); }
SAP_HDI float atan2_(float y, float x) { return ::atan2f(y, x); }
SAP_HDI double atan2_(double y, double x) { return ::atan2(y, x); }
SAP_HDI float acos_(float x) { return ::acosf(x); }
SAP_HDI double acos_(double x) { return ::acos(x); }
#if defined(__CUDACC__)
SAP_HDI bool isfinite_(float x) { return ::isfinite(x); }
SAP_HDI bool isfinite_(double x) { return ::isfinite(x); }
#else
inline bool isfinite_(float x) { return std::isfinite(x); }
inline bool isfinite_(double x) { return std::isfinite(x); }
#endif

template <class T>
SAP_HDI T min_(T a, T b) {
  return b < a ? b : a;
}
template <class T>
SAP_HDI T max_(T a, T b) {
  return a < b ? b : a;
}
template <class T>
SAP_HDI T clamp_(T x, T lo, T hi) {
  return x < lo ? lo : (hi < x ? hi : x);
}
template <class T>
SAP_HDI T sqr_(T x) {
  return x * x;
}

// Machine epsilon per scalar without <limits> on the device.
template <class S>
struct ScalarTraits;
template <>
struct ScalarTraits<float> {
  static constexpr float eps = 1.1920929e-07f;
  static constexpr float huge = 3.0e38f;
};
template <>
struct ScalarTraits<double> {
  static constexpr double eps = 2.220446049250313e-16;
  static constexpr double huge = 1.0e300;
};

constexpr double kPi = 3.14159265358979323846;

// Index of the lowest set bit of x != 0.
SAP_HDI int count_trailing_zeros(unsigned long long x) {
#if defined(__CUDA_ARCH__)
  return __ffsll(static_cast<long long>(x)) - 1;
#else
  return __builtin_ctzll(x);
#endif
}

// Whether a team type has one lane at compile time (it declares `static constexpr bool kOneLane
// = true`: the CPU's CpuTeam). Code for one lane only (`if constexpr (one_lane_team<Team>())`:
// independent partial sums where a lane has no neighbours to share the work with) is then not
// compiled into the GPU's kernels at all, so it costs them no register.
template <class Team>
constexpr bool one_lane_team_(decltype(Team::kOneLane)*) {
  return Team::kOneLane;
}
template <class Team>
constexpr bool one_lane_team_(...) {
  return false;
}
template <class Team>
constexpr bool one_lane_team() {
  return one_lane_team_<Team>(nullptr);
}

// Whether an executor's teams have one lane (it declares `kOneLane` too: CpuExec): its launches
// size the teams' shared memory for the one-lane code. The same detector as one_lane_team.
template <class Exec>
constexpr bool one_lane_exec() {
  return one_lane_team_<Exec>(nullptr);
}

}  // namespace sap
