#!/usr/bin/env bash
# The libFuzzer build and runs (docs/reliability.md):
#   tools/fuzz.sh build              configure and build every fuzzer in $FUZZ_BUILD_DIR (build-fuzz)
#   tools/fuzz.sh run NAME SECONDS   run one (tokenizer or fuzz_tokenizer) for SECONDS, nice -n 19
# Needs clang and libclang-rt-14-dev (libFuzzer, ASan, UBSan); they are installed here when
# missing, because `make test` does not need them.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}

need_clang() {
  if command -v clang++ >/dev/null 2>&1 &&
    compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; then
    return
  fi
  echo "fuzz: the fuzzers need clang and libFuzzer (Debian packages clang, libclang-rt-14-dev); installing them."
  if [[ $(id -u) -eq 0 ]]; then
    apt-get install -y clang libclang-rt-14-dev
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo -n apt-get install -y clang libclang-rt-14-dev
  else
    echo "fuzz: cannot install as this user; run: sudo apt-get install clang libclang-rt-14-dev" >&2
    exit 1
  fi
}

case "${1:-}" in
  build)
    need_clang
    cmake -S . -B "$BUILD" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDAY0_CUDA=OFF -DDAY0_BUILD_GUI=OFF -DDAY0_FUZZ=ON
    cmake --build "$BUILD" --target fuzzers -j "${JOBS:-$(nproc)}"
    ;;
  run)
    name=${2:?usage: tools/fuzz.sh run NAME SECONDS}
    name=${name#fuzz_}
    seconds=${3:-600}
    binary="$BUILD/fuzz/fuzz_$name"
    [[ -x $binary ]] || { echo "fuzz: $binary is missing; run make fuzz first" >&2; exit 1; }
    mkdir -p "$BUILD/fuzz-corpus/$name" "$BUILD/fuzz-artifacts/$name"
    seeds=("tests/fuzz/$name/corpus")
    [[ -d tests/fuzz/$name/regressions ]] && seeds+=("tests/fuzz/$name/regressions")
    # New inputs go to the first folder (in the build folder); the seeds stay untouched.
    exec nice -n 19 "$binary" -dict="tests/fuzz/$name/$name.dict" -max_total_time="$seconds" \
      -rss_limit_mb=4096 -timeout=10 -print_final_stats=1 -artifact_prefix="$BUILD/fuzz-artifacts/$name/" \
      "$BUILD/fuzz-corpus/$name" "${seeds[@]}"
    ;;
  *)
    echo "usage: tools/fuzz.sh build | run NAME SECONDS" >&2
    exit 2
    ;;
esac
