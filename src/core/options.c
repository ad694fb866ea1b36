/* Runtime options: one table of name, default and meaning. Each is read once
 * from the environment variable BRISK_<NAME> (upper case). */
#include "core.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct option_desc {
  const char *name;
  long default_value;
  const char *meaning;
} option_desc;

static const option_desc option_table[OPTION_COUNT] = {
    [OPTION_PURGE_DELAY] = {"purge_delay", 10,
                            "ms a free page stays resident before it goes back to the OS; "
                            "0 = at once, negative = never"},
    [OPTION_STATS] = {"stats", 0, "print statistics at exit: 1 = text, json = JSON"},
    [OPTION_LEAKS] = {"leaks", 0, "1 = report blocks still allocated at exit, by call site"},
    [OPTION_PROFILE] = {"profile", 0,
                        "1 = sample slow-path events by call site into "
                        "<program>.brisk-profile.txt (or BRISK_PROFILE_FILE)"},
    [OPTION_PROFILE_RATE] = {"profile_rate", 1024,
                             "trace one in this many refills and remote frees (each OS call "
                             "and lock wait is traced)"},
    [OPTION_CHECK] = {"check", 0,
                      "1 = checked mode: report double, invalid and interior frees and "
                      "overruns with stack traces, then exit with status 86"},
};

static long option_value[OPTION_COUNT];
static _Atomic(int) xoptions_ready;

static long parse_long(const char *text, long fallback) {
  if (strcmp(text, "json") == 0) return STATS_JSON;
  char *end;
  long v = strtol(text, &end, 10);
  return (end == text) ? fallback : v;
}

void options_init(void) {
  if (atomic_load_acquire(&xoptions_ready)) return;
  for (int i = 0; i < OPTION_COUNT; i++) {
    char env_name[64] = "BRISK_";
    size_t n = 6;
    for (const char *c = option_table[i].name; *c && n < sizeof env_name - 1; c++)
      env_name[n++] = (char)toupper((unsigned char)*c);
    env_name[n] = 0;
    const char *text = platform_getenv(env_name);
    option_value[i] =
        text ? parse_long(text, option_table[i].default_value) : option_table[i].default_value;
  }
  atomic_store_release(&xoptions_ready, 1);
}

long option_get(option_id id) {
  if (unlikely(!atomic_load_acquire(&xoptions_ready))) options_init();
  return option_value[id];
}
