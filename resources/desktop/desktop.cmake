# SPDX-License-Identifier: Apache-2.0
# Puts the desktop app on a Linux desktop: its launcher entry, its icon and the file types it
# opens. Packages need no scripts for them: Debian's triggers on these folders refresh the
# desktop, icon and MIME caches.
if(UNIX AND NOT APPLE)
  set(PEAKLENS_DESKTOP_FILES ${PROJECT_SOURCE_DIR}/resources/desktop)
  install(FILES ${PEAKLENS_DESKTOP_FILES}/peaklens.desktop
          DESTINATION ${CMAKE_INSTALL_DATADIR}/applications COMPONENT app)
  install(FILES ${PEAKLENS_DESKTOP_FILES}/peaklens.svg
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps COMPONENT app)
  install(FILES ${PEAKLENS_DESKTOP_FILES}/peaklens.xml
          DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages COMPONENT app)
endif()
