/* SPDX-License-Identifier: MIT */
/* The switches and hooks through which the diagnostic modes (src/diag/)
 * watch the core. The core reads them; only the diagnostics layer sets them,
 * at start-up, before any heap exists. */
#include "core.h"

#ifndef BRISK_NO_DIAGNOSTICS
bool diag_counting;
bool profile_on;
bool heap_sampling;
bool allocs_take_long_way;
#endif
core_hooks hooks;
_Atomic(bool) xfrees_take_long_way;
