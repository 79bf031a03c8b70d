/* image/: OCI images.
 * The folder's face: the one header other folders include. What it includes is the
 * folder's public part; its other headers are private to it. */
#pragma once

#include "image/image-cache.h"
