# Sourced by scripts/test.sh and scripts/fuzz.sh: the one sanitizer build both use, so CI compiles
# the libraries with sanitizers once, not twice. clang, AddressSanitizer + UBSan, libFuzzer's
# coverage in every library (SERVESIM_FUZZ=ON, which also builds the harnesses in fuzz/), the test
# suite, -O1 with asserts on (a Debug build whose flags are -O1 -g: the suite runs about 2.5x
# faster than at -O0 and the fuzzers about as fast as at -O2). Sets SERVESIM_SAN_BUILD (the
# folder, default build-asan, or $SERVESIM_FUZZ_BUILD) and configures it.
SERVESIM_SAN_BUILD=${SERVESIM_FUZZ_BUILD:-build-asan}
source scripts/ccache.sh
cmake -S . -B "$SERVESIM_SAN_BUILD" -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g" -DSERVESIM_FUZZ=ON \
  "${SERVESIM_LAUNCHER[@]}" >/dev/null
