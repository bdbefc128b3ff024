# `trainsim validate` with no GPU visible: exit code 4 and exactly one stderr line starting with
# "error: validate: ", nothing on stdout. Run as `cmake -DTRAINSIM=<trainsim> -P run_no_gpu_case.cmake`.
cmake_minimum_required(VERSION 3.25)
execute_process(COMMAND "${TRAINSIM}" validate --model llama3-8b --cluster dgx-h100 --gpus 8 --tp 8 --global-batch 8
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
string(REGEX MATCHALL "\n" breaks "${err}")
list(LENGTH breaks lines)
if(NOT rc EQUAL 4 OR NOT lines EQUAL 1 OR NOT err MATCHES "^error: validate: " OR NOT out STREQUAL "")
  message(FATAL_ERROR "expected exit 4 and one line \"error: validate: ...\" on stderr, got exit ${rc}:\n"
                      "stderr: ${err}\nstdout: ${out}")
endif()
message(STATUS "exit 4: ${err}")
