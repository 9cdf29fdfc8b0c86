/* crash-backtrace.c: an LD_PRELOAD library for the lent GPU host, which
 * has no debugger: a process that gets SIGSEGV, SIGBUS or SIGFPE writes
 * its thread's stack (glibc's backtrace_symbols_fd ()) to stderr, then
 * dies of the signal as it would have. scripts/gpu-pack builds it into
 * the pack; scripts/gpu-check preloads it for the suite, so that a crash
 * seen once leaves where it happened in the test log.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void
on_crash (int sig, siginfo_t *info, void *context)
{
  void *frames[64];
  char line[128];
  int n = backtrace (frames, 64);
  int len = snprintf (line, sizeof line, "\n*** %s at %p, thread %d; its stack:\n", strsignal (sig),
                      info->si_addr, (int) gettid ());
  if (len > 0)
    (void) write (STDERR_FILENO, line, (size_t) len);
  backtrace_symbols_fd (frames, n, STDERR_FILENO);
  signal (sig, SIG_DFL);
  raise (sig);
}

__attribute__ ((constructor)) static void
install (void)
{
  static const int signals[] = { SIGSEGV, SIGBUS, SIGFPE };
  struct sigaction sa;
  memset (&sa, 0, sizeof sa);
  sa.sa_sigaction = on_crash;
  sa.sa_flags = SA_SIGINFO;
  for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
    {
      struct sigaction old;
      /* Leave a handler the program installed (or inherited) alone. */
      if (sigaction (signals[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
        sigaction (signals[i], &sa, NULL);
    }
}
