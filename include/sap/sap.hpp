// Umbrella header of the public API.
#pragma once

#include "sap/collision.hpp"
#include "sap/contacts.hpp"
#include "sap/context.hpp"
#include "sap/data.hpp"
#include "sap/dynamics.hpp"
#include "sap/errors.hpp"
#include "sap/mjcf.hpp"
#include "sap/model.hpp"
#include "sap/model_builder.hpp"
#include "sap/rollout.hpp"
#include "sap/scene.hpp"
#include "sap/simulator.hpp"
#include "sap/solver_options.hpp"
#include "sap/solver_sap.hpp"
#include "sap/status.hpp"
