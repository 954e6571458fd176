# Installation and the Debian package (docs/packaging.md). Included at the end of the root
# CMakeLists.txt, after every target exists.
#
#   cmake --install build --prefix /usr/local        # or DESTDIR=... cmake --install build
#   cd build && cpack -G DEB                          # servesim_<version>_<arch>.deb
#
# What is installed, relative to the prefix:
#   bin/servesim                                   the command line
#   lib/servesim/libservesim_mpi.so                MPI for runs and sweeps over ranks, loaded
#                                                  only under an MPI launcher (built with MPI)
#   lib/python3/dist-packages/servesim*.so         the Python module, when it was built: where
#                                                  its python3 looks (Debian's: this for /usr,
#                                                  lib/python3.X/dist-packages for /usr/local)
#   share/servesim/configs/                        examples, sweeps, reproductions, profiles,
#   share/servesim/traces/data/                    step times and the traces they read, in the
#                                                  same layout as the source tree, so their
#                                                  relative paths (../../traces/data/...) hold
#   share/doc/servesim/                            README, LICENSE, CITATION.cff, docs/*.md
#   share/bash-completion/completions/servesim     bash completion (servesim completion bash)
#   share/man/man1/servesim.1                      the man page (servesim man)
# The model and hardware catalogues, the default scenario and the report page are compiled into
# the binary, so bin/servesim needs none of the share/ files to run.
include(GNUInstallDirs)

install(TARGETS servesim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The MPI plugin (sim/mpi_library.h), where the installed servesim looks for it: lib/servesim,
# found from bin/ by the relative path compiled in. Named for the install test.
if(TARGET servesim_mpi)
  install(TARGETS servesim_mpi LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/servesim)
  file(WRITE ${CMAKE_BINARY_DIR}/servesim-mpi-plugin.txt
       "${CMAKE_INSTALL_LIBDIR}/servesim/libservesim_mpi.so\n")
else()
  file(REMOVE ${CMAKE_BINARY_DIR}/servesim-mpi-plugin.txt)
endif()

# The bash completion script and the man page, generated from the command table by the binary
# just built (docs/cli.md#completion-and-man-page), so they always match its commands and
# options. bash-completion loads share/bash-completion/completions/servesim on first use.
set(servesim_completion ${CMAKE_BINARY_DIR}/servesim.bash)
set(servesim_man_page ${CMAKE_BINARY_DIR}/servesim.1)
add_custom_command(OUTPUT ${servesim_completion} ${servesim_man_page}
  COMMAND $<TARGET_FILE:servesim> completion bash > ${servesim_completion}
  COMMAND $<TARGET_FILE:servesim> man > ${servesim_man_page}
  DEPENDS servesim
  COMMENT "servesim completion bash, servesim man")
add_custom_target(servesim_completion_and_man ALL
  DEPENDS ${servesim_completion} ${servesim_man_page})
install(FILES ${servesim_completion}
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME servesim)
install(FILES ${servesim_man_page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# The Python module goes where the python3 it was built for looks (python/CMakeLists.txt asks
# it): for Debian's, lib/python3/dist-packages under the prefix /usr (the .deb) and
# lib/python3.X/dist-packages under any other (/usr/local), chosen when `cmake --install` runs,
# since --prefix may change the prefix then; for a venv's or pyenv's, its site-packages under
# its own prefix. SERVESIM_PYTHON_INSTALL_DIR, relative to the prefix, puts it elsewhere.
set(SERVESIM_PYTHON_INSTALL_DIR "" CACHE STRING
    "Where the Python module is installed, relative to the prefix (empty: where the python3 it is built for looks)")
if(SERVESIM_PYTHON_INSTALL_DIR STREQUAL "lib/python3/dist-packages")
  # The fixed default of earlier versions, left in older build folders' caches: the automatic
  # choice gives it for /usr, and a folder Python searches for other prefixes.
  set_property(CACHE SERVESIM_PYTHON_INSTALL_DIR PROPERTY VALUE "")
endif()
set(servesim_python_usr_dir "")
set(servesim_python_site_dir "")
if(TARGET servesim_python AND SERVESIM_PYTHON_INSTALL_DIR)
  install(TARGETS servesim_python LIBRARY DESTINATION ${SERVESIM_PYTHON_INSTALL_DIR}
          COMPONENT python)
  set(servesim_python_usr_dir ${SERVESIM_PYTHON_INSTALL_DIR})
  set(servesim_python_site_dir ${SERVESIM_PYTHON_INSTALL_DIR})
elseif(TARGET servesim_python)
  get_directory_property(servesim_python_usr_dir DIRECTORY python
                         DEFINITION SERVESIM_PYTHON_USR_DIR)
  get_directory_property(servesim_python_site_dir DIRECTORY python
                         DEFINITION SERVESIM_PYTHON_SITE_DIR)
  install(CODE "
    set(servesim_python_dir \"${servesim_python_site_dir}\")
    if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
      set(servesim_python_dir \"${servesim_python_usr_dir}\")
    endif()
    file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/\${servesim_python_dir}\" TYPE MODULE
         FILES \"$<TARGET_FILE:servesim_python>\")" COMPONENT python)
endif()

install(DIRECTORY configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/servesim/configs)
install(DIRECTORY traces/data/ DESTINATION ${CMAKE_INSTALL_DATADIR}/servesim/traces/data)
# The measured tables, profiles and runs the shipped configs read (docs/data.md), in the source
# tree's layout, so that an installed example's `../../data/...` resolves under share/servesim/.
install(DIRECTORY data/ DESTINATION ${CMAKE_INSTALL_DATADIR}/servesim/data)
install(FILES README.md LICENSE CITATION.cff DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
# The vendored uPlot (MIT) is compiled into the report page; its licence goes with the binary.
install(FILES report/vendor/uplot/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR}
        RENAME uPlot-LICENSE)

# The .deb. Depends: the Debian 12 packages of the shared libraries bin/servesim links when
# built with SERVESIM_STATIC_DEPS off (`ldd build/servesim`, then `dpkg -S` on each;
# tests/cli/install_test.sh checks the list against what each installed file links), which the
# Python module links in any build, plus Open MPI's when the build uses MPI.
set(SERVESIM_DEB_MAINTAINER "The servesim developers <servesim@localhost>" CACHE STRING
    "Maintainer field of the .deb")
set(servesim_deb_depends
    "libboost-program-options1.74.0" "libyaml-cpp0.7" "libspdlog1.10" "libfmt9"
    "zlib1g" "libstdc++6" "libgcc-s1" "libc6")
if(SERVESIM_WITH_MPI)
  list(APPEND servesim_deb_depends "libopenmpi3")
endif()
list(JOIN servesim_deb_depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
# Kept beside the build for the install test, which compares it with ldd.
file(WRITE ${CMAKE_BINARY_DIR}/servesim-deb-depends.txt "${CPACK_DEBIAN_PACKAGE_DEPENDS}\n")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME servesim)
set(CPACK_PACKAGE_VENDOR "The servesim developers")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "fast discrete-event simulator of LLM serving")
# The synopsis line is CPACK_PACKAGE_DESCRIPTION_SUMMARY; this is the long text under it.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "servesim replays a request trace or a synthetic workload against a step-time model\n"
    "(fitted to measured latencies, composed from operator tables, or a roofline) under\n"
    "static, dynamic or continuous batching, with paged or reserved KV-cache admission, and\n"
    "reports time to first token, time per output token, end-to-end latency, queueing and\n"
    "throughput. It also searches capacity, sizes deployments and writes an HTML report.")
string(REPLACE ";" "" CPACK_DEBIAN_PACKAGE_DESCRIPTION "${CPACK_DEBIAN_PACKAGE_DESCRIPTION}")
set(CPACK_PACKAGE_CONTACT "${SERVESIM_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${SERVESIM_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_STRIP_FILES ON)
# The python3 the module was built for (found in python/CMakeLists.txt, so read from there).
set(servesim_module_python "")
if(TARGET servesim_python)
  get_directory_property(servesim_module_python DIRECTORY python DEFINITION Python3_EXECUTABLE)
  get_directory_property(py_major DIRECTORY python DEFINITION Python3_VERSION_MAJOR)
  get_directory_property(py_minor DIRECTORY python DEFINITION Python3_VERSION_MINOR)
  math(EXPR py_next "${py_minor} + 1")
  # The module's file name carries that python's ABI tag, and it imports numpy.
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
      "python3 (>= ${py_major}.${py_minor}), python3 (<< ${py_major}.${py_next}), python3-numpy")
endif()
include(CPack)

# Installs into a temporary DESTDIR and runs the installed binary (tests/cli/install_test.sh).
if(SERVESIM_BUILD_TESTS)
  add_test(NAME install_tree
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/install_test.sh ${CMAKE_COMMAND}
            ${CMAKE_BINARY_DIR} ${CMAKE_BINARY_DIR}/tests/install-test
            "${servesim_python_usr_dir}" "${servesim_module_python}" "${servesim_python_site_dir}")
  set_tests_properties(install_tree PROPERTIES TIMEOUT 120)  # dpkg -S is slow on a busy machine
endif()
