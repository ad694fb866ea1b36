/* SPDX-License-Identifier: MIT */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A worker hands every record it parses to the writer thread, which frees it. */
enum { RECORDS = 200000, SLOTS = 256 };
static char *slot[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static char *parse_record(int i) {
  char *record = malloc(48 + i % 64);
  memset(record, 'x', 48);
  return record;
}

static void *writer(void *arg) {
  (void)arg;
  for (int done = 0; done < RECORDS;) {
    pthread_mutex_lock(&lock);
    for (int s = 0; s < SLOTS; s++)
      if (slot[s]) {
        free(slot[s]);
        slot[s] = NULL;
        done++;
      }
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, writer, NULL);
  for (int i = 0; i < RECORDS;) {
    pthread_mutex_lock(&lock);
    for (int s = 0; s < SLOTS && i < RECORDS; s++)
      if (!slot[s]) slot[s] = parse_record(i++);
    pthread_mutex_unlock(&lock);
  }
  pthread_join(t, NULL);
  char *forgotten = strdup("never freed");
  (void)forgotten;
  return 0;
}
