# SPDX-License-Identifier: Apache-2.0
# Where each part of PeakLens is installed, and the same layout in the build tree, so a
# binary finds the others relative to its own folder and never through a build path:
#   bin/                        peaklens, peaklens-cli, peaklens-replay
#   lib/peaklens/               libpeaklens_cupti.so (the build tree keeps it in bin/)
#   share/peaklens/samples/     the bundled sample
#   share/peaklens/python/      the Python helper package
#   share/doc/peaklens/         README and the guides
# Components: app (Qt), cli, collector, replay, python. A GPU server without Qt installs
#   cmake --install build --component cli (and collector, python).

set(PEAKLENS_INSTALL_PLUGINDIR ${CMAKE_INSTALL_LIBDIR}/peaklens)
set(PEAKLENS_INSTALL_DATADIR ${CMAKE_INSTALL_DATADIR}/peaklens)
set(PEAKLENS_INSTALL_DOCDIR ${CMAKE_INSTALL_DATADIR}/doc/peaklens)
file(RELATIVE_PATH PEAKLENS_PLUGIN_DIR_FROM_BIN ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR}/peaklens)
file(RELATIVE_PATH PEAKLENS_DATA_DIR_FROM_BIN ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_DATADIR}/peaklens)
configure_file(${CMAKE_CURRENT_LIST_DIR}/installlayout.h.in ${PROJECT_BINARY_DIR}/generated/installlayout.h @ONLY)

# peaklens_use_install_layout(target): the target includes "installlayout.h".
function(peaklens_use_install_layout target)
  target_include_directories(${target} PRIVATE ${PROJECT_BINARY_DIR}/generated)
endfunction()

# The build tree's data folder mirrors the installed one (links into the source tree).
set(buildDataDir ${PROJECT_BINARY_DIR}/bin/${PEAKLENS_DATA_DIR_FROM_BIN})
file(MAKE_DIRECTORY ${buildDataDir}/python)
file(CREATE_LINK ${PROJECT_SOURCE_DIR}/resources/samples ${buildDataDir}/samples SYMBOLIC)
file(CREATE_LINK ${PROJECT_SOURCE_DIR}/plugins/python/peaklens ${buildDataDir}/python/peaklens SYMBOLIC)

# A binary installed outside the system's library folders (a pip LibTorch, say) still
# finds its libraries once installed.
set(CMAKE_INSTALL_RPATH_USE_LINK_PATH ON)

# Shared across components: the sample and the documentation (cli, which every install has).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/resources/samples/ DESTINATION ${PEAKLENS_INSTALL_DATADIR}/samples
        COMPONENT cli FILES_MATCHING PATTERN "*.peaklens")
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/VERSION DESTINATION ${PEAKLENS_INSTALL_DOCDIR} COMPONENT cli)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${PEAKLENS_INSTALL_DOCDIR} COMPONENT cli)

# The Python helper: the package's files, its version as a plain file, and where the
# collector lies from the package's folder.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/plugins/python/peaklens DESTINATION ${PEAKLENS_INSTALL_DATADIR}/python
        COMPONENT python FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/VERSION DESTINATION ${PEAKLENS_INSTALL_DATADIR}/python/peaklens COMPONENT python)
file(RELATIVE_PATH collectorFromPackage ${CMAKE_INSTALL_FULL_DATADIR}/peaklens/python/peaklens ${CMAKE_INSTALL_FULL_LIBDIR}/peaklens)
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/generated/python/_installed.py CONTENT
  "# Written at install time: where the collector lies, relative to this package's folder.\nCOLLECTOR_DIR = \"${collectorFromPackage}\"\n")
install(FILES ${PROJECT_BINARY_DIR}/generated/python/_installed.py DESTINATION ${PEAKLENS_INSTALL_DATADIR}/python/peaklens
        COMPONENT python)
