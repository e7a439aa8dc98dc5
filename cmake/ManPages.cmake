# SPDX-License-Identifier: Apache-2.0
# Man pages and shell completion, generated at build time from the binaries' own help.
#
#   peaklens_add_man_page(TARGET tgt COMPONENT comp DESCRIPTION "..." [WITH_SUBCOMMANDS])
#     share/man/man1/<tgt>.1 in the build tree, from help2man on the built binary, installed to
#     ${CMAKE_INSTALL_MANDIR}/man1. WITH_SUBCOMMANDS adds a COMMANDS section of each
#     subcommand's own --help, the names read from "Subcommands:" in the program's --help.
#     EXIT STATUS and ENVIRONMENT are the program's rows of the tables in docs/cli.md.
#   peaklens_add_completion(TARGET tgt COMPONENT comp)
#     The bash and zsh scripts that `tgt --completion bash|zsh` prints, written to
#     share/bash-completion/completions/<tgt> and share/zsh/vendor-completions/_<tgt>.
#
# The build runs this same file as a script (cmake -P) to write them.

if(CMAKE_SCRIPT_MODE_FILE)
  cmake_policy(VERSION 3.25)

  # Writes `text` to `path` through a temporary file, so a failed run leaves no half file.
  function(write_atomically path text)
    file(WRITE "${path}.tmp" "${text}")
    file(RENAME "${path}.tmp" "${path}")
  endfunction()

  # Markdown of a table cell as roff: `code` in bold, links as their text, dashes unbroken.
  function(roff_from_markdown out text)
    string(REPLACE "\\" "\\e" text "${text}")
    string(REPLACE "-" "\\-" text "${text}")
    string(REGEX REPLACE "\\[([^]]*)\\]\\([^)]*\\)" "\\1" text "${text}")
    string(REGEX REPLACE "`([^`]*)`" "\\\\fB\\1\\\\fR" text "${text}")
    string(REGEX REPLACE "^([.'])" "\\\\&\\1" text "${text}")
    set(${out} "${text}" PARENT_SCOPE)
  endfunction()

  # The rows of the table under "## <heading>" in `markdown` whose cell `column` (0 or 1)
  # names `program`, alone or followed by a subcommand, among its comma-separated entries;
  # as roff .TP items: the other of the first two cells in bold, then the third, after the
  # subcommand's name where the row names one.
  function(table_items out markdown heading column program)
    set(items "")
    string(FIND "${markdown}" "\n## ${heading}\n" start)
    if(start EQUAL -1)
      message(FATAL_ERROR "docs/cli.md has no \"## ${heading}\" section.")
    endif()
    string(SUBSTRING "${markdown}" ${start} -1 section)
    string(SUBSTRING "${section}" 1 -1 section)
    string(FIND "${section}" "\n## " end)
    if(NOT end EQUAL -1)
      string(SUBSTRING "${section}" 0 ${end} section)
    endif()
    # Line by line, never as a CMake list: the cells hold ';' and brackets.
    set(rest "${section}\n")
    while(rest MATCHES "^([^\n]*)\n(.*)$")
      set(line "${CMAKE_MATCH_1}")
      set(rest "${CMAKE_MATCH_2}")
      if(NOT line MATCHES "^\\| *([^|]*[^ |]) *\\| *([^|]*[^ |]) *\\| *(.*[^ |]) *\\|$")
        continue()
      endif()
      set(cells0 "${CMAKE_MATCH_1}")
      set(cells1 "${CMAKE_MATCH_2}")
      set(meaning "${CMAKE_MATCH_3}")
      set(subcommand "")
      set(matched FALSE)
      string(REPLACE "`" "" names "${cells${column}}")
      string(REPLACE ", " "," names "${names}")
      string(REPLACE "," "\n" names "${names}\n")
      while(names MATCHES "^([^\n]*)\n(.*)$")
        set(name "${CMAKE_MATCH_1}")
        set(names "${CMAKE_MATCH_2}")
        if(name STREQUAL program)
          set(matched TRUE)
        elseif(name MATCHES "^${program} ([a-z-]+)$")
          set(matched TRUE)
          set(subcommand "${CMAKE_MATCH_1}")
        endif()
      endwhile()
      if(NOT matched)
        continue()
      endif()
      if(column EQUAL 0)
        set(key "${cells1}")
      else()
        set(key "${cells0}")
      endif()
      string(REPLACE "`" "" key "${key}")
      roff_from_markdown(key "${key}")
      roff_from_markdown(meaning "${meaning}")
      if(NOT subcommand STREQUAL "")
        set(meaning "\\fB${subcommand}\\fR: ${meaning}")
      endif()
      string(APPEND items ".TP\n.B ${key}\n${meaning}\n")
    endwhile()
    set(${out} "${items}" PARENT_SCOPE)
  endfunction()

  function(run_help2man out program)
    # In UTF-8, so that the help's "…" stays one (man-db reads UTF-8 pages).
    execute_process(COMMAND "${PEAKLENS_HELP2MAN}" --no-info --locale C.UTF-8 --name "${PEAKLENS_DESCRIPTION}"
                            --version-string "${PEAKLENS_NAME} ${PEAKLENS_VERSION}" ${ARGN} "${program}"
                    OUTPUT_VARIABLE page ERROR_VARIABLE error RESULT_VARIABLE status)
    if(NOT status EQUAL 0)
      message(FATAL_ERROR "help2man failed on ${program} ${ARGN}: ${error}")
    endif()
    set(${out} "${page}" PARENT_SCOPE)
  endfunction()

  # A .SS of one subcommand: help2man's page of `program SUB --help` without its title, NAME
  # and headings, nor the -h,--help that every subcommand has.
  function(subcommand_section out program subcommand)
    run_help2man(page "${program}" --help-option "${subcommand} --help")
    string(REGEX REPLACE "^.*\n\\.SH SYNOPSIS\n" "" page "${page}")
    string(REPLACE "\\fI\\,${subcommand} \\/\\fR" "\\fB${subcommand}\\fR " page "${page}")
    string(REPLACE "\n.SH DESCRIPTION\n" "\n.PP\n" page "${page}")
    string(REGEX REPLACE "\n\\.S[HS] [^\n]*" "" page "${page}")
    string(REPLACE "\n.TP\n\\fB\\-h\\fR,\\-\\-help\nPrint this help message and exit" "" page "${page}")
    set(${out} ".SS ${subcommand}\n${page}" PARENT_SCOPE)
  endfunction()

  if(PEAKLENS_GENERATE STREQUAL "completion")
    execute_process(COMMAND "${PEAKLENS_PROGRAM}" --completion "${PEAKLENS_SHELL}"
                    OUTPUT_VARIABLE script ERROR_VARIABLE error RESULT_VARIABLE status)
    if(NOT status EQUAL 0 OR script STREQUAL "")
      message(FATAL_ERROR "${PEAKLENS_PROGRAM} --completion ${PEAKLENS_SHELL} failed: ${error}")
    endif()
    get_filename_component(folder "${PEAKLENS_OUTPUT}" DIRECTORY)
    file(MAKE_DIRECTORY "${folder}")
    write_atomically("${PEAKLENS_OUTPUT}" "${script}")
  elseif(PEAKLENS_GENERATE STREQUAL "man")
    file(READ "${PEAKLENS_DOCS}" markdown)
    set(include "")
    if(PEAKLENS_WITH_SUBCOMMANDS)
      execute_process(COMMAND "${PEAKLENS_PROGRAM}" --help OUTPUT_VARIABLE help RESULT_VARIABLE status)
      if(NOT status EQUAL 0 OR NOT help MATCHES "\nSubcommands:\n")
        message(FATAL_ERROR "${PEAKLENS_PROGRAM} --help lists no subcommands.")
      endif()
      string(REGEX MATCH "\nSubcommands:\n([ ][^\n]*\n)*" list "${help}")
      string(REGEX MATCHALL "\n  [^ \n]+" subcommands "${list}")
      string(APPEND include "[COMMANDS]\nEach command prints its own options with \\fB\\-\\-help\\fR.\n")
      foreach(subcommand IN LISTS subcommands)
        string(STRIP "${subcommand}" subcommand)
        subcommand_section(section "${PEAKLENS_PROGRAM}" "${subcommand}")
        string(APPEND include "${section}")
      endforeach()
    endif()
    table_items(codes "${markdown}" "Exit status" 0 "${PEAKLENS_NAME}")
    if(codes STREQUAL "")
      message(FATAL_ERROR "The exit status table of docs/cli.md has no row for ${PEAKLENS_NAME}.")
    endif()
    string(APPEND include "[EXIT STATUS]\n${codes}")
    table_items(environment "${markdown}" "Environment" 1 "${PEAKLENS_NAME}")
    if(NOT environment STREQUAL "")
      string(APPEND include "[ENVIRONMENT]\n${environment}")
    endif()
    set(seeAlso "")
    foreach(other peaklens peaklens-cli peaklens-replay)
      if(NOT other STREQUAL PEAKLENS_NAME)
        string(REPLACE "-" "\\-" other "${other}")
        string(APPEND seeAlso ".BR ${other} (1),\n")
      endif()
    endforeach()
    string(REGEX REPLACE ",\n$" "\n" seeAlso "${seeAlso}")
    # Relative: a package installs under another prefix than the build was configured with.
    string(REPLACE "-" "\\-" docs "${PEAKLENS_DOCDIR}")
    string(APPEND include "[SEE ALSO]\n${seeAlso}.PP\nThe guides in \\fI${docs}\\fR under the installation prefix, "
                          "\\fBcli.md\\fR among them.\n")
    # help2man reads a line that is only [NAME] as a section of its own.
    string(REGEX REPLACE "\n\\[" "\n\\\\&[" include "${include}")
    string(REGEX REPLACE "\n\\\\&\\[([A-Z ]+)\\]\n" "\n[\\1]\n" include "${include}")

    get_filename_component(folder "${PEAKLENS_OUTPUT}" DIRECTORY)
    file(MAKE_DIRECTORY "${folder}")
    get_filename_component(folder "${PEAKLENS_INCLUDE}" DIRECTORY)
    file(MAKE_DIRECTORY "${folder}")
    write_atomically("${PEAKLENS_INCLUDE}" "${include}")
    run_help2man(page "${PEAKLENS_PROGRAM}" --include "${PEAKLENS_INCLUDE}")
    write_atomically("${PEAKLENS_OUTPUT}" "${page}")
  else()
    message(FATAL_ERROR "ManPages.cmake as a script: PEAKLENS_GENERATE is man or completion.")
  endif()
  return()
endif()

include(FeatureSummary)
set(PEAKLENS_MAN_PAGES_SCRIPT ${CMAKE_CURRENT_LIST_FILE})
find_program(HELP2MAN_EXECUTABLE help2man)
add_feature_info(ManPages HELP2MAN_EXECUTABLE "man pages of peaklens, peaklens-cli and peaklens-replay from their --help (help2man)")
if(NOT HELP2MAN_EXECUTABLE)
  message(STATUS "help2man not found: no man pages are built (install help2man to build them).")
endif()

function(peaklens_add_man_page)
  cmake_parse_arguments(PARSE_ARGV 0 page "WITH_SUBCOMMANDS" "TARGET;COMPONENT;DESCRIPTION" "")
  if(NOT page_TARGET OR NOT page_COMPONENT OR NOT page_DESCRIPTION)
    message(FATAL_ERROR "peaklens_add_man_page needs TARGET, COMPONENT and DESCRIPTION.")
  endif()
  if(NOT HELP2MAN_EXECUTABLE)
    return()
  endif()
  set(name ${page_TARGET})
  set(output ${PROJECT_BINARY_DIR}/share/man/man1/${name}.1)
  # The Qt app needs a platform to print its help, and no display for it. A sanitizer
  # build's leak report at exit is for its test suite, not for the pages.
  add_custom_command(OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -E env QT_QPA_PLATFORM=offscreen ASAN_OPTIONS=detect_leaks=0
            ${CMAKE_COMMAND} -D PEAKLENS_GENERATE=man
                             -D PEAKLENS_PROGRAM=$<TARGET_FILE:${page_TARGET}>
                             -D PEAKLENS_NAME=${name}
                             -D PEAKLENS_VERSION=${PROJECT_VERSION}
                             -D PEAKLENS_DESCRIPTION=${page_DESCRIPTION}
                             -D PEAKLENS_WITH_SUBCOMMANDS=${page_WITH_SUBCOMMANDS}
                             -D PEAKLENS_HELP2MAN=${HELP2MAN_EXECUTABLE}
                             -D PEAKLENS_DOCS=${PROJECT_SOURCE_DIR}/docs/cli.md
                             -D PEAKLENS_DOCDIR=${PEAKLENS_INSTALL_DOCDIR}
                             -D PEAKLENS_INCLUDE=${PROJECT_BINARY_DIR}/generated/man/${name}.include
                             -D PEAKLENS_OUTPUT=${output}
                             -P ${PEAKLENS_MAN_PAGES_SCRIPT}
    DEPENDS ${page_TARGET} ${PEAKLENS_MAN_PAGES_SCRIPT} ${PROJECT_SOURCE_DIR}/docs/cli.md
    COMMENT "Writing the man page ${name}.1"
    VERBATIM)
  add_custom_target(${name}-man-page ALL DEPENDS ${output})
  install(FILES ${output} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT ${page_COMPONENT})
endfunction()

function(peaklens_add_completion)
  cmake_parse_arguments(PARSE_ARGV 0 completion "" "TARGET;COMPONENT" "")
  set(name ${completion_TARGET})
  set(bash ${PROJECT_BINARY_DIR}/share/bash-completion/completions/${name})
  set(zsh ${PROJECT_BINARY_DIR}/share/zsh/vendor-completions/_${name})
  foreach(shell bash zsh)
    add_custom_command(OUTPUT ${${shell}}
      COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=0
              ${CMAKE_COMMAND} -D PEAKLENS_GENERATE=completion -D PEAKLENS_PROGRAM=$<TARGET_FILE:${name}>
                               -D PEAKLENS_SHELL=${shell} -D PEAKLENS_OUTPUT=${${shell}} -P ${PEAKLENS_MAN_PAGES_SCRIPT}
      DEPENDS ${name} ${PEAKLENS_MAN_PAGES_SCRIPT}
      COMMENT "Writing the ${shell} completion of ${name}"
      VERBATIM)
  endforeach()
  add_custom_target(${name}-completion ALL DEPENDS ${bash} ${zsh})
  install(FILES ${bash} DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT ${completion_COMPONENT})
  install(FILES ${zsh} DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions COMPONENT ${completion_COMPONENT})
endfunction()
