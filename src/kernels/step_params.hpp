// What the stage kernels receive besides their views: the step size and the resolved solver
// options. The options are the rows of SAP_SOLVER_OPTIONS (sap/solver_config.hpp), read by the
// kernels under their own names (p.config.rho, p.config.contact_weight_mode, ...), so a new
// option needs no translation between host and kernels.
#pragma once

#include "sap/solver_config.hpp"

namespace sap {

struct StepParams {
  double h = 0;         // the time step (dt in the host API; SolverSAP::step_once names it h)
  SolverConfig config;  // SolverOptions::resolve()
};

}  // namespace sap
