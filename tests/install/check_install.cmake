# Installs the build into fresh folders, as a user would, and checks what landed there:
#  1. `cmake --install BUILD --prefix P` (a prefix other than the configured one): the programs,
#     the desktop entry and icon, every shipped model, every kernel template, the docs; the
#     installed CLI runs from there and, with no --model, reads the installed model (its path is
#     printed), not the source tree's.
#  2. `DESTDIR=D cmake --install BUILD --prefix /usr` (how a package is staged): the same programs,
#     run from D/usr/bin, find D/usr/share/convscope -- data are found relative to the program.
# Run by ctest (tests/install/CMakeLists.txt) with BUILD_DIR, SOURCE_DIR, WORK_DIR, VERSION,
# WITH_GUI, BINDIR, DATADIR, DOCDIR.
cmake_minimum_required(VERSION 3.25)

set(failures "")
macro(fail message)
  list(APPEND failures "${message}")
endmacro()

function(expect_file path)
  if(NOT EXISTS "${path}")
    fail("missing: ${path}")
    set(failures "${failures}" PARENT_SCOPE)
  endif()
endfunction()

# Every file of SOURCE_DIR/<from> matching <glob> is installed, byte for byte, in <to>.
function(expect_same_files from glob to)
  file(GLOB sources RELATIVE "${SOURCE_DIR}/${from}" "${SOURCE_DIR}/${from}/${glob}")
  if(NOT sources)
    fail("nothing matches ${SOURCE_DIR}/${from}/${glob}: the check has nothing to compare")
  endif()
  foreach(name IN LISTS sources)
    if(NOT EXISTS "${to}/${name}")
      fail("missing: ${to}/${name} (from ${from}/${name})")
    else()
      file(SHA256 "${SOURCE_DIR}/${from}/${name}" want)
      file(SHA256 "${to}/${name}" got)
      if(NOT want STREQUAL got)
        fail("differs from ${from}/${name}: ${to}/${name}")
      endif()
    endif()
  endforeach()
  set(failures "${failures}" PARENT_SCOPE)
endfunction()

# Runs an installed program; its output must match <regex>.
function(expect_run regex)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REPLACE ";" " " command "${ARGN}")
  if(NOT status EQUAL 0)
    fail("'${command}' exited with ${status}: ${err}")
  elseif(NOT out MATCHES "${regex}")
    fail("'${command}' printed\n${out}\nwhich does not match '${regex}'")
  endif()
  set(failures "${failures}" PARENT_SCOPE)
endfunction()

function(install_into prefix destdir)
  if(destdir)
    set(ENV{DESTDIR} "${destdir}")
  else()
    unset(ENV{DESTDIR})
  endif()
  execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}"
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  unset(ENV{DESTDIR})
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "cmake --install ${BUILD_DIR} --prefix ${prefix} (DESTDIR '${destdir}') failed:\n${out}${err}")
  endif()
endfunction()

string(REPLACE "." "\\." version_regex "${VERSION}")
set(ENV{QT_QPA_PLATFORM} offscreen)

# 1. A prefix of its own.
set(prefix "${WORK_DIR}/prefix")
file(REMOVE_RECURSE "${WORK_DIR}")
install_into("${prefix}" "")
set(data "${prefix}/${DATADIR}/convscope")
expect_file("${prefix}/${BINDIR}/convscope-cli")
expect_same_files(data/models "*.onnx" "${data}/models")
expect_same_files(data/models "*.json" "${data}/models")
expect_same_files(examples/kernels "*" "${data}/examples/kernels")
expect_file("${prefix}/${DOCDIR}/README.md")
expect_same_files(docs "*.md" "${prefix}/${DOCDIR}")
if(WITH_GUI)
  expect_file("${prefix}/${BINDIR}/convscope")
  expect_same_files(resources "convscope.desktop" "${prefix}/${DATADIR}/applications")
  expect_same_files(resources/icons "convscope.svg" "${prefix}/${DATADIR}/icons/hicolor/scalable/apps")
endif()
if(NOT failures)
  expect_run("^convscope-cli ${version_regex}\n$" "${prefix}/${BINDIR}/convscope-cli" --version)
  # No --model: the installed course-high model, by the path the CLI prints.
  expect_run("\\(${data}/models/course-high\\.onnx\\)" "${prefix}/${BINDIR}/convscope-cli" info)
  expect_run("Model: +lenet5" "${prefix}/${BINDIR}/convscope-cli" info --model "${data}/models/lenet5.onnx")
  expect_run("templates on this machine: ${data}/examples/kernels\n" "${prefix}/${BINDIR}/convscope-cli" kernel --help)
  if(WITH_GUI)
    expect_run("^convscope ${version_regex}\n$" "${prefix}/${BINDIR}/convscope" --version)
  endif()
endif()

# 2. Staged under DESTDIR, as a package is built: found relative to the program, not the prefix.
set(stage "${WORK_DIR}/stage")
install_into(/usr "${stage}")
set(staged_data "${stage}/usr/${DATADIR}/convscope")
expect_file("${staged_data}/models/course-high.onnx")
if(EXISTS "${stage}/usr/${BINDIR}/convscope-cli")
  expect_run("\\(${staged_data}/models/course-high\\.onnx\\)" "${stage}/usr/${BINDIR}/convscope-cli" info)
else()
  fail("missing: ${stage}/usr/${BINDIR}/convscope-cli")
endif()

if(failures)
  list(JOIN failures "\n  " report)
  message(FATAL_ERROR "The installed ConvScope is not complete:\n  ${report}")
endif()
message(STATUS "installed and ran from ${prefix} and from DESTDIR ${stage}")
