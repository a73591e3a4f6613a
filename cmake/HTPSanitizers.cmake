# Test helpers for the sanitizer build (HTP_SANITIZE=ON, preset `asan`, `make test-asan`). Both are
# no-ops in a normal build, so tests call them unconditionally.
#
# htp_python_test_env(<var>)
#   Sets <var> to the environment entries (a list of NAME=VALUE, for the ENVIRONMENT test property) a
#   plain interpreter such as /usr/bin/python3 needs to import the instrumented _htp module: the ASan
#   runtime preloaded (with libstdc++, or ASan cannot intercept C++ throws), and no leak report at exit
#   (CPython deliberately keeps memory until exit; that is not a leak of ours). Empty when not sanitizing.
#   Every test that runs HTP_PYTHON on the build tree's or an installed htp package uses it.
#
# htp_without_sanitizers(<target>)
#   Builds <target> uninstrumented. For fixtures that crash on purpose (a null store, abort()): UBSan
#   would report the null store and exit 1 instead of letting the signal happen, and the test exists to
#   see the signal.

include_guard(GLOBAL)

function(htp_python_test_env var)
  set(env)
  if(HTP_SANITIZE)
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libasan.so
                    OUTPUT_VARIABLE libasan OUTPUT_STRIP_TRAILING_WHITESPACE)
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libstdc++.so
                    OUTPUT_VARIABLE libstdcxx OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT IS_ABSOLUTE "${libasan}" OR NOT EXISTS "${libasan}")
      message(FATAL_ERROR "HTP_SANITIZE: ${CMAKE_CXX_COMPILER} does not know where libasan.so is ('${libasan}')")
    endif()
    list(APPEND env "LD_PRELOAD=${libasan}:${libstdcxx}" "ASAN_OPTIONS=detect_leaks=0")
  endif()
  set(${var} "${env}" PARENT_SCOPE)
endfunction()

function(htp_without_sanitizers target)
  if(HTP_SANITIZE OR HTP_FUZZ)
    # Last on the command line, so it cancels the directory-wide -fsanitize=... options.
    target_compile_options(${target} PRIVATE -fno-sanitize=all)
    target_link_options(${target} PRIVATE -fno-sanitize=all)
  endif()
endfunction()
