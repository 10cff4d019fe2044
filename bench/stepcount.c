// stepcount: counts the instructions a program executes between two SIGUSR1 it raises itself, by
// single-stepping it with ptrace, and writes "address count" per executed instruction address.
// perf has no hardware counters on this project's virtual machines and valgrind cannot decode
// AVX-512, so this is how docs/performance.md counts P1's AVX-512 step (see there). Single-threaded
// programs only (OMP_NUM_THREADS=1); build the program with -no-pie so addresses match objdump.
//
// usage: cc -O2 bench/stepcount.c -o stepcount && ./stepcount OUT.txt program args...
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define SLOTS (1u << 22)
static uint64_t key[SLOTS], cnt[SLOTS];

static void add(uint64_t a) {
  uint32_t h = (uint32_t)((a * 0x9E3779B97F4A7C15ull) >> 42) & (SLOTS - 1);
  while (key[h] && key[h] != a) h = (h + 1) & (SLOTS - 1);
  key[h] = a;
  ++cnt[h];
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: stepcount OUT program args...\n");
    return 2;
  }
  pid_t pid = fork();
  if (pid == 0) {
    ptrace(PTRACE_TRACEME, 0, 0, 0);
    execvp(argv[2], argv + 2);
    _exit(127);
  }
  int st, phase = 0;  // 0: before the first SIGUSR1, 1: counting, 2: after the second
  uint64_t total = 0;
  waitpid(pid, &st, 0);  // the stop at exec
  for (;;) {
    ptrace(phase == 1 ? PTRACE_SINGLESTEP : PTRACE_CONT, pid, 0, 0);
    if (waitpid(pid, &st, 0) < 0 || WIFEXITED(st) || WIFSIGNALED(st)) break;
    if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGUSR1) {
      ++phase;  // the signal is swallowed: the next resume passes 0
      continue;
    }
    if (WIFSTOPPED(st) && WSTOPSIG(st) != SIGTRAP) {
      fprintf(stderr, "stepcount: stopped by signal %d\n", WSTOPSIG(st));
      break;
    }
    if (phase == 1) {
      struct user_regs_struct r;
      ptrace(PTRACE_GETREGS, pid, 0, &r);
      add(r.rip);
      ++total;
    }
  }
  FILE* f = fopen(argv[1], "w");
  for (uint32_t i = 0; i < SLOTS; ++i)
    if (key[i]) fprintf(f, "%lx %lu\n", (unsigned long)key[i], (unsigned long)cnt[i]);
  fclose(f);
  fprintf(stderr, "stepcount: %lu instructions\n", (unsigned long)total);
  return 0;
}
