# The two commands of the README:
#   make run   install what is missing, build Release, start the Day0 window
#   make test  install what is missing, build the test configuration, run every test (ctest)
#   make package  build Release and the Debian package (build/package/day0_<version>_<arch>.deb)
#   make test-asan / test-tsan  the sanitizer builds (CPU only, build-asan/ and build-tsan/)
# Both work on a fresh Debian 12 machine; tools/install-deps.sh installs the Debian packages.

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
BUILD_DIR ?= build
CMAKE ?= cmake
CTEST ?= ctest
CPACK ?= cpack
ASAN_BUILD_DIR ?= build-asan
TSAN_BUILD_DIR ?= build-tsan

.PHONY: run test build build-test package deps format format-check clean help \
	build-asan test-asan build-tsan test-tsan

help:
	@echo "make run          install dependencies, build Release, start the app"
	@echo "make test         install dependencies, build and run all tests"
	@echo "make build        build Release without starting the app"
	@echo "make package      build Release and the Debian package in $(BUILD_DIR)/package"
	@echo "make test-asan    build with ASan+UBSan (CPU only) and run every test"
	@echo "make test-tsan    build with TSan (CPU only) and run the threaded tests (label tsan)"
	@echo "make format       clang-format the C++ sources"
	@echo "make clean        remove the build folder"
	@echo "make fuzz         build the libFuzzer fuzzers (clang) in build-fuzz"
	@echo "make fuzz-run FUZZER=tokenizer SECONDS=600   run one fuzzer"

deps:
	@tools/install-deps.sh

build: deps
	$(CMAKE) --preset release
	$(CMAKE) --build --preset release -j $(JOBS)

run: build
	@if [ -z "$$DISPLAY" ] && [ -z "$$WAYLAND_DISPLAY" ]; then \
	  echo "No display found (DISPLAY and WAYLAND_DISPLAY are unset): the Day0 window cannot open here."; \
	  echo "Day0 is built. Use the headless command line instead:"; \
	  echo "  $(BUILD_DIR)/bin/day0-cli --help"; \
	  echo "  $(BUILD_DIR)/bin/day0-cli make-demo-model $(BUILD_DIR)/demo-model"; \
	  echo "  $(BUILD_DIR)/bin/day0-cli chat --model $(BUILD_DIR)/demo-model"; \
	else \
	  cmp -s resources/demo-model/day0-demo.json $(BUILD_DIR)/demo-model/day0-demo.json || \
	    { rm -rf $(BUILD_DIR)/demo-model && $(BUILD_DIR)/bin/day0-cli make-demo-model $(BUILD_DIR)/demo-model; }; \
	  $(BUILD_DIR)/bin/day0 --model $(BUILD_DIR)/demo-model; \
	fi

package: build
	$(CPACK) --config $(BUILD_DIR)/CPackConfig.cmake -G DEB -B $(BUILD_DIR)/package
	@ls -1 $(BUILD_DIR)/package/*.deb

build-test: deps
	$(CMAKE) --preset test
	$(CMAKE) --build --preset test -j $(JOBS)

test: build-test
	QT_QPA_PLATFORM=offscreen $(CTEST) --preset test -j $(JOBS)

# Sanitizer runs. The asan and tsan presets hold the flags; tests/sanitizers.cmake gives every test
# its ASAN_/UBSAN_/LSAN_/TSAN_OPTIONS and labels `tsan` the tests that exercise threads;
# tools/sanitizers/ holds the suppressions. The build folders may be moved (ASAN_BUILD_DIR=...).
build-asan: deps
	$(CMAKE) --preset asan -B $(ASAN_BUILD_DIR)
	$(CMAKE) --build $(ASAN_BUILD_DIR) -j $(JOBS)

test-asan: build-asan
	cd $(ASAN_BUILD_DIR) && $(CTEST) --output-on-failure -j $(JOBS)

build-tsan: deps
	$(CMAKE) --preset tsan -B $(TSAN_BUILD_DIR)
	$(CMAKE) --build $(TSAN_BUILD_DIR) -j $(JOBS)

test-tsan: build-tsan
	cd $(TSAN_BUILD_DIR) && $(CTEST) --output-on-failure -L '^tsan$$' -j $(JOBS)

format:
	@git ls-files '*.h' '*.cpp' '*.cu' | xargs clang-format -i

format-check:
	@git ls-files '*.h' '*.cpp' '*.cu' | xargs clang-format --dry-run --Werror

clean:
	rm -rf $(BUILD_DIR)

# Fuzzing (docs/reliability.md): libFuzzer + ASan + UBSan with clang in build-fuzz/.
.PHONY: fuzz fuzz-run
FUZZER ?= tokenizer
SECONDS ?= 600
fuzz:
	@tools/fuzz.sh build

fuzz-run:
	@tools/fuzz.sh run $(FUZZER) $(SECONDS)
