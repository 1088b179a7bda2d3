#!/usr/bin/env python3
"""Reference trajectories from Drake's own SAP solver, written as self-describing JSON fixtures.

Each scene is defined once, as plain data (bodies, joints, geometries, materials, actuators,
initial state). The same data builds the Drake MultibodyPlant (discrete, SAP approximation,
point contact) and is written into the fixture, together with the per-step trajectory in
Drake's coordinates and in ours (MuJoCo-style free-joint convention), so a C++ test can rebuild
the scene with sap::ModelBuilder and compare. See tests/data/drake/README.md for the schema and
docs/drake-mapping.md for the parameter mapping and what was verified.

Commands (run from anywhere; Drake is installed on first use into <repo>/.venv-drake):
  python3 tools/reference/drake_reference.py generate [--scene NAME ...] [--out DIR]
  python3 tools/reference/drake_reference.py verify   [--out DIR]   # replay every step with a numpy SAP
  python3 tools/reference/drake_reference.py probe                  # one-step experiments on Drake's rules
  python3 tools/reference/drake_reference.py setup                  # only create the venv / install Drake

The numpy SAP in `verify` re-implements docs/sap-math.md (contact, limit and PD constraints,
Newton with an exact line search) on top of Drake's kinematics (M, bias, Jacobians) and our own
sphere/half-space geometry from the fixture; agreement with Drake's next-step velocities to the
solver tolerance validates both the formulas and the fixture's scene description.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from drake.__main__ import main  # noqa: E402

if __name__ == "__main__":
    main()
