# htp_add_plugin(NAME <name> SOURCES <src>... [LINK_LIBRARIES <lib>...]
#                [OUTPUT_DIRECTORY <dir>] [MANIFEST <file> | NO_MANIFEST] [INSTALL_DESTINATION <dir>]
#                [STUBS <dir>])
#
# Builds the HTP plugin `htp-<name>.so`: a MODULE library compiled against the SDK headers only, with
# hidden visibility and a version script so that only `htp_*` symbols are exported. After the build,
# `htp-host plugins manifest` loads it once and writes its manifest `htp-<name>.plugin.json` next to it
# (name, version, ABI, declared components); MANIFEST copies a hand-written manifest instead and
# NO_MANIFEST writes none (test fixtures only). STUBS ships hand-written editor stubs: every `*.pyi` under
# <dir> (`<dialect>.pyi`, and `intrinsics/<set>.pyi` for an intrinsic set) is copied, keeping its relative
# path, to `htp-<name>.stubs/` next to the plugin and installed with it; `python -m htp.stubgen` prefers
# them to the stubs it would generate from the manifest. The target is named `htp-<name>`.
#
# htp_add_plugin_objects(<target> SOURCES <src>... [LINK_LIBRARIES <lib>...])
#
# The part of a plugin that its own unit tests call directly, compiled once as an OBJECT library with the
# plugin's settings (C++20, SDK headers, position-independent, hidden visibility): link it into the
# plugin (htp_add_plugin's LINK_LIBRARIES) and into the test executable, instead of listing the same
# sources in both and compiling each file twice.
#
# Used in the HTP build tree and, installed, by out-of-tree plugins through find_package(HTP).

set(_HTP_PLUGIN_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

function(htp_add_plugin)
  cmake_parse_arguments(ARG "NO_MANIFEST" "NAME;OUTPUT_DIRECTORY;MANIFEST;INSTALL_DESTINATION;STUBS"
                        "SOURCES;LINK_LIBRARIES" ${ARGN})
  if(NOT ARG_NAME)
    message(FATAL_ERROR "htp_add_plugin: NAME is required")
  endif()
  if(NOT ARG_NAME MATCHES "^[a-z0-9][a-z0-9-]*$")
    message(FATAL_ERROR "htp_add_plugin: NAME '${ARG_NAME}' must match [a-z0-9][a-z0-9-]*")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "htp_add_plugin(${ARG_NAME}): SOURCES is required")
  endif()
  set(target htp-${ARG_NAME})
  if(NOT ARG_OUTPUT_DIRECTORY)
    set(ARG_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  endif()

  add_library(${target} MODULE ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME htp-${ARG_NAME}
    LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIRECTORY})
  _htp_plugin_code(${target} PRIVATE "${ARG_LINK_LIBRARIES}")
  target_link_options(${target} PRIVATE
    "LINKER:--version-script=${_HTP_PLUGIN_CMAKE_DIR}/htp_plugin.map"
    "LINKER:--no-undefined")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${_HTP_PLUGIN_CMAKE_DIR}/htp_plugin.map)

  set(manifest ${ARG_OUTPUT_DIRECTORY}/htp-${ARG_NAME}.plugin.json)
  if(ARG_MANIFEST)
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -E copy ${ARG_MANIFEST} ${manifest}
      COMMENT "Copying the manifest of HTP plugin ${ARG_NAME}" VERBATIM)
  elseif(NOT ARG_NO_MANIFEST)
    if(TARGET htp-host)
      set(host_cmd $<TARGET_FILE:htp-host>)
      add_dependencies(${target} htp-host)
    elseif(TARGET HTP::htp-host)
      set(host_cmd $<TARGET_FILE:HTP::htp-host>)
    else()
      message(FATAL_ERROR "htp_add_plugin: no htp-host executable to generate the manifest with")
    endif()
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND ${host_cmd} --log-level error plugins manifest $<TARGET_FILE:${target}> -o ${manifest}
      COMMENT "Writing the manifest of HTP plugin ${ARG_NAME}" VERBATIM)
  endif()

  set(stubs_dir ${ARG_OUTPUT_DIRECTORY}/htp-${ARG_NAME}.stubs)
  if(ARG_STUBS)
    _htp_plugin_stubs(${target} ${ARG_STUBS} ${stubs_dir})
  endif()

  if(ARG_INSTALL_DESTINATION)
    install(TARGETS ${target} LIBRARY DESTINATION ${ARG_INSTALL_DESTINATION})
    if(NOT ARG_NO_MANIFEST)
      install(FILES ${manifest} DESTINATION ${ARG_INSTALL_DESTINATION})
    endif()
    if(ARG_STUBS)
      install(DIRECTORY ${stubs_dir} DESTINATION ${ARG_INSTALL_DESTINATION})
    endif()
  endif()
endfunction()

function(htp_add_plugin_objects target)
  cmake_parse_arguments(ARG "" "" "SOURCES;LINK_LIBRARIES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "htp_add_plugin_objects(${target}): SOURCES is required")
  endif()
  add_library(${target} OBJECT ${ARG_SOURCES})
  _htp_plugin_code(${target} PUBLIC "${ARG_LINK_LIBRARIES}")
endfunction()

# How plugin code is compiled (a plugin's own sources and its object libraries alike): C++20 against the
# SDK, position-independent, hidden visibility; `scope` is PRIVATE for the plugin, PUBLIC for an object
# library so that what links it gets the same.
function(_htp_plugin_code target scope link_libraries)
  set_target_properties(${target} PROPERTIES
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON)
  target_compile_features(${target} ${scope} cxx_std_20)
  target_link_libraries(${target} ${scope} HTP::sdk ${link_libraries})
endfunction()

# Copies the `*.pyi` files under <src> to <dst> (same relative paths) whenever one changes, as a
# dependency of <target>; a missing or empty <src> is a configuration error, not a silent no-op.
function(_htp_plugin_stubs target src dst)
  get_filename_component(src ${src} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  file(GLOB_RECURSE stubs CONFIGURE_DEPENDS RELATIVE ${src} ${src}/*.pyi)
  if(NOT stubs)
    message(FATAL_ERROR "htp_add_plugin(${target}): STUBS directory '${src}' holds no .pyi file")
  endif()
  set(outputs)
  foreach(f IN LISTS stubs)
    add_custom_command(OUTPUT ${dst}/${f}
      COMMAND ${CMAKE_COMMAND} -E copy_if_different ${src}/${f} ${dst}/${f}
      DEPENDS ${src}/${f}
      COMMENT "Copying the type stub ${f} of ${target}" VERBATIM)
    list(APPEND outputs ${dst}/${f})
  endforeach()
  add_custom_target(${target}-stubs DEPENDS ${outputs})
  add_dependencies(${target} ${target}-stubs)
endfunction()
