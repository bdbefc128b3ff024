# Runs `trainsim ui --screenshot` under xvfb-run, then screenshot_check on the image.
#   -DXVFB_RUN= -DTRAINSIM= -DCHECK= -DOUT=<dir> -DNAME=<case> -DSIZE=WxH -DARGS="a;b;..." [-DTRACE_JOB="..."]
#   [-DMODE=racks] (screenshot_check's mode for a job)
# With TRACE_JOB set, `trainsim simulate TRACE_JOB --trace OUT/NAME.trace.json` runs first and the
# viewer opens that trace. With TRACE_FILE set (a PyTorch profiler trace), the viewer opens it.
file(MAKE_DIRECTORY ${OUT})
set(png ${OUT}/${NAME}.png)
set(regions ${OUT}/${NAME}.regions.json)
file(REMOVE ${png} ${regions})
set(view_args ${ARGS})
set(mode "${MODE}")
if(DEFINED TRACE_FILE)
  list(PREPEND view_args ${TRACE_FILE})
  set(mode kineto)
elseif(DEFINED TRACE_JOB)
  set(trace ${OUT}/${NAME}.trace.json)
  separate_arguments(job_args UNIX_COMMAND "${TRACE_JOB}")
  execute_process(COMMAND ${TRAINSIM} simulate ${job_args} --trace ${trace} RESULT_VARIABLE rc OUTPUT_QUIET
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "trainsim simulate --trace failed (${rc}): ${err}")
  endif()
  list(PREPEND view_args ${trace})
  set(mode trace)
endif()
string(REPLACE "x" ";" wh ${SIZE})
list(GET wh 0 width)
list(GET wh 1 height)
execute_process(COMMAND ${XVFB_RUN} -a -s "-screen 0 ${width}x${height}x24" ${TRAINSIM} ui ${view_args}
                        --screenshot ${png} --size ${SIZE} --regions ${regions}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 600)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "trainsim ui --screenshot failed (${rc}): ${out}${err}")
endif()
execute_process(COMMAND ${CHECK} ${png} ${regions} ${width} ${height} ${mode} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "screenshot_check failed for ${png}")
endif()
