/* egress/: the egress proxy of allowlist runs.
 * The folder's face: the one header other folders include. What it includes is the
 * folder's public part; its other headers are private to it. */
#pragma once

#include "egress/egress-listener.h"
#include "egress/proxy.h"
