# Precompiled headers, one per target: the third-party headers that most translation units
# include (nlohmann/json, GoogleTest, Asio, Beast) cost 2-4 s to parse at -O0, more than the code
# of most of our files; CI compiles the tree three times on 2 cores. Each target gets its own
# PCH, built with that target's flags and definitions (no REUSE_FROM: targets differ in both).
#
# Which headers a target's PCH holds is read from its sources: a heavy header goes in when at
# least two of the target's files include it (one file gains nothing from a PCH). nlohmann/json
# and the standard headers most files use go into every PCH: most files reach JSON through our
# own headers. -DHUBWATCH_PCH=OFF builds without, which
# is how include hygiene is checked (each file must still name what it uses).
#
# On by default with clang only. Not with gcc: at -O2 gcc 12 reports its -Warray-bounds false
# positives from inside <string> (inlined into our code) as our own when <string> comes from a
# PCH, where without one it knows them for system-header code and stays quiet.
set(hubwatch_pch_default OFF)
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  set(hubwatch_pch_default ON)
endif()
option(HUBWATCH_PCH "Precompile the heavy third-party headers of each target"
       ${hubwatch_pch_default})

# "regex|header,header": a file whose #include matches the regex uses what the PCH would hold.
set(hubwatch_pch_rules
    "gtest/gtest\\.h|<gtest/gtest.h>"
    "gmock/gmock\\.h|<gmock/gmock.h>"
    "boost/asio|<boost/asio.hpp>"
    "boost/beast|<boost/beast/core.hpp>,<boost/beast/http.hpp>")

function(hubwatch_pch_for_target target)
  get_target_property(type ${target} TYPE)
  if(NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
    return()
  endif()
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  set(files "")
  foreach(source IN LISTS sources)
    if(source MATCHES "\\.(cc|h)$")
      if(NOT IS_ABSOLUTE "${source}")
        set(source "${source_dir}/${source}")
      endif()
      if(EXISTS "${source}")
        list(APPEND files "${source}")
      endif()
    endif()
  endforeach()
  list(LENGTH files file_count)
  if(file_count LESS 2)
    return()
  endif()
  set(headers "")
  foreach(rule IN LISTS hubwatch_pch_rules)
    string(REPLACE "," ";" parts "${rule}")
    string(REPLACE "|" ";" parts "${parts}")
    list(POP_FRONT parts pattern)
    set(users 0)
    foreach(file IN LISTS files)
      file(STRINGS "${file}" hits REGEX "^#include [<\"]${pattern}" LIMIT_COUNT 1)
      if(hits)
        math(EXPR users "${users} + 1")
      endif()
    endforeach()
    if(users GREATER_EQUAL 2)
      list(APPEND headers ${parts})
    endif()
  endforeach()
  target_precompile_headers(${target} PRIVATE <string> <string_view> <vector> <map> <memory>
                            <optional> <functional> <cstdint> <nlohmann/json.hpp> ${headers})
endfunction()

# Applies hubwatch_pch_for_target to every target defined in `dir` and below.
function(hubwatch_pch_for_directory dir)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    hubwatch_pch_for_target(${target})
  endforeach()
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    hubwatch_pch_for_directory("${subdir}")
  endforeach()
endfunction()
