/* libseccomp's <seccomp.h>. Our own runtime/lib/seccomp.h shadows it on the include
 * path (runtime/lib is an -I directory), so `#include <seccomp.h>` would find ours.
 * Include this file with angle brackets (<rt-libseccomp.h>) so that it is found through
 * the -I chain; #include_next then continues the search after runtime/lib. */
#pragma once

#include_next <seccomp.h>
