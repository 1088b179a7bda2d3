// Order-preserving compaction over the lanes of a team: each lane of a chunk contributes n
// items, and lanes_prefix_sum gives it the number contributed by the lanes before it, so the
// items land in lane order, as a serial loop over the chunk would place them (the collision's
// contacts, constraint setup's joint-limit rows).
#pragma once

#include "sap/backend/hd.hpp"

namespace sap {

// Exclusive prefix sum of n over lanes [0, width) of the team (width <= 32: they are one warp;
// lanes past it pass n = 0) and, in `total`, the sum over them: a shuffle-down suffix scan
// S_l = n_l + ... + n_(width-1) (log2(width) steps), total = S_0 (lane 0's, broadcast), and the
// prefix n_0 + ... + n_(l-1) = total - S_l. Integer sums: exact in any order.
template <class Team>
SAP_HDI int lanes_prefix_sum(Team& team, int width, int n, int& total) {
  const int lane = team.rank();
  int suffix = n;
  for (int off = 1; off < width; off <<= 1) {
    const int above = team.shfl_down(suffix, off);
    if (lane + off < width) suffix += above;
  }
  total = team.broadcast(suffix, 0);
  return total - suffix;
}

// Lanes per chunk of a compaction: the team, at most one warp (the scan shuffles within a warp).
template <class Team>
SAP_HDI int scan_width(const Team& team) {
  return team.size() < 32 ? team.size() : 32;
}

}  // namespace sap
