/* SPDX-License-Identifier: MIT */
// C++ operator new/delete served by brisk (BRISK_OVERRIDE builds), linked or
// preloaded: every replaceable form is exported by libbrisk, returns brisk
// memory with the right alignment, frees it again; impossible sizes throw
// std::bad_alloc (nullptr for the nothrow forms); std::new_handler is called;
// containers, exceptions, over-aligned types and std::thread work on top.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <dlfcn.h>

#define BRISK_TEST_LIBC 1
#include "alloc_api.h"
#include "pattern.h"

static volatile std::size_t v_size_max = SIZE_MAX;
static const std::size_t MiB = std::size_t(1) << 20;

static bool from_libbrisk(const void *addr) {
  Dl_info di;
  return addr && dladdr(addr, &di) && di.dli_fname && std::strstr(di.dli_fname, "libbrisk");
}

// size_t's letter in a mangled name: m (unsigned long) or j (unsigned int)
#if SIZE_MAX > 0xFFFFFFFFu
#define SZ "m"
#else
#define SZ "j"
#endif

static void test_symbols() {
  static const char *const names[] = {
      "_Znw" SZ,                                 // new(size_t)
      "_Zna" SZ,                                 // new[](size_t)
      "_Znw" SZ "RKSt9nothrow_t",                // new(size_t, nothrow)
      "_Zna" SZ "RKSt9nothrow_t",                // new[](size_t, nothrow)
      "_Znw" SZ "St11align_val_t",               // new(size_t, align)
      "_Zna" SZ "St11align_val_t",               // new[](size_t, align)
      "_Znw" SZ "St11align_val_tRKSt9nothrow_t", // new(size_t, align, nothrow)
      "_Zna" SZ "St11align_val_tRKSt9nothrow_t", // new[](size_t, align, nothrow)
      "_ZdlPv",                                  // delete(void*)
      "_ZdaPv",                                  // delete[](void*)
      "_ZdlPvRKSt9nothrow_t",                    // delete(void*, nothrow)
      "_ZdaPvRKSt9nothrow_t",                    // delete[](void*, nothrow)
      "_ZdlPv" SZ,                               // delete(void*, size_t)
      "_ZdaPv" SZ,                               // delete[](void*, size_t)
      "_ZdlPvSt11align_val_t",                   // delete(void*, align)
      "_ZdaPvSt11align_val_t",                   // delete[](void*, align)
      "_ZdlPvSt11align_val_tRKSt9nothrow_t",     // delete(void*, align, nothrow)
      "_ZdaPvSt11align_val_tRKSt9nothrow_t",     // delete[](void*, align, nothrow)
      "_ZdlPv" SZ "St11align_val_t",             // delete(void*, size_t, align)
      "_ZdaPv" SZ "St11align_val_t",             // delete[](void*, size_t, align)
  };
  for (const char *n : names) {
    void *s = dlsym(RTLD_DEFAULT, n);
    Dl_info di = {};
    if (s) dladdr(s, &di);
    CHECK_MSG(from_libbrisk(s), "%s resolves to %s, not libbrisk", n,
              di.dli_fname ? di.dli_fname : "(nothing)");
  }
}

static void check_fresh(void *p, std::size_t n, std::size_t align, const char *what) {
  if (!CHECK_MSG(p != nullptr, "%s(%zu) returned nullptr", what, n)) return;
  CHECK_MSG(is_aligned(p, align), "%s(%zu) = %p not aligned to %zu", what, n, p, align);
  CHECK_MSG(A_OWNS(p), "%s(%zu) = %p not from brisk", what, n, p);
  CHECK_MSG(A_USABLE_SIZE(p) >= n, "%s(%zu): usable %zu", what, n, A_USABLE_SIZE(p));
  std::memset(p, 0x3C, n);
}

// Each new/delete pairing, for a range of sizes and alignments.
static void test_forms() {
  const std::size_t sizes[] = {1, 8, 16, 24, 100, 1000, 4096, 70000, 3 * MiB};
  const std::nothrow_t &nt = std::nothrow;
  for (std::size_t n : sizes) {
    const std::size_t def = __STDCPP_DEFAULT_NEW_ALIGNMENT__ < n ? __STDCPP_DEFAULT_NEW_ALIGNMENT__
                                                                 : required_alignment(n);
    void *p;
    p = ::operator new(n);
    check_fresh(p, n, def, "new");
    ::operator delete(p);
    p = ::operator new(n);
    check_fresh(p, n, def, "new");
    ::operator delete(p, n);
    p = ::operator new(n, nt);
    check_fresh(p, n, def, "new nothrow");
    ::operator delete(p, nt);
    p = ::operator new[](n);
    check_fresh(p, n, def, "new[]");
    ::operator delete[](p);
    p = ::operator new[](n);
    check_fresh(p, n, def, "new[]");
    ::operator delete[](p, n);
    p = ::operator new[](n, nt);
    check_fresh(p, n, def, "new[] nothrow");
    ::operator delete[](p, nt);
    for (std::size_t a = 32; a <= 2 * MiB; a *= 4) {
      std::align_val_t al{a};
      p = ::operator new(n, al);
      check_fresh(p, n, a, "aligned new");
      ::operator delete(p, al);
      p = ::operator new(n, al);
      check_fresh(p, n, a, "aligned new");
      ::operator delete(p, n, al);
      p = ::operator new(n, al, nt);
      check_fresh(p, n, a, "aligned new nothrow");
      ::operator delete(p, al, nt);
      p = ::operator new[](n, al);
      check_fresh(p, n, a, "aligned new[]");
      ::operator delete[](p, al);
      p = ::operator new[](n, al);
      check_fresh(p, n, a, "aligned new[]");
      ::operator delete[](p, n, al);
      p = ::operator new[](n, al, nt);
      check_fresh(p, n, a, "aligned new[] nothrow");
      ::operator delete[](p, al, nt);
    }
  }
}

// Every delete form really frees: 300 x 1 MiB through each would otherwise
// stay mapped.
static void test_deletes_free() {
  const std::size_t n = MiB;
  const std::align_val_t al{4096};
  const std::nothrow_t &nt = std::nothrow;
  for (int form = 0; form < 12; form++) {
    brisk_memory_info before = api_info();
    for (int r = 0; r < 300; r++) {
      void *p = form < 6 ? ::operator new(n) : ::operator new(n, al);
      static_cast<char *>(p)[0] = 1;
      static_cast<char *>(p)[n - 1] = 1;
      switch (form) {
      case 0:
        ::operator delete(p);
        break;
      case 1:
        ::operator delete[](p);
        break;
      case 2:
        ::operator delete(p, nt);
        break;
      case 3:
        ::operator delete[](p, nt);
        break;
      case 4:
        ::operator delete(p, n);
        break;
      case 5:
        ::operator delete[](p, n);
        break;
      case 6:
        ::operator delete(p, al);
        break;
      case 7:
        ::operator delete[](p, al);
        break;
      case 8:
        ::operator delete(p, al, nt);
        break;
      case 9:
        ::operator delete[](p, al, nt);
        break;
      case 10:
        ::operator delete(p, n, al);
        break;
      default:
        ::operator delete[](p, n, al);
        break;
      }
    }
    brisk_memory_info after = api_info();
    CHECK_MSG(after.mapped < before.mapped + 128 * MiB,
              "delete form %d does not free: mapped %zu -> %zu KiB", form, before.mapped >> 10,
              after.mapped >> 10);
  }
}

template <class F> static bool throws_bad_alloc(F f) {
  try {
    f();
  } catch (const std::bad_alloc &) {
    return true;
  } catch (...) {
    return false;
  }
  return false;
}

static void test_impossible() {
  const std::size_t huge[] = {v_size_max, v_size_max / 2 + 1, std::size_t(PTRDIFF_MAX) + 1};
  for (std::size_t n : huge) {
    std::align_val_t al{64};
    CHECK_MSG(throws_bad_alloc([&] { ::operator delete(::operator new(n)); }), "new(%zu)", n);
    CHECK_MSG(throws_bad_alloc([&] { ::operator delete[](::operator new[](n)); }), "new[](%zu)", n);
    CHECK_MSG(throws_bad_alloc([&] { ::operator delete(::operator new(n, al), al); }),
              "aligned new(%zu)", n);
    CHECK_MSG(throws_bad_alloc([&] { ::operator delete[](::operator new[](n, al), al); }),
              "aligned new[](%zu)", n);
    CHECK(::operator new(n, std::nothrow) == nullptr);
    CHECK(::operator new[](n, std::nothrow) == nullptr);
    CHECK(::operator new(n, al, std::nothrow) == nullptr);
    CHECK(::operator new[](n, al, std::nothrow) == nullptr);
  }
  // a new-expression
  CHECK(throws_bad_alloc([&] {
    char *p = new char[v_size_max / 2];
    delete[] static_cast<char *>(launder(p));
  }));
}

static int handler_calls;
static void counting_handler() {
  if (++handler_calls >= 3) std::set_new_handler(nullptr); // next failure throws bad_alloc
}
static void throwing_handler() {
  throw 42;
}

static void test_new_handler() {
  const std::size_t n = v_size_max - 4096;
  std::align_val_t al{128};
  struct {
    const char *name;
    bool nothrow;
    void *(*call)(std::size_t, std::align_val_t);
  } forms[] = {
      {"new", false, [](std::size_t s, std::align_val_t) { return ::operator new(s); }},
      {"new[]", false, [](std::size_t s, std::align_val_t) { return ::operator new[](s); }},
      {"aligned new", false,
       [](std::size_t s, std::align_val_t a) { return ::operator new(s, a); }},
      {"aligned new[]", false,
       [](std::size_t s, std::align_val_t a) { return ::operator new[](s, a); }},
      {"new nothrow", true,
       [](std::size_t s, std::align_val_t) { return ::operator new(s, std::nothrow); }},
      {"aligned new nothrow", true,
       [](std::size_t s, std::align_val_t a) { return ::operator new(s, a, std::nothrow); }},
  };
  for (auto &f : forms) {
    handler_calls = 0;
    std::set_new_handler(counting_handler);
    bool threw = false;
    void *p = nullptr;
    try {
      p = f.call(n, al);
    } catch (const std::bad_alloc &) {
      threw = true;
    }
    CHECK_MSG(handler_calls == 3, "%s: new_handler called %d times, want 3", f.name, handler_calls);
    if (f.nothrow)
      CHECK_MSG(!threw && p == nullptr, "%s: want nullptr", f.name);
    else
      CHECK_MSG(threw, "%s: want std::bad_alloc after the handler gave up", f.name);
    std::set_new_handler(nullptr);

    // a handler's own exception propagates out of operator new (not nothrow)
    if (!f.nothrow) {
      std::set_new_handler(throwing_handler);
      int caught = 0;
      try {
        p = f.call(n, al);
      } catch (int v) {
        caught = v;
      } catch (...) {
        caught = -1;
      }
      CHECK_MSG(caught == 42, "%s: exception from new_handler not propagated (%d)", f.name, caught);
      std::set_new_handler(nullptr);
    }
  }
}

struct alignas(256) OverAligned {
  unsigned char bytes[1000];
};

static void test_workload() {
  // containers
  std::map<std::string, std::vector<int>> m;
  std::unordered_map<int, std::string> um;
  for (int k = 0; k < 20000; k++) {
    m["key" + std::to_string(k % 997)].push_back(k);
    um[k] = std::string(static_cast<std::size_t>(k % 300), static_cast<char>('a' + k % 26));
  }
  long sum = 0;
  for (auto &kv : m)
    for (int v : kv.second)
      sum += v;
  CHECK(sum == 20000L * 19999 / 2);
  CHECK(um.size() == 20000 && um[299] == std::string(299, static_cast<char>('a' + 299 % 26)));
  CHECK(A_OWNS(um[299].data()));

  // over-aligned types go through aligned new
  std::vector<OverAligned *> oa;
  for (int k = 0; k < 100; k++) {
    oa.push_back(new OverAligned);
    CHECK(is_aligned(oa.back(), 256) && A_OWNS(oa.back()));
    std::memset(oa.back()->bytes, k, sizeof oa.back()->bytes);
  }
  for (int k = 0; k < 100; k++) {
    CHECK(oa[static_cast<std::size_t>(k)]->bytes[999] == k);
    delete oa[static_cast<std::size_t>(k)];
  }
  OverAligned *arr = new OverAligned[7];
  CHECK(is_aligned(arr, 256));
  delete[] arr;
  auto sp = std::make_shared<OverAligned>();
  CHECK(is_aligned(sp.get(), 256));

  // exceptions (their objects are allocated with malloc by the C++ runtime)
  int caught = 0;
  for (int k = 0; k < 1000; k++) {
    try {
      throw std::runtime_error("error number " + std::to_string(k) + std::string(200, 'x'));
    } catch (const std::runtime_error &e) {
      if (std::strncmp(e.what(), "error number ", 13) == 0) caught++;
    }
  }
  CHECK(caught == 1000);

  // std::thread, objects crossing threads
  std::atomic<int> bad{0};
  std::vector<std::unique_ptr<std::vector<std::string>>> made(4);
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; t++)
    ts.emplace_back([t, &made, &bad] {
      auto v = std::make_unique<std::vector<std::string>>();
      for (int k = 0; k < 20000; k++)
        v->push_back(std::to_string(t * 100000 + k) +
                     std::string(static_cast<std::size_t>(k % 50), 'z'));
      if (!A_OWNS(v->data())) bad++;
      made[static_cast<std::size_t>(t)] = std::move(v);
    });
  for (auto &t : ts)
    t.join();
  CHECK(bad.load() == 0);
  for (int t = 0; t < 4; t++) {
    auto &v = *made[static_cast<std::size_t>(t)];
    CHECK(v.size() == 20000 &&
          v[12345] == std::to_string(t * 100000 + 12345) + std::string(45, 'z'));
  }
  made.clear(); // freed by the main thread
}

int main() {
  api_init();
  std::printf("operator new/delete with brisk %s\n", A_VERSION());
  test_symbols();
  test_forms();
  test_deletes_free();
  test_impossible();
  test_new_handler();
  test_workload();
  return test_finish();
}
