# Fails unless the text of one file appears, whole and verbatim, inside another: the README quotes
# examples/train_mlp.cpp, and this keeps the quote and the compiled program the same.
# Used as:  cmake -DDOCUMENT=README.md -DQUOTED=examples/train_mlp.cpp -P check_quoted_verbatim.cmake
file(READ "${DOCUMENT}" document)
file(READ "${QUOTED}" quoted)
string(FIND "${document}" "${quoted}" position)
if(position EQUAL -1)
  message(FATAL_ERROR "${DOCUMENT} does not show ${QUOTED} verbatim: copy the file's whole text "
                      "into its ```cpp block")
endif()
message(STATUS "${DOCUMENT} shows ${QUOTED} verbatim")
