/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nrz-gen-corpus TARGET DIR: write the builder-made seeds of one fuzz target
 * (gen_seeds.c) into DIR, one file per seed.  tests/fuzz/run calls it to
 * build the seed corpus at run time.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nrz_fuzz.h"

struct out {
	const char *dir;
	int errors;
};

static void write_seed(void *ctx, const char *name, const uint8_t *d, size_t n)
{
	struct out *o = ctx;
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/seed-%s", o->dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(d, 1, n, f) != n) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		o->errors++;
	}
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	struct out o = { 0 };
	int n;

	if (argc != 3) {
		fprintf(stderr, "usage: %s TARGET DIR  (TARGET of tests/fuzz/fuzz_TARGET.c)\n", argv[0]);
		return 2;
	}
	o.dir = argv[2];
	n = nrz_gen_seeds(argv[1], write_seed, &o);
	if (n < 0 || o.errors)
		return 1;
	printf("%d seeds for %s in %s\n", n, argv[1], argv[2]);
	return 0;
}
