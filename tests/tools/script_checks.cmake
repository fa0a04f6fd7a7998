# Checks shared by the test scripts run with cmake -P (test_train_cli.cmake,
# test_plot_scripts.cmake): include() it.

# Fails unless `text` contains `expected`, naming `what` and showing the text.
function(expect_printed what text expected)
  string(FIND "${text}" "${expected}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "${what}: the output does not say '${expected}':\n${text}")
  endif()
endfunction()
