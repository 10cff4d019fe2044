// The Catch2 main, compiled once for every test binary.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
