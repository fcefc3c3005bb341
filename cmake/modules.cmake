# Optional parts that link heavy libraries (SimGrid and ns-3, COIN-OR CBC) are built as modules
# that a process loads with dlopen only when a command uses them (sim/support/module_loader.h),
# so zbsim, zbview and zbexec start without them. A module exchanges C++ objects with its host,
# so it carries this build's id and is used only by this build's programs.
include(GNUInstallDirs)
set(ZB_MODULE_BUILD_DIR ${PROJECT_BINARY_DIR}/lib/zbsim)
set(ZB_MODULE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/zbsim)
file(RELATIVE_PATH ZB_MODULE_DIR_FROM_BIN /${CMAKE_INSTALL_BINDIR} /${ZB_MODULE_INSTALL_DIR})
set(ZB_MODULE_BUILD_ID "zbsim ${PROJECT_VERSION} ${PROJECT_BINARY_DIR}")

# zb_add_module(target SOURCES ... LIBS ...): lib<target>.so in the build's module folder and in
# <prefix>/lib/zbsim when installed. Only its entry (zbsim_module) is exported: the static copies
# of our libraries inside it stay its own.
function(zb_add_module target)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE ${ARG_LIBS} zb_warnings)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_definitions(${target} PRIVATE ZB_MODULE_BUILD_ID="${ZB_MODULE_BUILD_ID}")
  target_compile_options(${target} PRIVATE -fvisibility=hidden -fvisibility-inlines-hidden)
  target_link_options(${target} PRIVATE -Wl,--exclude-libs,ALL -Wl,--as-needed)
  set_target_properties(${target} PROPERTIES PREFIX "lib" LIBRARY_OUTPUT_DIRECTORY ${ZB_MODULE_BUILD_DIR})
  install(TARGETS ${target} LIBRARY DESTINATION ${ZB_MODULE_INSTALL_DIR})
endfunction()

# Code linked both into programs and into a module: position-independent, without semantic
# interposition (calls inside the library may still be inlined, as in the programs' code).
function(zb_module_ready target)
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_compile_options(${target} PRIVATE -fno-semantic-interposition)
endfunction()
