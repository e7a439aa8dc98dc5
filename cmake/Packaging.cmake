# SPDX-License-Identifier: Apache-2.0
# The Debian package: ./run.sh package (or cpack in build/) writes
# build/peaklens_<version>_amd64.deb holding every component that was built, with its
# dependencies found by dpkg-shlibdeps from the binaries themselves.

set(CPACK_PACKAGE_NAME peaklens)
set(CPACK_PACKAGE_VENDOR "PeakLens")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
# One string: set() with several would make a list, its lines joined by ";".
string(CONCAT CPACK_PACKAGE_DESCRIPTION
  "PeakLens loads a training trace (its own recordings, PyTorch memory snapshots, Kineto\n"
  "traces, memory-timeline exports), finds where GPU memory peaks and which layers' saved\n"
  "activations cause it, predicts the peak and step time for any set of checkpointed\n"
  "layers, reruns the step to measure them, and exports reports.")
set(CPACK_RESOURCE_FILE_README ${PROJECT_SOURCE_DIR}/README.md)
set(CPACK_PACKAGE_CHECKSUM SHA256)
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR})
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(PEAKLENS_PACKAGE_MAINTAINER "PeakLens maintainers <maintainers@peaklens.invalid>"
    CACHE STRING "The Maintainer field of the Debian package")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${PEAKLENS_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The Python helper runs in the user's training process; the replay and record commands
# start the user's Python. PyTorch is the user's own (pip): peaklens-replay and the torch
# recorder find the LibTorch they were built against through their run path, and the
# recorder runs only in a process of that PyTorch release.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3")
include(CPack)
