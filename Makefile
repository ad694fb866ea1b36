# SPDX-License-Identifier: MIT
# Shortcuts to ./brisk, which installs what each command needs (through
# scripts/install-deps.sh), builds with CMake and runs the tools in tools/.

.PHONY: help test bench docs clean

help:
	@echo "make test    ./brisk test: build brisk and run every test"
	@echo "make bench   ./brisk bench: compare brisk with the other allocators (ARGS=--quick ...)"
	@echo "make docs    ./brisk docs: rebuild the README's examples and their output"
	@echo "make clean   remove the build folders"

test:
	./brisk test

bench:
	./brisk bench $(ARGS)

docs:
	./brisk docs

clean:
	rm -rf build build-debug build-tsan build-ubsan build-win64 build-package build-dist dist
