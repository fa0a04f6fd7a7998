# For ctest drivers run with cmake -P: fashion_mnist_present(DIR out) sets `out` to TRUE when DIR
# holds the four Fashion-MNIST IDX files (gzipped or not); otherwise to FALSE after printing
# "SKIPPED: ..." (the tests' SKIP_REGULAR_EXPRESSION: a -P script cannot choose its exit code).
function(fashion_mnist_present dir out)
  foreach(name train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte
               t10k-labels-idx1-ubyte)
    if(NOT EXISTS "${dir}/${name}" AND NOT EXISTS "${dir}/${name}.gz")
      message("SKIPPED: Fashion-MNIST not installed in ${dir} "
              "(apt-get install dataset-fashion-mnist)")
      set(${out} FALSE PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} TRUE PARENT_SCOPE)
endfunction()
