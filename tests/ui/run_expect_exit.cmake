# Runs COMMAND (a ;-list) and checks its exit code and that stderr contains EXPECT.
#   -DCOMMAND="a;b;..." -DEXIT=N -DEXPECT=text [-DNO_DISPLAY=1: with DISPLAY and WAYLAND_DISPLAY unset]
if(NO_DISPLAY)
  unset(ENV{DISPLAY})
  unset(ENV{WAYLAND_DISPLAY})
endif()
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 600)
if(NOT rc EQUAL EXIT)
  message(FATAL_ERROR "exit ${rc}, expected ${EXIT}: ${err}")
endif()
string(FIND "${err}" "${EXPECT}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "stderr lacks \"${EXPECT}\": ${err}")
endif()
