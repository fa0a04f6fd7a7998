# ctest driver for example_train_mlp (examples/train_mlp.cpp), run as
#   cmake -DPROGRAM=<example_train_mlp> -DDATA=<fashion-mnist folder> -DMIN_ACCURACY=<percent> -P
# Runs one epoch and fails unless the program exits 0 and prints "epoch 1: test accuracy N%" with
# N >= MIN_ACCURACY. Prints "SKIPPED:" (the test's SKIP_REGULAR_EXPRESSION: a -P script cannot
# choose its exit code) when the dataset is not installed.
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/fashion_mnist_present.cmake")
fashion_mnist_present("${DATA}" present)
if(NOT present)
  return()
endif()

execute_process(COMMAND "${PROGRAM}" "${DATA}" 1
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "example_train_mlp failed (exit code ${rc}):\n${err}")
endif()
if(NOT out MATCHES "epoch 1: test accuracy ([0-9.]+)%")
  message(FATAL_ERROR "example_train_mlp printed no 'epoch 1: test accuracy N%' line")
endif()
set(accuracy "${CMAKE_MATCH_1}")
if(accuracy LESS MIN_ACCURACY)
  message(FATAL_ERROR "test accuracy ${accuracy}% after one epoch, expected >= ${MIN_ACCURACY}%")
endif()
message(STATUS "test accuracy ${accuracy}% >= ${MIN_ACCURACY}%")
