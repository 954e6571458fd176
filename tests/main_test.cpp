#define CATCH_CONFIG_RUNNER
#include <stdlib.h>

#include <catch2/catch.hpp>

int main(int argc, char* argv[]) {
  // The operator-table cache (models/table_cache.h) off unless the caller set it: an entry holds
  // tables as some build of servesim read and checked them, so a suite reading the user's cache
  // would skip its own readers' checks. A mutant that accepted a bad table once made the suite
  // fail for the unmutated build ever after (scripts/mutate.py gives each suite an empty cache).
  setenv("SERVESIM_TABLE_CACHE", "off", /*overwrite=*/0);
  return Catch::Session().run(argc, argv);
}
