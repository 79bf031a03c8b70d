/* oci/: the config and state model shared by msp and msp-mcp.
 * The folder's face: the one header other folders include. What it includes is the
 * folder's public part; its other headers are private to it. */
#pragma once

#include "oci/err.h"
#include "oci/json-merge.h"
#include "oci/json.h"
#include "oci/logline.h"
#include "oci/macros.h"
#include "oci/roff.h"
#include "oci/spec.h"
#include "oci/state.h"
#include "oci/stats.h"
