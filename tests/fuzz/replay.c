/* Runs a fuzz target's entry point once on every file of the directories
 * (or files) named on the command line, without libFuzzer: how `meson
 * test` replays the seed corpora and the saved crash inputs in every
 * build, gcc included. Files run in name order, one TAP subtest each; an
 * input that still crashes the target kills the program, which the test
 * reports, and the last "# running" line names it. A target that cannot
 * run on this host (fuzz_unavailable) is skipped as a whole. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

#define REPLAY_MAX_FILES 4096

static char *paths[REPLAY_MAX_FILES];
static unsigned nr_paths;

static int path_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_add(const char *path)
{
	if (nr_paths == REPLAY_MAX_FILES) {
		fprintf(stderr, "replay: more than %d inputs\n",
			REPLAY_MAX_FILES);
		return -1;
	}
	paths[nr_paths] = strdup(path);
	if (!paths[nr_paths])
		return -1;
	nr_paths++;
	return 0;
}

/* A directory adds its regular files (not recursively), a file itself. */
static int replay_collect(const char *arg)
{
	struct dirent *e;
	struct stat st;
	char path[4096];
	DIR *d;
	int err = 0;

	if (stat(arg, &st)) {
		fprintf(stderr, "replay: %s: %s\n", arg, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_add(arg);
	d = opendir(arg);
	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", arg, strerror(errno));
		return -1;
	}
	while (!err && (e = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", arg, e->d_name);
		if (e->d_name[0] != '.' && !stat(path, &st) &&
		    S_ISREG(st.st_mode))
			err = replay_add(path);
	}
	closedir(d);
	return err;
}

static uint8_t *replay_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long size;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (size = ftell(f)) >= 0 &&
	    !fseek(f, 0, SEEK_SET)) {
		/* One byte more, so that an empty file gets a buffer. */
		buf = malloc(size + 1);
		if (buf && fread(buf, 1, size, f) != (size_t)size) {
			free(buf);
			buf = NULL;
		}
		*len = size;
	}
	fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	unsigned i, failed = 0;
	const char *why;

	if (fuzz_unavailable && (why = fuzz_unavailable())) {
		/* One skipped subtest, so that CI counts it (.ci/run). */
		printf("1..1\nok 1 - %s # SKIP %s\n", argv[argc - 1], why);
		return 0;
	}

	for (i = 1; i < (unsigned)argc; i++)
		if (replay_collect(argv[i]))
			return 1;
	qsort(paths, nr_paths, sizeof(paths[0]), path_cmp);
	printf("1..%u\n", nr_paths);
	for (i = 0; i < nr_paths; i++) {
		size_t len = 0;
		uint8_t *buf = replay_read(paths[i], &len);

		if (!buf) {
			printf("not ok %u - %s: cannot read it\n", i + 1,
			       paths[i]);
			failed++;
		} else {
			printf("# running %s\n", paths[i]);
			fflush(stdout);
			LLVMFuzzerTestOneInput(buf, len);
			printf("ok %u - %s\n", i + 1, paths[i]);
		}
		free(buf);
		free(paths[i]);
	}
	fflush(stdout);
	return failed ? 1 : 0;
}
