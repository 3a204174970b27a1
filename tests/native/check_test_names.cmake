# Run by ctest (see CMakeLists.txt): catch_discover_tests hands ctest one entry per TEST_CASE
# name, and ctest splits those names on ';'. A name holding ';' becomes entries matching no test,
# and its test case never runs while the summary stays green. This check fails instead, naming
# each such test case and the fix.
file(GLOB_RECURSE sources "${TESTS_DIR}/*.cpp")
set(bad "")
foreach(source IN LISTS sources)
  file(STRINGS "${source}" lines REGEX "^[ \t]*(TEST_CASE|SCENARIO|TEMPLATE_TEST_CASE)[ \t]*\\(")
  foreach(line IN LISTS lines)
    if(line MATCHES "\\([ \t]*\"[^\"]*;")
      file(RELATIVE_PATH rel "${TESTS_DIR}" "${source}")
      string(APPEND bad "\n  ${rel}: ${line}")
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "Catch2 test names holding ';' never run under ctest (it splits names on ';'):${bad}\n"
                      "Replace the ';' in each name (a comma reads the same).")
endif()
