# Debian packages, `cpack -G DEB` in the build folder (scripts/test_deb.sh checks them):
#   te      the shared libraries (libte, libte_runtime) and the command line bin/te;
#           Depends computed by dpkg-shlibdeps (libllvm, libfmt, libstdc++, libc)
#   te-dev  headers, the CMake package (find_package(te), te_add_kernels), pkg-config
#           files; Depends on te of the same version and a C++ compiler
# Installed with `apt install ./te_*.deb ./te-dev_*.deb`, under /usr.
set(CPACK_PACKAGE_NAME te)
set(CPACK_PACKAGE_VENDOR "te")
set(CPACK_PACKAGE_CONTACT "te maintainers <te-maintainers@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "tensor expressions and schedules in C++ (TVM TE / Halide style)")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME te)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION
  "te: tensor expressions and schedules in C++, libraries and the te command line")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME te-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "te (= ${PROJECT_VERSION}), g++ | c++-compiler, libc6-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS "cmake (>= 3.20), pkg-config")
set(CPACK_DEBIAN_DEV_DESCRIPTION
  "te: tensor expressions and schedules in C++, headers, CMake package and pkg-config files")
include(CPack)
