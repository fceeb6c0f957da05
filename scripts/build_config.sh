# Sourced by demo.sh and test.sh: how they configure build/, the same for both, so that
# the tests reuse what the demo built. Optimized without debug information (a te for
# debugging is a plain `cmake -DCMAKE_BUILD_TYPE=Debug`); te's libraries compile in unity
# batches and the tests at -O0 (CMake options TE_UNITY_BUILD, TE_OPTIMIZE_TESTS).
te_cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG"
  "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG")
