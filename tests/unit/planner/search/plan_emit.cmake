# `trainsim plan ... --emit megatron,deepspeed,slurm --out DIR` writes the winner's launch configs
# and lists them (the emitters' own bytes are pinned by tests/golden/emit). Inputs: -DTRAINSIM,
# -DOUT (a scratch folder).
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${TRAINSIM} plan --model llama3-8b --cluster dgx-h100 --gpus 16 --global-batch 64
                        --seq-len 4096 --top 3 --rerank 4 --rerank-flow 1 --emit megatron,deepspeed,slurm --out ${OUT}
                        --json
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "plan --emit exited ${rc}: ${err}")
endif()
foreach(f megatron_args.sh ds_config.json megatron_deepspeed.sh train.sbatch)
  if(NOT EXISTS ${OUT}/${f})
    message(FATAL_ERROR "plan --emit did not write ${f}")
  endif()
  string(FIND "${out}" "${OUT}/${f}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the report does not list ${OUT}/${f} under \"written\"")
  endif()
endforeach()
# The files describe the winner: its tensor-parallel degree is in the Megatron arguments.
string(REGEX MATCH "\"tp\": ([0-9]+)" _ "${out}")
file(READ ${OUT}/megatron_args.sh args)
string(FIND "${args}" "--tensor-model-parallel-size ${CMAKE_MATCH_1}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "megatron_args.sh does not carry the winner's tp ${CMAKE_MATCH_1}")
endif()
message(STATUS "plan --emit wrote the winner's launch configs")
