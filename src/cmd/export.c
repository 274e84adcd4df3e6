// SPDX-License-Identifier: MIT
/*
 * dcprof export: a recording in the formats other tools read (pprof,
 * folded stacks). The output appears whole or not at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "cmd.h"
#include "profile_view.h"
#include "../export/export.h"

enum export_format { FORMAT_NONE, FORMAT_PPROF, FORMAT_FOLDED };

/* An output file being written under a temporary name beside it. */
struct output {
	const char *path;
	char *tmp;
	FILE *f;
};

/*
 * Create the temporary file in the destination's directory, so that the
 * rename is atomic. O_EXCL|O_NOFOLLOW: a name planted in the directory,
 * symlink or not, is never opened; the random suffix keeps it unguessable.
 */
static int output_open(struct output *o, const char *path)
{
	const char *slash = strrchr(path, '/');
	int dir_len = slash ? (int)(slash - path + 1) : 0;
	const char *base = slash ? slash + 1 : path;

	o->path = path;
	if (!*base)
		return cmd_error("cannot write '%s': %s", path,
				 strerror(EISDIR));
	for (int tries = 0; tries < 100; tries++) {
		uint64_t r = 0;
		int fd;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = ((uint64_t)getpid() << 32) ^ (uint64_t)tries;
		free(o->tmp);
		if (asprintf(&o->tmp, "%.*s.%s.%016" PRIx64 ".tmp", dir_len,
			     path, base, r) < 0) {
			o->tmp = NULL;
			return cmd_error("out of memory");
		}
		fd = open(o->tmp,
			  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			  0600);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0) {
			int err = errno;

			free(o->tmp);
			o->tmp = NULL;
			return cmd_error("cannot create '%s': %s", path,
					 strerror(err));
		}
		o->f = fdopen(fd, "w");
		if (!o->f) {
			int err = errno;

			close(fd);
			unlink(o->tmp);
			free(o->tmp);
			o->tmp = NULL;
			return cmd_error("cannot create '%s': %s", path,
					 strerror(err));
		}
		return 0;
	}
	free(o->tmp);
	o->tmp = NULL;
	return cmd_error("cannot create '%s': %s", path, strerror(EEXIST));
}

/* Put the file in place when status is 0, else remove every trace. */
static int output_close(struct output *o, int status)
{
	int err = 0;

	if (fflush(o->f) || ferror(o->f))
		err = errno ? errno : EIO;
	if (fclose(o->f) && !err)
		err = errno ? errno : EIO;
	o->f = NULL;
	if (!status && err)
		status = cmd_error("cannot write '%s': %s", o->path,
				   strerror(err));
	/* rename replaces a symlink at path, never what it points to */
	if (!status && rename(o->tmp, o->path))
		status = cmd_error("cannot write '%s': %s", o->path,
				   strerror(errno));
	if (status)
		unlink(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
	return status;
}

static int run_export(const struct profile_view *v, enum export_format fmt,
		      FILE *out, bool with_comm)
{
	if (fmt == FORMAT_PPROF)
		return export_pprof(v, out);
	return export_folded(v, out, with_comm);
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "no-comm", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	enum export_format fmt = FORMAT_NONE;
	const char *input = "dcprof.data", *output = NULL;
	bool no_comm = false;
	struct profile_view v;
	struct output o = { 0 };
	int c, ret;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "i:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "pprof"))
				fmt = FORMAT_PPROF;
			else if (!strcmp(optarg, "folded"))
				fmt = FORMAT_FOLDED;
			else
				return cmd_usage_error(
					"export",
					"unknown format '%s' (pprof, folded)",
					optarg);
			break;
		case 'i':
			input = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'n':
			no_comm = true;
			break;
		case 'h':
			cmd_usage(cmd_find("export"), stdout);
			return cmd_finish_stdout(0);
		case '?':
			if (optopt && strchr("fio", optopt))
				return cmd_usage_error(
					"export",
					"option '%s' needs an argument",
					argv[optind - 1]);
			/* fall through */
		default:
			return cmd_usage_error("export", "unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cmd_usage_error("export", "unexpected argument '%s'",
				       argv[optind]);
	if (fmt == FORMAT_NONE)
		return cmd_usage_error("export",
				       "--format is needed (pprof, folded)");
	if (no_comm && fmt != FORMAT_FOLDED)
		return cmd_usage_error(
			"export", "--no-comm applies to --format folded only");
	if (!output)
		output = fmt == FORMAT_PPROF ? "dcprof.pb.gz" : "-";

	cmd_setup_log(0);
	ret = profile_view_open(&v, input);
	if (ret)
		return ret;
	if (!strcmp(output, "-")) {
		/* one error line: a failed export has said what failed */
		ret = run_export(&v, fmt, stdout, !no_comm);
		if (!ret)
			ret = cmd_finish_stdout(0);
	} else {
		ret = output_open(&o, output);
		if (!ret)
			ret = output_close(&o,
					   run_export(&v, fmt, o.f, !no_comm));
	}
	profile_view_close(&v);
	return ret;
}
