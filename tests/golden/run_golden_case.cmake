# Golden whole-run driver (STYLE conv. 13 and 14), run as `cmake -P` so CI needs no Python.
#
#   cmake -DTRAINSIM=<trainsim> -DCASE_DIR=<tests/golden/CASE> -DWORK=<scratch dir> -DMODE=<mode> -P run_golden_case.cmake
#
# MODE text:       `trainsim simulate CASE_DIR/config.json`, run twice; both stdouts must be identical
#                  and equal to expected/report.txt.
# MODE json:       the same with --json, against expected/report.json.
# MODE trace:      the same with --trace FILE, twice; both trace files must be identical and equal to
#                  expected/trace.json (kept under 300 KB), and the stdout must be the same as
#                  without --trace (recording a trace never changes results, conv. 7) but for the
#                  counters of the simulation's work: a recorder runs every collective as flows,
#                  where a plain run reuses measured durations (models/workload/run/network_runner.hpp).
# MODE concurrent: two processes started at the same time (two COMMANDs of one execute_process
#                  run as a pipeline, i.e. concurrently) each run --json (and --trace when
#                  -DTRACE=ON); their outputs must be identical and equal to expected/report.json
#                  (with --trace: but for the work counters, as in MODE trace).
#                  Retries up to 5 times until the two runs are seen to overlap in time.
# MODE log:        diagnostics never change results (conv. 19): the stdout of --json with
#                  -DLOG=SPEC given as --log SPEC, and as the environment variable TRAINSIM_LOG,
#                  must be byte-identical to expected/report.json, with log lines on stderr only
#                  (stderr must contain -DLOG_EXPECT, a fixed string); --log wins over a bad
#                  TRAINSIM_LOG, and a bad TRAINSIM_LOG alone exits 2 naming the variable.
# MODE child:      one of the two processes of MODE concurrent (internal).
# MODE listed:     -DGOLDEN_DIR=<tests/golden> -DCASES=a,b [-DSUITES=c]: every case folder is listed
#                  (folders named in SUITES have their own driver).
#
# With -DUPDATE=ON, or TRAINSIM_UPDATE_GOLDEN=1 in the environment, text/json/trace rewrite the
# expected files (after the run-twice check) instead of comparing: review the diff before committing.
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED MODE)
  message(FATAL_ERROR "run_golden_case.cmake: -DMODE=... is required")
endif()
set(update OFF)
set(env_update "$ENV{TRAINSIM_UPDATE_GOLDEN}")
if(UPDATE OR env_update)
  set(update ON)
endif()
set(kMaxTraceBytes 307200)

if(MODE STREQUAL "listed")
  file(GLOB entries RELATIVE "${GOLDEN_DIR}" "${GOLDEN_DIR}/*")
  string(REPLACE "," ";" cases "${CASES}")
  string(REPLACE "," ";" suites "${SUITES}")
  set(bad "")
  foreach(e IN LISTS entries)
    if(IS_DIRECTORY "${GOLDEN_DIR}/${e}" AND NOT e IN_LIST cases AND NOT e IN_LIST suites)
      string(APPEND bad "  ${e}/ is not listed in tests/golden/CMakeLists.txt\n")
    endif()
  endforeach()
  foreach(c IN LISTS cases)
    if(NOT EXISTS "${GOLDEN_DIR}/${c}/config.json")
      string(APPEND bad "  ${c}: missing ${c}/config.json\n")
    endif()
  endforeach()
  if(bad)
    message(FATAL_ERROR "tests/golden:\n${bad}")
  endif()
  return()
endif()

foreach(var TRAINSIM CASE_DIR WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_golden_case.cmake: -D${var}=... is required")
  endif()
endforeach()
get_filename_component(case "${CASE_DIR}" NAME)
set(config "${CASE_DIR}/config.json")
set(expected_dir "${CASE_DIR}/expected")
file(MAKE_DIRECTORY "${WORK}")

# Extra command-line arguments of a case, one per line in CASE_DIR/args (e.g. --fault SPEC), and
# the command, the one line of CASE_DIR/command (default simulate; e.g. reliability).
set(case_args "")
if(EXISTS "${CASE_DIR}/args")
  file(STRINGS "${CASE_DIR}/args" case_args)
endif()
set(command simulate)
if(EXISTS "${CASE_DIR}/command")
  file(STRINGS "${CASE_DIR}/command" command LIMIT_COUNT 1)
endif()

# Runs `trainsim COMMAND config.json [case args] ARGN` in WORK; stdout into ${out}. Fails unless exit 0.
function(simulate out)
  execute_process(COMMAND "${TRAINSIM}" ${command} "${config}" ${case_args} ${ARGN}
                  WORKING_DIRECTORY "${WORK}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr
                  TIMEOUT 120)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " args "${ARGN}")
    message(FATAL_ERROR "${case}: `trainsim ${command} config.json ${args}` exited ${rc}:\n${stderr}")
  endif()
  set(${out} "${stdout}" PARENT_SCOPE)
endfunction()

# Line number and both lines where two texts first differ, for failure messages.
function(first_difference a b out)
  foreach(v a b)
    # CMake lists split on ';' and treat '[' ']' as nesting: encode them before splitting on '\n'.
    string(REPLACE ";" "@SEMI@" ${v} "${${v}}")
    string(REPLACE "[" "@LBR@" ${v} "${${v}}")
    string(REPLACE "]" "@RBR@" ${v} "${${v}}")
    string(REPLACE "\n" ";" ${v} "${${v}}")
  endforeach()
  list(LENGTH a na)
  list(LENGTH b nb)
  set(i 0)
  while(i LESS na AND i LESS nb)
    list(GET a ${i} la)
    list(GET b ${i} lb)
    if(NOT la STREQUAL lb)
      break()
    endif()
    math(EXPR i "${i} + 1")
  endwhile()
  set(la "<end of file>")
  set(lb "<end of file>")
  if(i LESS na)
    list(GET a ${i} la)
  endif()
  if(i LESS nb)
    list(GET b ${i} lb)
  endif()
  foreach(v la lb)
    string(REPLACE "@SEMI@" ";" ${v} "${${v}}")
    string(REPLACE "@LBR@" "[" ${v} "${${v}}")
    string(REPLACE "@RBR@" "]" ${v} "${${v}}")
  endforeach()
  math(EXPR line "${i} + 1")
  set(${out} "first difference at line ${line}:\n    expected: ${la}\n    got:      ${lb}" PARENT_SCOPE)
endfunction()

# Two runs of the same thing must give the same bytes (conv. 13).
function(check_same what first second)
  if(NOT first STREQUAL second)
    first_difference("${first}" "${second}" where)
    message(FATAL_ERROR "${case}: ${what} differs between two runs (nondeterminism); ${where}")
  endif()
endfunction()

# ${text} with the counters of the simulation's work (events, flows, solves, reused collectives)
# replaced by "N": in the text report's "Simulated ..." and "Network: flow-level ..." lines and in
# the JSON report's "simulation" object (keys at its indentation), into ${out}.
function(without_work_counters text out)
  string(REGEX REPLACE "tasks, [0-9]+ events\\)" "tasks, N events)" text "${text}")
  string(REGEX REPLACE "communication tasks, [0-9]+ flows, [0-9]+ max-min solves; [0-9]+ reused"
         "communication tasks, N flows, N max-min solves; N reused" text "${text}")
  string(REGEX REPLACE "\n    \"events\": [0-9]+" "\n    \"events\": N" text "${text}")
  string(REGEX REPLACE
         "\n      \"(collectives|flows|flows_solved|memo_overlaps|memoized_collectives|solves|transfers)\": [0-9]+"
         "\n      \"\\1\": N" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# Compares ${actual} with expected/<name>, or rewrites it in update mode.
function(compare_or_update actual name)
  set(file "${expected_dir}/${name}")
  if(update)
    file(MAKE_DIRECTORY "${expected_dir}")
    file(WRITE "${file}" "${actual}")
    string(LENGTH "${actual}" n)
    message(STATUS "${case}: wrote expected/${name} (${n} bytes)")
    return()
  endif()
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "${case}: missing expected/${name}; create it with TRAINSIM_UPDATE_GOLDEN=1 and review it")
  endif()
  file(READ "${file}" want)
  if(NOT want STREQUAL actual)
    file(WRITE "${WORK}/actual/${name}" "${actual}")
    first_difference("${want}" "${actual}" where)
    message(FATAL_ERROR "${case}: output differs from expected/${name}; ${where}\n"
                        "  full output: ${WORK}/actual/${name}\n"
                        "  diff -u ${file} ${WORK}/actual/${name}\n"
                        "If the change is intended, regenerate with TRAINSIM_UPDATE_GOLDEN=1 (or -DTRAINSIM_UPDATE_GOLDEN=ON) "
                        "and review the diff.")
  endif()
endfunction()

if(MODE STREQUAL "text")
  simulate(first)
  simulate(second)
  check_same("text report" "${first}" "${second}")
  compare_or_update("${first}" report.txt)

elseif(MODE STREQUAL "json")
  simulate(first --json)
  simulate(second --json)
  check_same("JSON report" "${first}" "${second}")
  compare_or_update("${first}" report.json)

elseif(MODE STREQUAL "trace")
  file(REMOVE "${WORK}/first.trace.json" "${WORK}/second.trace.json")
  simulate(plain)
  simulate(first_out --trace "${WORK}/first.trace.json")
  simulate(second_out --trace "${WORK}/second.trace.json")
  check_same("stdout with --trace" "${first_out}" "${second_out}")
  without_work_counters("${plain}" plain_results)
  without_work_counters("${first_out}" traced_results)
  if(NOT plain_results STREQUAL traced_results)
    first_difference("${plain_results}" "${traced_results}" where)
    message(FATAL_ERROR "${case}: --trace changes the report (tracing must only observe); ${where}")
  endif()
  file(READ "${WORK}/first.trace.json" first)
  file(READ "${WORK}/second.trace.json" second)
  check_same("trace" "${first}" "${second}")
  string(LENGTH "${first}" size)
  if(size GREATER kMaxTraceBytes)
    message(FATAL_ERROR "${case}: the trace is ${size} bytes; keep golden traces under ${kMaxTraceBytes} "
                        "(use a smaller model or fewer micro-batches)")
  endif()
  compare_or_update("${first}" trace.json)

elseif(MODE STREQUAL "log")
  # Runs `[env TRAINSIM_LOG=ENV] trainsim COMMAND config.json [case args] --json ARGN`; sets
  # log_rc, log_out and log_err.
  function(run_logged env)
    set(prefix "")
    if(NOT env STREQUAL "")
      set(prefix ${CMAKE_COMMAND} -E env "TRAINSIM_LOG=${env}")
    endif()
    execute_process(COMMAND ${prefix} "${TRAINSIM}" ${command} "${config}" ${case_args} --json ${ARGN}
                    WORKING_DIRECTORY "${WORK}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                    TIMEOUT 120)
    set(log_rc "${rc}" PARENT_SCOPE)
    set(log_out "${out}" PARENT_SCOPE)
    set(log_err "${err}" PARENT_SCOPE)
  endfunction()
  file(READ "${expected_dir}/report.json" want)
  foreach(how flag env flag-wins)
    if(how STREQUAL "flag")
      run_logged("" --log "${LOG}")
    elseif(how STREQUAL "env")
      run_logged("${LOG}")
    else()
      run_logged("nosuch=debug" --log "${LOG}")
    endif()
    if(NOT log_rc EQUAL 0)
      message(FATAL_ERROR "${case}: logging (${how}) exited ${log_rc}:\n${log_err}")
    endif()
    if(NOT log_out STREQUAL want)
      first_difference("${want}" "${log_out}" where)
      message(FATAL_ERROR "${case}: logging (${how}, ${LOG}) changed stdout; ${where}")
    endif()
    string(FIND "${log_err}" "${LOG_EXPECT}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${case}: logging (${how}, ${LOG}): no \"${LOG_EXPECT}\" on stderr:\n${log_err}")
    endif()
  endforeach()
  run_logged("nosuch=debug")
  set(bad "error: TRAINSIM_LOG: unknown log category \"nosuch\" (categories: all, builder, network, planner, failure, engine)\n")
  if(NOT log_rc EQUAL 2 OR NOT log_err STREQUAL bad OR NOT log_out STREQUAL "")
    message(FATAL_ERROR "${case}: a bad TRAINSIM_LOG: want exit 2 and ${bad}got exit ${log_rc}, stderr ${log_err}")
  endif()
  message(STATUS "${case}: --log ${LOG} and TRAINSIM_LOG leave stdout byte-identical")

elseif(MODE STREQUAL "child")
  # One of two concurrent processes: writes only files named by TAG, nothing on stdout (which is
  # the other process's stdin).
  string(TIMESTAMP t0 "%s%f" UTC)
  set(extra "")
  if(TRACE)
    set(extra --trace "${WORK}/${TAG}.trace.json")
  endif()
  execute_process(COMMAND "${TRAINSIM}" ${command} "${config}" ${case_args} --json ${extra}
                  WORKING_DIRECTORY "${WORK}"
                  RESULT_VARIABLE rc OUTPUT_FILE "${WORK}/${TAG}.json" ERROR_FILE "${WORK}/${TAG}.err"
                  TIMEOUT 120)
  string(TIMESTAMP t1 "%s%f" UTC)
  file(WRITE "${WORK}/${TAG}.times" "${t0} ${t1}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${case} (${TAG}): trainsim exited ${rc}")
  endif()

elseif(MODE STREQUAL "concurrent")
  set(child ${CMAKE_COMMAND} -DMODE=child -DTRAINSIM=${TRAINSIM} -DCASE_DIR=${CASE_DIR} -DWORK=${WORK} -DTRACE=${TRACE})
  set(overlapped OFF)
  foreach(attempt RANGE 1 5)
    file(REMOVE "${WORK}/a.json" "${WORK}/b.json" "${WORK}/a.trace.json" "${WORK}/b.trace.json")
    execute_process(COMMAND ${child} -DTAG=a -P "${CMAKE_CURRENT_LIST_FILE}"
                    COMMAND ${child} -DTAG=b -P "${CMAKE_CURRENT_LIST_FILE}"
                    RESULTS_VARIABLE rcs OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
    if(NOT rcs STREQUAL "0;0")
      message(FATAL_ERROR "${case}: concurrent runs failed (exit codes ${rcs}):\n${err}")
    endif()
    file(READ "${WORK}/a.json" a)
    file(READ "${WORK}/b.json" b)
    check_same("JSON report of two concurrent processes" "${a}" "${b}")
    if(TRACE)
      file(SHA256 "${WORK}/a.trace.json" ha)
      file(SHA256 "${WORK}/b.trace.json" hb)
      if(NOT ha STREQUAL hb)
        message(FATAL_ERROR "${case}: the traces of two concurrent processes differ: ${WORK}/a.trace.json ${WORK}/b.trace.json")
      endif()
    endif()
    if(NOT update AND TRACE)
      file(READ "${expected_dir}/report.json" want)
      without_work_counters("${want}" want)
      without_work_counters("${a}" got)
      if(NOT got STREQUAL want)
        first_difference("${want}" "${got}" where)
        message(FATAL_ERROR "${case}: a traced run's results differ from expected/report.json; ${where}")
      endif()
    elseif(NOT update)
      compare_or_update("${a}" report.json)
    endif()
    file(READ "${WORK}/a.times" ta)
    file(READ "${WORK}/b.times" tb)
    separate_arguments(ta)
    separate_arguments(tb)
    list(GET ta 0 a0)
    list(GET ta 1 a1)
    list(GET tb 0 b0)
    list(GET tb 1 b1)
    # Overlap in microseconds: min(end) - max(start).
    set(end ${a1})
    if(b1 LESS end)
      set(end ${b1})
    endif()
    set(start ${a0})
    if(b0 GREATER start)
      set(start ${b0})
    endif()
    math(EXPR overlap "${end} - ${start}")
    if(overlap GREATER 0)
      message(STATUS "${case}: attempt ${attempt}: the two processes overlapped for ${overlap} us; outputs identical")
      set(overlapped ON)
      break()
    endif()
    message(STATUS "${case}: attempt ${attempt}: the two processes did not overlap; retrying")
  endforeach()
  if(NOT overlapped)
    message(WARNING "${case}: outputs identical, but the two processes never overlapped in time (busy machine?)")
  endif()

else()
  message(FATAL_ERROR "run_golden_case.cmake: unknown MODE \"${MODE}\"")
endif()
