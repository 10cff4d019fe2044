#!/bin/sh
# g++ user+system seconds of bench/matrix/hana_product_cost.cpp in its four forms (best of 3),
# and the number of configurations each instantiated. Usage: bench/matrix/hana_product_cost.sh [g++]
cxx=${1:-g++}
src=$(dirname "$0")/hana_product_cost.cpp
out=$(mktemp -d)
for v in BASELINE PRODUCT_HANA PRODUCT_NESTED PRODUCT_INDEX; do
  : >"$out/all"
  for rep in 1 2 3; do
    /usr/bin/time -f "%U %S" -o "$out/t" "$cxx" -std=c++20 -O2 -D$v -c "$src" -o "$out/o.o"
    awk '{print $1 + $2}' "$out/t" >>"$out/all"
  done
  best=$(sort -n "$out/all" | head -1)
  n=$(nm -C "$out/o.o" | grep -c " measure<")
  echo "$v: ${best} s, $n configurations"
done
rm -rf "$out"
