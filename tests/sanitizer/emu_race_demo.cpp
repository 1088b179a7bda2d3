// A deliberately racy team kernel, to show that the emulated-team executor under
// ThreadSanitizer catches what CUDA's racecheck cannot (races through global memory):
//   emu_race_demo race    lane l writes x[l], then reads x[l + 1] with no sync() between
//   emu_race_demo clean   the same with the sync(): no report
// Built and run as two ctest cases in the ThreadSanitizer configuration (tools/run/run_tsan.sh):
// the first must print a data-race report, the second must pass silently.
#include <cstdio>
#include <cstring>
#include <vector>

#include "sap/backend/launch_emu.hpp"

namespace {

struct NeighbourSum {
  double* x;    // global memory: nworld x lanes
  double* out;  // nworld x lanes
  bool with_sync;
  template <class Team>
  void operator()(int w, Team& team) const {
    const int n = team.size(), l = team.rank();
    double* xw = x + w * n;
    xw[l] = 1.0 + l;
    if (with_sync) team.sync();
    out[w * n + l] = xw[l] + xw[(l + 1) % n];
    team.sync();
  }
};

}  // namespace

int main(int argc, char** argv) {
  const bool race = argc > 1 && std::strcmp(argv[1], "race") == 0;
  sap::EmuExec exec;
  exec.lanes = 8;
  exec.teams = 2;
  const int nworld = 4;
  std::vector<double> x(static_cast<std::size_t>(nworld * exec.lanes)), out(x.size());
  sap::for_each_world_team(exec, nworld, 0, NeighbourSum{x.data(), out.data(), !race});
  double total = 0;
  for (double v : out) total += v;
  std::printf("emu_race_demo %s: sum %.1f\n", race ? "race" : "clean", total);
  return 0;
}
