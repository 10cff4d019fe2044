#!/bin/sh
# Compiler launcher of ember_add_benchmark_matrix: runs the compile command "$@" under
# /usr/bin/time and writes "user system" CPU seconds to <dir>/<source file name>.time, which the
# matrix prints as that configuration's compile time. Without /usr/bin/time it only compiles.
dir=$1
shift
src=
prev=
for a in "$@"; do
  [ "$prev" = "-c" ] && src=$a
  prev=$a
done
if [ -n "$src" ] && [ -x /usr/bin/time ]; then
  exec /usr/bin/time -f "%U %S" -o "$dir/$(basename "$src").time" "$@"
fi
exec "$@"
