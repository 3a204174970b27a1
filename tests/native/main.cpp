// Catch2 v2 entry point for the native suite (ctest runs it).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
