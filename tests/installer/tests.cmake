# The Debian package: built with CPack from this build tree, its contents and control fields
# checked, unpacked into a throwaway root, and the installed day0-cli and day0 run from there
# (installer_package); then the installed binaries started with the CUDA libraries out of the
# loader's reach (installer_starts_without_cuda). Paths are relative to tests/.
if(DAY0_BUILD_GUI)
  # The Qt packages loaded at run time: tools/install-deps.sh installs what Depends names.
  add_test(NAME qml_packages_agree
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/installer/check_qt_packages.sh
            ${PROJECT_SOURCE_DIR}/tools/install-deps.sh "${DAY0_QT_RUNTIME_PACKAGES}" "qml6-module-qttest")
  set_tests_properties(qml_packages_agree PROPERTIES LABELS unit PASS_REGULAR_EXPRESSION "^ok: ")
  find_program(DAY0_DPKG_DEB dpkg-deb)
  if(DAY0_DPKG_DEB)
    set(_day0_pkg_work ${CMAKE_BINARY_DIR}/tests/installer)
    add_test(NAME installer_package
      COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/installer/test_package.sh package
              ${CMAKE_BINARY_DIR} ${_day0_pkg_work} ${PROJECT_VERSION} ${DAY0_CUDA}
              ${PROJECT_SOURCE_DIR}/ui ${QT6_INSTALL_PREFIX}/${QT6_INSTALL_QML})
    set_tests_properties(installer_package PROPERTIES
      LABELS integration FIXTURES_SETUP day0_deb TIMEOUT 300 RESOURCE_LOCK day0_deb_work)
    add_test(NAME installer_starts_without_cuda
      COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/installer/test_package.sh no-cuda
              ${CMAKE_BINARY_DIR} ${_day0_pkg_work} ${PROJECT_VERSION} ${DAY0_CUDA})
    set_tests_properties(installer_starts_without_cuda PROPERTIES
      LABELS integration FIXTURES_REQUIRED day0_deb TIMEOUT 120 RESOURCE_LOCK day0_deb_work)
  endif()
endif()
