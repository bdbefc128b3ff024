# `validate --replay iteration --backend gpu` on whatever this machine has: a GPU replays the
# one-rank plan (exit 0); no GPU, no CUDA build or no NCCL is one line on stderr and exit 4.
# Never a hang (the test's timeout) or another exit code. Inputs: -DTRAINSIM=<binary> -DJOB=<job>.
execute_process(COMMAND ${TRAINSIM} validate --replay iteration --backend gpu ${JOB} --gpus 1 --pp 1 --tp 1
                        --global-batch 2 --replay-timeout 30s
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc EQUAL 0)
  if(NOT out MATCHES "Replay on gpu")
    message(FATAL_ERROR "exit 0 without a replay report:\n${out}")
  endif()
elseif(rc EQUAL 4)
  string(REGEX MATCHALL "\n" lines "${err}")
  list(LENGTH lines n)
  if(NOT err MATCHES "^error: validate: " OR NOT n EQUAL 1)
    message(FATAL_ERROR "exit 4 must come with one line on stderr, got:\n${err}")
  endif()
else()
  message(FATAL_ERROR "exit ${rc} (expected 0 with a GPU, 4 without):\n${err}")
endif()
