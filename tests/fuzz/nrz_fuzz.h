/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared bits of the libFuzzer targets (fuzz_*.c).  Each target defines
 * LLVMFuzzerTestOneInput(); libFuzzer links it in the fuzz build (clang
 * -fsanitize=fuzzer), replay_main.c links it in every other build so the
 * regression inputs under tests/fuzz/regress/ run as a plain unit test.
 *
 * A violated invariant prints what and where, then traps: libFuzzer and the
 * replayer both see a crash and keep the input.
 */
#ifndef NRZ_FUZZ_H
#define NRZ_FUZZ_H

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NRZ_CHECK(cond, ...)                                                  \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "%s:%d: invariant '%s' violated: ",   \
				__FILE__, __LINE__, #cond);                   \
			fprintf(stderr, __VA_ARGS__);                         \
			fputc('\n', stderr);                                  \
			fflush(stderr);                                       \
			__builtin_trap();                                     \
		}                                                             \
	} while (0)

/* A byte reader over the fuzzer's input: reads past the end give zeros. */
struct nrz_in {
	const uint8_t *p;
	size_t n, off;
};

static inline uint8_t nrz_u8(struct nrz_in *in)
{
	return in->off < in->n ? in->p[in->off++] : 0;
}

static inline uint16_t nrz_u16(struct nrz_in *in)
{
	uint16_t v = nrz_u8(in);
	return (uint16_t)(v | (nrz_u8(in) << 8));
}

static inline uint32_t nrz_u32(struct nrz_in *in)
{
	uint32_t v = nrz_u16(in);
	return v | ((uint32_t)nrz_u16(in) << 16);
}

static inline size_t nrz_left(const struct nrz_in *in)
{
	return in->off < in->n ? in->n - in->off : 0;
}

/* xorshift32 (0 is taken as a fixed nonzero seed): payload bytes from a seed. */
static inline uint32_t nrz_xs(uint32_t *s)
{
	uint32_t x = *s ? *s : 0x9E3779B9u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

/* File descriptors this process has open (the socket targets' leak check). */
static inline unsigned nrz_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned n = 0;

	NRZ_CHECK(d != NULL, "/proc/self/fd: %s", strerror(errno));
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Seed inputs for a target (TARGET of fuzz_TARGET.c), made by the builders
 * (gen_seeds.c): cb is called once per seed.  Returns the count, -1 for a
 * target without seeds.
 */
typedef void (*nrz_seed_cb)(void *ctx, const char *name, const uint8_t *d, size_t n);
int nrz_gen_seeds(const char *target, nrz_seed_cb cb, void *ctx);

#endif /* NRZ_FUZZ_H */
