// SPDX-License-Identifier: MIT
/*
 * dcprof annotate: where inside one function the samples fell, per
 * instruction, disassembled with capstone, with the source lines DWARF
 * gives interleaved. The library reads the code (dcp_profile_code_open:
 * the sampled file itself, accepted only when its build id, else device
 * and inode, still matches, or the kernel's from /proc/kcore), names the
 * call targets and gives the lines, from a separate debug file found by
 * build id too, also in the --debuginfo-dir directories. A Python
 * function's samples go by source line instead (annotate_python.c).
 */
#include <elf.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "annotate.h"
#include "capstone_load.h"
#include "cmd.h"
#include "read_opts.h"

struct annotate_args {
	const char *input;
	const char *symbol;
	bool json;
	const char **debuginfo_dirs; /* --debuginfo-dir, as given */
	size_t nr_debuginfo_dirs;
	const char *vmlinux; /* -k: the kernel's code from this file */
};

static int target_add(struct annotate_target *t, uint64_t offset,
		      uint64_t count)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->offsets[i] == offset) {
			t->counts[i] += count;
			t->samples += count;
			return 0;
		}
	if (t->n == t->cap) {
		size_t c = t->cap ? 2 * t->cap : 64;
		uint64_t *o = realloc(t->offsets, c * sizeof(*o));
		uint64_t *k;

		if (!o)
			return -ENOMEM;
		t->offsets = o;
		k = realloc(t->counts, c * sizeof(*k));
		if (!k)
			return -ENOMEM;
		t->counts = k;
		t->cap = c;
	}
	t->offsets[t->n] = offset;
	t->counts[t->n++] = count;
	t->samples += count;
	return 0;
}

/* The innermost Python frame of row, NULL when it has none. */
static const struct dcp_frame *
innermost_python(const struct profile_view *v, const struct dcp_sample_row *row)
{
	for (uint32_t i = 0; i < row->nr_frames; i++) {
		struct dcp_cookie_info ci = { .sz = sizeof(ci) };
		const struct dcp_frame *f = &row->frames[i];

		if (f->flags & DCP_FRAME_KERNEL)
			continue;
		if (!dcp_cookie_table_lookup(v->cookies, f->cookie, &ci) &&
		    dcp_cookie_is_python(&ci))
			return f;
	}
	return NULL;
}

/* Whether the frame f, its symbol sym, is the function name names. */
static bool frame_matches(const struct profile_view *v,
			  const struct dcp_frame *f,
			  const struct dcp_symbol *sym, const char *name,
			  bool short_forms, bool python, const char **label)
{
	/* same-named functions of one file carry a label, "work (a.c)",
	 * which names one of them */
	*label = python ? NULL : profile_view_label(v, f);
	if (python)
		return annotate_python_match(sym->name, name, short_forms);
	if (short_forms)
		return sym->demangled &&
		       annotate_short_match(sym->demangled, name);
	return !strcmp(sym->name, name) ||
	       (sym->demangled && !strcmp(sym->demangled, name)) ||
	       (*label && !strcmp(*label, name));
}

/* Count count samples at f into the target of its function, made when it
 * is the first: -ENOMEM, else 0. */
static int add_to_target(const struct profile_view *v,
			 const struct dcp_frame *f,
			 const struct dcp_symbol *sym, const char *label,
			 bool python, uint64_t count,
			 struct annotate_target **ts, size_t *n)
{
	struct annotate_target *t = NULL;

	for (size_t j = 0; j < *n && !t; j++)
		if ((*ts)[j].cookie == f->cookie &&
		    (*ts)[j].start == sym->start)
			t = &(*ts)[j];
	if (!t) {
		struct annotate_target *g = realloc(*ts, (*n + 1) * sizeof(*g));

		if (!g)
			return -ENOMEM;
		*ts = g;
		t = &g[(*n)++];
		memset(t, 0, sizeof(*t));
		t->cookie = f->cookie;
		t->start = sym->start;
		t->size = sym->size;
		t->python = python;
		t->name = label				  ? label :
			  sym->demangled && !v->raw_names ? sym->demangled :
							    sym->name;
	}
	return target_add(t, f->offset, count);
}

/*
 * Every (object, function start) whose name is the one asked for (with
 * short_forms, whose demangled name has it as a short form), with the
 * samples whose leaf it is; a Python function's, the samples whose
 * innermost Python frame it is, wherever the native leaf is.
 */
static int find_targets(const struct profile_view *v, const char *name,
			bool short_forms, struct annotate_target **out,
			size_t *nr)
{
	struct annotate_target *ts = NULL;
	size_t n = 0;

	for (size_t i = 0; i < dcp_profile_nr_rows(v->profile); i++) {
		struct dcp_sample_row row = { .sz = sizeof(row) };
		const struct dcp_frame *frames[2];

		/* rows of off-CPU time alone (no samples) are not here */
		if (dcp_profile_row(v->profile, i, &row) || !row.nr_frames ||
		    !row.count)
			continue;
		frames[1] = innermost_python(v, &row);
		frames[0] = frames[1] == &row.frames[0] ? NULL : &row.frames[0];
		for (int k = 0; k < 2; k++) {
			struct dcp_symbol sym = { .sz = sizeof(sym) };
			const char *label;

			if (!frames[k] ||
			    dcp_profile_symbol(v->profile, frames[k]->cookie,
					       frames[k]->offset, &sym) ||
			    !sym.name ||
			    !frame_matches(v, frames[k], &sym, name,
					   short_forms, k == 1, &label))
				continue;
			if (add_to_target(v, frames[k], &sym, label, k == 1,
					  row.count, &ts, &n) < 0)
				goto nomem;
		}
	}
	*out = ts;
	*nr = n;
	return 0;
nomem:
	for (size_t j = 0; j < n; j++) {
		free(ts[j].offsets);
		free(ts[j].counts);
	}
	free(ts);
	return cmd_error("out of memory");
}

static bool capstone_arch(unsigned int machine, cs_arch *arch, cs_mode *mode)
{
	switch (machine) {
	case EM_X86_64:
		*arch = CS_ARCH_X86;
		*mode = CS_MODE_64;
		return true;
	case EM_386:
		*arch = CS_ARCH_X86;
		*mode = CS_MODE_32;
		return true;
	case EM_AARCH64:
		*arch = CS_ARCH_ARM64;
		*mode = CS_MODE_ARM;
		return true;
	default:
		return false;
	}
}

/* Warnings of the re-symbolization are about other files: not shown. */
static void log_quiet(enum dcp_log_level level, const char *msg, void *ctx)
{
	(void)level;
	(void)msg;
	(void)ctx;
}

/*
 * With --debuginfo-dir, name the profile's sampled addresses again (in
 * memory, as report --resymbolize does) with those directories, so that a
 * function of a binary that was stripped when it was recorded can be
 * found by its name.
 */
static int resymbolize(const struct annotate_args *a,
		       const struct profile_view *v)
{
	struct dcp_resymbolize_opts o = {
		.sz = sizeof(o),
		.debuginfo_dirs = a->debuginfo_dirs,
		.nr_debuginfo_dirs = a->nr_debuginfo_dirs,
	};
	int r;

	if (!a->nr_debuginfo_dirs)
		return 0;
	dcp_set_log(log_quiet, NULL);
	r = dcp_profile_resymbolize(v->profile, &o, NULL);
	cmd_setup_log(0);
	return r < 0 ? cmd_error("%s", dcp_last_error()) : 0;
}

/* The names of the direct call and jump targets of insn, by instruction
 * (NULL: none), asked of the library in one call. */
static int target_names(struct dcp_code *code, const cs_insn *insn,
			size_t count, const char ***names, uint64_t **offsets)
{
	size_t n = count ? count : 1, k = 0;
	uint64_t *targets = calloc(n, sizeof(*targets));
	const char **found = calloc(n, sizeof(*found));
	uint64_t *found_off = calloc(n, sizeof(*found_off));
	int ret = 0;

	*names = calloc(n, sizeof(**names));
	*offsets = calloc(n, sizeof(**offsets));
	if (!targets || !found || !found_off || !*names || !*offsets)
		ret = cmd_error("out of memory");
	for (size_t i = 0; !ret && i < count; i++)
		k += annotate_direct_target(&insn[i], &targets[k]);
	if (!ret && dcp_code_names(code, targets, k, found, found_off) < 0)
		ret = cmd_error("%s", dcp_last_error());
	/* back to the instructions, in the same order */
	for (size_t i = 0, j = 0; !ret && i < count && j < k; i++) {
		uint64_t target;

		if (!annotate_direct_target(&insn[i], &target))
			continue;
		(*names)[i] = found[j];
		(*offsets)[i] = found_off[j++];
	}
	free(targets);
	free(found);
	free(found_off);
	return ret;
}

static int annotate_one(struct annotate_args *a, const struct profile_view *v,
			const struct annotate_target *t, bool first,
			bool colour)
{
	struct dcp_cookie_info ci = { .sz = sizeof(ci) };
	struct dcp_code_opts opts = {
		.sz = sizeof(opts),
		.debuginfo_dirs = a->debuginfo_dirs,
		.nr_debuginfo_dirs = a->nr_debuginfo_dirs,
		.vmlinux = a->vmlinux,
	};
	struct dcp_code_info info = { .sz = sizeof(info) };
	char bid[2 * DCP_BUILD_ID_MAX + 1] = "";
	struct dcp_code *code;
	struct annotate_source src = { 0 };
	char last_file[4096] = "";
	const char **names = NULL;
	uint64_t *name_offsets = NULL;
	uint32_t last_line = 0;
	uint64_t size = t->size;
	cs_insn *insn = NULL;
	size_t count = 0;
	csh cs = 0;
	cs_arch arch;
	cs_mode mode;
	int ret = 0;

	dcp_cookie_table_lookup(v->cookies, t->cookie, &ci);
	if (ci.build_id_size)
		dcp_build_id_hex(ci.build_id, ci.build_id_size, bid);
	/* No size (a label): up to the last sampled instruction. */
	if (!size)
		for (size_t i = 0; i < t->n; i++)
			if (t->offsets[i] - t->start + 16 > size)
				size = t->offsets[i] - t->start + 16;
	if (size > (64u << 20))
		return cmd_error("cannot annotate '%s': %" PRIu64 " bytes",
				 t->name, size);
	code = dcp_profile_code_open(v->profile, t->cookie, t->start, size,
				     &opts);
	if (!code)
		return cmd_error(
			"cannot annotate '%s': %s%s", t->name, dcp_last_error(),
			ci.kind == DCP_COOKIE_KIND_KERNEL && !a->vmlinux ?
				"; or give an image of the kernel "
				"with -k VMLINUX" :
				"");
	dcp_code_get_info(code, &info);
	ret = annotate_cs_load();
	if (ret)
		goto out;
	if (!capstone_arch(info.machine, &arch, &mode) ||
	    annotate_cs.open(arch, mode, &cs) != CS_ERR_OK) {
		ret = cmd_error("cannot annotate '%s': no disassembler for "
				"machine %u",
				t->name, info.machine);
		goto out;
	}
	count = annotate_cs.disasm(cs, info.bytes, info.size, info.address, 0,
				   &insn);
	ret = target_names(code, insn, count, &names, &name_offsets);
	if (ret)
		goto out;

	if (a->json) {
		printf("%s{\"symbol\":", first ? "" : ",");
		json_print_string(stdout, t->name);
		printf(",\"file\":");
		json_print_string(stdout, info.path);
		printf(",\"build_id\":");
		json_print_string(stdout, bid);
		printf(",\"start\":%" PRIu64 ",\"size\":%" PRIu64
		       ",\"address\":%" PRIu64 ",\"samples\":%" PRIu64
		       ",\"instructions\":[",
		       t->start, size, info.address, t->samples);
	} else {
		printf("%s# %s in %s%s%s%s: %" PRIu64 " samples\n",
		       first ? "" : "\n", t->name, info.path,
		       bid[0] ? " (" : "", bid, bid[0] ? ")" : "", t->samples);
		printf("# %7s %7s  %-12s  %s\n", "Percent", "Samples",
		       "Address", "Instruction");
	}
	for (size_t i = 0; i < count; i++) {
		const cs_insn *in = &insn[i];
		uint64_t off = in->address - info.address + t->start, n = 0;
		char tbuf[256] = "";
		const char *file = NULL;
		uint32_t line = 0;
		double pct;

		for (size_t j = 0; j < t->n; j++)
			if (t->offsets[j] >= off &&
			    t->offsets[j] < off + in->size)
				n += t->counts[j];
		pct = t->samples ? 100.0 * (double)n / (double)t->samples : 0;
		if (dcp_code_line(code, in->address, &file, &line) < 0)
			file = NULL;
		if (names[i] && name_offsets[i])
			snprintf(tbuf, sizeof(tbuf), " <%s+0x%" PRIx64 ">",
				 names[i], name_offsets[i]);
		else if (names[i])
			snprintf(tbuf, sizeof(tbuf), " <%s>", names[i]);
		if (a->json) {
			printf("%s{\"address\":%" PRIu64 ",\"offset\":%" PRIu64
			       ",\"samples\":%" PRIu64 ",\"percent\":%.4f,"
			       "\"text\":",
			       i ? "," : "", in->address, off, n, pct);
			printf("\"%s%s%s%s\"", in->mnemonic,
			       in->op_str[0] ? " " : "", in->op_str, tbuf);
			printf(",\"source_file\":");
			if (file)
				json_print_string(stdout, file);
			else
				printf("null");
			printf(",\"line\":%" PRIu32 "}", file ? line : 0);
			continue;
		}
		if (file && (strcmp(file, last_file) || line != last_line)) {
			const char *text =
				annotate_source_line(&src, file, line);

			printf("%17s  %s:%" PRIu32, "", file, line);
			if (text) {
				printf(":  ");
				annotate_print_source(text);
			}
			printf("\n");
			snprintf(last_file, sizeof(last_file), "%s", file);
			last_line = line;
		}
		{
			const char *c = annotate_print_samples(n, pct, colour);

			printf("  %12" PRIx64 ":  %s %s%s", in->address,
			       in->mnemonic, in->op_str, tbuf);
			if (c)
				fputs("\033[0m", stdout);
			printf("\n");
		}
	}
	if (a->json)
		printf("]}");
out:
	annotate_source_free(&src);
	if (insn)
		annotate_cs.free(insn, count);
	if (cs)
		annotate_cs.close(&cs);
	free(names);
	free(name_offsets);
	dcp_code_close(code);
	return ret;
}

/*
 * The file whose functions have no symbol (named after their .eh_frame
 * entry, "file+0xSTART", or not at all) with the most samples, for the
 * hint of a name found nowhere: its cookie, those samples and the name
 * of one such function (NULL when none had one); 0 when there is none
 * or they are less than a tenth of the samples.
 */
static uint64_t unnamed_samples(const struct profile_view *v, uint32_t *cookie,
				const char **example)
{
	size_t nr = dcp_profile_nr_rows(v->profile), nr_cookies = 0;
	uint64_t *per = NULL, best = 0, all = 0;

	*example = NULL;
	for (size_t i = 0; i < nr; i++) {
		struct dcp_sample_row row = { .sz = sizeof(row) };
		struct dcp_symbol sym = { .sz = sizeof(sym) };
		struct dcp_cookie_info info = { .sz = sizeof(info) };
		const struct dcp_frame *f;

		if (dcp_profile_row(v->profile, i, &row) || !row.nr_frames ||
		    !row.count)
			continue;
		f = &row.frames[0];
		all += row.count;
		if ((f->flags & DCP_FRAME_KERNEL) ||
		    dcp_cookie_table_lookup(v->cookies, f->cookie, &info) ||
		    info.kind != DCP_COOKIE_KIND_FILE || !info.name)
			continue;
		if (!dcp_profile_symbol(v->profile, f->cookie, f->offset,
					&sym) &&
		    sym.name && !(sym.flags & DCP_SYMBOL_MADE_NAME))
			continue; /* a symbol's name */
		if (f->cookie >= nr_cookies) {
			size_t n = (size_t)f->cookie + 1;
			uint64_t *g = realloc(per, n * sizeof(*g));

			if (!g)
				break; /* only a hint */
			memset(g + nr_cookies, 0,
			       (n - nr_cookies) * sizeof(*g));
			per = g;
			nr_cookies = n;
		}
		per[f->cookie] += row.count;
		if (per[f->cookie] > best) {
			best = per[f->cookie];
			*cookie = f->cookie;
			if (sym.name)
				*example = sym.name;
		}
	}
	free(per);
	/* a few stray addresses are no reason to think the name is there */
	return best * 10 >= all ? best : 0;
}

/* No function of that name was sampled: say so, and where the samples
 * of functions without symbols are, which a stripped binary's are. */
static int no_samples_error(const struct annotate_args *a,
			    const struct profile_view *v)
{
	const char *example;
	uint32_t cookie = 0;
	uint64_t n = unnamed_samples(v, &cookie, &example);

	char closest[512];

	if (!n && annotate_closest(v, a->symbol, closest, sizeof(closest)))
		return cmd_error("no samples in '%s' in '%s'; the closest "
				 "sampled functions: %s",
				 a->symbol, a->input, closest);
	if (!n)
		return cmd_error("no samples in '%s' in '%s'", a->symbol,
				 a->input);
	return cmd_error(
		"no samples in '%s' in '%s'; %" PRIu64
		" samples are in functions of '%s' without symbols%s%s%s: "
		"give its debug file with --debuginfo-dir DIR",
		a->symbol, a->input, n, profile_view_file_name(v, cookie),
		example ? " (annotate takes their names, as '" : "",
		example ? example : "", example ? "')" : "");
}

static int compare_targets(const void *a, const void *b)
{
	const struct annotate_target *x = a, *y = b;

	return x->samples > y->samples ? -1 : x->samples < y->samples;
}

enum { OPT_DEBUGINFO_DIR = 256 };

static int annotate_run(struct annotate_args *a, bool no_demangle)
{
	struct annotate_target *ts = NULL;
	struct profile_view v;
	size_t n = 0;
	int ret;

	cmd_setup_log(0);
	ret = cmd_open_profile(&v, a->input, false);
	if (ret)
		return ret;
	v.raw_names = no_demangle;
	ret = resymbolize(a, &v);
	if (ret)
		goto out;
	ret = find_targets(&v, a->symbol, false, &ts, &n);
	/* "heavy" for ns::Calc<double>::heavy(int): no function's own name */
	if (!ret && !n)
		ret = find_targets(&v, a->symbol, true, &ts, &n);
	if (ret)
		goto out;
	if (!n) {
		ret = no_samples_error(a, &v);
		goto out;
	}
	qsort(ts, n, sizeof(*ts), compare_targets);
	if (a->json)
		printf("{\"functions\":[");
	for (size_t i = 0; i < n && !ret; i++)
		ret = ts[i].python ?
			      annotate_python_one(
				      &v, &ts[i], a->json, i == 0,
				      !a->json && isatty(STDOUT_FILENO)) :
			      annotate_one(a, &v, &ts[i], i == 0,
					   !a->json && isatty(STDOUT_FILENO));
	if (a->json && !ret)
		printf("]}\n");
	if (!ret)
		ret = cmd_finish_stdout(0);
out:
	for (size_t i = 0; i < n; i++) {
		free(ts[i].offsets);
		free(ts[i].counts);
	}
	free(ts);
	profile_view_close(&v);
	return ret;
}

int cmd_annotate(int argc, char **argv)
{
	static const struct option longopts[] = {
		READ_OPTS_LONGOPTS,
		{ "no-demangle", no_argument, NULL, 'N' },
		{ "debuginfo-dir", required_argument, NULL, OPT_DEBUGINFO_DIR },
		{ "vmlinux", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct read_opts ro =
		READ_OPTS_INIT("annotate", read_formats_text_json);
	struct annotate_args a = { 0 };
	bool no_demangle = false;
	int c, ret = 0;

	/* at most one directory per remaining argument */
	a.debuginfo_dirs = calloc((size_t)argc, sizeof(*a.debuginfo_dirs));
	if (!a.debuginfo_dirs)
		return cmd_error("out of memory");
	opterr = 0;
	while (!ret &&
	       (c = getopt_long(argc, argv, ":i:k:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
		case 'f':
			ret = read_opts_parse(&ro, c, optarg);
			break;
		case 'N':
			no_demangle = true;
			break;
		case OPT_DEBUGINFO_DIR:
			a.debuginfo_dirs[a.nr_debuginfo_dirs++] = optarg;
			break;
		case 'k':
			a.vmlinux = optarg;
			break;
		case 'h':
			cmd_usage(cmd_find("annotate"), stdout);
			ret = cmd_finish_stdout(0);
			goto out;
		case ':':
			ret = cmd_usage_error("annotate",
					      "option '%s' needs an argument",
					      argv[optind - 1]);
			break;
		default:
			ret = cmd_usage_error("annotate", "unknown option '%s'",
					      argv[optind - 1]);
		}
	}
	if (ret)
		goto out;
	a.input = read_opts_input(&ro);
	/* JSON once asked for: a later "--format text" does not undo it */
	a.json = ro.formats_given & (1u << READ_FORMAT_JSON);
	if (optind >= argc) {
		ret = cmd_usage_error("annotate", "which symbol? (SYMBOL)");
		goto out;
	}
	a.symbol = argv[optind++];
	if (optind < argc)
		ret = cmd_usage_error("annotate", "unexpected argument '%s'",
				      argv[optind]);
	else
		ret = annotate_run(&a, no_demangle);
out:
	free(a.debuginfo_dirs);
	return ret;
}
