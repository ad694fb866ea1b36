/* SPDX-License-Identifier: MIT */
/* Profiles the common tools read: pprof's profile.proto, gzipped, and
 * folded stacks ("outer;inner value", one stack a line) for flame graphs.
 *
 * The protobuf is written by hand (a profile is a few repeated messages of
 * varints and strings) and the gzip stream with stored deflate blocks and
 * its CRC-32, so brisk needs no compression library: pprof reads stored
 * blocks as it reads compressed ones. Every frame is named here, with its
 * function, file and line, so pprof shows the names without the binaries
 * (each mapping says it has functions, files and lines).
 *
 * Nothing here allocates through brisk: the buffers are the platform's
 * tables, reserved for the write and released after it. */
#include "diag.h"

#include <errno.h>
#include <string.h>

#define OUT_CAPACITY ((size_t)64 << 20) /* reserved, committed as written */
#define TEXT_CAPACITY ((size_t)16 << 20)
/* Each table's slots: a power of two, twice what the profile's frames could
 * need, so that a small profile touches few of their pages. */
#define KEYS_MIN 256
#define KEYS_MAX 65536
/* A message's buffer on the stack: the largest (a sample: SITE_FRAMES location
 * ids and its values) takes under 400 bytes, and a frame under 4 KiB needs no
 * stack probe on Windows (libgcc's ___chkstk_ms, which libbrisk.a cannot carry). */
#define SCRATCH 1024

typedef struct key_slot {
  uint64_t key; /* 0: empty */
  uint64_t id;
} key_slot;

typedef struct builder {
  uint8_t *out; /* the Profile message */
  size_t length;
  bool full;
  char *text; /* the string table's strings, each with its NUL */
  size_t text_length;
  uint64_t string_count;
  uint64_t keys;       /* each table's slots */
  key_slot *strings;   /* FNV hash of a string -> index + 1 (a collision: a new entry) */
  key_slot *locations; /* address -> location id */
  key_slot *functions; /* (name, file) -> function id */
  uint64_t location_count, function_count, mapping_count;
  uintptr_t module_low[64], module_high[64];
  uint64_t module_name[64];
} builder;

/* ---- protobuf encoding -------------------------------------------------------- */
static size_t put_varint(uint8_t *to, uint64_t value) {
  size_t n = 0;
  while (value >= 0x80) {
    to[n++] = (uint8_t)(value | 0x80);
    value >>= 7;
  }
  to[n++] = (uint8_t)value;
  return n;
}

typedef struct message {
  uint8_t bytes[SCRATCH];
  size_t length;
} message;

static void msg_varint(message *m, unsigned field, uint64_t value) {
  if (m->length + 24 > sizeof m->bytes) return;
  m->length += put_varint(m->bytes + m->length, (uint64_t)field << 3);
  m->length += put_varint(m->bytes + m->length, value);
}

/* A packed repeated varint field. */
static void msg_packed(message *m, unsigned field, const uint64_t *values, size_t count) {
  uint8_t packed[SITE_FRAMES * 10 + 64];
  size_t length = 0;
  for (size_t i = 0; i < count && length + 10 < sizeof packed; i++)
    length += put_varint(packed + length, values[i]);
  if (m->length + length + 24 > sizeof m->bytes) return;
  m->length += put_varint(m->bytes + m->length, (uint64_t)field << 3 | 2);
  m->length += put_varint(m->bytes + m->length, length);
  memcpy(m->bytes + m->length, packed, length);
  m->length += length;
}

static void msg_bytes(message *m, unsigned field, const void *bytes, size_t length) {
  if (m->length + length + 24 > sizeof m->bytes) return;
  m->length += put_varint(m->bytes + m->length, (uint64_t)field << 3 | 2);
  m->length += put_varint(m->bytes + m->length, length);
  memcpy(m->bytes + m->length, bytes, length);
  m->length += length;
}

/* Appends a field of the Profile message itself. */
static void out_bytes(builder *b, unsigned field, const void *bytes, size_t length) {
  if (b->length + length + 24 > OUT_CAPACITY) {
    b->full = true;
    return;
  }
  b->length += put_varint(b->out + b->length, (uint64_t)field << 3 | 2);
  b->length += put_varint(b->out + b->length, length);
  memcpy(b->out + b->length, bytes, length);
  b->length += length;
}

static void out_varint(builder *b, unsigned field, uint64_t value) {
  if (b->length + 24 > OUT_CAPACITY) return;
  b->length += put_varint(b->out + b->length, (uint64_t)field << 3);
  b->length += put_varint(b->out + b->length, value);
}

/* ---- the tables ------------------------------------------------------------------ */
static uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

/* The slot of key (never 0), or NULL when the table is full. */
static key_slot *slot_of(const builder *b, key_slot *table, uint64_t key) {
  for (uint64_t probe = 0; probe < b->keys; probe++) {
    key_slot *slot = &table[(mix(key) + probe) & (b->keys - 1)];
    if (slot->key == key || slot->key == 0) return slot;
  }
  return NULL;
}

/* Strings are kept once, by content, the first of them "" (index 0). */
static uint64_t string_index(builder *b, const char *text) {
  size_t length = strlen(text);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < length; i++)
    h = (h ^ (uint8_t)text[i]) * 0x100000001b3ull;
  h |= 1;
  for (uint64_t probe = 0; probe < b->keys; probe++) {
    key_slot *slot = &b->strings[(mix(h) + probe) & (b->keys - 1)];
    if (slot->key == 0) {
      if (b->text_length + length + 1 > TEXT_CAPACITY) return 0;
      slot->key = h;
      slot->id = b->string_count++;
      memcpy(b->text + b->text_length, text, length + 1);
      b->text_length += length + 1;
      return slot->id;
    }
    if (slot->key == h) return slot->id; /* a 64-bit hash: taken as equal */
  }
  return 0;
}

/* "function (file:line)", "symbol+0x1f (module+0x40)" or "?? (module+0x40)"
 * (platform_symbol_describe) split into function, file and line. */
static void frame_parts(void *pc, char *function, char *file, size_t size, int64_t *line) {
  char text[400];
  platform_symbol_describe(pc, text, sizeof text);
  *line = 0;
  char *open = strstr(text, " (");
  char *where = NULL;
  if (open != NULL) {
    *open = 0;
    where = open + 2;
    char *close = strrchr(where, ')');
    if (close != NULL) *close = 0;
    char *discriminator = strstr(where, " (discriminator");
    if (discriminator != NULL) *discriminator = 0;
  }
  char *offset = strstr(text, "+0x");
  if (offset != NULL) *offset = 0; /* a symbol table's name: the offset goes */
  if (strcmp(text, "??") == 0 || text[0] == 0)
    msg_format(function, size, "0x%llx", (unsigned long long)(uintptr_t)pc);
  else
    msg_format(function, size, "%s", text);
  file[0] = 0;
  if (where == NULL) return;
  char *colon = strrchr(where, ':');
  char *plus = strstr(where, "+0x");
  if (plus != NULL) {
    *plus = 0; /* module+offset: the module is all there is */
  } else if (colon != NULL && colon[1] >= '0' && colon[1] <= '9') {
    *colon = 0;
    for (const char *digit = colon + 1; *digit >= '0' && *digit <= '9'; digit++)
      *line = *line * 10 + (*digit - '0');
  }
  msg_format(file, size, "%s", where);
}

static uint64_t mapping_of(builder *b, const void *pc) {
  char module[256], function[256];
  platform_code_names(pc, module, function, sizeof module);
  if (module[0] == 0) msg_format(module, sizeof module, "%s", platform_program_name());
  uint64_t name = string_index(b, module);
  for (uint64_t i = 0; i < b->mapping_count; i++) {
    if (b->module_name[i] != name) continue;
    if ((uintptr_t)pc < b->module_low[i]) b->module_low[i] = (uintptr_t)pc;
    if ((uintptr_t)pc >= b->module_high[i]) b->module_high[i] = (uintptr_t)pc + 1;
    return i + 1;
  }
  if (b->mapping_count == sizeof b->module_name / sizeof b->module_name[0]) return 1;
  uint64_t i = b->mapping_count++;
  b->module_name[i] = name;
  b->module_low[i] = (uintptr_t)pc;
  b->module_high[i] = (uintptr_t)pc + 1;
  return i + 1;
}

static uint64_t function_id(builder *b, const char *name, const char *file) {
  uint64_t name_index = string_index(b, name), file_index = string_index(b, file);
  key_slot *slot = slot_of(b, b->functions, name_index << 32 | file_index | 1ull << 63);
  if (slot == NULL) return 0;
  if (slot->key != 0) return slot->id;
  slot->key = name_index << 32 | file_index | 1ull << 63;
  slot->id = ++b->function_count;
  message m = {.length = 0};
  msg_varint(&m, 1, slot->id);
  msg_varint(&m, 2, name_index);
  msg_varint(&m, 3, name_index);
  msg_varint(&m, 4, file_index);
  out_bytes(b, 5, m.bytes, m.length);
  return slot->id;
}

/* Out of line: its buffers stay out of profile_write_pprof's frame. */
static NOINLINE uint64_t location_id(builder *b, void *pc) {
  key_slot *slot = slot_of(b, b->locations, (uint64_t)(uintptr_t)pc);
  if (slot == NULL) return 0;
  if (slot->key != 0) return slot->id;
  slot->key = (uint64_t)(uintptr_t)pc;
  slot->id = ++b->location_count;
  char name[256], file[256];
  int64_t line;
  frame_parts(pc, name, file, sizeof name, &line);
  message lines = {.length = 0};
  msg_varint(&lines, 1, function_id(b, name, file));
  msg_varint(&lines, 2, (uint64_t)line);
  message m = {.length = 0};
  msg_varint(&m, 1, slot->id);
  msg_varint(&m, 2, mapping_of(b, pc));
  msg_varint(&m, 3, (uint64_t)(uintptr_t)pc);
  msg_bytes(&m, 4, lines.bytes, lines.length);
  out_bytes(b, 4, m.bytes, m.length);
  return slot->id;
}

/* ---- gzip with stored blocks ---------------------------------------------------- */
static uint32_t crc32_of(const uint8_t *bytes, size_t length) {
  static uint32_t table[256];
  if (table[1] == 0) {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++)
        c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
  }
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < length; i++)
    crc = table[(crc ^ bytes[i]) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

static void put_le32(uint8_t *to, uint32_t value) {
  for (int i = 0; i < 4; i++)
    to[i] = (uint8_t)(value >> (8 * i));
}

static void write_gzip(int fd, const uint8_t *bytes, size_t length) {
  static const uint8_t header[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
  platform_write(fd, (const char *)header, sizeof header);
  size_t done = 0;
  do {
    size_t part = length - done < 65535 ? length - done : 65535;
    bool last = done + part == length;
    uint8_t block[5] = {last ? 1 : 0, (uint8_t)part, (uint8_t)(part >> 8), (uint8_t)~part,
                        (uint8_t)(~part >> 8)};
    platform_write(fd, (const char *)block, sizeof block);
    platform_write(fd, (const char *)bytes + done, part);
    done += part;
  } while (done < length);
  uint8_t trailer[8];
  put_le32(trailer, crc32_of(bytes, length));
  put_le32(trailer + 4, (uint32_t)length);
  platform_write(fd, (const char *)trailer, sizeof trailer);
}

/* ---- the two formats -------------------------------------------------------------- */
/* Names every frame of the samples at once (the platform runs its symbol
 * tool once per module and batch). */
static NOINLINE void prepare_names(const profile_sample *samples, size_t count) {
  void *frames[256] = {NULL};
  size_t n = 0;
  for (size_t i = 0; i < count; i++) {
    void *const *stack;
    int depth = site_frames(samples[i].site, &stack);
    for (int f = 0; f < depth; f++) {
      if (n == sizeof frames / sizeof frames[0]) {
        platform_symbols_prepare(frames, n);
        n = 0;
      }
      frames[n++] = stack[f];
    }
  }
  platform_symbols_prepare(frames, n);
}

/* Slots for the frames of the samples: each frame is at most a location, a
 * function and two strings (its name and file). */
static uint64_t keys_for(const profile_sample *samples, size_t count) {
  uint64_t frames = 64; /* the value types, units, modules and comment */
  for (size_t i = 0; i < count; i++) {
    void *const *stack;
    frames += (uint64_t)site_frames(samples[i].site, &stack);
  }
  uint64_t keys = KEYS_MIN;
  while (keys < 4 * frames && keys < KEYS_MAX)
    keys *= 2;
  return keys;
}

bool profile_write_pprof(int fd, const profile_shape *shape, const profile_sample *samples,
                         size_t count) {
  builder b;
  memset(&b, 0, sizeof b);
  b.keys = keys_for(samples, count);
  size_t bytes = OUT_CAPACITY + TEXT_CAPACITY + 3 * b.keys * sizeof(key_slot);
  uint8_t *memory = platform_table_alloc(bytes);
  if (memory == NULL) return false;
  b.out = memory;
  b.text = (char *)memory + OUT_CAPACITY;
  b.strings = (key_slot *)(memory + OUT_CAPACITY + TEXT_CAPACITY);
  b.locations = b.strings + b.keys;
  b.functions = b.locations + b.keys;
  b.text[0] = 0; /* string 0 is "" */
  b.text_length = 1;
  b.string_count = 1;
  prepare_names(samples, count);
  for (int t = 0; t < shape->value_count; t++) {
    message m = {.length = 0};
    msg_varint(&m, 1, string_index(&b, shape->types[t]));
    msg_varint(&m, 2, string_index(&b, shape->units[t]));
    out_bytes(&b, 1, m.bytes, m.length);
  }
  for (size_t i = 0; i < count; i++) {
    void *const *stack;
    int depth = site_frames(samples[i].site, &stack);
    uint64_t ids[SITE_FRAMES], values[PROFILE_VALUES_MAX];
    for (int f = 0; f < depth; f++)
      ids[f] = location_id(&b, stack[f]);
    for (int v = 0; v < shape->value_count; v++)
      values[v] = (uint64_t)samples[i].values[v];
    message m = {.length = 0};
    msg_packed(&m, 1, ids, (size_t)depth);
    msg_packed(&m, 2, values, (size_t)shape->value_count);
    out_bytes(&b, 2, m.bytes, m.length);
  }
  for (uint64_t i = 0; i < b.mapping_count; i++) {
    message m = {.length = 0};
    msg_varint(&m, 1, i + 1);
    msg_varint(&m, 2, b.module_low[i]);
    msg_varint(&m, 3, b.module_high[i]);
    msg_varint(&m, 5, b.module_name[i]);
    for (unsigned field = 7; field <= 9; field++)
      msg_varint(&m, field, 1); /* has functions, files, lines */
    out_bytes(&b, 3, m.bytes, m.length);
  }
  message period = {.length = 0};
  msg_varint(&period, 1, string_index(&b, shape->types[shape->period_type]));
  msg_varint(&period, 2, string_index(&b, shape->units[shape->period_type]));
  out_bytes(&b, 11, period.bytes, period.length);
  out_varint(&b, 12, (uint64_t)shape->period);
  out_varint(&b, 14, string_index(&b, shape->types[shape->default_type]));
  if (shape->comment != NULL) out_varint(&b, 13, string_index(&b, shape->comment));
  for (size_t at = 0; at < b.text_length;) { /* the string table, last */
    size_t length = strlen(b.text + at);
    out_bytes(&b, 6, b.text + at, length);
    at += length + 1;
  }
  bool written = !b.full;
  if (written) write_gzip(fd, b.out, b.length);
  platform_table_free(memory, bytes);
  return written;
}

void profile_write_folded(int fd, const profile_sample *samples, size_t count, int value) {
  prepare_names(samples, count);
  for (size_t i = 0; i < count; i++) {
    if (samples[i].values[value] <= 0) continue;
    void *const *stack;
    int depth = site_frames(samples[i].site, &stack);
    char line[SITE_FRAMES * 160 + 32];
    size_t length = 0;
    for (int f = depth - 1; f >= 0; f--) { /* outermost first */
      char name[256], file[256];
      int64_t number;
      frame_parts(stack[f], name, file, sizeof name, &number);
      for (char *c = name; *c; c++)
        if (*c == ';' || *c == '\n') *c = ':'; /* ';' separates frames */
      length +=
          msg_format(line + length, sizeof line - length, "%s%.150s", length ? ";" : "", name);
      if (length >= sizeof line - 32) break;
    }
    if (depth == 0) length = msg_format(line, sizeof line, "[unknown]");
    length += msg_format(line + length, sizeof line - length, " %lld\n",
                         (long long)samples[i].values[value]);
    platform_write(fd, line, length);
  }
}

static bool ends_with(const char *text, const char *suffix) {
  size_t n = strlen(text), m = strlen(suffix);
  return n >= m && strcmp(text + n - m, suffix) == 0;
}

report_format report_format_of(const char *path) {
  if (path == NULL) return FORMAT_TEXT;
  if (ends_with(path, ".pb.gz") || ends_with(path, ".pprof")) return FORMAT_PPROF;
  if (ends_with(path, ".folded") || ends_with(path, ".collapsed")) return FORMAT_FOLDED;
  return FORMAT_TEXT;
}
