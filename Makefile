# HTP front door. `make demo` and `make test` are the whole set-up on a fresh Debian machine.
PRESET ?= default

.PHONY: all bootstrap configure build test demo bench install test-asan clean

all: build

bootstrap:
	@scripts/bootstrap.sh

configure: bootstrap
	@cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build --preset $(PRESET)

test: build
	@ctest --preset $(PRESET)

demo: build
	@scripts/demo.sh build

bench: build
	@scripts/bench.sh build

install: build
	@cmake --install build

test-asan:
	@$(MAKE) --no-print-directory PRESET=asan test

clean:
	@rm -rf build build-asan
