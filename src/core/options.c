/* SPDX-License-Identifier: MIT */
/* Runtime settings: one table of name, kind, default and meaning. Each is
 * read once, at start-up, from the environment variable BRISK_<NAME>. A value
 * brisk cannot read, and a BRISK_ variable it does not know, get one warning
 * naming the variable, the value and what is accepted; the setting keeps its
 * default. BRISK_VERBOSE=1 prints every setting with its value and source. */
#include "core.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum option_kind {
  KIND_SWITCH,   /* 1/0, true/false, yes/no, on/off */
  KIND_DURATION, /* milliseconds: 10, 10ms, 2s; negative or "never": never */
  KIND_COUNT,    /* a whole number >= 1 */
  KIND_STATS,    /* a switch, or text / json */
  KIND_PATH,     /* a file name */
  KIND_RATE,     /* a whole number >= 0 (0: off), or a switch (on: the default rate) */
} option_kind;

typedef struct option_desc {
  const char *name; /* the variable is BRISK_<name> */
  option_kind kind;
  long default_value;
  const char *meaning;
} option_desc;

static const option_desc option_table[OPTION_COUNT] = {
    [OPTION_PURGE_DELAY] = {"PURGE_DELAY", KIND_DURATION, PURGE_DELAY_MS,
                            "how long a free page stays resident before it goes back to the OS "
                            "(0: at once, never: kept)"},
    [OPTION_STATS] = {"STATS", KIND_STATS, STATS_OFF,
                      "statistics at exit: on (text) or json, to stderr or BRISK_STATS_FILE"},
    [OPTION_STATS_FILE] = {"STATS_FILE", KIND_PATH, 0, "file for the statistics (default stderr)"},
    [OPTION_LEAKS] = {"LEAKS", KIND_SWITCH, 0,
                      "report blocks still allocated at exit, by call site"},
    [OPTION_PROFILE] = {"PROFILE", KIND_SWITCH, 0,
                        "sample slow-path events by call site into "
                        "<program>.brisk-profile.txt (or BRISK_PROFILE_FILE)"},
    [OPTION_PROFILE_FILE] = {"PROFILE_FILE", KIND_PATH, 0,
                             "file for the profile (default <program>.brisk-profile.txt)"},
    [OPTION_PROFILE_RATE] = {"PROFILE_RATE", KIND_COUNT, 1024,
                             "trace one in this many refills and remote frees (each OS call "
                             "and lock wait is traced)"},
    [OPTION_HEAP_PROFILE] = {"HEAP_PROFILE", KIND_PATH, 0,
                             "sample allocations and write the heap profile to this file at "
                             "exit (pprof's format; folded stacks beside it)"},
    [OPTION_HEAP_PROFILE_RATE] = {"HEAP_PROFILE_RATE", KIND_COUNT, 512 * 1024,
                                  "the heap profile samples one allocation per this many bytes "
                                  "allocated, on average"},
    [OPTION_HEAP_PROFILE_SIGNAL] = {"HEAP_PROFILE_SIGNAL", KIND_COUNT, 0,
                                    "a signal number that writes the heap profile, numbered "
                                    "(0: none)"},
    [OPTION_LEAKS_FILE] = {"LEAKS_FILE", KIND_PATH, 0,
                           "file for the leak report (default stderr); .pb.gz: pprof, "
                           ".folded: folded stacks"},
    [OPTION_LEAKS_EXITCODE] = {"LEAKS_EXITCODE", KIND_COUNT, 0,
                               "exit status of a program that leaked (0: its own)"},
    [OPTION_LEAKS_SUPPRESS] = {"LEAKS_SUPPRESS", KIND_PATH, 0,
                               "file of functions or libraries (one a line, * matches any "
                               "text) whose leaks are not reported"},
    [OPTION_CHECK] = {"CHECK", KIND_SWITCH, 0,
                      "checked mode: report double, invalid and interior frees and overruns "
                      "with stack traces, then exit with status 86"},
    [OPTION_BACKGROUND] = {"BACKGROUND", KIND_SWITCH, 1,
                           "a background thread gives free memory back while the program does "
                           "not call the allocator"},
    [OPTION_HUGE_PAGES] = {"HUGE_PAGES", KIND_SWITCH, 0,
                           "ask the OS for huge pages (2 MiB) for brisk's memory: fewer page "
                           "faults in large heaps, more resident memory in small ones"},
    [OPTION_VERBOSE] = {"VERBOSE", KIND_SWITCH, 0, "print every setting at start-up"},
    [OPTION_SYMBOLS_LATER] = {"SYMBOLS_LATER", KIND_SWITCH, 0,
                              "reports name each frame by module, offset and build id, for "
                              "`brisk symbolize REPORT` to name later (no addr2line run)"},
    [OPTION_GUARD] = {"GUARD", KIND_RATE, 0,
                      "sampled guard pages: about one block (up to 4 KiB) in this many "
                      "(on: " GUARD_DEFAULT_RATE_TEXT
                      ") faults when overrun or used after its free, with a report"},
};

static const char *const accepted[] = {
    [KIND_SWITCH] = "1, 0, true, false, yes, no, on or off",
    [KIND_DURATION] = "milliseconds (10 or 10ms), seconds (2s), or never",
    [KIND_COUNT] = "a whole number of at least 1",
    [KIND_STATS] = "1, 0, on, off, true, false, yes, no, text or json",
    [KIND_PATH] = "a file name",
    [KIND_RATE] = "a whole number (0: off), on or off",
};

static long option_value[OPTION_COUNT];
static const char *option_text_value[OPTION_COUNT];
static bool option_from_environment[OPTION_COUNT];
static _Atomic(int) xoptions_ready;

static bool same(const char *text, const char *word) {
  return strcasecmp(text, word) == 0;
}

static bool parse_switch(const char *text, long *value) {
  if (same(text, "1") || same(text, "true") || same(text, "yes") || same(text, "on")) {
    *value = 1;
    return true;
  }
  if (same(text, "0") || same(text, "false") || same(text, "no") || same(text, "off")) {
    *value = 0;
    return true;
  }
  return false;
}

/* A whole number, then whatever follows it in *rest. */
static bool parse_number(const char *text, long *value, const char **rest) {
  char *end;
  *value = strtol(text, &end, 10);
  if (end == text) return false;
  *rest = end;
  return true;
}

static bool parse_duration(const char *text, long *value) {
  if (same(text, "never")) {
    *value = -1;
    return true;
  }
  const char *unit;
  if (!parse_number(text, value, &unit)) return false;
  if (*value < 0) {
    *value = -1;
    return *unit == 0 || same(unit, "ms") || same(unit, "s");
  }
  if (*unit == 0 || same(unit, "ms")) return *value <= 3600 * 1000;
  if (same(unit, "s") && *value <= 3600) {
    *value *= 1000;
    return true;
  }
  return false;
}

static bool parse(option_kind kind, const char *text, long *value) {
  const char *rest;
  switch (kind) {
  case KIND_SWITCH:
    return parse_switch(text, value);
  case KIND_DURATION:
    return parse_duration(text, value);
  case KIND_COUNT:
    return parse_number(text, value, &rest) && *rest == 0 && *value >= 1;
  case KIND_STATS:
    if (same(text, "text")) *value = STATS_TEXT;
    if (same(text, "json")) *value = STATS_JSON;
    if (same(text, "text") || same(text, "json")) return true;
    if (!parse_switch(text, value)) return false;
    *value = *value ? STATS_TEXT : STATS_OFF;
    return true;
  case KIND_PATH:
    return text[0] != 0;
  case KIND_RATE: /* a number first: "1" is a rate here, not a switch */
    if (parse_number(text, value, &rest)) return *rest == 0 && *value >= 0;
    if (!parse_switch(text, value)) return false;
    *value = *value ? GUARD_DEFAULT_RATE : 0;
    return true;
  }
  return false;
}

static void describe(option_id id, char *out, size_t size) {
  const option_desc *option = &option_table[id];
  long value = option_value[id];
  switch (option->kind) {
  case KIND_SWITCH:
    msg_format(out, size, "%s", value ? "on" : "off");
    break;
  case KIND_DURATION:
    if (value < 0)
      msg_format(out, size, "never");
    else
      msg_format(out, size, "%ldms", value);
    break;
  case KIND_COUNT:
    msg_format(out, size, "%ld", value);
    break;
  case KIND_RATE:
    if (value == 0)
      msg_format(out, size, "off");
    else
      msg_format(out, size, "%ld", value);
    break;
  case KIND_STATS:
    msg_format(out, size, "%s",
               value == STATS_JSON   ? "json"
               : value == STATS_TEXT ? "text"
                                     : "off");
    break;
  case KIND_PATH:
    msg_format(out, size, "%s", option_text_value[id] ? option_text_value[id] : "(not set)");
    break;
  }
}

static void read_option(option_id id, char *name, size_t size) {
  const option_desc *option = &option_table[id];
  msg_format(name, size, "BRISK_%s", option->name);
  option_value[id] = option->default_value;
  const char *text = platform_getenv(name);
  if (text == NULL) return;
  long value = 0;
  if (!parse(option->kind, text, &value)) {
    char fallback[64];
    describe(id, fallback, sizeof fallback);
    msg_printf(2, "brisk: warning: %s=\"%.100s\" is not valid (accepted: %s); using %s\n", name,
               text, accepted[option->kind], fallback);
    return;
  }
  option_value[id] = value;
  option_text_value[id] = option->kind == KIND_PATH ? text : NULL;
  option_from_environment[id] = true;
}

/* A BRISK_ variable that is no setting is most likely a typo: say so. */
static void warn_unknown(void) {
  for (const char *const *entry = platform_environment(); entry && *entry; entry++) {
    if (strncmp(*entry, "BRISK_", 6) != 0) continue;
    size_t length = strcspn(*entry + 6, "=");
    bool known = false;
    for (int i = 0; i < OPTION_COUNT && !known; i++)
      known = strlen(option_table[i].name) == length &&
              strncmp(option_table[i].name, *entry + 6, length) == 0;
    if (!known) {
      char name[64];
      size_t n = length + 6 < sizeof name - 1 ? length + 6 : sizeof name - 1;
      memcpy(name, *entry, n);
      name[n] = 0;
      msg_printf(2, "brisk: warning: unknown setting %s ignored (see BRISK_VERBOSE=1 for all)\n",
                 name);
    }
  }
}

static void print_all(void) {
  msg_printf(2, "brisk: version %s\n", BRISK_VERSION_STRING);
  for (int i = 0; i < OPTION_COUNT; i++) {
    char name[64], value[300];
    msg_format(name, sizeof name, "BRISK_%s", option_table[i].name);
    describe((option_id)i, value, sizeof value);
    msg_printf(2, "brisk: setting %s=%s (%s): %s\n", name, value,
               option_from_environment[i] ? "from the environment" : "default",
               option_table[i].meaning);
  }
}

void options_init(void) {
  if (atomic_load_acquire(&xoptions_ready)) return;
  char name[64];
  for (int i = 0; i < OPTION_COUNT; i++)
    read_option((option_id)i, name, sizeof name);
  warn_unknown();
  atomic_store_release(&xoptions_ready, 1);
  if (option_value[OPTION_VERBOSE]) print_all();
}

long option_get(option_id id) {
  if (unlikely(!atomic_load_acquire(&xoptions_ready))) options_init();
  return option_value[id];
}

const char *option_text(option_id id) {
  if (unlikely(!atomic_load_acquire(&xoptions_ready))) options_init();
  return option_text_value[id];
}
