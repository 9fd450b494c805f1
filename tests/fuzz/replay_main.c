/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replays inputs through a fuzz target's LLVMFuzzerTestOneInput() without
 * libFuzzer, so the regression inputs run in every build (gcc + ASan/UBSan in
 * `make test`):
 *
 *   nrz-regress-TARGET [--seeds TARGET] [--pcap FILE]... [DIR|FILE]...
 *
 * DIR: every regular file in it (sorted, dotfiles skipped), a missing DIR is
 * empty.  --pcap: every frame of a capture is one input.  --seeds: the
 * builder-made seeds of gen_seeds.c.  A violated invariant or a sanitizer
 * report aborts the process; the last input's name is printed first.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "nrz_fuzz.h"

static unsigned long replayed;

static void run_one(const char *name, const uint8_t *d, size_t n)
{
	/* Copy into an exact-size buffer so ASan catches a read past the end. */
	uint8_t *copy = malloc(n ? n : 1);

	if (!copy) {
		fprintf(stderr, "out of memory for %s (%zu bytes)\n", name, n);
		exit(2);
	}
	memcpy(copy, d, n);
	fprintf(stderr, "replay %s (%zu bytes)\n", name, n);
	LLVMFuzzerTestOneInput(copy, n);
	free(copy);
	replayed++;
}

static void seed_cb(void *ctx, const char *name, const uint8_t *d, size_t n)
{
	char full[256];

	snprintf(full, sizeof(full), "seed:%s", name);
	run_one(full, d, n);
}

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -errno;
	}
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "%s: cannot size the file\n", path);
		fclose(f);
		return -EIO;
	}
	buf = malloc(n ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "%s: cannot read %ld bytes\n", path, n);
		free(buf);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	run_one(path, buf, (size_t)n);
	free(buf);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir)
{
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	DIR *d = opendir(dir);

	if (!d) {
		fprintf(stderr, "%s: no such directory: no regression inputs there yet\n", dir);
		return 0;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof(*names));

			if (!nn)
				exit(2);
			names = nn;
		}
		if (asprintf(&names[n++], "%s/%s", dir, de->d_name) < 0)
			exit(2);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		if (!stat(names[i], &st) && S_ISREG(st.st_mode) && replay_file(names[i]))
			rc = -EIO;
		free(names[i]);
	}
	free(names);
	return rc;
}

static int replay_pcap(const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	unsigned idx = 0;
	pcap_t *pc = pcap_open_offline(path, errbuf);

	if (!pc) {
		fprintf(stderr, "%s: %s (is vectors_dir right?)\n", path, errbuf);
		return -ENOENT;
	}
	while (pcap_next_ex(pc, &h, &data) == 1) {
		char name[4096];

		snprintf(name, sizeof(name), "%s#%u", path, idx++);
		run_one(name, data, h->caplen);
	}
	pcap_close(pc);
	return 0;
}

int main(int argc, char **argv)
{
	bool no_vectors = false;
	int rc = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seeds") && i + 1 < argc) {
			nrz_gen_seeds(argv[++i], seed_cb, NULL);
		} else if (!strcmp(argv[i], "--vectors") && i + 1 < argc) {
			/* the captures live beside the repository, never in it */
			no_vectors = access(argv[++i], F_OK) != 0;
			if (no_vectors)
				printf("note: no captures directory %s: the --pcap frames that "
				       "follow are not replayed (-Dvectors_dir=DIR)\n", argv[i]);
		} else if (!strcmp(argv[i], "--pcap") && i + 1 < argc) {
			if (no_vectors)
				i++;
			else
				rc |= replay_pcap(argv[++i]);
		} else {
			struct stat st;

			if (!stat(argv[i], &st) && S_ISREG(st.st_mode))
				rc |= replay_file(argv[i]);
			else
				rc |= replay_dir(argv[i]);
		}
	}
	printf("replayed %lu inputs through %s: %s\n", replayed, argv[0],
	       rc ? "ERRORS reading inputs" : "no invariant violated");
	if (!replayed) {
		fprintf(stderr, "nothing replayed: give --seeds, --pcap, or an input directory\n");
		return 1;
	}
	return rc ? 1 : 0;
}
