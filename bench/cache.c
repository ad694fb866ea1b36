/* SPDX-License-Identifier: MIT */
/* An in-process key/value cache -- a concurrent hash map with
 * string keys `b_<i>` and string or int64 values -- driven through set, get,
 * inc and remove phases, reporting ops/s per phase like the account's log.
 * The account's speed-up came from removing allocations; here they are kept
 * on purpose (an entry, its key and a string value per set; a copied-out
 * value per string get), since the allocator is what is measured. Even keys
 * hold strings, odd keys int64 counters that inc bumps twice. */
#define _GNU_SOURCE
#include "bench_common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N_STRIPES = 1024, INCS_PER_KEY = 2 };

typedef struct entry {
  struct entry *next;
  uint64_t hash;
  char *key;
  char *text; /* NULL when the value is the int64 below */
  int64_t number;
} entry;

typedef struct cache {
  entry **buckets;
  size_t mask;
  pthread_mutex_t stripes[N_STRIPES];
  atomic_long live;
} cache;

static cache the_cache;

static size_t format_key(char *out, size_t cap, long i) {
  return (size_t)snprintf(out, cap, "b_%ld", i);
}

/* A string value of varying length derived from the key number, so a get
 * can check what it reads without keeping a copy. */
static size_t format_text(char *out, size_t cap, long i) {
  size_t len = (size_t)snprintf(out, cap, "value-%ld-", i);
  size_t target = 8 + (size_t)(i * 2654435761u % 57);
  for (; len < target && len + 1 < cap; len++)
    out[len] = (char)('a' + (i + (long)len) % 26);
  out[len] = '\0';
  return len;
}

static size_t bucket_of(uint64_t hash) {
  return (size_t)(hash >> 7) & the_cache.mask;
}

/* A stripe guards whole buckets, so every key of a chain shares one lock. */
static pthread_mutex_t *stripe_of(uint64_t hash) {
  return &the_cache.stripes[bucket_of(hash) % N_STRIPES];
}

static entry **find_slot(const char *key, uint64_t hash) {
  entry **slot = &the_cache.buckets[bucket_of(hash)];
  while (*slot && ((*slot)->hash != hash || strcmp((*slot)->key, key) != 0))
    slot = &(*slot)->next;
  return slot;
}

static char *copy_string(const char *text, size_t len) {
  char *copy = bench_malloc(len + 1);
  memcpy(copy, text, len + 1);
  return copy;
}

static void cache_set(long i) {
  char key[32], text[80];
  size_t key_len = format_key(key, sizeof key, i);
  uint64_t hash = bench_hash(BENCH_HASH_SEED, key, key_len);
  /* Build the value outside the lock, as a caller would. */
  char *value = NULL;
  if (i % 2 == 0) value = copy_string(text, format_text(text, sizeof text, i));
  pthread_mutex_lock(stripe_of(hash));
  entry **slot = find_slot(key, hash);
  entry *e = *slot;
  if (!e) {
    e = bench_malloc(sizeof *e);
    *e = (entry){NULL, hash, copy_string(key, key_len), NULL, 0};
    *slot = e;
    atomic_fetch_add_explicit(&the_cache.live, 1, memory_order_relaxed);
  }
  free(e->text);
  e->text = value;
  e->number = value ? 0 : i;
  pthread_mutex_unlock(stripe_of(hash));
}

/* Returns 1 when the value read back is what set stored (plus `incs` bumps). */
static int cache_get_check(long i, long incs) {
  char key[32], text[80];
  size_t key_len = format_key(key, sizeof key, i);
  uint64_t hash = bench_hash(BENCH_HASH_SEED, key, key_len);
  pthread_mutex_lock(stripe_of(hash));
  entry *e = *find_slot(key, hash);
  char *copy = e && e->text ? copy_string(e->text, strlen(e->text)) : NULL;
  int64_t number = e ? e->number : -1;
  pthread_mutex_unlock(stripe_of(hash));
  if (!e) return 0;
  if (i % 2 != 0) return !copy && number == i + incs;
  format_text(text, sizeof text, i);
  int same = copy && strcmp(copy, text) == 0;
  free(copy);
  return same;
}

static int cache_inc(long i) {
  char key[32];
  size_t key_len = format_key(key, sizeof key, i);
  uint64_t hash = bench_hash(BENCH_HASH_SEED, key, key_len);
  pthread_mutex_lock(stripe_of(hash));
  entry *e = *find_slot(key, hash);
  if (e) e->number++;
  pthread_mutex_unlock(stripe_of(hash));
  return e != NULL;
}

/* Removes key i; returns 1 when its value was the expected one. */
static int cache_remove_check(long i, long incs) {
  char key[32], text[80];
  size_t key_len = format_key(key, sizeof key, i);
  uint64_t hash = bench_hash(BENCH_HASH_SEED, key, key_len);
  pthread_mutex_lock(stripe_of(hash));
  entry **slot = find_slot(key, hash);
  entry *e = *slot;
  if (e) *slot = e->next;
  pthread_mutex_unlock(stripe_of(hash));
  if (!e) return 0;
  atomic_fetch_sub_explicit(&the_cache.live, 1, memory_order_relaxed);
  int good;
  if (i % 2 == 0) {
    format_text(text, sizeof text, i);
    good = e->text && strcmp(e->text, text) == 0;
  } else {
    good = !e->text && e->number == i + incs;
  }
  good = good && strcmp(e->key, key) == 0;
  free(e->text);
  free(e->key);
  free(e);
  return good;
}

enum { PHASE_SET, PHASE_GET, PHASE_INC, PHASE_REMOVE, N_PHASES };
static const char *const phase_names[N_PHASES] = {"set", "get", "inc", "remove"};

typedef struct worker {
  BENCH_CACHE_ALIGNED long id, first, end, rounds;
  pthread_barrier_t *barrier;
  double phase_secs[N_PHASES]; /* filled by worker 0 only */
  unsigned long long ops[N_PHASES];
} worker;

static void *run_phases(void *arg) {
  worker *w = arg;
  for (long round = 0; round < w->rounds; round++) {
    for (int phase = 0; phase < N_PHASES; phase++) {
      pthread_barrier_wait(w->barrier);
      double start = bench_now();
      for (long i = w->first; i < w->end; i++) {
        switch (phase) {
        case PHASE_SET:
          cache_set(i);
          w->ops[phase]++;
          break;
        case PHASE_GET:
          if (!cache_get_check(i, 0)) bench_fail("get b_%ld returned a wrong value", i);
          w->ops[phase]++;
          break;
        case PHASE_INC:
          for (int k = 0; i % 2 != 0 && k < INCS_PER_KEY; k++) {
            if (!cache_inc(i)) bench_fail("inc b_%ld: key missing", i);
            w->ops[phase]++;
          }
          break;
        default:
          if (!cache_remove_check(i, INCS_PER_KEY))
            bench_fail("remove b_%ld: missing or wrong value", i);
          w->ops[phase]++;
        }
      }
      pthread_barrier_wait(w->barrier);
      if (w->id == 0) w->phase_secs[phase] += bench_now() - start;
    }
    if (w->id == 0 && atomic_load(&the_cache.live) != 0)
      bench_fail("%ld entries left after remove", atomic_load(&the_cache.live));
  }
  return NULL;
}

int main(int argc, char **argv) {
  bench_args common = {.threads = 1, .quick = 0};
  long keys = 0, rounds = 0;
  const bench_opt opts[] = {
      {"keys", BENCH_OPT_LONG, &keys, "keys per round (default 400000, quick 100000)"},
      {"rounds", BENCH_OPT_LONG, &rounds, "set/get/inc/remove rounds (default 3, quick 1)"},
  };
  bench_parse_args(argc, argv, "concurrent key/value cache: set, get, inc, remove", &common, opts,
                   sizeof opts / sizeof opts[0]);
  if (keys == 0) keys = common.quick ? 100000 : 400000;
  if (rounds == 0) rounds = common.quick ? 1 : 3;
  long threads = common.threads;

  size_t n_buckets = 1;
  while (n_buckets < (size_t)keys)
    n_buckets <<= 1;
  the_cache.buckets = calloc(n_buckets, sizeof *the_cache.buckets);
  if (!the_cache.buckets) bench_fail("calloc failed");
  the_cache.mask = n_buckets - 1;
  for (int s = 0; s < N_STRIPES; s++)
    pthread_mutex_init(&the_cache.stripes[s], NULL);

  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, (unsigned)threads);
  worker *workers = bench_calloc_workers(threads, sizeof *workers);
  for (long t = 0; t < threads; t++) {
    workers[t].id = t;
    workers[t].first = keys * t / threads;
    workers[t].end = keys * (t + 1) / threads;
    workers[t].rounds = rounds;
    workers[t].barrier = &barrier;
  }
  bench_run_threads(threads, run_phases, workers, sizeof *workers);

  unsigned long long total_ops = 0, phase_ops[N_PHASES] = {0};
  for (long t = 0; t < threads; t++)
    for (int p = 0; p < N_PHASES; p++)
      phase_ops[p] += workers[t].ops[p];
  double total_secs = 0;
  char extra[256];
  size_t used = 0;
  for (int p = 0; p < N_PHASES; p++) {
    total_ops += phase_ops[p];
    total_secs += workers[0].phase_secs[p];
    double rate =
        workers[0].phase_secs[p] > 0 ? (double)phase_ops[p] / workers[0].phase_secs[p] : 0;
    used += (size_t)snprintf(extra + used, sizeof extra - used, "%s%s_ops_s=%.0f", p ? " " : "",
                             phase_names[p], rate);
  }
  unsigned long long expected_ops =
      (unsigned long long)rounds *
      ((unsigned long long)keys * 3 + (unsigned long long)(keys / 2) * INCS_PER_KEY);
  if (total_ops != expected_ops) bench_fail("did %llu ops, expected %llu", total_ops, expected_ops);
  free(workers);
  free(the_cache.buckets);
  return bench_finish(1, total_ops, total_secs, extra);
}
