/* host/: what the host lets an ordinary user do.
 * The folder's face: the one header other folders include. What it includes is the
 * folder's public part; its other headers are private to it. */
#pragma once

#include "host/rootless-cgroup.h"
#include "host/rootless.h"
