/* SPDX-License-Identifier: MIT */
/* A span cache: whole free segments (small-block segments, or the spans of
 * freed huge blocks) kept for reuse under one lock, newest first, each
 * stamped with when it arrived so that expired ones can be purged or
 * released.
 *
 * Fork: the child re-initialises the lock (span_cache_after_fork) whatever
 * thread held it, so the list must be walkable after every single store a
 * holder makes. It is singly linked and each change is one publishing store
 * (a node's link is written before the store that makes it reachable): a
 * thread frozen mid-change by a fork leaves at most its own segment out of
 * the child's list, never a broken link. */
#include "core.h"

/* Unlinks the segment at *link, with one publishing store. */
static segment_t *unlink_at(span_cache *cache, segment_t **link) {
  segment_t *segment = *link;
  store_publish(link, segment->next);
  cache->count--;
  cache->bytes -= segment->size;
  return segment;
}

/* Unlinks the oldest segment (the list's tail). */
static segment_t *take_oldest(span_cache *cache) {
  segment_t **link = &cache->first;
  while ((*link)->next != NULL)
    link = &(*link)->next;
  return unlink_at(cache, link);
}

size_t span_cache_count(span_cache *cache, bool (*counted)(const segment_t *segment)) {
  lock_acquire(&cache->lock);
  size_t count = 0;
  for (segment_t *segment = cache->first; segment != NULL; segment = segment->next)
    count += counted(segment);
  lock_release(&cache->lock);
  return count;
}

segment_t *span_cache_push(span_cache *cache, segment_t *segment, uint64_t now,
                           size_t byte_budget) {
  segment->freed_ms = now;
  segment_t *evicted = NULL;
  lock_acquire(&cache->lock);
  bool full = cache->count >= cache->capacity || segment->size > byte_budget;
  if (full && !cache->evict_oldest) {
    lock_release(&cache->lock);
    segment->next = NULL;
    return segment;
  }
  segment->next = cache->first;
  store_publish(&cache->first, segment);
  cache->count++;
  cache->bytes += segment->size;
  while (cache->count > cache->capacity || cache->bytes > byte_budget) {
    segment_t *oldest = take_oldest(cache);
    oldest->next = evicted;
    evicted = oldest;
  }
  lock_release(&cache->lock);
  return evicted;
}

segment_t *span_cache_take(span_cache *cache, int64_t (*fit)(segment_t *, size_t), size_t arg) {
  lock_acquire(&cache->lock);
  segment_t **chosen = NULL;
  int64_t best = -1;
  for (segment_t **link = &cache->first; *link != NULL; link = &(*link)->next) {
    int64_t score = fit(*link, arg);
    if (score < 0 || (chosen != NULL && score >= best)) continue;
    chosen = link;
    best = score;
    if (score == 0) break;
  }
  segment_t *segment = chosen != NULL ? unlink_at(cache, chosen) : NULL;
  lock_release(&cache->lock);
  return segment;
}

void span_cache_collect(span_cache *cache, uint64_t now, long delay, bool force,
                        bool (*visit)(segment_t *segment, bool force),
                        void (*release)(segment_t *segment)) {
  if (delay < 0 && !force) return;
  if (force)
    lock_acquire(&cache->lock);
  else if (!platform_lock_try(&cache->lock))
    return; /* another thread is at it: next time */
  segment_t *removed = NULL;
  for (segment_t **link = &cache->first; *link != NULL;) {
    segment_t *s = *link;
    if ((!force && s->freed_ms + (uint64_t)delay > now) || !visit(s, force)) {
      link = &s->next;
      continue;
    }
    unlink_at(cache, link);
    s->next = removed;
    removed = s;
  }
  lock_release(&cache->lock);
  while (removed != NULL) { /* system calls, outside the lock */
    segment_t *next = removed->next;
    release(removed);
    removed = next;
  }
}

void span_cache_after_fork(span_cache *cache) {
  platform_lock_reset(&cache->lock);
}
