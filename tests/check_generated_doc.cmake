# Fails when a generated document is stale: runs `${TRAINSIM} ${ARGS}` and compares its output
# with ${DOC}. Regenerate with: trainsim config explain > docs/config-reference.md
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND ${TRAINSIM} ${args} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TRAINSIM} ${ARGS} exited with ${rc}")
endif()
file(READ "${DOC}" doc)
if(NOT out STREQUAL doc)
  message(FATAL_ERROR "${DOC} is stale: regenerate it with `trainsim ${ARGS} > ${DOC}`")
endif()
