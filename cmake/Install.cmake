# What `cmake --install` and the .deb put where (GNU dirs, prefix /usr in the package):
#   bin/convscope, bin/convscope-cli                     the programs (app/gui, app/cli)
#   share/convscope/models/                              the shipped models and their cards
#   share/convscope/examples/kernels/                    the kernel templates (docs/your-kernel.md)
#   share/applications/convscope.desktop                 the desktop menu entry
#   share/icons/hicolor/scalable/apps/convscope.svg      its icon
#   share/doc/convscope/                                 README.md and docs/*.md
# The programs find share/convscope relative to their own folder (app/core/util/data_dir.h).

install(DIRECTORY data/models/ DESTINATION ${CONVSCOPE_INSTALL_DATADIR}/models
        FILES_MATCHING PATTERN "*.onnx" PATTERN "*.json")
install(DIRECTORY examples/kernels/ DESTINATION ${CONVSCOPE_INSTALL_DATADIR}/examples/kernels)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
file(GLOB convscope_docs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${convscope_docs} DESTINATION ${CMAKE_INSTALL_DOCDIR})
if(CONVSCOPE_HAVE_GUI)
  install(FILES resources/convscope.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES resources/icons/convscope.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
endif()

# `cpack` in the build folder: build/convscope_<version>_<arch>.deb. Its Depends: the shared
# libraries the programs link (Qt 6, QCustomPlot, OpenCV, oneDNN, protobuf, ONNX, OpenBLAS, ...)
# as dpkg-shlibdeps finds their packages, plus what is read at run time rather than linked.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME convscope)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "ConvScope")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "what every layer of a small CNN does to a picture, and every CUDA conv kernel to its time")
set(CPACK_PACKAGE_DESCRIPTION
    "ConvScope shows what each layer of a small convolutional network makes of a picture and what\n"
    "each CUDA convolution variant does to its op time: a Qt 6 desktop window (convscope) and a\n"
    "command-line tool (convscope-cli), with three trained Fashion-MNIST/MNIST models and the\n"
    "templates for writing your own convolution kernel.")
string(REPLACE ";" "" CPACK_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "ConvScope maintainers <convscope@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Read, not linked: the Fashion-MNIST test set (classify, the window's test images) and the
# DejaVu fonts the window's pictures and screenshots are drawn in.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "dataset-fashion-mnist, fonts-dejavu-core")
# Built with CUDA, the programs also link the CUDA runtime, cuBLAS, NVRTC (and cuDNN where found)
# of NVIDIA's toolkit, which no Debian package provides: CPack runs dpkg-shlibdeps with
# --ignore-missing-info, so they are left out of Depends and the package needs that toolkit
# installed where it was at build time (the programs' run path names its lib folder).
include(CPack)
