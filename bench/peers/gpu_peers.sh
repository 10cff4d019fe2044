#!/usr/bin/env bash
# The Python peers on a GPU machine: cases P1 and P7 of bench/cuda_suite.cu (ULA, 10-d Gaussian,
# step 0.1; P1 10^4 chains x 100 steps, P7 10^3 ... 10^7 chains x 1,000 steps) for torch-eager,
# torch-compile, torchebm, blackjax and jax (bench/peers/gpu_sweep.py), each impl its own python
# process under `timeout`, one after the other, with the machine's own torch/jax.
#
# usage: bench/peers/gpu_peers.sh OUT.jsonl [args for every peer, e.g. --quick or --repeats 3]
#   JSON lines go to OUT.jsonl (a line {"impl", "error"} for a peer that failed or timed out),
#   each peer's stderr to OUT.jsonl.<impl>.err, and a table to stdout at the end.
#   Whole set on an H100: about 150 s at most (per-impl --deadline below, 150 s in all; a chain
#   count predicted to end past it is skipped, and `timeout` kills a peer 30 s after it; a
#   --deadline S among the args overrides it for every peer).
# env: PYTHON (python3), IMPLS (all five, in this order), EMBER_TORCH_DEVICE (cuda),
#   EMBER_JAX_DEVICE (gpu): set both to cpu to try it on a machine without a GPU.
# If the repository root has a directory .whl, its wheels (torchebm, blackjax: pure Python) are
# installed first into /tmp/site with --no-deps and put on PYTHONPATH; torch, jax and numpy stay
# the machine's own.
set -uo pipefail
out=${1:?usage: bench/peers/gpu_peers.sh OUT.jsonl [peer args...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py=${PYTHON:-python3}
case $out in /*) ;; *) out=$PWD/$out ;; esac
mkdir -p "$(dirname "$out")"
: >"$out"

cd "$root" || exit 1
if [ -d .whl ] && compgen -G '.whl/*.whl' >/dev/null; then
    if "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl; then
        export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
        echo "gpu_peers: installed" .whl/*.whl "into /tmp/site" >&2
    else
        echo "gpu_peers: installing .whl/*.whl failed; going on without them" >&2
    fi
fi

export EMBER_TORCH_DEVICE=${EMBER_TORCH_DEVICE:-cuda} EMBER_JAX_DEVICE=${EMBER_JAX_DEVICE:-gpu}
ncpu=$(nproc 2>/dev/null || echo 1)
export EMBER_BENCH_CPUS=${EMBER_BENCH_CPUS:-$(seq -s, 0 $((ncpu - 1)))}
export EMBER_BENCH_THREADS=${EMBER_BENCH_THREADS:-$ncpu}
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
# JAX: no CPU-only settings from a CPU benchmark's environment (bench/peers/env.sh)
[ "$EMBER_JAX_DEVICE" = cpu ] || unset JAX_PLATFORMS XLA_FLAGS

# impl -> script, extra args, deadline (s after the process starts; the counts that would end
# later are skipped)
declare -A cmd=(
    [torch-eager]="torch_eager.py --sweep"
    [torch-compile]="torch_compile.py --block 5"
    [torchebm]="torchebm_peer.py --sweep"
    [blackjax]="blackjax_peer.py --sweep --impl blackjax"
    [jax]="blackjax_peer.py --sweep --impl jax"
)
declare -A deadline=([torch-eager]=25 [torch-compile]=60 [torchebm]=30 [blackjax]=30 [jax]=25)
impls=${IMPLS:-torch-eager torch-compile torchebm blackjax jax}
# A --deadline among the args is every peer's, and its kill timer's too.
deadline_override=
prev=
for a in "$@"; do
    [ "$prev" = --deadline ] && deadline_override=$a
    prev=$a
done

t_all=$(date +%s)
for impl in $impls; do
    [ -n "${cmd[$impl]:-}" ] || { echo "gpu_peers: unknown impl $impl" >&2; continue; }
    dl=${deadline_override:-${deadline[$impl]}}
    err="$out.$impl.err"
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    timeout -k 5 $((dl + 30)) "$py" "$here/"${cmd[$impl]} --deadline "$dl" "$@" >"$out.$impl.tmp" 2>"$err"
    rc=$?
    secs=$(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $t0 }")
    grep '^{' "$out.$impl.tmp" >>"$out"
    n=$(grep -c '^{' "$out.$impl.tmp")
    rm -f "$out.$impl.tmp"
    if [ $rc -ne 0 ] && [ "$n" -eq 0 ] || [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        why="exited with rc $rc"
        [ $rc -eq 124 ] || [ $rc -eq 137 ] && why="killed by timeout after $((dl + 30)) s"
        "$py" -c 'import json, sys; print(json.dumps({"impl": sys.argv[1], "error": sys.argv[2], "stderr_tail": sys.argv[3]}))' \
            "$impl" "$why after $n lines: $(grep -v '^\s*$' "$err" | tail -n 1 | cut -c1-200)" \
            "$(tail -c 600 "$err")" >>"$out"
    fi
    echo "gpu_peers: $impl: rc $rc, $secs s, $n lines" >&2
done
echo "gpu_peers: all peers in $(( $(date +%s) - t_all )) s" >&2

"$py" - "$out" <<'PY'
import json, sys
rows = []
for raw in open(sys.argv[1]):
    try:
        rows.append(json.loads(raw))
    except ValueError:
        pass
print(f"{'case':4} {'chains':>10} {'steps':>5}  {'impl':13} {'seconds':>9} {'chain-steps/s':>13} "
      f"{'compile s':>9}  check  device")
for r in rows:
    head = f"{r.get('case', '-'):4} {r.get('chains', 0):>10,} {r.get('steps', 0):>5}  {r['impl']:13}"
    if "seconds" in r:
        c = r.get("compile_seconds")
        print(f"{head} {r['seconds']:9.4g} {r['chain_steps_per_s']:13.4g} "
              f"{'' if c is None else format(c, '.3g'):>9}  {'ok' if r['check'].get('ok') else 'FAIL':5}  "
              f"{r.get('device', '')}")
    else:
        print(f"{head} {'skipped: ' + r['skipped'] if 'skipped' in r else 'error: ' + str(r.get('error'))}"[:200])
PY
