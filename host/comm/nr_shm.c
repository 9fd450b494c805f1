/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shared-memory segment of one host's local ranks (see nr_shm.h): create
 * or attach, a generation barrier on a futex, one rank's failure seen by all,
 * and the pacing that emulates a slower intra-host link.
 *
 * Barrier: each rank reads the generation g, marks arrived[rank] = g + 1 and
 * counts itself in; the last one resets the count, then bumps the generation
 * and wakes the sleepers (count is reset before the generation moves, so a
 * fast rank entering the next barrier counts from 0).  A waiter spins a
 * little, then sleeps on the futex in slices of 20 ms, checking between them
 * for a failed rank, a local rank whose process is gone, and its deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "host/netreduce.h"
#include "nr_shm.h"
#include "nr_util.h"

#define SHM_MAGIC 0x4e52534dU         /* "NRSM" */
#define SHM_AREA_DEFAULT (4u << 20)
#define SHM_SPINS 2000

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#else
#define cpu_relax() __asm__ __volatile__("" ::: "memory")
#endif

struct shm_hdr {
	_Atomic uint32_t magic;           /* set last by the creator */
	uint32_t size;
	uint64_t area_bytes;
	_Atomic uint32_t attached;
	_Atomic uint32_t claim;           /* the first failing rank claims failure[] ... */
	_Atomic uint32_t failed;          /* ... then publishes 1 + its local rank here */
	_Atomic uint32_t count;           /* arrivals at the current barrier */
	_Atomic uint32_t gen;             /* barrier generation: the futex word */
	_Atomic uint32_t arrived[NR_LOCAL_MAX];   /* 1 + the generation a rank last arrived at */
	_Atomic int32_t pid[NR_LOCAL_MAX];
	_Atomic uint32_t busy[NR_LOCAL_MAX];      /* in a phase with its own timeout (nr_shm_busy) */
	char failure[NR_SHM_ERRLEN];      /* the failed rank's message */
};

#define SHM_DATA_OFF ((sizeof(struct shm_hdr) + 4095) & ~(size_t)4095)

struct nr_shm {
	struct shm_hdr *h;
	uint8_t *data;
	size_t map_len;
	size_t area;
	int size, rank;
	uint32_t timeout_ms;
	double pace_bps;
	uint64_t pace_next_ns;
	unsigned round;                   /* rounds so far: the set of the next one */
	char name[128];
	char err[NR_SHM_ERRLEN];
};

static void set_err(struct nr_shm *s, const char *fmt, va_list ap)
{
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
}

static int shm_err(struct nr_shm *s, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int shm_err(struct nr_shm *s, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_err(s, fmt, ap);
	va_end(ap);
	return code;
}

int nr_shm_fail(struct nr_shm *s, int code, const char *fmt, ...)
{
	uint32_t none = 0;
	va_list ap;

	va_start(ap, fmt);
	set_err(s, fmt, ap);
	va_end(ap);
	if (!s->h)
		return code;
	if (atomic_compare_exchange_strong(&s->h->claim, &none, 1)) {
		snprintf(s->h->failure, sizeof(s->h->failure), "%s", s->err);
		atomic_store(&s->h->failed, (uint32_t)s->rank + 1);
	}
	syscall(SYS_futex, &s->h->gen, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	return code;
}

const char *nr_shm_error(const struct nr_shm *s) { return s->err; }
int nr_shm_size(const struct nr_shm *s) { return s->size; }
int nr_shm_rank(const struct nr_shm *s) { return s->rank; }
size_t nr_shm_area_bytes(const struct nr_shm *s) { return s->area; }

int nr_shm_next_set(struct nr_shm *s)
{
	return s->round++ & 1;
}

float *nr_shm_input(struct nr_shm *s, int set, int r)
{
	return (float *)(s->data + ((size_t)set * s->size + r) * s->area);
}

float *nr_shm_result(struct nr_shm *s, int set)
{
	return (float *)(s->data + ((size_t)2 * s->size + set) * s->area);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

void nr_shm_pace(struct nr_shm *s, size_t bytes)
{
	uint64_t now;

	if (s->pace_bps <= 0 || !bytes)
		return;
	now = now_ns();
	if (s->pace_next_ns < now)
		s->pace_next_ns = now;
	s->pace_next_ns += (uint64_t)((double)bytes * 1e9 / s->pace_bps);
	if (s->pace_next_ns > now) {
		uint64_t d = s->pace_next_ns - now;
		struct timespec ts = { .tv_sec = d / 1000000000ull, .tv_nsec = d % 1000000000ull };

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
}

/* Another rank failed: NR_ERR_PEER with its message. */
static int peer_failed(struct nr_shm *s, const char *what)
{
	uint32_t f = atomic_load(&s->h->failed);

	return shm_err(s, NR_ERR_PEER, "local rank %d: %s: local rank %u failed: %s", s->rank,
		       what, f - 1, s->h->failure);
}

/* The process has exited (gone, or a zombie its parent has not reaped yet). */
static int process_gone(int32_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	int gone;

	if (kill(pid, 0) && errno == ESRCH)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	gone = p && (p[1] == ' ') && (p[2] == 'Z' || p[2] == 'X');
	fclose(f);
	return gone;
}

void nr_shm_busy(struct nr_shm *s, bool busy)
{
	atomic_store(&s->h->busy[s->rank], busy);
}

/*
 * Ranks that have not arrived at generation g: listed in buf; 1 if one of
 * them is gone; *idle: how many of them are not busy.
 */
static int missing_ranks(struct nr_shm *s, uint32_t g, char *buf, size_t len, int *idle)
{
	size_t o = 0;
	int gone = 0;

	*idle = 0;
	buf[0] = '\0';
	for (int r = 0; r < s->size && o < len; r++) {
		int32_t pid = atomic_load(&s->h->pid[r]);
		int dead;

		if (atomic_load(&s->h->arrived[r]) == g + 1)
			continue;
		dead = pid > 0 && process_gone(pid);
		gone |= dead;
		*idle += !atomic_load(&s->h->busy[r]);
		o += snprintf(buf + o, len - o, "%s%d%s", o ? ", " : "", r,
			      dead ? " (its process exited)" : pid ? "" : " (never attached)");
	}
	return gone;
}

int nr_shm_barrier(struct nr_shm *s, const char *what)
{
	struct shm_hdr *h = s->h;
	uint32_t g = atomic_load(&h->gen);
	uint64_t deadline = nr_now_ms() + s->timeout_ms, check = 0;
	char who[256];
	int idle;

	if (atomic_load(&h->failed))
		return peer_failed(s, what);
	atomic_store(&h->arrived[s->rank], g + 1);
	if (atomic_fetch_add(&h->count, 1) + 1 == (uint32_t)s->size) {
		atomic_store(&h->count, 0);
		atomic_fetch_add(&h->gen, 1);
		syscall(SYS_futex, &h->gen, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
		return 0;
	}
	for (int spin = 0; spin < SHM_SPINS; spin++) {
		if (atomic_load(&h->gen) != g)
			return 0;
		cpu_relax();
	}
	while (atomic_load(&h->gen) == g) {
		struct timespec ts = { .tv_sec = 0, .tv_nsec = 20 * 1000000 };
		uint64_t now;

		syscall(SYS_futex, &h->gen, FUTEX_WAIT, g, &ts, NULL, 0);
		if (atomic_load(&h->gen) != g)
			break;
		if (atomic_load(&h->failed))
			return peer_failed(s, what);
		now = nr_now_ms();
		if (now < check && now <= deadline)
			continue;
		/* a dead local rank fails us at once, not at the deadline */
		check = now + 100;
		if (missing_ranks(s, g, who, sizeof(who), &idle))
			return nr_shm_fail(s, NR_ERR_PEER, "local rank %d: %s: local rank %s", s->rank,
					   what, who);
		if (!idle)   /* the missing ones are busy with their own timeouts */
			deadline = now + s->timeout_ms;
		if (now > deadline)
			return nr_shm_fail(s, NR_ERR_TIMEOUT, "local rank %d: %s: local rank(s) %s "
					   "did not arrive within %u ms", s->rank, what, who,
					   s->timeout_ms);
	}
	return 0;
}

/* Local rank 0: make the segment (a stale one of the same name goes). */
static int shm_create(struct nr_shm *s, size_t len)
{
	int fd = shm_open(s->name, O_RDWR | O_CREAT | O_EXCL, 0600);

	if (fd < 0 && errno == EEXIST) {
		shm_unlink(s->name);
		fd = shm_open(s->name, O_RDWR | O_CREAT | O_EXCL, 0600);
	}
	if (fd < 0)
		return shm_err(s, NR_ERR_NOMEM, "local rank 0: shm_open %s: %s", s->name,
			       strerror(errno));
	if (ftruncate(fd, len)) {
		int e = errno;

		close(fd);
		shm_unlink(s->name);
		return shm_err(s, NR_ERR_NOMEM, "local rank 0: %zu bytes for %s: %s (is /dev/shm "
			       "large enough?)", len, s->name, strerror(e));
	}
	return fd;
}

/* Other local ranks: wait for local rank 0's segment to exist. */
static int shm_attach_fd(struct nr_shm *s)
{
	uint64_t deadline = nr_now_ms() + s->timeout_ms;

	for (;;) {
		int fd = shm_open(s->name, O_RDWR, 0);
		struct stat st;

		if (fd >= 0 && fstat(fd, &st) == 0 && (size_t)st.st_size >= SHM_DATA_OFF)
			return fd;
		if (fd >= 0)
			close(fd);
		else if (errno != ENOENT)
			return shm_err(s, NR_ERR_NOMEM, "local rank %d: shm_open %s: %s", s->rank,
				       s->name, strerror(errno));
		if (nr_now_ms() > deadline)
			return shm_err(s, NR_ERR_TIMEOUT, "local rank %d: local rank 0 did not create "
				       "the shared segment %s within %u ms", s->rank, s->name,
				       s->timeout_ms);
		usleep(2000);
	}
}

/*
 * Other local ranks: wait for the creator's header (its magic is written
 * after the segment has its full length), then check that it describes the
 * segment this rank expects.
 */
static int shm_check(struct nr_shm *s, int fd)
{
	uint64_t deadline = nr_now_ms() + s->timeout_ms;
	struct shm_hdr *h = mmap(NULL, SHM_DATA_OFF, PROT_READ, MAP_SHARED, fd, 0);
	int rc = 0;

	if (h == MAP_FAILED)
		return shm_err(s, NR_ERR_NOMEM, "local rank %d: mmap of %s: %s", s->rank, s->name,
			       strerror(errno));
	while (!rc && atomic_load(&h->magic) != SHM_MAGIC) {
		if (nr_now_ms() > deadline)
			rc = shm_err(s, NR_ERR_TIMEOUT, "local rank %d: segment %s not initialised "
				     "within %u ms", s->rank, s->name, s->timeout_ms);
		usleep(1000);
	}
	if (!rc && (h->size != (uint32_t)s->size || h->area_bytes != s->area))
		rc = shm_err(s, NR_ERR_CONFIG, "local rank %d: segment %s is for %u ranks with areas "
			     "of %llu bytes, this rank expects %d with %zu: every local rank must use "
			     "the same NR_LOCAL_SIZE", s->rank, s->name, h->size,
			     (unsigned long long)h->area_bytes, s->size, s->area);
	munmap(h, SHM_DATA_OFF);
	return rc;
}

static int shm_map(struct nr_shm *s, size_t len)
{
	int fd = s->rank == 0 ? shm_create(s, len) : shm_attach_fd(s), rc = 0;
	void *p;

	if (fd < 0)
		return fd;
	if (s->rank)
		rc = shm_check(s, fd);
	p = rc ? MAP_FAILED : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (rc)
		return rc;
	if (p == MAP_FAILED)
		return shm_err(s, NR_ERR_NOMEM, "local rank %d: mmap of %zu bytes of %s: %s",
			       s->rank, len, s->name, strerror(errno));
	s->h = p;
	s->map_len = len;
	s->data = (uint8_t *)p + SHM_DATA_OFF;
	if (s->rank == 0) {
		s->h->size = s->size;
		s->h->area_bytes = s->area;
		atomic_store(&s->h->magic, SHM_MAGIC);
	}
	return 0;
}

/* The default: 4 MiB, cut down to a multiple of 4 * size. */
static size_t area_of(const struct nr_shm_config *cfg)
{
	size_t unit = 4 * (size_t)(cfg->size > 0 ? cfg->size : 1);

	return cfg->area_bytes ? cfg->area_bytes : SHM_AREA_DEFAULT / unit * unit;
}

static int check_config(const struct nr_shm_config *cfg, char *err, size_t errlen)
{
	size_t area = area_of(cfg);

	if (cfg->size < 1 || cfg->size > NR_LOCAL_MAX || cfg->rank < 0 || cfg->rank >= cfg->size) {
		snprintf(err, errlen, "shared memory: local rank %d of %d: need 0 <= rank < size "
			 "<= %d", cfg->rank, cfg->size, NR_LOCAL_MAX);
		return NR_ERR_CONFIG;
	}
	if (!cfg->name || cfg->name[0] != '/' || strlen(cfg->name) >= 128 ||
	    strchr(cfg->name + 1, '/')) {
		snprintf(err, errlen, "shared memory: bad segment name \"%s\" (one '/' first)",
			 cfg->name ? cfg->name : "");
		return NR_ERR_CONFIG;
	}
	if (area % (4 * (size_t)cfg->size)) {
		snprintf(err, errlen, "shared memory: area of %zu bytes is not a multiple of 4 * %d",
			 area, cfg->size);
		return NR_ERR_CONFIG;
	}
	return 0;
}

int nr_shm_open(const struct nr_shm_config *cfg, struct nr_shm **shm, char *err, size_t errlen)
{
	struct nr_shm *s;
	size_t len;
	int rc;

	*shm = NULL;
	rc = check_config(cfg, err, errlen);
	if (rc)
		return rc;
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "shared memory: out of memory");
		return NR_ERR_NOMEM;
	}
	*s = (struct nr_shm){ .size = cfg->size, .rank = cfg->rank, .timeout_ms = cfg->timeout_ms,
			      .area = area_of(cfg),
			      .pace_bps = cfg->pace_bytes_per_s };
	snprintf(s->name, sizeof(s->name), "%s", cfg->name);
	len = SHM_DATA_OFF + (2 * (size_t)s->size + 2) * s->area;
	rc = shm_map(s, len);
	if (!rc) {
		atomic_store(&s->h->pid[s->rank], (int32_t)getpid());
		atomic_fetch_add(&s->h->attached, 1);
		rc = nr_shm_barrier(s, "attaching the shared segment");
	}
	if (s->rank == 0)    /* all in, or failed: either way the name goes */
		shm_unlink(s->name);
	if (rc) {
		snprintf(err, errlen, "%s", s->err);
		nr_shm_close(s);
		return rc;
	}
	*shm = s;
	return 0;
}

void nr_shm_close(struct nr_shm *s)
{
	if (!s)
		return;
	if (s->h)
		munmap(s->h, s->map_len);
	free(s);
}
