# The two commands of the README. Everything else is CMake and ./brisk.
#   make bench   builds brisk and compares it with every allocator it can find
#   make test    builds brisk and runs all tests: release, ThreadSanitizer, UBSan
JOBS ?= $(shell nproc)

.PHONY: all deps deps-bench build test test-release test-tsan test-ubsan bench clean

all: build

deps:
	scripts/install-deps.sh test

deps-bench:
	scripts/install-deps.sh bench

build: deps
	cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
	cmake --build build -j $(JOBS)

test-release: build
	ctest --test-dir build --output-on-failure -j $(JOBS)

test-tsan: deps
	cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DBRISK_SANITIZE=thread -DBRISK_PASCAL=OFF
	cmake --build build-tsan -j $(JOBS)
	ctest --test-dir build-tsan --output-on-failure -j $(JOBS)

test-ubsan: deps
	cmake -S . -B build-ubsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DBRISK_SANITIZE=undefined -DBRISK_PASCAL=OFF
	cmake --build build-ubsan -j $(JOBS)
	ctest --test-dir build-ubsan --output-on-failure -j $(JOBS)

test: test-release test-tsan test-ubsan

bench: deps-bench
	./brisk bench $(ARGS)

clean:
	rm -rf build build-tsan build-ubsan
