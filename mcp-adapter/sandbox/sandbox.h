/* sandbox/: what one sandbox is made of.
 * The folder's face: the one header other folders include. What it includes is the
 * folder's public part; its other headers are private to it. */
#pragma once

#include "sandbox/budget-share.h"
#include "sandbox/bundle.h"
#include "sandbox/hook-args.h"
#include "sandbox/languages.h"
#include "sandbox/sandbox-ids.h"
#include "sandbox/sandbox-slices.h"
#include "sandbox/sandbox-userns.h"
#include "sandbox/spawn-client.h"
#include "sandbox/spawn-proto.h"
#include "sandbox/sysbinds.h"
#include "sandbox/usernet.h"
