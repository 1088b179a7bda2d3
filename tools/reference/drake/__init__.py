"""Drake reference fixtures (tools/reference/drake_reference.py is the command; the package is
tools/reference/drake/): the package's
constants. The modules, in dependency order: bootstrap, rotations, scenes, plant, ours, numpy_sap, generate, verify, probe.
"""
from __future__ import annotations

import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
VENV = os.path.join(REPO, ".venv-drake")
DRAKE_VERSION = "1.51.1"  # pinned: fixtures are regenerated bit-for-bit only with the same wheel
DEFAULT_OUT = os.path.join(REPO, "tests", "data", "drake")
SCHEMA = "sap-drake-reference/1"

# Drake constants that the Python API does not expose (documented in docs/drake-mapping.md).
DRAKE_SIGMA = 1e-3            # friction regularisation, hard-coded in sap_driver.cc
DRAKE_SOFT_NORM_EPS = 1e-7    # soft norm of the tangential impulse, sap_friction_cone_constraint
DRAKE_LIMIT_STIFFNESS = 1e12  # joint-limit constraint stiffness, sap_driver.cc
DRAKE_LIMIT_BETA = 0.1        # near-rigid threshold of limit constraints
DRAKE_LIMIT_WINDOW = 2.0      # limits are added only within q0 +- 2 h max(|v0|, |v*|)
DRAKE_PD_BETA = 0.1           # near-rigid threshold of PD constraints
DRAKE_STICTION_TOLERANCE = 1e-4  # MultibodyPlantConfig default v_s of the similar/lagged friction
DRAKE_SAP_DEFAULTS = {"rel_tolerance": 1e-6, "abs_tolerance": 1e-14, "cost_rel_tolerance": 1e-15,
                      "cost_abs_tolerance": 1e-30, "max_iterations": 100, "line_search": "exact"}
