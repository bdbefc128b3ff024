# Copies `trainsim` alone into OUT and checks that `trainsim ui` there exits 2 naming the missing
# viewer.   -DTRAINSIM= -DOUT=
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
file(COPY ${TRAINSIM} DESTINATION ${OUT})
get_filename_component(name ${TRAINSIM} NAME)
execute_process(COMMAND ${OUT}/${name} ui RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "exit ${rc}, expected 2: ${err}")
endif()
string(FIND "${err}" "error: ui: this trainsim was built without the viewer" at)
if(at EQUAL -1)
  message(FATAL_ERROR "unexpected message: ${err}")
endif()
