/* accel-bench-crash.c: a backtrace on stderr when a benchmark crashes.
 *
 * Benchmarks run on lent machines where a debugger may not be at hand; a
 * crash there should still say where it happened. The frames are printed
 * as glibc's backtrace_symbols_fd() gives them (object, symbol or offset),
 * which `addr2line -e OBJECT OFFSET` resolves against the same build.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "accel-bench.h"

static void
crash_report (int signum)
{
  void *frames[64];
  /* Only async-signal-safe calls from here on. */
  static const char head[] = "accel-bench: crashed; backtrace:\n";
  if (write (STDERR_FILENO, head, sizeof head - 1) < 0)
    _exit (128 + signum);
  int n = backtrace (frames, G_N_ELEMENTS (frames));
  backtrace_symbols_fd (frames, n, STDERR_FILENO);
  /* The default action, with the handler gone (SA_RESETHAND). */
  raise (signum);
}

void
accel_bench_install_crash_report (void)
{
  struct sigaction action;
  void *warm[1];

  /* backtrace() loads libgcc on first use: do it now, not in the handler. */
  backtrace (warm, 1);
  memset (&action, 0, sizeof action);
  action.sa_handler = crash_report;
  action.sa_flags = SA_RESETHAND | SA_NODEFER;
  sigemptyset (&action.sa_mask);
  for (const int *s = (const int[]) { SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE, 0 }; *s; s++)
    sigaction (*s, &action, NULL);
}
