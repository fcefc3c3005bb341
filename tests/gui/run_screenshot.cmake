# Runs `zbview --screenshot` as a user would and checks the PNG signature of what it wrote;
# then checks that a bad flag exits with code 2 and leaves no file behind.
file(REMOVE ${OUT})
execute_process(COMMAND ${ZBVIEW} --screenshot ${OUT} --p 4 --m 8 --schedules 1f1b,zb-h1 --size 1000x600
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "zbview --screenshot failed (${rc}): ${out} ${err}")
endif()
file(READ ${OUT} head LIMIT 8 HEX)
if(NOT head STREQUAL "89504e470d0a1a0a")
  message(FATAL_ERROR "${OUT} is not a PNG (starts with ${head})")
endif()
file(REMOVE ${OUT}.bad.png)
execute_process(COMMAND ${ZBVIEW} --screenshot ${OUT}.bad.png --schedules no-such-schedule
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR EXISTS ${OUT}.bad.png OR NOT err MATCHES "no-such-schedule")
  message(FATAL_ERROR "an unknown schedule should exit 2 naming it and write nothing: rc=${rc} err=${err}")
endif()
# Issue 18: a schedule file that cannot run (here: it deadlocks) is refused naming it, and an
# output that cannot be written keeps the screenshot from being written.
file(WRITE ${OUT}.deadlock.txt "d0: F0 B0 W0 F1 B1 W1\nd1: F1 B1 F0 B0 W0 W1\n")
file(REMOVE ${OUT}.bad.png)
execute_process(COMMAND ${ZBVIEW} --screenshot ${OUT}.bad.png ${OUT}.deadlock.txt
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR EXISTS ${OUT}.bad.png OR NOT err MATCHES "deadlock.txt")
  message(FATAL_ERROR "a deadlocking schedule file should exit 2 naming it and write nothing: rc=${rc} err=${err}")
endif()
execute_process(COMMAND ${ZBVIEW} --screenshot ${OUT}.bad.png --svg ${OUT}.no-such-folder/x.svg
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR EXISTS ${OUT}.bad.png OR NOT err MATCHES "cannot write")
  message(FATAL_ERROR "an unwritable --svg should exit 2 before the screenshot is written: rc=${rc} err=${err}")
endif()
