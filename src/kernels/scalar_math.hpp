// Scalar functions that the MuJoCo-model physics needs beyond sap/backend/hd.hpp (asin, exp),
// overloaded per scalar so that fp32 code never promotes to fp64.
#pragma once

#include "sap/backend/hd.hpp"

namespace sap {

SAP_HDI float asin_(float x) { return ::asinf(x); }
SAP_HDI double asin_(double x) { return ::asin(x); }
SAP_HDI float exp_(float x) { return ::expf(x); }
SAP_HDI double exp_(double x) { return ::exp(x); }

// MuJoCo's mjMINVAL: the smallest value its formulas divide by or compare lengths against.
constexpr double kMjMinVal = 1e-15;

}  // namespace sap
