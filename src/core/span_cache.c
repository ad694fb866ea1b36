/* A span cache: whole free segments (small-block segments, or the spans of
 * freed huge blocks) kept for reuse under one lock, newest first, each
 * stamped with when it arrived so that expired ones can be purged or
 * released. */
#include "core.h"

segment_t *span_cache_push(span_cache *cache, segment_t *segment, uint64_t now) {
  segment->freed_ms = now;
  segment_t *evicted = NULL;
  lock_acquire(&cache->lock);
  if (cache->list.count >= cache->capacity) {
    if (!cache->evict_oldest) {
      lock_release(&cache->lock);
      return segment;
    }
    evicted = cache->list.first; /* the oldest is the list's tail */
    while (evicted->next != NULL)
      evicted = evicted->next;
    segment_list_remove(&cache->list, evicted);
  }
  segment_list_push(&cache->list, segment);
  lock_release(&cache->lock);
  return evicted;
}

segment_t *span_cache_take(span_cache *cache, int (*match)(segment_t *, size_t), size_t arg) {
  lock_acquire(&cache->lock);
  segment_t *chosen = NULL;
  for (segment_t *s = cache->list.first; s != NULL; s = s->next) {
    int fit = match(s, arg);
    if (fit == 2) {
      chosen = s;
      break;
    }
    if (fit == 1 && chosen == NULL) chosen = s;
  }
  if (chosen != NULL) segment_list_remove(&cache->list, chosen);
  lock_release(&cache->lock);
  return chosen;
}

segment_t *span_cache_collect(span_cache *cache, uint64_t now, long delay, bool force,
                              bool (*visit)(segment_t *segment, bool force)) {
  if (delay < 0 && !force) return NULL;
  if (force)
    lock_acquire(&cache->lock);
  else if (!platform_lock_try(&cache->lock))
    return NULL; /* another thread is at it: next time */
  segment_t *removed = NULL;
  for (segment_t *s = cache->list.first, *next; s != NULL; s = next) {
    next = s->next;
    if (!force && s->freed_ms + (uint64_t)delay > now) continue;
    if (!visit(s, force)) continue;
    segment_list_remove(&cache->list, s);
    s->next = removed;
    removed = s;
  }
  lock_release(&cache->lock);
  return removed;
}
