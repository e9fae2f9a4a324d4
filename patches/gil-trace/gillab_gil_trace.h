/* gil-lab's GIL trace: every hand-off of the GIL, recorded with a monotonic clock.
 *
 * Included once, by the file that takes and drops the GIL (2.7's ceval.c, 3.9's ceval_gil.h,
 * 3.13's ceval_gil.c), through the patches of patches/gil-trace/.  Nothing here changes what the
 * GIL does, and the recorder keeps out of its way (version 2):
 *   - no event is recorded while a thread holds a GIL mutex: inside one, a hook only reads the
 *     clock into a local (gillab_stamp, a vDSO call); the event is recorded after the unlock;
 *   - 2.7's check-interval hand-off has nothing between its release and its acquire: the
 *     release's time is read before it, the three events recorded after the acquire;
 *   - a thread's kernel id is read once (a system call) and cached per thread;
 *   - the ring is allocated and touched (every page written) when the process starts, and the
 *     two counters that threads update sit on cache lines of their own;
 *   - the file is written at exit, on SIGTERM, or by a thread of the recorder's own that sleeps
 *     until the window closes: never by a thread in the middle of a hand-off;
 *   - whether a drop was asked for is read from the dropping thread's own state (a flag its
 *     eval loop sets when it lets the GIL go because it was asked), never from a request that
 *     another thread may have pending while this one blocks on I/O.
 *
 * Off unless the environment names a file:
 *   GILLAB_GIL_TRACE=<path>       write the trace there (once); a "%p" in it stands for the process
 *                                 id, so that a child process started with exec (which inherits
 *                                 the variable) writes a file of its own
 *   GILLAB_GIL_TRACE_WINDOW=a,b   record only from a ms to a+b ms after the process started, then
 *                                 write the file (optional: without it, the whole run)
 *   GILLAB_GIL_TRACE_EVENTS=n     the ring's size (default 1048576 events of 16 bytes); when
 *                                 more happen, the oldest are overwritten and counted as lost
 * A forked child records nothing (its parent's file is its parent's).
 *
 * A thread that is waiting for the GIL, or holding it, when the window opens has its pending
 * WANT or TAKE recorded at the window's opening with flag 1 (clipped), just before its first
 * event inside the window: a wait or hold under way is kept, cut at the window's edge, marked.
 *
 * The file (little-endian on the machines gil-lab runs on): a 64-byte header
 *   char magic[8] = "GILTRACE"; uint32 version = 2; uint32 implementation (1 old GIL, 2 new GIL,
 *   3 nogil fork with its GIL on, 4 3.13's GIL); uint64 t0_ns (when the recorder started);
 *   uint64 events (in the file); uint64 lost; uint64 pid; uint64 interval (the switch interval
 *   in microseconds, or 2.7's check interval in ticks, when the file is written);
 *   uint32 reason (1 exit, 2 SIGTERM, 3 window closed); uint32 ppid (the parent's process id)
 * then the events, in the order they were recorded (a reader sorts them by time), 16 bytes each:
 *   uint64 t_ns (CLOCK_MONOTONIC, as time.monotonic_ns()); uint32 tid (the kernel's thread id,
 *   the process id for the main thread); uint8 event (0: a slot still being written when the
 *   file was, left out by the reader); uint8 flags (1: clipped at the window's opening);
 *   uint8[2] reserved.
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

#define GILLAB_FLAG_CLIPPED 1

#define GILLAB_REASON_EXIT 1
#define GILLAB_REASON_SIGTERM 2
#define GILLAB_REASON_WINDOW 3

#define GILLAB_MAX_REQUESTS 16    /* drop requests one wait keeps (more are not recorded) */

typedef struct {
    uint64_t t_ns;
    uint32_t tid;
    uint8_t event;
    uint8_t flags;
    uint8_t reserved[2];
} gillab_event;

/* a counter that threads update, alone on its cache line */
typedef struct {
    uint64_t v;
    char pad[56];
} __attribute__((aligned(64))) gillab_line;

static int gillab_on = 0;                 /* 1 while recording */
static int gillab_written = 0;            /* set once, by whoever writes the file */
static char gillab_path[4096];
static gillab_event *gillab_ring = NULL;
static uint64_t gillab_capacity = 0;
static gillab_line gillab_next;           /* events recorded so far (the ring's write index) */
static gillab_line gillab_done;           /* events whose slot is written whole */
static uint64_t gillab_t0 = 0, gillab_from = 0, gillab_until = UINT64_MAX;
static const unsigned long *gillab_interval_us = NULL;
static const int *gillab_interval_ticks = NULL;
static uint32_t gillab_impl = 0;

static __thread uint32_t gillab_tid = 0;          /* this thread's kernel id, read once */
static __thread uint8_t gillab_before = 0;        /* WANT or TAKE, last seen before the window */
static __thread int gillab_asked = 0;             /* this thread drops because it was asked */
static __thread uint64_t gillab_tick_release = 0; /* 2.7: when the check interval's release began */

static uint64_t
gillab_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The clock, if recording (else 0): all that a hook inside a GIL mutex does. */
static inline uint64_t
gillab_stamp(void)
{
    return __atomic_load_n(&gillab_on, __ATOMIC_RELAXED) ? gillab_now() : 0;
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
    uint64_t n = __atomic_load_n(&gillab_next.v, __ATOMIC_ACQUIRE);
    /* let the threads that took a slot before this finish writing it; bounded, for the one
       this signal may have interrupted in the middle of its own (its slot stays unwritten: the
       reader leaves out a slot whose event is 0) */
    for (long spin = 0; spin < 50000000L && __atomic_load_n(&gillab_done.v, __ATOMIC_ACQUIRE) < n; spin++) {
    }
    uint64_t kept = n < gillab_capacity ? n : gillab_capacity;
    uint64_t lost = n - kept, pid = (uint64_t)getpid(), interval = 0;
    uint32_t version = 2, ppid = (uint32_t)getppid();
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

/* The recorder's own thread: sleeps until the window closes, then writes the file. */
static void *
gillab_closer(void *unused)
{
    (void)unused;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);   /* the process's signals are never delivered here */
    struct timespec at;
    at.tv_sec = (time_t)(gillab_until / 1000000000u);
    at.tv_nsec = (long)(gillab_until % 1000000000u);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) != 0) {
    }
    gillab_write(GILLAB_REASON_WINDOW);
    return NULL;
}

/* Started with the process (before main), so that no hook ever initialises anything. */
__attribute__((constructor)) static void
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
    gillab_ring = (gillab_event *)malloc((size_t)gillab_capacity * sizeof(gillab_event));
    if (gillab_ring == NULL) {
        return;
    }
    memset(gillab_ring, 0, (size_t)gillab_capacity * sizeof(gillab_event));   /* every page touched now */
    gillab_t0 = gillab_now();
    const char *window = getenv("GILLAB_GIL_TRACE_WINDOW");
    int closes = 0;
    if (window != NULL && window[0] != '\0') {
        char *rest = NULL;
        double from_ms = strtod(window, &rest), length_ms = -1;
        if (rest && *rest == ',') {
            length_ms = strtod(rest + 1, NULL);
        }
        gillab_from = gillab_t0 + (uint64_t)(from_ms * 1e6);
        if (length_ms > 0) {
            gillab_until = gillab_from + (uint64_t)(length_ms * 1e6);
            closes = 1;
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
    __atomic_store_n(&gillab_on, 1, __ATOMIC_RELEASE);
    if (closes) {
        pthread_t closer;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&closer, &attr, gillab_closer, NULL) != 0) {
            gillab_until = UINT64_MAX;        /* no closer: the file is written at exit */
        }
        pthread_attr_destroy(&attr);
    }
}

static void
gillab_put_event(uint64_t t, int event, uint8_t flags)
{
    uint64_t i = __atomic_fetch_add(&gillab_next.v, 1, __ATOMIC_ACQ_REL);
    gillab_event *e = &gillab_ring[i % gillab_capacity];
    e->event = 0;                         /* unfinished until the last store below */
    e->t_ns = t;
    e->tid = gillab_tid;
    e->flags = flags;
    __atomic_store_n(&e->event, (uint8_t)event, __ATOMIC_RELEASE);
    __atomic_fetch_add(&gillab_done.v, 1, __ATOMIC_ACQ_REL);
}

/* Record ``event`` at time ``t`` (from gillab_stamp; 0: not recording). */
static void
gillab_record(int event, uint64_t t)
{
    if (t == 0 || t > gillab_until || !__atomic_load_n(&gillab_on, __ATOMIC_ACQUIRE)) {
        return;
    }
    if (t < gillab_from) {                /* before the window: remember a wait or a hold under way */
        if (event == GILLAB_EV_WANT || event == GILLAB_EV_TAKE) {
            gillab_before = (uint8_t)event;
        }
        else if (event != GILLAB_EV_REQUEST) {   /* a request is made while waiting */
            gillab_before = 0;
        }
        return;
    }
    if (gillab_tid == 0) {
        gillab_tid = (uint32_t)syscall(SYS_gettid);
    }
    if (gillab_before) {                  /* the first event of this thread inside the window */
        gillab_put_event(gillab_from, gillab_before, GILLAB_FLAG_CLIPPED);
        gillab_before = 0;
    }
    gillab_put_event(t, event, 0);
}

/* A hook outside any GIL mutex: the clock and the event at once. */
static void
gillab_trace(int event)
{
    gillab_record(event, gillab_stamp());
}

/* take_gil's hooks: the wait's drop requests and the take are stamped inside the mutex and
   recorded after it is unlocked (GILLAB_TAKE_END, just after the function's last unlock). */
#define GILLAB_TAKE_BEGIN() \
    uint64_t gillab_requests[GILLAB_MAX_REQUESTS]; \
    int gillab_nrequests = 0; \
    uint64_t gillab_taken = 0; \
    gillab_trace(GILLAB_EV_WANT)
#define GILLAB_REQUEST_STAMP() \
    do { \
        if (gillab_nrequests < GILLAB_MAX_REQUESTS) { \
            gillab_requests[gillab_nrequests++] = gillab_stamp(); \
        } \
    } while (0)
#define GILLAB_TAKE_STAMP() (gillab_taken = gillab_stamp())
#define GILLAB_TAKE_END() \
    do { \
        for (int gillab_k = 0; gillab_k < gillab_nrequests; gillab_k++) { \
            gillab_record(GILLAB_EV_REQUEST, gillab_requests[gillab_k]); \
        } \
        gillab_record(GILLAB_EV_TAKE, gillab_taken); \
    } while (0)

/* drop_gil's hook (before its mutex): forced if this thread's eval loop said it was asked. */
#define GILLAB_DROP() \
    do { \
        gillab_trace(gillab_asked ? GILLAB_EV_DROP_FORCED : GILLAB_EV_DROP); \
        gillab_asked = 0; \
    } while (0)

/* 2.7's check-interval hand-off: the clock before the release, nothing between the release and
   the acquire, the three events after it. */
#define GILLAB_TICKS_RELEASE() (gillab_tick_release = gillab_stamp())
#define GILLAB_TICKS_ACQUIRED() \
    do { \
        uint64_t gillab_back = gillab_stamp(); \
        gillab_record(GILLAB_EV_DROP_TICKS, gillab_tick_release); \
        gillab_record(GILLAB_EV_WANT, gillab_tick_release); \
        gillab_record(GILLAB_EV_TAKE, gillab_back); \
    } while (0)

#endif /* GILLAB_GIL_TRACE_H */
