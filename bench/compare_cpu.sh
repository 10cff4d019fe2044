#!/usr/bin/env bash
# CPU comparison of ember against PyTorch (eager), torchebm and BlackJAX.
#
#   bash bench/compare_cpu.sh [--quick] [--cases P1,P2,...] [--impls LIST]
#                             [--repeats N] [--out FILE] [--no-build] [--no-install]
#
# 1. creates bench/.venv (if missing) and installs the pinned Python peers
#    (bench/peers/requirements.txt, torch CPU-only via bench/peers/torch_cpu_deps.py);
# 2. builds ember's benchmark binary build-bench/bench/ember_cpu_bench
#    (a warning, not an error, when it is absent or fails to build);
# 3. case by case, runs ember (`ember_cpu_bench --case Pn`) and then every
#    Python peer, one process per (case, implementation), back to back,
#    pinned to 2 cores with 2 threads, printing one JSON line per
#    (case, implementation) on stdout;
# 4. prints the ratio table (lines starting with '#') after the JSON lines.
# Progress and warnings go to stderr.  Exit status 1 if a check failed or a
# peer crashed; a missing ember binary alone does not fail the run.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 2

QUICK=0
CASES="P1,P2,P3,P4,P5,P6"
IMPLS="ember,torch-eager,torchebm,blackjax"
REPEATS=""
OUT=""
BUILD=1
INSTALL=1
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --cases) CASES="$2"; shift ;;
        --cases=*) CASES="${1#*=}" ;;
        --impls) IMPLS="$2"; shift ;;
        --impls=*) IMPLS="${1#*=}" ;;
        --repeats) REPEATS="$2"; shift ;;
        --repeats=*) REPEATS="${1#*=}" ;;
        --out) OUT="$2"; shift ;;
        --out=*) OUT="${1#*=}" ;;
        --no-build) BUILD=0 ;;
        --no-install) INSTALL=0 ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) echo "compare_cpu.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done

log() { echo "[compare_cpu] $*" >&2; }
warn() { echo "[compare_cpu] WARNING: $*" >&2; }
has_impl() { case ",$IMPLS," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
T_START=$(date +%s)

# ---------------------------------------------------------------- threads/cores, virtualenv
source "$ROOT/bench/peers/env.sh"
pin_to_two_cores
log "pinning to cpus $CPUS with $NTHREADS threads"

PEERS_OK=1
if [ "$INSTALL" = 1 ]; then
    setup_venv "$ROOT/bench/peers/requirements.txt" .ember-peers-installed \
        "import torch, torchebm, jax, jaxlib, blackjax, numpy, scipy, optax" \
        "$ROOT/bench/peers/torch_cpu_deps.py" || PEERS_OK=0
elif [ ! -x "$VPY" ]; then
    warn "--no-install given but $VPY is missing"; PEERS_OK=0
fi

# ---------------------------------------------------------------- output file
if [ -z "$OUT" ]; then
    OUT="$(mktemp "${TMPDIR:-/tmp}/ember-compare-cpu.XXXXXX.jsonl")"
else
    : > "$OUT"
fi
log "JSON lines are also written to $OUT"
STATUS=0

# ---------------------------------------------------------------- ember build
EMBER_BIN="$ROOT/build-bench/bench/ember_cpu_bench"
HAVE_EMBER=0
if has_impl ember; then
    if [ "$BUILD" = 1 ]; then
        t0=$(date +%s)
        log "building ember_cpu_bench (cmake, Release)"
        if cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >&2 \
            && cmake --build build-bench --target ember_cpu_bench -j2 >&2; then
            log "built in $(( $(date +%s) - t0 )) s"
        else
            warn "building ember_cpu_bench failed; going on without ember"
        fi
    fi
    if [ -x "$EMBER_BIN" ]; then
        HAVE_EMBER=1
    else
        warn "no ember binary at build-bench/bench/ember_cpu_bench; ember lines are missing and ratios are n/a"
    fi
fi
EMBER_ARGS=()
[ "$QUICK" = 1 ] && EMBER_ARGS+=(--quick)
[ -n "$REPEATS" ] && EMBER_ARGS+=(--repeats "$REPEATS")

run_ember() {  # $1 = case; JSON lines to stdout and $OUT, anything else to stderr
    local c="$1" rc
    log "running: ${PIN[*]} build-bench/bench/ember_cpu_bench --case $c ${EMBER_ARGS[*]}"
    "${PIN[@]}" "$EMBER_BIN" --case "$c" "${EMBER_ARGS[@]}" 2> >(sed 's/^/[ember] /' >&2) \
        | while IFS= read -r line; do
            case "$line" in
                "{"*) printf '%s\n' "$line" | tee -a "$OUT" ;;
                *) printf '[ember] %s\n' "$line" >&2 ;;
            esac
        done
    rc=${PIPESTATUS[0]}
    if [ "$rc" != 0 ]; then
        warn "$c ember_cpu_bench: exit status $rc (failed check or error; see its JSON line)"
        STATUS=1
    fi
}

# ---------------------------------------------------------------- run, case by case
declare -A SCRIPT=([torch-eager]=torch_eager.py [torchebm]=torchebm_peer.py [blackjax]=blackjax_peer.py)
PEER_ARGS=()
[ "$QUICK" = 1 ] && PEER_ARGS+=(--quick)
[ -n "$REPEATS" ] && PEER_ARGS+=(--repeats "$REPEATS")
[ "$PEERS_OK" = 1 ] || { warn "Python peers not run (virtualenv setup failed)"; STATUS=1; }
IFS=',' read -r -a CASE_LIST <<< "$CASES"
for c in "${CASE_LIST[@]}"; do
    [ "$HAVE_EMBER" = 1 ] && run_ember "$c"
    [ "$PEERS_OK" = 1 ] || continue
    for impl in torch-eager torchebm blackjax; do
        has_impl "$impl" || continue
        t0=$(date +%s)
        "${PIN[@]}" "$VPY" "$ROOT/bench/peers/${SCRIPT[$impl]}" --case "$c" "${PEER_ARGS[@]}" \
            | tee -a "$OUT"
        rc=${PIPESTATUS[0]}
        log "$c $impl: $(( $(date +%s) - t0 )) s wall (process, imports included)"
        if [ "$rc" != 0 ]; then
            warn "$c $impl: exit status $rc (failed check or error; see its JSON line)"
            STATUS=1
        fi
    done
done

# ---------------------------------------------------------------- ratios
RPY="$VPY"; [ -x "$RPY" ] || RPY="${PYTHON:-python3}"
"$RPY" "$ROOT/bench/peers/ratios.py" --baseline ember-simd "$OUT"
log "total $(( $(date +%s) - T_START )) s; JSON lines in $OUT"
exit $STATUS
