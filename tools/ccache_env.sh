# ccache settings for leangrad's builds, sourced by tools/bootstrap.sh and tools/sanitize.sh
# (a variable already set is kept). ccache keys on paths relative to the checkout, and not on the
# build folder's path (the sanitizer builds carry line tables), so two checkouts of one commit
# share the cache: a copy of the tree in another folder, as CI makes, compiles nothing this
# machine compiled already. The sloppiness lets it cache the test files built with the suite's
# precompiled header (tests/CMakeLists.txt).
#   source tools/ccache_env.sh ROOT
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$1}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-true}"
export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}"
