# The trace and plotting scripts (tools/trace_summary.py, tools/plot_trace.py,
# tools/plot_memory_timeline.py, tools/plot_training.py). trace_summary.py: a hand-made trace
# whose busy times are known (nested and overlapping spans count once), and the committed CPU
# trace. The plots, on the files committed under docs/images and on hand-made ones: each writes a
# PNG, a timeline pair is drawn side by side with both peaks, a training log with the null losses
# of a diverged run and a log of one step are drawn, and bad input (options out of range, a file
# of another kind, an accuracy and a PSNR on one axis) is refused with a message. Debian's python3
# with python3-matplotlib (tools/bootstrap.sh installs it); without matplotlib the plots are
# SKIPPED.
#   cmake -DSOURCE_DIR=... -DWORK_DIR=... -P test_plot_scripts.cmake
find_program(PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT PYTHON3)
  find_program(PYTHON3 python3)
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(images "${SOURCE_DIR}/docs/images")
include("${CMAKE_CURRENT_LIST_DIR}/script_checks.cmake")

# run_plot(EXPECTED_RC OUTPUT_VAR script args...)
function(run_plot expected_rc out script)
  execute_process(COMMAND "${PYTHON3}" "${SOURCE_DIR}/tools/${script}" ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE printed ERROR_VARIABLE printed)
  if(expected_rc EQUAL 0 AND NOT rc EQUAL 0)
    message(FATAL_ERROR "${script} ${ARGN} failed (${rc}):\n${printed}")
  elseif(NOT expected_rc EQUAL 0 AND rc EQUAL 0)
    message(FATAL_ERROR "${script} ${ARGN} should have failed:\n${printed}")
  endif()
  set(${out} "${printed}" PARENT_SCOPE)
endfunction()

function(expect_png path)
  if(NOT EXISTS "${path}")
    message(FATAL_ERROR "no ${path}")
  endif()
  file(READ "${path}" signature LIMIT 4 HEX)
  if(NOT signature STREQUAL "89504e47")
    message(FATAL_ERROR "${path} is not a PNG (starts with ${signature})")
  endif()
endfunction()

# trace_summary.py needs no matplotlib. CPU thread 7: [0, 10) inside [0, 20), and [30, 40):
# busy 30 us of the 50 traced; CUDA stream 3: [40, 50): 10 us.
file(WRITE "${WORK_DIR}/small_trace.json" [=[{"traceEvents": [
{"name": "thread_name", "ph": "M", "pid": 1, "tid": 7, "args": {"name": "CPU thread 7"}},
{"name": "thread_name", "ph": "M", "pid": 2, "tid": 3, "args": {"name": "CUDA stream 3"}},
{"name": "step", "cat": "user", "ph": "X", "ts": 0, "dur": 20, "pid": 1, "tid": 7},
{"name": "conv2d", "cat": "op", "ph": "X", "ts": 0, "dur": 10, "pid": 1, "tid": 7},
{"name": "conv2d", "cat": "op", "ph": "X", "ts": 30, "dur": 10, "pid": 1, "tid": 7},
{"name": "conv2d", "cat": "cuda", "ph": "X", "ts": 40, "dur": 10, "pid": 2, "tid": 3}]}]=])
run_plot(0 out trace_summary.py "${WORK_DIR}/small_trace.json" --require-cuda)
expect_printed("trace_summary.py" "${out}" "trace: 4 spans on 2 tracks over 0.050 ms")
expect_printed("trace_summary.py, CPU track" "${out}" "CPU thread 7: 3 spans, busy 0.030 ms (60%)")
expect_printed("trace_summary.py, by name" "${out}" "    conv2d: 0.020 ms")
expect_printed("trace_summary.py, CUDA track" "${out}" "CUDA stream 3: 1 span, busy 0.010 ms (20%)")
run_plot(0 out trace_summary.py "${images}/srnet_trace.json" --top 1)
expect_printed("trace_summary.py, srnet" "${out}" "trace: 410 spans on 2 tracks")
run_plot(1 out trace_summary.py "${images}/srnet_trace.json" --require-cuda)
expect_printed("trace_summary.py, --require-cuda" "${out}" "no span on a CUDA stream's track")

execute_process(COMMAND "${PYTHON3}" -c "import matplotlib" RESULT_VARIABLE no_matplotlib
                OUTPUT_QUIET ERROR_QUIET)
if(no_matplotlib)
  message("SKIPPED: ${PYTHON3} has no matplotlib (apt-get install python3-matplotlib)")
  return()
endif()
run_plot(0 out plot_trace.py "${images}/srnet_trace.json" -o "${WORK_DIR}/trace.png")
expect_png("${WORK_DIR}/trace.png")
expect_printed("plot_trace.py" "${out}" "(410 spans, 2 tracks,")
file(WRITE "${WORK_DIR}/empty_trace.json" "{\"traceEvents\": []}")
run_plot(2 out plot_trace.py "${WORK_DIR}/empty_trace.json" -o "${WORK_DIR}/empty.png")
expect_printed("plot_trace.py, no spans" "${out}" "holds no spans")

run_plot(0 out plot_memory_timeline.py "${images}/srnet_memory.json" --omit resident_data
         -o "${WORK_DIR}/one.png")
expect_png("${WORK_DIR}/one.png")
expect_printed("plot_memory_timeline.py" "${out}" "(peak 250.01 MiB)")
run_plot(0 out plot_memory_timeline.py "${images}/srnet_memory_plain.json"
         "${images}/srnet_memory_recompute.json" --omit resident_data -o "${WORK_DIR}/two.png")
expect_png("${WORK_DIR}/two.png")
expect_printed("plot_memory_timeline.py, two files" "${out}" "(peak 250.01, 237.75 MiB)")
run_plot(2 out plot_memory_timeline.py "${images}/srnet_memory.json" --omit nothing_like_this
         -o "${WORK_DIR}/bad.png")
expect_printed("plot_memory_timeline.py, bad --omit" "${out}" "--omit nothing_like_this")
run_plot(2 out plot_trace.py "${images}/srnet_trace.json" --max-depth 0 -o "${WORK_DIR}/bad.png")
expect_printed("plot_trace.py, --max-depth 0" "${out}" "expected an integer >= 1, got 0")
# A span of no category the profiler has: drawn, without a legend.
file(WRITE "${WORK_DIR}/other_trace.json"
     [=[{"traceEvents": [{"name": "a", "ph": "X", "ts": 0, "dur": 5, "pid": 1, "tid": 0}]}]=])
run_plot(0 out plot_trace.py "${WORK_DIR}/other_trace.json" -o "${WORK_DIR}/other_trace.png")
expect_png("${WORK_DIR}/other_trace.png")
run_plot(2 out plot_memory_timeline.py "${images}/srnet_trace.json" -o "${WORK_DIR}/bad.png")
expect_printed("plot_memory_timeline.py, a trace" "${out}" "is not a timeline of leangrad-train")

# plot_training.py. leangrad-train writes a loss that is not finite (a diverged run) as null, and
# the step time of an epoch a resumed run ran no step of.
file(WRITE "${WORK_DIR}/diverged.jsonl" [=[{"event":"step","step":1,"epoch":1,"loss":2.3,"lr":10.0}
{"event":"step","step":2,"epoch":1,"loss":null,"lr":10.0}
{"event":"step","step":3,"epoch":1,"loss":null,"lr":10.0}
{"event":"epoch","step":3,"epoch":1,"loss":null,"accuracy":0.1,"ms_per_step":null,"seconds":0.5}
]=])
run_plot(0 out plot_training.py "${WORK_DIR}/diverged.jsonl" -o "${WORK_DIR}/diverged.png")
expect_png("${WORK_DIR}/diverged.png")
expect_printed("plot_training.py, null losses" "${out}" "2 of 3 steps have no finite loss")
file(WRITE "${WORK_DIR}/one_step.jsonl" "{\"event\":\"step\",\"step\":1,\"epoch\":1,\"loss\":2.3}\n")
run_plot(0 out plot_training.py "${WORK_DIR}/one_step.jsonl" -o "${WORK_DIR}/one_step.png")
expect_png("${WORK_DIR}/one_step.png")
file(WRITE "${WORK_DIR}/psnr.jsonl" [=[{"event":"step","step":1,"epoch":1,"loss":0.3}
{"event":"epoch","step":1,"epoch":1,"loss":0.3,"psnr_db":20.5}
]=])
run_plot(1 out plot_training.py "${WORK_DIR}/diverged.jsonl" "${WORK_DIR}/psnr.jsonl"
         -o "${WORK_DIR}/bad.png")
expect_printed("plot_training.py, accuracy and PSNR" "${out}" "cannot share the score axis")
run_plot(2 out plot_training.py "${WORK_DIR}/one_step.jsonl" --window 0 -o "${WORK_DIR}/bad.png")
expect_printed("plot_training.py, --window 0" "${out}" "expected an integer >= 1, got 0")
file(WRITE "${WORK_DIR}/not_records.jsonl" "5\n")
run_plot(1 out plot_training.py "${WORK_DIR}/not_records.jsonl" -o "${WORK_DIR}/bad.png")
expect_printed("plot_training.py, not a record" "${out}" "not_records.jsonl:1: not a record")
