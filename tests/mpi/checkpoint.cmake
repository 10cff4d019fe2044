# ctest's mpi_checkpoint: per-rank checkpoints through mpi_runs, then the .npz layouts in Python.
# -DMPIEXEC -DNP_FLAG -DRUNS (mpi_runs) -DDIR (scratch) -DPYTHON -DSOURCE (ember's tree)
file(REMOVE_RECURSE ${DIR} ${DIR}-later)
function(step expect)
  execute_process(COMMAND ${MPIEXEC} --oversubscribe ${NP_FLAG} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${ARGN} failed (${rc}):\n${err}")
  endif()
endfunction()
step(0 2 ${RUNS} checkpoint ${DIR} save)
step(0 2 ${RUNS} checkpoint ${DIR} resume)
step(0 3 ${RUNS} refused ${DIR} "was saved by 2 ranks and this job has 3")
# The per-rank .npz files of the resumed run against the gathered one.
execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${SOURCE}/python
                        ${PYTHON} ${SOURCE}/tests/mpi/npz_merge_check.py ${DIR}/gathered.npz ${DIR}/split.rank0-of-2.npz
                        ${DIR}/split.rank1-of-2.npz
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "npz_merge_check.py failed (${rc})")
endif()
# A rank file from another save of the run (transition 160) in place of this save's.
step(0 2 ${RUNS} checkpoint ${DIR}-later save-later)
file(COPY_FILE ${DIR}-later/rank1-of-2.t160.ckpt ${DIR}/rank1-of-2.t150.ckpt)
step(0 2 ${RUNS} refused ${DIR} "is at transition 160 but the manifest says 150")
file(REMOVE ${DIR}/rank1-of-2.t150.ckpt)
step(0 2 ${RUNS} refused ${DIR} "rank 1's file")
