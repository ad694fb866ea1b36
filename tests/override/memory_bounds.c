/* SPDX-License-Identifier: MIT */
/* Resident memory in three programs that once kept far more than glibc:
 * thread churn, big buffers replaced at random, and an idle program after a
 * big free. Each mode prints its figures as `key=value` in KiB; the driver
 * (memory_bounds.sh) runs every mode with glibc's malloc and with brisk
 * preloaded and checks brisk's figures against bounds relative to glibc's.
 *
 * usage: memory_bounds churn|buffers|idle */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static size_t status_kib(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  size_t value = 0;
  while (f != NULL && fgets(line, sizeof line, f))
    if (strncmp(line, key, strlen(key)) == 0) value = strtoul(line + strlen(key), NULL, 10);
  if (f != NULL) fclose(f);
  return value;
}

static uint64_t next_random(uint64_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

/* ---- thread churn: 4000 short-lived threads, 8 at a time, 2000 random-size
 * operations each (8 B to 64 KiB), 16 live blocks each handed to main, which
 * frees them after joining. The resident set is read halfway, at the last
 * join, and a second later, when nothing has called the allocator since
 * (settled): memory of exited threads must come back within the purge delay
 * whether or not another thread comes. */
enum { CHURN_THREADS = 4000, CHURN_AT_ONCE = 8, CHURN_OPS = 2000, CHURN_SLOTS = 64, HANDED = 16 };

typedef struct churn_job {
  uint64_t seed;
  void *handed[HANDED];
} churn_job;

static void *churn_worker(void *arg) {
  churn_job *job = arg;
  void *slots[CHURN_SLOTS] = {0};
  for (int op = 0; op < CHURN_OPS; op++) {
    void **slot = &slots[next_random(&job->seed) % CHURN_SLOTS];
    if (*slot != NULL) {
      free(*slot);
      *slot = NULL;
    } else {
      size_t size = 8 + next_random(&job->seed) % ((64 << 10) - 8);
      *slot = malloc(size);
      memset(*slot, 1, size);
    }
  }
  int handed = 0;
  for (int k = 0; k < CHURN_SLOTS; k++) {
    if (slots[k] == NULL) continue;
    if (handed < HANDED)
      job->handed[handed++] = slots[k];
    else
      free(slots[k]);
  }
  while (handed < HANDED)
    job->handed[handed++] = NULL;
  return NULL;
}

static int churn(void) {
  size_t half = 0;
  for (int started = 0; started < CHURN_THREADS; started += CHURN_AT_ONCE) {
    pthread_t threads[CHURN_AT_ONCE];
    churn_job jobs[CHURN_AT_ONCE];
    for (int i = 0; i < CHURN_AT_ONCE; i++) {
      jobs[i].seed = (uint64_t)(started + i + 1) * 7919;
      if (pthread_create(&threads[i], NULL, churn_worker, &jobs[i]) != 0) return 1;
    }
    for (int i = 0; i < CHURN_AT_ONCE; i++) {
      pthread_join(threads[i], NULL);
      for (int k = 0; k < HANDED; k++)
        free(jobs[i].handed[k]);
    }
    if (started + CHURN_AT_ONCE == CHURN_THREADS / 2) half = status_kib("VmRSS:");
  }
  size_t end = status_kib("VmRSS:");
  sleep(1);
  printf("half=%zu end=%zu settled=%zu peak=%zu\n", half, end, status_kib("VmRSS:"),
         status_kib("VmHWM:"));
  return 0;
}

/* ---- big buffers: 20 buffers of 5 to 25 MiB, one replaced at random 1000
 * times, each new one zero-filled as std::make_unique<char[]> does. */
static int buffers(void) {
  enum { COUNT = 20, REPLACEMENTS = 1000 };
  char *buffer[COUNT];
  uint64_t seed = 7;
  for (int i = 0; i < COUNT + REPLACEMENTS; i++) {
    int k = i < COUNT ? i : (int)(next_random(&seed) % COUNT);
    if (i >= COUNT) free(buffer[k]);
    size_t size = (size_t)(5 + next_random(&seed) % 21) << 20;
    buffer[k] = malloc(size);
    if (buffer[k] == NULL) return 1;
    memset(buffer[k], 0, size);
  }
  printf("end=%zu peak=%zu\n", status_kib("VmRSS:"), status_kib("VmHWM:"));
  for (int k = 0; k < COUNT; k++)
    free(buffer[k]);
  return 0;
}

/* ---- idle: 1 GiB of 48 to 64 B blocks, all freed, then two seconds in
 * which nothing calls the allocator. The pointer table is mapped directly,
 * so it does not count as the allocator's. */
static int idle(void) {
  enum { BLOCKS = (1 << 30) / 56 };
  size_t table_bytes = (size_t)BLOCKS * sizeof(void *);
  void **blocks =
      mmap(NULL, table_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (blocks == MAP_FAILED) return 1;
  size_t before = status_kib("VmRSS:");
  for (int i = 0; i < BLOCKS; i++) {
    size_t size = 48 + (size_t)(i % 17);
    blocks[i] = malloc(size);
    memset(blocks[i], 1, size);
  }
  size_t full = status_kib("VmRSS:");
  for (int i = 0; i < BLOCKS; i++)
    free(blocks[i]);
  munmap(blocks, table_bytes);
  sleep(2);
  printf("before=%zu full=%zu after=%zu\n", before, full, status_kib("VmRSS:"));
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "churn") == 0) return churn();
  if (argc == 2 && strcmp(argv[1], "buffers") == 0) return buffers();
  if (argc == 2 && strcmp(argv[1], "idle") == 0) return idle();
  fprintf(stderr, "usage: memory_bounds churn|buffers|idle\n");
  return 2;
}
