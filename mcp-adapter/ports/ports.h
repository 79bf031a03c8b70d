/* ports/: reaching a port a session's programs listen on, from outside its sandbox. The
 * folder's face: the one header other folders include. What it includes is the folder's
 * public part; its other headers are private to it. */
#pragma once

#include "ports/gateway.h"
#include "ports/port-listener.h"
#include "ports/relay.h"
