# End-to-end tests of zbsim sweep and zbsim plot (shards, resume, bad grids, charts).
if(TARGET zbsim)
  zb_add_test(zbsim_sweep_tests SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_sweep.cpp LIBS zb_formats)
  target_compile_definitions(zbsim_sweep_tests PRIVATE ZBSIM_PATH="$<TARGET_FILE:zbsim>")
  add_dependencies(zbsim_sweep_tests zbsim)
endif()
