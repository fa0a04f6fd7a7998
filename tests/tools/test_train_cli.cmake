# ctest driver for leangrad-train (tools/leangrad_train.cpp), run as
#   cmake -DTRAIN=<leangrad-train> -DDATA=<fashion-mnist folder> -DWORK_DIR=<dir> -DMODE=<mode> -P
# MODE accuracy: the MLP trained on the first 6000 training images must reach >= 75% test
#   accuracy (read from the --log-json file). Four epochs, not one: with this recipe (SGD lr 0.1,
#   batch 64, 94 steps an epoch) one epoch gives 60-67% in leangrad and in a NumPy reference of
#   the same model alike; four give 77-80% over seeds 0-3 (80.3% with seed 0, which is used).
#   Prints "SKIPPED:" (the test's SKIP_REGULAR_EXPRESSION: a -P script cannot choose its exit
#   code) when the dataset is not installed.
# MODE resume: a run interrupted by --max-steps and resumed from its --checkpoint-dir ends with a
#   model bitwise equal (same --save-model bytes) to the uninterrupted run's, and the same logged
#   per-epoch losses (as --log-json writes them: every digit of the double); for SGD with batch 64
#   and for Adam with --accumulate 2; a checkpoint written with another --seed is refused; a
#   damaged newest checkpoint is skipped (resuming from the one before) and the temporary file
#   of a killed save is removed.
#   Prints "SKIPPED:" when the dataset is not installed.
# MODE srnet: a small srnet beats nearest-neighbour upsampling's PSNR; --recompute trains the
#   same model bitwise with fewer saved activations; a memory cap between the two peaks makes the plain run
#   fail with an out-of-memory report and lets the recomputing one train. SKIPPED as above.
# MODE planner: --memory-budget on a small srnet under a memory cap between the smallest peak a
#   plan reaches and the plain run's: the plain run fails with an out-of-memory report, the planned
#   run prints its plan, trains within the budget (its measured peak allocated within 10% of the
#   predicted one) and saves the same model, byte for byte, as the plain run without a cap; a
#   budget no plan reaches is an error naming the smallest peak. SKIPPED as above.
# MODE observers: --profile and --memory-timeline, whose windows begin after 3 warm-up steps: a
#   run that ends before them says that nothing was written (and writes nothing); one that ends
#   inside the profile's window writes the steps it recorded and says how many; the largest
#   --profile-steps does not end the window after one step. --log-jsonl of a run resumed from a
#   checkpoint at an epoch's end holds every step and every epoch once, in order; that epoch, of
#   which the resumed run ran no step, is printed and logged without a step time (null), and a
#   checkpoint holding its record resumes. SKIPPED as above.
# MODE errors: bad options exit 2, runtime errors exit 1, each with a one-line message; outputs
#   that cannot be written, or two in one file, are refused at start; --version describes the
#   build.
# MODE distributed (needs -DRUN=<leangrad-run>): 2 processes with batch 32 (Gloo, DDP) against 1
#   with batch 64, two epochs on 6000 images: the test accuracies within 1 point (one process's
#   seeds 0-2 spread over 1.2 points, 81.88-83.06% after one epoch on the whole set; the two runs
#   see the same examples in each step and differ only by the order of float sums: they gave the
#   same accuracy to every digit), only rank 0 printing; 2 processes with --offload-params save
#   the same model bitwise, and refuse --backend nccl; and a 2-process run interrupted by
#   --max-steps and resumed, with and without --offload-params, ends with a model bitwise equal to
#   the uninterrupted 2-process run's; a small srnet under --memory-budget in 2 processes (one
#   plan for both ranks, the gradient all-reduce in its step) trains the plain 2-process model
#   bitwise within the budget, with --zero too (and interrupted and resumed); --zero
#   (ZeroRedundancyOptimizer) with Adam trains the plain Adam 2-process model bitwise, with
#   --offload-params too, and interrupted and resumed. SKIPPED as above.

function(run_train expected_rc expected_message)
  execute_process(COMMAND "${TRAIN}" ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL expected_rc)
    message(FATAL_ERROR "leangrad-train ${ARGN}: exit code '${rc}', expected ${expected_rc}\n"
                        "stdout:\n${out}\nstderr:\n${err}")
  endif()
  string(FIND "${err}" "${expected_message}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "leangrad-train ${ARGN}: stderr does not say '${expected_message}':\n${err}")
  endif()
  message(STATUS "leangrad-train ${ARGN} -> ${rc}: ${err}")
endfunction()

# Runs leangrad-train with ARGN and fails the test unless it exits 0; returns what it printed
# (stdout and stderr) in `out`.
function(train_ok out)
  execute_process(COMMAND "${TRAIN}" ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE printed ERROR_VARIABLE printed)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "leangrad-train ${ARGN} failed (exit code ${rc}):\n${printed}")
  endif()
  set(${out} "${printed}" PARENT_SCOPE)
endfunction()

include("${CMAKE_CURRENT_LIST_DIR}/script_checks.cmake")

# leangrad-train shortens libgomp's spin to 1000 unless the user chose how OpenMP threads wait
# (leangrad::use_short_openmp_spin, Note [OpenMP threads on a shared machine] in
# core/parallel.cpp): --version says which setting holds, and libgomp's own report of its
# settings (OMP_DISPLAY_ENV, printed when it loads: once in the first process, then again in the
# one executed with the new environment) ends with the count leangrad-train chose. A runtime
# other than libgomp prints no GOMP_SPINCOUNT line.
function(openmp_spin_run out)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=OMP_WAIT_POLICY --unset=GOMP_SPINCOUNT
                  --unset=LEANGRAD_SET_GOMP_SPINCOUNT OMP_DISPLAY_ENV=verbose ${ARGN}
                  "${TRAIN}" --version
    RESULT_VARIABLE rc OUTPUT_VARIABLE printed ERROR_VARIABLE printed)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "leangrad-train --version with ${ARGN} failed (exit code ${rc}):\n${printed}")
  endif()
  set(${out} "${printed}" PARENT_SCOPE)
endfunction()

function(expect_libgomp_spin what text expected)
  string(FIND "${text}" "GOMP_SPINCOUNT = '" last REVERSE)
  if(last EQUAL -1)
    return()  # not libgomp
  endif()
  string(SUBSTRING "${text}" ${last} -1 tail)
  if(NOT tail MATCHES "^GOMP_SPINCOUNT = '${expected}'")
    message(FATAL_ERROR "${what}: libgomp's last GOMP_SPINCOUNT is not '${expected}':\n${text}")
  endif()
endfunction()

function(check_openmp_spin)
  openmp_spin_run(printed)
  expect_printed("--version, nothing set" "${printed}"
                 "OpenMP threads wait: GOMP_SPINCOUNT=1000 (set by use_short_openmp_spin)")
  expect_libgomp_spin("--version, nothing set" "${printed}" "1000")
  openmp_spin_run(printed GOMP_SPINCOUNT=5)
  expect_printed("--version, GOMP_SPINCOUNT=5" "${printed}"
                 "OpenMP threads wait: GOMP_SPINCOUNT=5 (from the environment)")
  expect_libgomp_spin("--version, GOMP_SPINCOUNT=5" "${printed}" "5")
  openmp_spin_run(printed OMP_WAIT_POLICY=passive)
  expect_printed("--version, OMP_WAIT_POLICY=passive" "${printed}"
                 "OpenMP threads wait: OMP_WAIT_POLICY=passive (from the environment)")
  expect_libgomp_spin("--version, OMP_WAIT_POLICY=passive" "${printed}" "0")
endfunction()

# Fails with `message` unless files `a` and `b` are byte for byte the same (two saved models).
function(expect_same_file a b message)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${a}" "${b}"
                  RESULT_VARIABLE different)
  if(different)
    message(FATAL_ERROR "${message} (${a} vs ${b})")
  endif()
endfunction()

# The "loss" values of a --log-json file, as written (all the digits nlohmann::json prints).
function(logged_losses file out)
  file(READ "${file}" json)
  string(REGEX MATCHALL "\"loss\": [-0-9.eE+]+" losses "${json}")
  set(${out} "${losses}" PARENT_SCOPE)
endfunction()

# This machine's name as temporary files spell it (data/file_io.cpp, temporary_path_for): each
# character other than a letter, a digit or '-' written %XX.
function(host_in_temporary_names out)
  cmake_host_system_information(RESULT host QUERY HOSTNAME)
  set(spelled "")
  string(LENGTH "${host}" length)
  if(length GREATER 0)
    math(EXPR last "${length} - 1")
    foreach(i RANGE ${last})
      string(SUBSTRING "${host}" ${i} 1 c)
      if(c MATCHES "^[A-Za-z0-9-]$")
        string(APPEND spelled "${c}")
      else()
        string(HEX "${c}" hex)
        string(TOUPPER "${hex}" hex)
        string(APPEND spelled "%${hex}")
      endif()
    endforeach()
  endif()
  set(${out} "${spelled}" PARENT_SCOPE)
endfunction()

# An uninterrupted run vs. one stopped at step 25 (checkpoints every 10 steps) and resumed. With
# DAMAGE, the checkpoint of step 25 is truncated and a save killed mid-write is left behind before
# resuming: the run removes the temporary file, skips the damaged checkpoint, saying so, resumes
# from step 20 and still ends bitwise equal.
function(check_resume name damage)
  set(dir "${WORK_DIR}/resume_${name}")
  file(REMOVE_RECURSE "${dir}")
  file(MAKE_DIRECTORY "${dir}")
  set(common --limit-train 2000 --epochs 2 --threads 1 --seed 3 --device cpu --data "${DATA}"
             ${ARGN})
  train_ok(out ${common} --log-json "${dir}/full.json" --save-model "${dir}/full.safetensors")
  set(resumable ${common} --checkpoint-dir "${dir}/ckpt" --checkpoint-every 10
                --log-json "${dir}/resumed.json" --save-model "${dir}/resumed.safetensors")
  train_ok(out ${resumable} --max-steps 25)
  file(GLOB checkpoints RELATIVE "${dir}/ckpt" "${dir}/ckpt/*.safetensors")
  if(NOT checkpoints STREQUAL "step-00000010.safetensors;step-00000020.safetensors;step-00000025.safetensors")
    message(FATAL_ERROR "${name}: checkpoints after --max-steps 25: '${checkpoints}'")
  endif()
  # --max-steps counts across resumes: the same command again trains no step, and its report
  # says that nothing was measured (no step times, no memory peak, in print or in --log-json).
  train_ok(out ${resumable} --max-steps 25)
  expect_printed("${name}" "${out}" "stopped by --max-steps 25: resumed at global step 25, nothing left to train")
  expect_printed("${name}" "${out}" "step time: no step was trained in this run\n")
  expect_printed("${name}" "${out}" "memory on cpu: no step was trained in this run, so no training peak was measured\n")
  file(READ "${dir}/resumed.json" json)
  string(JSON memory ERROR_VARIABLE no_memory GET "${json}" memory_bytes)
  string(JSON step_ms ERROR_VARIABLE no_step_ms GET "${json}" step_ms)
  if(NOT no_memory OR NOT no_step_ms)
    message(FATAL_ERROR "${name}: a run that trained no step logged step times or memory:\n${json}")
  endif()
  file(GLOB checkpoints RELATIVE "${dir}/ckpt" "${dir}/ckpt/*.safetensors")
  if(NOT checkpoints STREQUAL "step-00000010.safetensors;step-00000020.safetensors;step-00000025.safetensors")
    message(FATAL_ERROR "${name}: checkpoints after --max-steps 25 run twice: '${checkpoints}'")
  endif()
  set(resumed_step 25)
  if(damage)
    file(WRITE "${dir}/ckpt/step-00000025.safetensors" "a damaged checkpoint")
    # pid 999999999 is above every Linux pid_max (at most 2^22): a writer of this host that no
    # longer runs.
    host_in_temporary_names(host)
    set(killed_save "${dir}/ckpt/.step-00000030.safetensors.tmp.${host}.999999999.0")
    file(WRITE "${killed_save}" "partial")
    set(resumed_step 20)
  endif()
  train_ok(out ${resumable})
  expect_printed("${name}" "${out}" "resuming from ${dir}/ckpt/step-000000${resumed_step}.safetensors")
  if(damage)
    expect_printed("${name}" "${out}" "removed 1 temporary file(s) of interrupted checkpoint saves")
    expect_printed("${name}" "${out}" "warning: skipping a damaged checkpoint: load_safetensors: '${dir}/ckpt/step-00000025.safetensors'")
    if(EXISTS "${killed_save}")
      message(FATAL_ERROR "${name}: the temporary file of the killed save is still there")
    endif()
  endif()
  file(GLOB checkpoints "${dir}/ckpt/*.safetensors")
  list(LENGTH checkpoints count)
  if(NOT count EQUAL 3)
    message(FATAL_ERROR "${name}: ${count} checkpoints kept, expected 3 (--keep's default)")
  endif()
  expect_same_file("${dir}/full.safetensors" "${dir}/resumed.safetensors"
                   "${name}: the resumed run's final model differs from the uninterrupted run's")
  logged_losses("${dir}/full.json" full)
  logged_losses("${dir}/resumed.json" resumed)
  list(LENGTH full epochs)
  if(NOT epochs EQUAL 2 OR NOT full STREQUAL resumed)
    message(FATAL_ERROR "${name}: per-epoch losses differ: '${full}' vs '${resumed}'")
  endif()
  message(STATUS "${name}: resumed run bitwise equal to the uninterrupted one; ${full}")
  if(name STREQUAL "sgd")
    list(TRANSFORM resumable REPLACE "^3$" "4")  # --seed 4 (no other argument is "3")
    run_train(1 "it was written with --seed 3, this run has --seed 4" ${resumable})
  endif()
endfunction()

# srnet, small: it learns (test PSNR 1 dB above nearest-neighbour upsampling's after 100 steps),
# --recompute trains the same model bitwise while holding fewer saved activations, and under a
# memory cap between the two peaks the plain run fails with an out-of-memory report while the
# recomputing one trains.
function(check_srnet)
  set(dir "${WORK_DIR}/srnet")
  file(REMOVE_RECURSE "${dir}")
  file(MAKE_DIRECTORY "${dir}")
  set(common --model srnet --width 8 --optimizer adam --threads 1 --seed 0 --device cpu
             --data "${DATA}")
  train_ok(out ${common} --blocks 2 --limit-train 3200 --epochs 1 --batch-size 32
                         --log-json "${dir}/learn.json")
  file(READ "${dir}/learn.json" learn)
  string(JSON psnr GET "${learn}" epochs 0 psnr_db)
  string(JSON baseline GET "${learn}" baseline_psnr_db)
  # psnr > floor(baseline) + 2 >= baseline + 1 (math() has only integers).
  string(REGEX REPLACE "\\..*$" "" baseline_floor "${baseline}")
  math(EXPR threshold "${baseline_floor} + 2")
  if(NOT psnr GREATER threshold)
    message(FATAL_ERROR "srnet: test PSNR ${psnr} dB after 100 steps, not above ${threshold} dB "
                        "(nearest-neighbour upsampling: ${baseline} dB)")
  endif()
  message(STATUS "srnet: test PSNR ${psnr} dB after 100 steps, baseline ${baseline} dB")

  set(small ${common} --blocks 4 --batch-size 128 --limit-train 1280 --epochs 1 --max-steps 3)
  foreach(run plain recompute)
    set(flags)
    if(run STREQUAL "recompute")
      set(flags --recompute)
    endif()
    train_ok(out ${small} ${flags} --log-json "${dir}/${run}.json"
                          --save-model "${dir}/${run}.safetensors")
    file(READ "${dir}/${run}.json" json)
    string(JSON ${run}_saved GET "${json}" memory_bytes saved_activations)
    string(JSON ${run}_peak GET "${json}" memory_bytes peak_reserved)
  endforeach()
  expect_same_file("${dir}/plain.safetensors" "${dir}/recompute.safetensors"
                   "srnet: --recompute trained another model than the plain run")
  if(NOT recompute_saved LESS plain_saved OR NOT recompute_peak LESS plain_peak)
    message(FATAL_ERROR "srnet: --recompute saved ${recompute_saved} bytes (peak "
                        "${recompute_peak}), the plain run ${plain_saved} (peak ${plain_peak})")
  endif()
  message(STATUS "srnet: --recompute trains the same model bitwise; saved activations "
                 "${plain_saved} -> ${recompute_saved} bytes, peak reserved ${plain_peak} -> "
                 "${recompute_peak}")

  # --offload-params (the CPU as the computing device: the parameters move to the pinned pool and
  # visit the CPU allocator one layer at a time) trains the same model bitwise.
  train_ok(out ${small} --offload-params --save-model "${dir}/offload.safetensors")
  expect_printed("srnet --offload-params" "${out}" "parameters: in pinned host memory, 18 layers")
  expect_same_file("${dir}/plain.safetensors" "${dir}/offload.safetensors"
                   "srnet: --offload-params trained another model than the plain run")
  message(STATUS "srnet: --offload-params trains the same model bitwise")

  # A cap halfway between the two peaks (in MiB, rounded down).
  math(EXPR cap_mb "(${plain_peak} + ${recompute_peak}) / 2 / 1048576")
  set(ENV{LEANGRAD_ALLOC_CONF} "memory_cap_mb:${cap_mb}")
  run_train(1 "out of memory" ${small})
  train_ok(out ${small} --recompute)
  unset(ENV{LEANGRAD_ALLOC_CONF})
  message(STATUS "srnet: under memory_cap_mb:${cap_mb} the plain run fails with an OOM report, "
                 "the recomputing one trains")
endfunction()

# The spans named train_step in the Chrome trace `file` (one per optimizer step profiled).
function(traced_steps file out)
  file(READ "${file}" trace)
  string(REGEX MATCHALL "\"name\":\"train_step\"" spans "${trace}")
  list(LENGTH spans n)
  set(${out} ${n} PARENT_SCOPE)
endfunction()

# --profile, --memory-timeline and --log-jsonl (MODE observers above).
function(check_observers)
  set(dir "${WORK_DIR}/observers")
  file(REMOVE_RECURSE "${dir}")
  file(MAKE_DIRECTORY "${dir}")
  # 640 images in batches of 64: 10 steps an epoch.
  set(mlp --device cpu --threads 1 --limit-train 640 --limit-test 100 --data "${DATA}")

  # A run that ends before the windows begin (after 3 warm-up steps) says so and writes nothing.
  train_ok(out ${mlp} --epochs 1 --max-steps 2 --profile "${dir}/early.json"
                      --memory-timeline "${dir}/early.svg")
  expect_printed("--profile, a run of 2 steps" "${out}"
                 "profile: the run ended before global step 3, where the profile was to begin")
  expect_printed("--memory-timeline, a run of 2 steps" "${out}"
                 "memory timeline: the run ended before global step 3, the step to record")
  foreach(file early.json early.svg)
    if(EXISTS "${dir}/${file}")
      message(FATAL_ERROR "a run of 2 steps wrote ${dir}/${file}")
    endif()
  endforeach()

  # A run that ends inside the profile's window: the trace of the steps it recorded, counted.
  train_ok(out ${mlp} --epochs 1 --max-steps 5 --profile "${dir}/short.json")
  expect_printed("--profile, a run that ends inside the window" "${out}"
                 "profile: 2 steps from global step 3 (the run ended before the 5 asked)")
  traced_steps("${dir}/short.json" n)
  if(NOT n EQUAL 2)
    message(FATAL_ERROR "--profile: ${n} train_step spans in a trace of steps 3 and 4")
  endif()
  # The largest --profile-steps: the window lasts to the run's end (steps 3 to 9), not 1 step.
  train_ok(out ${mlp} --epochs 1 --profile "${dir}/long.json"
                      --profile-steps 9223372036854775807)
  expect_printed("--profile-steps 2^63 - 1" "${out}" "profile: 7 steps from global step 3")
  traced_steps("${dir}/long.json" n)
  if(NOT n EQUAL 7)
    message(FATAL_ERROR "--profile-steps 2^63 - 1: ${n} train_step spans, not 7")
  endif()

  # --log-jsonl of a run resumed from a checkpoint at an epoch's end (taken before that epoch's
  # evaluation, which the resumed run repeats): every step and every epoch once, in order. The
  # resumed run ran no step of epoch 1: its line says so instead of a step time, and its records
  # have a null ms_per_step.
  set(resumed ${mlp} --epochs 2 --checkpoint-dir "${dir}/ckpt" --log-jsonl "${dir}/steps.jsonl"
              --log-json "${dir}/log.json")
  train_ok(out ${resumed} --max-steps 10)
  train_ok(out ${resumed})
  expect_printed("--log-jsonl, resumed" "${out}" "--log-jsonl: dropped 1 line(s)")
  if(NOT out MATCHES "\nepoch 1/2: train loss [0-9.]+, test accuracy [0-9.]+%, no step in this run, [0-9.]+ s\n"
     OR NOT out MATCHES "\nepoch 2/2: train loss [0-9.]+, test accuracy [0-9.]+%, [0-9.]+ ms/step, ")
    message(FATAL_ERROR "a run resumed at the end of epoch 1: its epoch lines should say that "
                        "it ran no step of epoch 1 and give epoch 2's step time:\n${out}")
  endif()
  expect_step_times("${dir}/log.json" "NULL;NUMBER")
  file(STRINGS "${dir}/steps.jsonl" lines)
  set(steps "")
  set(epochs "")
  set(epoch_step_times "")
  foreach(line IN LISTS lines)
    string(JSON line_event GET "${line}" event)
    string(JSON line_step GET "${line}" step)
    string(JSON line_epoch GET "${line}" epoch)
    if(line_event STREQUAL "epoch")
      list(APPEND epochs "${line_epoch}@${line_step}")
      string(JSON type TYPE "${line}" ms_per_step)
      list(APPEND epoch_step_times "${type}")
    else()
      list(APPEND steps ${line_step})
    endif()
  endforeach()
  if(NOT epochs STREQUAL "1@10;2@20")
    message(FATAL_ERROR "--log-jsonl after resuming: epoch lines ${epochs}, not 1@10;2@20")
  endif()
  if(NOT steps STREQUAL "1;2;3;4;5;6;7;8;9;10;11;12;13;14;15;16;17;18;19;20")
    message(FATAL_ERROR "--log-jsonl after resuming: step lines ${steps}, not 1 to 20")
  endif()
  if(NOT epoch_step_times STREQUAL "NULL;NUMBER")
    message(FATAL_ERROR "--log-jsonl after resuming: epoch lines' ms_per_step ${epoch_step_times}, "
                        "not NULL;NUMBER (none measured for epoch 1)")
  endif()
  # The checkpoint of step 20 holds epoch 1's record with its null step time: one more epoch
  # resumes from it (it is no damage) and trains on.
  train_ok(out ${mlp} --epochs 3 --checkpoint-dir "${dir}/ckpt" --log-json "${dir}/log.json")
  expect_printed("three epochs, resumed" "${out}" "resuming from ${dir}/ckpt/step-00000020.safetensors")
  expect_step_times("${dir}/log.json" "NULL;NULL;NUMBER")
endfunction()

# Fails unless the epoch records of --log-json `file` have ms_per_step of the JSON types
# `expected` ("NULL;NUMBER": none measured for epoch 1, a time for epoch 2).
function(expect_step_times file expected)
  file(READ "${file}" json)
  string(JSON epochs LENGTH "${json}" epochs)
  math(EXPR last "${epochs} - 1")
  set(types "")
  foreach(i RANGE ${last})
    string(JSON type TYPE "${json}" epochs ${i} ms_per_step)
    list(APPEND types "${type}")
  endforeach()
  if(NOT types STREQUAL expected)
    message(FATAL_ERROR "${file}: the epochs' ms_per_step are ${types}, not ${expected}:\n${json}")
  endif()
endfunction()

# srnet under --memory-budget (MODE planner above).
function(check_planner)
  set(dir "${WORK_DIR}/planner")
  file(REMOVE_RECURSE "${dir}")
  file(MAKE_DIRECTORY "${dir}")
  set(small --model srnet --width 16 --blocks 4 --batch-size 64 --optimizer adam --threads 1
            --seed 0 --device cpu --limit-train 640 --limit-test 500 --max-steps 4
            --data "${DATA}")
  train_ok(out ${small} --log-json "${dir}/plain.json" --save-model "${dir}/plain.safetensors")
  file(READ "${dir}/plain.json" json)
  string(JSON plain_peak GET "${json}" memory_bytes peak_allocated)

  # --memory-timeline names the memory setting it was recorded under (what
  # tools/plot_memory_timeline.py titles each of several timelines with), and its peak is one
  # step's: at most the run's.
  train_ok(out ${small} --recompute --memory-timeline "${dir}/recompute_timeline.json"
                        --log-json "${dir}/recompute.json")
  file(READ "${dir}/recompute_timeline.json" timeline)
  string(JSON setting GET "${timeline}" memory_setting)
  if(NOT setting STREQUAL "--recompute")
    message(FATAL_ERROR "--memory-timeline: memory_setting is '${setting}', not '--recompute'")
  endif()
  string(JSON step_peak GET "${timeline}" peak bytes)
  file(READ "${dir}/recompute.json" json)
  string(JSON run_peak GET "${json}" memory_bytes peak_allocated)
  if(NOT (step_peak GREATER 0 AND NOT step_peak GREATER run_peak))
    message(FATAL_ERROR "--memory-timeline: the step's peak ${step_peak} is not in (0, ${run_peak}]")
  endif()

  # A budget no plan reaches: the error says the smallest peak one does.
  run_train(1 "memory planner: no plan fits the budget of 1.00 MiB" ${small} --memory-budget 1)
  execute_process(COMMAND "${TRAIN}" ${small} --memory-budget 1 ERROR_VARIABLE err OUTPUT_QUIET)
  if(NOT err MATCHES "the smallest peak a plan reaches is ([0-9]+)\\.[0-9]+ MiB")
    message(FATAL_ERROR "--memory-budget 1: no smallest peak in:\n${err}")
  endif()
  set(smallest_mib ${CMAKE_MATCH_1})

  # Halfway between the smallest peak and the plain one; the cap 8 MiB above (the allocator's
  # segments), below the plain peak.
  math(EXPR budget_mib "(${smallest_mib} + 1 + ${plain_peak} / 1048576) / 2")
  math(EXPR cap_mib "${budget_mib} + 8")
  math(EXPR cap_bytes "${cap_mib} * 1048576")
  if(NOT cap_bytes LESS plain_peak)
    message(FATAL_ERROR "planner: no room between the smallest peak (${smallest_mib} MiB) and "
                        "the plain one (${plain_peak} bytes)")
  endif()
  set(ENV{LEANGRAD_ALLOC_CONF} "memory_cap_mb:${cap_mib}")
  run_train(1 "out of memory" ${small})
  train_ok(out ${small} --memory-budget ${budget_mib} --log-json "${dir}/planned.json"
                        --save-model "${dir}/planned.safetensors")
  unset(ENV{LEANGRAD_ALLOC_CONF})
  message(STATUS "${out}")
  expect_printed("planner" "${out}" "memory plan for a budget of ${budget_mib}.00 MiB on cpu (4 blocks")
  expect_printed("planner" "${out}" "blocks.3")
  expect_printed("planner" "${out}" "memory plan: predicted peak")

  file(READ "${dir}/planned.json" json)
  string(JSON measured GET "${json}" memory_bytes peak_allocated)
  string(JSON predicted GET "${json}" memory_plan predicted_peak_bytes)
  math(EXPR budget_bytes "${budget_mib} * 1048576")
  if(measured GREATER budget_bytes)
    message(FATAL_ERROR "planner: the planned run peaked at ${measured} bytes, over the budget "
                        "of ${budget_bytes}")
  endif()
  math(EXPR error "${predicted} - ${measured}")
  if(error LESS 0)
    math(EXPR error "-${error}")
  endif()
  math(EXPR error_permille "${error} * 1000 / ${measured}")
  if(error_permille GREATER 100)
    message(FATAL_ERROR "planner: predicted peak ${predicted} bytes, measured ${measured}: "
                        "${error_permille} per mille apart (at most 100)")
  endif()
  expect_same_file("${dir}/plain.safetensors" "${dir}/planned.safetensors"
                   "planner: the planned run trained another model than the plain run")
  message(STATUS "planner: under memory_cap_mb:${cap_mib} the plain run fails; --memory-budget "
                 "${budget_mib} trains the same model, peak ${measured} bytes (predicted "
                 "${predicted}, ${error_permille} per mille apart)")
endfunction()

# The last epoch's test accuracy in a --log-json file.
function(logged_accuracy file out)
  file(READ "${file}" json)
  string(JSON epochs LENGTH "${json}" epochs)
  math(EXPR last "${epochs} - 1")
  string(JSON accuracy GET "${json}" epochs ${last} accuracy)
  set(${out} "${accuracy}" PARENT_SCOPE)
endfunction()

function(check_distributed)
  set(dir "${WORK_DIR}/distributed")
  file(REMOVE_RECURSE "${dir}")
  file(MAKE_DIRECTORY "${dir}")
  set(common --model mlp --epochs 2 --limit-train 6000 --seed 0 --device cpu --threads 1
             --data "${DATA}")
  train_ok(out ${common} --batch-size 64 --log-json "${dir}/one.json")
  set(two "${RUN}" --nproc-per-node 2 "${TRAIN}" ${common} --batch-size 32)
  execute_process(COMMAND ${two} --log-json "${dir}/two.json" --save-model "${dir}/full.safetensors"
    RESULT_VARIABLE rc OUTPUT_VARIABLE printed ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "leangrad-run ... leangrad-train failed (exit ${rc}):\n${printed}\n${err}")
  endif()
  expect_printed("2 processes" "${printed}" "[rank 0] distributed: 2 processes (gloo), DistributedDataParallel, global batch 64")
  string(FIND "${printed}" "[rank 1]" rank1_printed)
  if(NOT rank1_printed EQUAL -1)
    message(FATAL_ERROR "rank 1 printed on stdout:\n${printed}")
  endif()
  logged_accuracy("${dir}/one.json" one)
  logged_accuracy("${dir}/two.json" two_accuracy)
  # CMake's math() has no floating point: compare in units of 1e-4.
  string(REGEX REPLACE "^0\\.([0-9][0-9][0-9][0-9]).*" "\\1" one4 "${one}0000")
  string(REGEX REPLACE "^0\\.([0-9][0-9][0-9][0-9]).*" "\\1" two4 "${two_accuracy}0000")
  math(EXPR gap "${one4} - ${two4}")
  if(gap LESS 0)
    math(EXPR gap "-${gap}")
  endif()
  if(gap GREATER 100)
    message(FATAL_ERROR "2 processes x 32: test accuracy ${two_accuracy}; 1 process x 64: ${one}: "
                        "more than 1 point apart")
  endif()
  message(STATUS "test accuracy: 1 process x 64 ${one}, 2 processes x 32 ${two_accuracy}")
  # The accuracy cannot tell averaged gradients from a rank that trains on its half alone (that
  # lands 0.15 points away); the epoch losses can: the same updates up to the order of float32
  # sums agree far closer than 0.1%, an unsynchronised rank's loss is 2% off.
  logged_losses("${dir}/one.json" one_losses)
  logged_losses("${dir}/two.json" two_losses)
  list(LENGTH one_losses n_one)
  list(LENGTH two_losses n_two)
  if(NOT n_one EQUAL 2 OR NOT n_two EQUAL 2)
    message(FATAL_ERROR "expected 2 epoch losses in each log, got '${one_losses}' and '${two_losses}'")
  endif()
  foreach(i RANGE 1)
    list(GET one_losses ${i} a)
    list(GET two_losses ${i} b)
    string(REGEX REPLACE "\"loss\": " "" a "${a}")
    string(REGEX REPLACE "\"loss\": " "" b "${b}")
    execute_process(COMMAND awk "BEGIN { d = (${a}) - (${b}); if (d < 0) d = -d; exit !(d <= 1e-3 * (${a})) }"
                    RESULT_VARIABLE apart)
    if(NOT apart EQUAL 0)
      message(FATAL_ERROR "epoch ${i}: 1 process x 64 loss ${a}, 2 processes x 32 loss ${b}: more "
                          "than 0.1% apart (are the gradients averaged?)")
    endif()
  endforeach()
  message(STATUS "epoch losses: 1 process x 64 ${one_losses}, 2 processes x 32 ${two_losses}")

  # --offload-params in 2 processes (the parameters in the pinned pool, the gradients averaged in
  # host buckets by Gloo, the optimizer stepping on the host) trains the same model bitwise.
  execute_process(COMMAND ${two} --offload-params --save-model "${dir}/offload.safetensors"
    RESULT_VARIABLE rc OUTPUT_VARIABLE printed ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the 2-process --offload-params run failed (exit ${rc}):\n${printed}\n${err}")
  endif()
  expect_printed("2 processes --offload-params" "${printed}" "[rank 0] parameters: in pinned host memory")
  expect_same_file("${dir}/full.safetensors" "${dir}/offload.safetensors"
                   "2 processes: --offload-params trained another model than the plain run")
  message(STATUS "2 processes: --offload-params trains the same model bitwise")
  execute_process(COMMAND ${two} --offload-params --backend nccl --max-steps 1
    RESULT_VARIABLE rc OUTPUT_VARIABLE printed ERROR_VARIABLE err)
  if(rc EQUAL 0)
    message(FATAL_ERROR "--offload-params --backend nccl in 2 processes did not fail:\n${printed}")
  endif()
  expect_printed("--offload-params --backend nccl" "${err}"
                 "--offload-params: the gradients are averaged in host memory, which --backend nccl cannot reduce")

  # --memory-budget in 2 processes (srnet): every rank installs the plan made on the ranks'
  # largest numbers, which weighs the gradient all-reduce; it trains the plain run's model bitwise
  # and peaks within the budget, predicted within 10%.
  set(srnet_common "${RUN}" --nproc-per-node 2 "${TRAIN}" --model srnet --width 16 --blocks 4
            --batch-size 32 --optimizer adam --threads 1 --seed 0 --device cpu --limit-train 640
            --limit-test 500 --data "${DATA}")
  set(srnet ${srnet_common} --max-steps 4)
  execute_process(COMMAND ${srnet} --log-json "${dir}/srnet_plain.json"
                          --save-model "${dir}/srnet_plain.safetensors"
    RESULT_VARIABLE rc OUTPUT_VARIABLE printed ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the 2-process srnet run failed (exit ${rc}):\n${printed}\n${err}")
  endif()
  file(READ "${dir}/srnet_plain.json" json)
  string(JSON plain_peak GET "${json}" memory_bytes peak_allocated)
  execute_process(COMMAND ${srnet} --memory-budget 1 RESULT_VARIABLE rc OUTPUT_QUIET
                  ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT err MATCHES "\\[rank 0\\] [^\n]*the smallest peak a plan reaches is ([0-9]+)\\.[0-9]+ MiB")
    message(FATAL_ERROR "--memory-budget 1 in 2 processes: no smallest peak in:\n${err}")
  endif()
  math(EXPR budget_mib "(${CMAKE_MATCH_1} + 1 + ${plain_peak} / 1048576) / 2")
  execute_process(COMMAND ${srnet} --memory-budget ${budget_mib} --log-json "${dir}/srnet_planned.json"
                          --save-model "${dir}/srnet_planned.safetensors"
    RESULT_VARIABLE rc OUTPUT_VARIABLE printed ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the 2-process --memory-budget run failed (exit ${rc}):\n${printed}\n${err}")
  endif()
  expect_printed("2 processes --memory-budget" "${printed}" "[rank 0] memory plan for a budget of ${budget_mib}.00 MiB on cpu (4 blocks")
  expect_printed("2 processes --memory-budget" "${printed}" "[rank 0]   gradient all-reduce over 2 processes: ")
  expect_same_file("${dir}/srnet_plain.safetensors" "${dir}/srnet_planned.safetensors"
                   "2 processes: --memory-budget trained another model than the plain run")
  file(READ "${dir}/srnet_planned.json" json)
  string(JSON measured GET "${json}" memory_bytes peak_allocated)
  string(JSON predicted GET "${json}" memory_plan predicted_peak_bytes)
  math(EXPR budget_bytes "${budget_mib} * 1048576")
  math(EXPR error "${predicted} - ${measured}")
  if(error LESS 0)
    math(EXPR error "-${error}")
  endif()
  math(EXPR error_permille "${error} * 1000 / ${measured}")
  if(measured GREATER budget_bytes OR error_permille GREATER 100)
    message(FATAL_ERROR "2 processes --memory-budget ${budget_mib}: peak ${measured} bytes "
                        "(budget ${budget_bytes}), predicted ${predicted}")
  endif()
  message(STATUS "2 processes: --memory-budget ${budget_mib} trains the plain run's model, peak "
                 "${measured} bytes (predicted ${predicted}, ${error_permille} per mille apart)")

  # --memory-budget with --zero: the profiled step is the sharded optimizer's, so each rank's
  # optimizer state in the plan is its share of Adam's moments; the same plan on both ranks
  # (printed once), the plain 2-process srnet model bitwise, the peak within the budget and
  # within 10% of the prediction, as without --zero; and interrupted at step 2 (rank 0 saving
  # the state both ranks consolidated to it) and resumed, the same model again.
  execute_process(COMMAND ${srnet} --zero --memory-budget ${budget_mib}
                          --log-json "${dir}/srnet_zero.json"
                          --save-model "${dir}/srnet_zero.safetensors"
    RESULT_VARIABLE rc OUTPUT_VARIABLE printed ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the 2-process --zero --memory-budget run failed (exit ${rc}):\n${printed}\n${err}")
  endif()
  expect_printed("2 processes --zero --memory-budget" "${printed}" "[rank 0] memory plan for a budget of ${budget_mib}.00 MiB on cpu (4 blocks")
  expect_printed("2 processes --zero --memory-budget" "${printed}" "optimizer state sharded (ZeroRedundancyOptimizer)")
  string(FIND "${printed}" "[rank 1] memory plan" rank1_plan)
  if(NOT rank1_plan EQUAL -1)
    message(FATAL_ERROR "rank 1 printed the plan:\n${printed}")
  endif()
  expect_same_file("${dir}/srnet_plain.safetensors" "${dir}/srnet_zero.safetensors"
                   "2 processes: --zero --memory-budget trained another model than the plain run")
  file(READ "${dir}/srnet_zero.json" json)
  string(JSON zero_measured GET "${json}" memory_bytes peak_allocated)
  string(JSON zero_predicted GET "${json}" memory_plan predicted_peak_bytes)
  string(JSON zero_state GET "${json}" memory_bytes optimizer_state)
  file(READ "${dir}/srnet_plain.json" json)
  string(JSON plain_state GET "${json}" memory_bytes optimizer_state)
  math(EXPR error "${zero_predicted} - ${zero_measured}")
  if(error LESS 0)
    math(EXPR error "-${error}")
  endif()
  math(EXPR error_permille "${error} * 1000 / ${zero_measured}")
  if(zero_measured GREATER budget_bytes OR error_permille GREATER 100)
    message(FATAL_ERROR "2 processes --zero --memory-budget ${budget_mib}: peak ${zero_measured} "
                        "bytes (budget ${budget_bytes}), predicted ${zero_predicted}")
  endif()
  # Rank 0 holds its share of Adam's two moments: less than the whole (the shares are whole
  # parameters, so not exactly half).
  if(NOT zero_state LESS plain_state)
    message(FATAL_ERROR "--zero --memory-budget: rank 0's optimizer state ${zero_state} bytes, "
                        "not less than the plain run's ${plain_state}")
  endif()
  set(ckpt "${dir}/ckpt_srnet_zero")
  execute_process(COMMAND ${srnet_common} --max-steps 2 --zero --memory-budget ${budget_mib}
                          --checkpoint-dir "${ckpt}" --checkpoint-every 2
    RESULT_VARIABLE rc OUTPUT_VARIABLE printed ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the interrupted --zero --memory-budget run failed (exit ${rc}):\n${printed}\n${err}")
  endif()
  execute_process(COMMAND ${srnet} --zero --memory-budget ${budget_mib} --checkpoint-dir "${ckpt}"
                          --save-model "${dir}/srnet_zero_resumed.safetensors"
    RESULT_VARIABLE rc OUTPUT_VARIABLE printed ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the resumed --zero --memory-budget run failed (exit ${rc}):\n${printed}\n${err}")
  endif()
  expect_printed("resumed (--zero --memory-budget)" "${printed}" "[rank 0] resuming from ${ckpt}/step-00000002.safetensors")
  expect_same_file("${dir}/srnet_plain.safetensors" "${dir}/srnet_zero_resumed.safetensors"
                   "the resumed --zero --memory-budget run's final model differs from the plain run's")
  message(STATUS "2 processes: --zero --memory-budget ${budget_mib} trains the plain run's model, "
                 "also resumed; peak ${zero_measured} bytes (predicted ${zero_predicted}), rank 0's "
                 "optimizer state ${zero_state} bytes against ${plain_state}")

  # --zero (the optimizer state sharded, ZeroRedundancyOptimizer) with Adam: the plain 2-process
  # Adam run's model bitwise, with --offload-params too, and when interrupted at step 20 (rank 0 saving the state every rank
  # consolidated to it) and resumed; the report counts each rank's share of the state. One process
  # has nothing to shard: refused.
  set(adam ${two} --optimizer adam --max-steps 40)
  execute_process(COMMAND ${adam} --save-model "${dir}/adam.safetensors"
    RESULT_VARIABLE rc OUTPUT_VARIABLE printed ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the 2-process Adam run failed (exit ${rc}):\n${printed}\n${err}")
  endif()
  execute_process(COMMAND ${adam} --zero --save-model "${dir}/zero.safetensors"
    RESULT_VARIABLE rc OUTPUT_VARIABLE printed ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the 2-process --zero run failed (exit ${rc}):\n${printed}\n${err}")
  endif()
  expect_printed("2 processes --zero" "${printed}" "[rank 0] distributed: 2 processes (gloo), DistributedDataParallel, optimizer state sharded (ZeroRedundancyOptimizer), global batch 64")
  expect_same_file("${dir}/adam.safetensors" "${dir}/zero.safetensors"
                   "2 processes: --zero trained another model than the plain Adam run")
  # With --offload-params too: each rank's share of the state in pinned host memory, stepped on
  # the host in ParameterOffload's order, the broadcasts of host parameters.
  execute_process(COMMAND ${adam} --zero --offload-params --save-model "${dir}/zero_offload.safetensors"
    RESULT_VARIABLE rc OUTPUT_VARIABLE printed ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the 2-process --zero --offload-params run failed (exit ${rc}):\n${printed}\n${err}")
  endif()
  expect_same_file("${dir}/adam.safetensors" "${dir}/zero_offload.safetensors"
                   "2 processes: --zero --offload-params trained another model than the plain Adam run")
  set(ckpt "${dir}/ckpt_zero")
  execute_process(COMMAND ${two} --optimizer adam --zero --checkpoint-dir "${ckpt}"
                          --checkpoint-every 20 --max-steps 20
    RESULT_VARIABLE rc OUTPUT_VARIABLE printed ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the interrupted 2-process --zero run failed (exit ${rc}):\n${printed}\n${err}")
  endif()
  execute_process(COMMAND ${adam} --zero --checkpoint-dir "${ckpt}"
                          --save-model "${dir}/zero_resumed.safetensors"
    RESULT_VARIABLE rc OUTPUT_VARIABLE printed ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the resumed 2-process --zero run failed (exit ${rc}):\n${printed}\n${err}")
  endif()
  expect_printed("resumed (--zero)" "${printed}" "[rank 0] resuming from ${ckpt}/step-00000020.safetensors")
  expect_same_file("${dir}/adam.safetensors" "${dir}/zero_resumed.safetensors"
                   "the resumed 2-process --zero run's final model differs from the plain Adam run's")
  run_train(1 "--zero shards the optimizer state over the processes of leangrad-run; this run has one process"
            ${common} --zero --max-steps 1)
  # One process does not resume two's checkpoint: its share of the order and its steps differ.
  run_train(1 "it was written with WORLD_SIZE=2, this run has WORLD_SIZE=1"
            ${common} --batch-size 32 --optimizer adam --checkpoint-dir "${ckpt}")
  message(STATUS "2 processes: --zero trains the plain Adam run's model bitwise, also resumed")

  # Interrupted at step 70 and resumed, as is and with --offload-params (the checkpoint loaded into
  # the host parameters): the final model of the uninterrupted run, bitwise.
  foreach(variant plain offload)
    set(flags)
    if(variant STREQUAL "offload")
      set(flags --offload-params)
    endif()
    set(ckpt "${dir}/ckpt_${variant}")
    execute_process(COMMAND ${two} ${flags} --checkpoint-dir "${ckpt}" --checkpoint-every 30
                            --max-steps 70
      RESULT_VARIABLE rc OUTPUT_VARIABLE printed ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "the interrupted 2-process run (${variant}) failed (exit ${rc}):\n${printed}\n${err}")
    endif()
    execute_process(COMMAND ${two} ${flags} --checkpoint-dir "${ckpt}"
                            --save-model "${dir}/resumed_${variant}.safetensors"
      RESULT_VARIABLE rc OUTPUT_VARIABLE printed ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "the resumed 2-process run (${variant}) failed (exit ${rc}):\n${printed}\n${err}")
    endif()
    expect_printed("resumed (${variant})" "${printed}" "[rank 0] resuming from ${ckpt}/step-00000070.safetensors")
    expect_same_file("${dir}/full.safetensors" "${dir}/resumed_${variant}.safetensors"
                     "the resumed 2-process run's final model (${variant}) differs from the uninterrupted one's")
    message(STATUS "2 processes (${variant}): interrupted at step 70 and resumed, the final model is bitwise equal")
  endforeach()
endfunction()

# MODE precision: the MLP trained as in MODE accuracy in f32, bf16 (autocast) and f16 (autocast
#   and GradScaler): each reaches the f32 run's test accuracy within 1 point, and says its
#   precision in the header and the memory report. Then bench/memory_table.sh (-DMEMORY_TABLE)
#   at a CI-sized srnet: every row completes, and the peak allocated training memory of
#   recompute, accumulate 4, bf16 and all together is below the baseline's (exact on the CPU:
#   each removes or halves saved activations). SKIPPED as above.
function(mlp_accuracy precision out)
  set(log "${WORK_DIR}/mlp_${precision}.json")
  file(REMOVE "${log}")
  train_ok(printed --model mlp --epochs 4 --limit-train 6000 --batch-size 64 --lr 0.1 --seed 0
           --device cpu --threads 1 --data "${DATA}" --precision ${precision} --log-json "${log}")
  expect_printed("--precision ${precision}" "${printed}" "(precision ${precision})")
  if(NOT precision STREQUAL "f32")
    expect_printed("--precision ${precision}" "${printed}" "precision: ${precision} (autocast")
  endif()
  file(READ "${log}" json)
  string(JSON accuracy GET "${json}" epochs 3 accuracy)
  set(${out} ${accuracy} PARENT_SCOPE)
endfunction()

function(check_precision)
  file(MAKE_DIRECTORY "${WORK_DIR}")
  mlp_accuracy(f32 f32)
  foreach(precision bf16 f16)
    mlp_accuracy(${precision} accuracy)
    execute_process(COMMAND awk "BEGIN { d = ${accuracy} - ${f32}; exit (d < -0.01 || d > 0.01) }"
                    RESULT_VARIABLE far)
    if(far)
      message(FATAL_ERROR "--precision ${precision}: test accuracy ${accuracy}, f32 ${f32}: "
                          "more than 1 point apart")
    endif()
    message(STATUS "--precision ${precision}: test accuracy ${accuracy} (f32 ${f32})")
  endforeach()

  execute_process(COMMAND bash "${MEMORY_TABLE}" --train "${TRAIN}" --data "${DATA}" --width 32
                          --blocks 2 --batch-size 32 --steps 8 --threads 1
                          --work "${WORK_DIR}/memory_table"
    RESULT_VARIABLE rc OUTPUT_VARIABLE table ERROR_VARIABLE err)
  message("${table}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "bench/memory_table.sh failed (exit code ${rc}):\n${err}")
  endif()
  # "| name | allocated MiB | vs baseline | ..." -> the allocated MiB of each row.
  foreach(row baseline recompute "accumulate 4" bf16 adam8bit "all together")
    string(REGEX MATCH "\\| ${row} \\| ([0-9.]+) \\|" line "${table}")
    if(NOT line)
      message(FATAL_ERROR "the memory table has no row '${row}'")
    endif()
    set(mib_${row} ${CMAKE_MATCH_1})
  endforeach()
  foreach(row recompute "accumulate 4" bf16 "all together")
    execute_process(COMMAND awk "BEGIN { exit !(${mib_${row}} < ${mib_baseline}) }"
                    RESULT_VARIABLE not_below)
    if(not_below)
      message(FATAL_ERROR "memory table: '${row}' peaks at ${mib_${row}} MiB, not below the "
                          "baseline's ${mib_baseline} MiB")
    endif()
  endforeach()
  message(STATUS "memory table: recompute, accumulate 4, bf16 and all together peak below the "
                 "baseline (${mib_baseline} MiB)")
endfunction()

if(MODE STREQUAL "accuracy" OR MODE STREQUAL "resume" OR MODE STREQUAL "srnet" OR
   MODE STREQUAL "distributed" OR MODE STREQUAL "precision" OR MODE STREQUAL "planner" OR
   MODE STREQUAL "observers")
  include("${CMAKE_CURRENT_LIST_DIR}/../../cmake/fashion_mnist_present.cmake")
  fashion_mnist_present("${DATA}" present)
  if(NOT present)
    return()
  endif()
endif()

if(MODE STREQUAL "resume")
  check_resume(sgd TRUE --batch-size 64)
  check_resume(adam_accumulate FALSE --batch-size 32 --accumulate 2 --optimizer adam)
  # f16 from a scale of 2^30: the first steps overflow and are skipped while the scale halves; a
  # resumed run must carry on with the scale and growth tracker the checkpoint saved (starting
  # over at 2^30 would skip those steps again).
  check_resume(adam_f16 FALSE --batch-size 64 --optimizer adam --precision f16
               --init-scale 1073741824)
elseif(MODE STREQUAL "accuracy")
  file(MAKE_DIRECTORY "${WORK_DIR}")
  set(log "${WORK_DIR}/mlp_6000.json")
  file(REMOVE "${log}")
  # One kernel thread: ctest may run other tests beside this one on a small machine.
  execute_process(COMMAND "${TRAIN}" --model mlp --epochs 4 --limit-train 6000 --batch-size 64
                          --lr 0.1 --seed 0 --device cpu --threads 1 --data "${DATA}"
                          --log-json "${log}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "leangrad-train failed (exit code ${rc}):\n${err}")
  endif()
  file(READ "${log}" json)
  string(JSON epochs LENGTH "${json}" epochs)
  math(EXPR last "${epochs} - 1")
  string(JSON accuracy GET "${json}" epochs ${last} accuracy)
  if(NOT epochs EQUAL 4 OR NOT accuracy GREATER_EQUAL 0.75)
    message(FATAL_ERROR "test accuracy ${accuracy} after ${epochs} epochs on 6000 images, "
                        "expected 4 epochs and >= 0.75")
  endif()
  message(STATUS "test accuracy ${accuracy} >= 0.75")
elseif(MODE STREQUAL "srnet")
  check_srnet()
elseif(MODE STREQUAL "distributed")
  check_distributed()
elseif(MODE STREQUAL "precision")
  check_precision()
elseif(MODE STREQUAL "planner")
  check_planner()
elseif(MODE STREQUAL "observers")
  check_observers()
elseif(MODE STREQUAL "errors")
  # --version names the program, the build, the CPU's GEMM library and how OpenMP threads wait; a
  # CUDA build adds a line per CUDA library as the loader finds it (whether found or not) and the
  # GPU count.
  train_ok(version --version)
  expect_printed("--version" "${version}" "leangrad-train ")
  expect_printed("--version" "${version}" "\n  CPU matrix products: ")
  expect_printed("--version" "${version}" "\n  OpenMP threads wait: ")
  check_openmp_spin()
  if(version MATCHES "CUDA: built in")
    foreach(line "\n  cuBLAS: " "\n  cuDNN: " "\n  NCCL: " "\n  GPUs: ")
      expect_printed("--version" "${version}" "${line}")
    endforeach()
  else()
    expect_printed("--version" "${version}" "(CUDA: not built in)")
  endif()
  run_train(2 "--model: nope not in" --model nope)
  run_train(2 "--epochs: expected a number > 0, got '0'" --epochs 0)
  run_train(2 "not expected:" --bogus-option)
  run_train(2 "--lr: expected a number > 0" --lr -1)
  run_train(2 "--workers" --workers -1)
  run_train(2 "--accumulate: expected a number > 0" --accumulate 0)
  run_train(2 "--precision: f8 not in" --precision f8)
  run_train(2 "--limit-test: expected a number > 0" --limit-test 0)
  run_train(2 "--init-scale: expected a number > 0" --init-scale 0)
  run_train(1 "--init-scale: only --precision f16 scales the loss" --init-scale 1024
            --data "${DATA}")
  run_train(2 "--checkpoint-every requires --checkpoint-dir" --checkpoint-every 5)
  run_train(2 "--keep requires --checkpoint-dir" --keep 2)
  run_train(1 "--recompute: only srnet has residual blocks" --model mlp --recompute
            --data "${DATA}")
  run_train(2 "--width: expected a number > 0" --model srnet --width 0)
  run_train(2 "--memory-budget: expected a number > 0, got '0'" --memory-budget 0)
  run_train(2 "--memory-budget: expected a number > 0, got '-5'" --memory-budget -5)
  run_train(2 "--memory-budget: expected a number > 0, got 'inf'" --memory-budget inf)
  run_train(2 "--memory-budget: expected at most 1e9 MiB (a petabyte), got '1e13'" --memory-budget 1e13)
  run_train(2 "--threads: Value 100000 not in range" --threads 100000)
  run_train(2 "--memory-budget: expected a number > 0, got 'lots'" --memory-budget lots)
  run_train(2 "--recompute excludes --memory-budget" --model srnet --memory-budget 100 --recompute)
  run_train(2 "--save-on-cpu excludes --memory-budget" --model srnet --memory-budget 100
            --save-on-cpu)
  run_train(1 "--memory-budget: only srnet has residual blocks" --model mlp --memory-budget 100
            --data "${DATA}")
  run_train(2 "--prefetch" --prefetch 0)
  run_train(2 "--seed: expected a whole number from 0 to 18446744073709551615, got '-1'" --seed -1)
  run_train(2 "got '18446744073709551616'" --seed 18446744073709551616)
  run_train(2 "got '3x'" --seed 3x)
  run_train(1 "FashionMNIST: neither" --data "${WORK_DIR}/no-such-folder" --device cpu)
  # An empty split has no loss or score to report (tests/data/idx/make_idx.py wrote the folders).
  set(idx "${CMAKE_CURRENT_LIST_DIR}/../data/idx")
  run_train(1 "the training split has no images" --data "${idx}/empty-train" --device cpu)
  run_train(1 "the test split has no images" --data "${idx}/empty-test" --device cpu)
  # Outputs that cannot be written fail at start, before any data is read or step is run.
  file(WRITE "${WORK_DIR}/a-file" "x")
  run_train(1 "--save-model: cannot write '${WORK_DIR}/no-such-folder/model.safetensors'"
            --save-model "${WORK_DIR}/no-such-folder/model.safetensors" --data "${WORK_DIR}/none")
  run_train(1 "--log-json: cannot write" --log-json "${WORK_DIR}/a-file/log.json")
  # Two outputs in one file, however spelled, are refused before anything runs (the later writer
  # would replace the other's contents).
  run_train(2 "--log-jsonl: '${WORK_DIR}/same.json' is the file of --log-json too"
            --log-json "${WORK_DIR}/same.json" --log-jsonl "${WORK_DIR}/same.json")
  run_train(2 "--memory-timeline: '${WORK_DIR}/x.json' is the file of --profile too"
            --profile "${WORK_DIR}/no-such-folder/../x.json" --memory-timeline "${WORK_DIR}/x.json")
  run_train(1 "--checkpoint-dir: cannot create '${WORK_DIR}/a-file/ckpt'"
            --checkpoint-dir "${WORK_DIR}/a-file/ckpt")
else()
  message(FATAL_ERROR "test_train_cli.cmake: unknown MODE '${MODE}'")
endif()
