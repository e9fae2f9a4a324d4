/* gil-lab's GIL trace: every hand-off of the GIL, recorded with a monotonic clock.
 *
 * Included once, by the file that takes and drops the GIL (2.7's ceval.c, 3.9's ceval_gil.h,
 * 3.13's ceval_gil.c), through the patches of patches/gil-trace/.  Nothing here changes what the
 * GIL does: each hook records one event and returns.
 *
 * Off unless the environment names a file:
 *   GILLAB_GIL_TRACE=<path>       write the trace there at exit, on SIGTERM, or when the window
 *                                 closes (whichever comes first; once); a "%p" in it stands for
 *                                 the process id, so that a child process started with exec
 *                                 (which inherits the variable) writes a file of its own
 *   GILLAB_GIL_TRACE_WINDOW=a,b   record only from a ms to a+b ms after the first event, then
 *                                 write the file (optional: without it, the whole run)
 *   GILLAB_GIL_TRACE_EVENTS=n     the ring's size (default 1048576 events of 16 bytes); when
 *                                 more happen, the oldest are overwritten and counted as lost
 * A forked child records nothing (its parent's file is its parent's).
 *
 * The file (little-endian on the machines gil-lab runs on): a 64-byte header
 *   char magic[8] = "GILTRACE"; uint32 version = 1; uint32 implementation (1 old GIL, 2 new GIL,
 *   3 nogil fork with its GIL on, 4 3.13's GIL); uint64 t0_ns (the first event's clock);
 *   uint64 events (in the file); uint64 lost; uint64 pid; uint64 interval (the switch interval
 *   in microseconds, or 2.7's check interval in ticks, when the file is written);
 *   uint32 reason (1 exit, 2 SIGTERM, 3 window closed); uint32 ppid (the parent's process id)
 * then the events, oldest first, 16 bytes each:
 *   uint64 t_ns (CLOCK_MONOTONIC, as time.monotonic_ns()); uint32 tid (the kernel's thread id,
 *   the process id for the main thread); uint8 event (0: a slot still being written when the
 *   file was, left out by the reader); uint8[3] reserved.
 */
#ifndef GILLAB_GIL_TRACE_H
#define GILLAB_GIL_TRACE_H

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define GILLAB_EV_WANT 1          /* a thread asks for the GIL */
#define GILLAB_EV_TAKE 2          /* ... and now holds it */
#define GILLAB_EV_DROP 3          /* the holder lets it go of its own accord (a blocking call) */
#define GILLAB_EV_REQUEST 4       /* a waiter timed out and asks the holder to drop (new GIL) */
#define GILLAB_EV_DROP_FORCED 5   /* the holder drops because it was asked to (new GIL) */
#define GILLAB_EV_DROP_TICKS 6    /* the holder drops at its check interval (old GIL) */

#define GILLAB_REASON_EXIT 1
#define GILLAB_REASON_SIGTERM 2
#define GILLAB_REASON_WINDOW 3

typedef struct {
    uint64_t t_ns;
    uint32_t tid;
    uint8_t event;
    uint8_t reserved[3];
} gillab_event;

static pthread_once_t gillab_once = PTHREAD_ONCE_INIT;
static int gillab_on = 0;                 /* 1 while recording */
static int gillab_written = 0;            /* set once, by whoever writes the file */
static char gillab_path[4096];
static gillab_event *gillab_ring = NULL;
static uint64_t gillab_capacity = 0;
static uint64_t gillab_next = 0;          /* events recorded so far (the ring's write index) */
static uint64_t gillab_done = 0;          /* events whose slot is written whole */
static uint64_t gillab_t0 = 0, gillab_from = 0, gillab_until = 0;
static const unsigned long *gillab_interval_us = NULL;
static const int *gillab_interval_ticks = NULL;
static uint32_t gillab_impl = 0;

static uint64_t
gillab_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
gillab_put(char *buf, size_t *at, const void *src, size_t n)
{
    memcpy(buf + *at, src, n);
    *at += n;
}

/* Write the file: only open, write and close, so that the SIGTERM handler may call it. */
static void
gillab_write(uint32_t reason)
{
    if (__atomic_exchange_n(&gillab_written, 1, __ATOMIC_ACQ_REL)) {
        return;
    }
    __atomic_store_n(&gillab_on, 0, __ATOMIC_RELEASE);
    uint64_t n = __atomic_load_n(&gillab_next, __ATOMIC_ACQUIRE);
    /* let the threads that took a slot before this finish writing it; bounded, for the one
       this signal may have interrupted in the middle of its own (its slot stays unwritten: the
       reader leaves out a slot whose event is 0) */
    for (long spin = 0; spin < 50000000L && __atomic_load_n(&gillab_done, __ATOMIC_ACQUIRE) < n; spin++) {
    }
    uint64_t kept = n < gillab_capacity ? n : gillab_capacity;
    uint64_t lost = n - kept, pid = (uint64_t)getpid(), interval = 0;
    uint32_t version = 1, ppid = (uint32_t)getppid();
    if (gillab_interval_us) {
        interval = (uint64_t)*gillab_interval_us;
    }
    else if (gillab_interval_ticks) {
        interval = (uint64_t)*gillab_interval_ticks;
    }
    char head[64];
    size_t at = 0;
    gillab_put(head, &at, "GILTRACE", 8);
    gillab_put(head, &at, &version, 4);
    gillab_put(head, &at, &gillab_impl, 4);
    gillab_put(head, &at, &gillab_t0, 8);
    gillab_put(head, &at, &kept, 8);
    gillab_put(head, &at, &lost, 8);
    gillab_put(head, &at, &pid, 8);
    gillab_put(head, &at, &interval, 8);
    gillab_put(head, &at, &reason, 4);
    gillab_put(head, &at, &ppid, 4);
    int fd = open(gillab_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        return;
    }
    ssize_t ignored = write(fd, head, sizeof head);
    uint64_t first = n - kept;
    while (kept > 0) {                    /* oldest first: the ring may wrap once */
        uint64_t slot = first % gillab_capacity;
        uint64_t run = gillab_capacity - slot < kept ? gillab_capacity - slot : kept;
        ignored = write(fd, gillab_ring + slot, (size_t)(run * sizeof(gillab_event)));
        first += run;
        kept -= run;
    }
    (void)ignored;
    close(fd);
}

static void
gillab_at_exit(void)
{
    gillab_write(GILLAB_REASON_EXIT);
}

static void
gillab_on_sigterm(int signum)
{
    gillab_write(GILLAB_REASON_SIGTERM);
    signal(signum, SIG_DFL);
    raise(signum);
}

static void
gillab_in_child(void)
{
    gillab_on = 0;
    gillab_written = 1;
}

static void
gillab_init(void)
{
    const char *path = getenv("GILLAB_GIL_TRACE");
    if (path == NULL || path[0] == '\0') {
        return;
    }
    const char *mark = strstr(path, "%p");
    int room = mark ? snprintf(gillab_path, sizeof gillab_path, "%.*s%ld%s", (int)(mark - path), path,
                               (long)getpid(), mark + 2)
                    : snprintf(gillab_path, sizeof gillab_path, "%s", path);
    if (room < 0 || (size_t)room >= sizeof gillab_path) {
        return;
    }
    const char *size = getenv("GILLAB_GIL_TRACE_EVENTS");
    gillab_capacity = size ? strtoull(size, NULL, 10) : 0;
    if (gillab_capacity == 0) {
        gillab_capacity = 1u << 20;
    }
    gillab_ring = (gillab_event *)calloc((size_t)gillab_capacity, sizeof(gillab_event));
    if (gillab_ring == NULL) {
        return;
    }
    gillab_t0 = gillab_now();
    gillab_until = UINT64_MAX;
    const char *window = getenv("GILLAB_GIL_TRACE_WINDOW");
    if (window != NULL && window[0] != '\0') {
        char *rest = NULL;
        double from_ms = strtod(window, &rest), length_ms = -1;
        if (rest && *rest == ',') {
            length_ms = strtod(rest + 1, NULL);
        }
        gillab_from = gillab_t0 + (uint64_t)(from_ms * 1e6);
        if (length_ms > 0) {
            gillab_until = gillab_from + (uint64_t)(length_ms * 1e6);
        }
    }
    struct sigaction old;
    if (sigaction(SIGTERM, NULL, &old) == 0 && old.sa_handler == SIG_DFL) {
        struct sigaction act;
        memset(&act, 0, sizeof act);
        act.sa_handler = gillab_on_sigterm;
        sigemptyset(&act.sa_mask);
        sigaction(SIGTERM, &act, NULL);
    }
    pthread_atfork(NULL, NULL, gillab_in_child);
    atexit(gillab_at_exit);
    gillab_on = 1;
}

static void
gillab_trace(int event)
{
    pthread_once(&gillab_once, gillab_init);
    if (!__atomic_load_n(&gillab_on, __ATOMIC_ACQUIRE)) {
        return;
    }
    uint64_t now = gillab_now();
    if (now < gillab_from) {
        return;
    }
    if (now > gillab_until) {
        gillab_write(GILLAB_REASON_WINDOW);
        return;
    }
    uint64_t i = __atomic_fetch_add(&gillab_next, 1, __ATOMIC_ACQ_REL);
    gillab_event *e = &gillab_ring[i % gillab_capacity];
    e->event = 0;                         /* unfinished until the last store below */
    e->t_ns = now;
    e->tid = (uint32_t)syscall(SYS_gettid);
    __atomic_store_n(&e->event, (uint8_t)event, __ATOMIC_RELEASE);
    __atomic_fetch_add(&gillab_done, 1, __ATOMIC_ACQ_REL);
}

#endif /* GILLAB_GIL_TRACE_H */
