// SPDX-License-Identifier: MIT
/* The symbolizer, on binaries built here, the system's libc and kernel. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <gelf.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "buildid_internal.h"
#include "cookie_internal.h"
#include "elf_fde_internal.h"
#include "kallsyms_internal.h"
#include "symbolize_internal.h"
#include "symtab_internal.h"
#include "unit_shell.h"

static char tmpdir[64];

static const char prog_src[] =
	"#define NI __attribute__((noinline, used))\n"
	"volatile int sink;\n"
	"NI int alpha(int x) { return x + sink; }\n"
	"NI int beta(int x)\n"
	"{\n"
	"	int r = 0;\n"
	"	for (int i = 0; i < x; i++)\n"
	"		r += i * sink + (r >> 3);\n"
	"	return r;\n"
	"}\n"
	"NI int gamma(int x)\n"
	"{\n"
	"	int r = 1;\n"
	"	for (int i = 0; i < x; i++) {\n"
	"		r = r * 31 + sink;\n"
	"		r ^= r >> 7;\n"
	"		r += i * sink * 3;\n"
	"		r -= (r << 2) / (i + 1);\n"
	"		sink = r;\n"
	"	}\n"
	"	return r + x * sink;\n"
	"}\n"
	"NI static int hidden_fn(int x) { return x * sink * 5 + 2; }\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	(void)argv;\n"
	"	return alpha(argc) + beta(argc) + gamma(argc) + hidden_fn(argc);\n"
	"}\n";

/* Same functions, other code: a different build id at the same path. */
static const char prog2_src[] =
	"volatile int sink;\n"
	"__attribute__((noinline)) int alpha(int x) { return x * 7 + sink; }\n"
	"int main(void) { return alpha(3); }\n";

static void tmp_path(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", tmpdir, name);
}

/* Compile src into tmpdir/name with extra flags. */
static void build(const char *name, const char *src, const char *flags)
{
	char c[256], out[256];
	FILE *f;

	snprintf(c, sizeof(c), "%s/%s.c", tmpdir, name);
	tmp_path(out, sizeof(out), name);
	f = fopen(c, "w");
	assert_non_null(f);
	fputs(src, f);
	fclose(f);
	run("gcc -O0 -fno-builtin -Wl,--build-id %s -o %s %s", flags, out, c);
}

/*
 * The file offset and size of a symbol, from the given ELF's symbol
 * table (.symtab, else .dynsym) and program headers.
 */
static int elf_sym_offset(Elf *e, const char *name, uint64_t *off,
			  uint64_t *size)
{
	Elf_Scn *scn = NULL, *found = NULL;
	size_t nphdr;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		gelf_getshdr(scn, &sh);
		if (sh.sh_type == SHT_SYMTAB)
			found = scn;
		else if (sh.sh_type == SHT_DYNSYM && !found)
			found = scn;
	}
	if (!found)
		return -1;
	gelf_getshdr(found, &sh);
	Elf_Data *d = elf_getdata(found, NULL);
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Sym sym;

		gelf_getsym(d, (int)i, &sym);
		if (strcmp(elf_strptr(e, sh.sh_link, sym.st_name), name) != 0)
			continue;
		elf_getphdrnum(e, &nphdr);
		for (size_t j = 0; j < nphdr; j++) {
			GElf_Phdr ph;

			gelf_getphdr(e, (int)j, &ph);
			if (ph.p_type == PT_LOAD &&
			    sym.st_value >= ph.p_vaddr &&
			    sym.st_value < ph.p_vaddr + ph.p_filesz) {
				*off = sym.st_value - ph.p_vaddr + ph.p_offset;
				*size = sym.st_size;
				return 0;
			}
		}
	}
	return -1;
}

static void file_sym_offset(const char *path, const char *name, uint64_t *off,
			    uint64_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf *e;

	assert_true(fd >= 0);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	if (elf_sym_offset(e, name, off, size) != 0)
		fail_msg("no symbol '%s' in '%s'", name, path);
	assert_true(*size > 2);
	elf_end(e);
	close(fd);
}

/* A FILE cookie for path as the recorder would describe it. */
struct file_info {
	struct dcp_cookie_info info;
	char path[256];
	const char *paths[1];
};

static void file_info_init(struct file_info *fi, const char *path)
{
	struct stat st;
	int n;

	memset(fi, 0, sizeof(*fi));
	snprintf(fi->path, sizeof(fi->path), "%s", path);
	fi->paths[0] = fi->path;
	fi->info.cookie = 7;
	fi->info.kind = DCP_COOKIE_KIND_FILE;
	fi->info.name = fi->path;
	fi->info.paths = fi->paths;
	fi->info.nr_paths = 1;
	n = dcp_build_id_read_path(path, fi->info.build_id);
	assert_true(n >= 0);
	fi->info.build_id_size = (uint8_t)n;
	assert_int_equal(stat(path, &st), 0);
	fi->info.dev_major = major(st.st_dev);
	fi->info.dev_minor = minor(st.st_dev);
	fi->info.ino = st.st_ino;
}

static const char *sym_name(struct dcp_symtab *t, uint32_t cookie, uint64_t off,
			    struct dcp_symbol *sym)
{
	assert_int_equal(dcp_symtab_lookup(t, cookie, off, sym), 0);
	return sym->name;
}

/* off of cookie is named "base+0xOFF", start off, size 1 (no FDE). */
static void check_per_address(struct dcp_symtab *t, uint32_t cookie,
			      uint64_t off, const char *base)
{
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	char want[128];
	bool alone = false;

	snprintf(want, sizeof(want), "%s+0x%" PRIx64, base, off);
	assert_non_null(sym_name(t, cookie, off, &sym));
	assert_string_equal(sym.name, want);
	assert_int_equal(sym.start, off);
	assert_int_equal(sym.size, 1);
	assert_true(dcp_symbol_name_is_made(sym.name, sym.start, sym.size, off,
					    &alone));
	assert_true(alone);
	assert_true(sym.flags & DCP_SYMBOL_MADE_NAME);
}

static const char *const funcs[] = { "alpha", "beta", "gamma" };

/* Start, middle and last byte of each function resolve to it. */
static void check_functions(const char *path, const char *symbols_from,
			    struct dcp_symbolizer *s, int fd)
{
	uint64_t offs[9], start[3], size[3];
	struct dcp_symtab *t = dcp_symtab_new();
	struct file_info fi;
	struct dcp_symbol sym = { .sz = sizeof(sym) };

	assert_non_null(t);
	file_info_init(&fi, path);
	for (int i = 0; i < 3; i++) {
		file_sym_offset(symbols_from, funcs[i], &start[i], &size[i]);
		offs[3 * i] = start[i];
		offs[3 * i + 1] = start[i] + size[i] / 2;
		offs[3 * i + 2] = start[i] + size[i] - 1;
	}
	/* Distinct bodies, so a wrong neighbour cannot pass for a hit. */
	assert_true(size[0] != size[1] && size[1] != size[2]);
	assert_int_equal(dcp_symbolizer_resolve(s, &fi.info, fd, offs, 9, t),
			 9);
	assert_int_equal(dcp_symtab_count(t), 9);
	for (int i = 0; i < 9; i++) {
		const char *name = sym_name(t, 7, offs[i], &sym);

		assert_non_null(name);
		assert_string_equal(name, funcs[i / 3]);
		assert_int_equal(sym.start, start[i / 3]);
		assert_int_equal(sym.size, size[i / 3]);
		assert_true(offs[i] - sym.start < sym.size);
	}
	dcp_symtab_free(t);
}

static void test_file_functions(void **state)
{
	struct dcp_symbolizer *s = dcp_symbolizer_new(NULL);
	char pie[256], nopie[256];

	assert_non_null(s);
	build("pie", prog_src, "-fPIE -pie");
	build("nopie", prog_src, "-fno-pie -no-pie");
	tmp_path(pie, sizeof(pie), "pie");
	tmp_path(nopie, sizeof(nopie), "nopie");
	check_functions(pie, pie, s, -1);
	check_functions(nopie, nopie, s, -1);
	dcp_symbolizer_free(s);
}

static void test_file_no_symbol(void **state)
{
	struct dcp_symbolizer *s = dcp_symbolizer_new(NULL);
	struct dcp_symtab *t = dcp_symtab_new();
	uint64_t offs[3], start, size, next, nsize;
	struct file_info fi;
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	char path[256];

	build("padded", prog_src, "-fPIE -pie -falign-functions=64");
	tmp_path(path, sizeof(path), "padded");
	file_info_init(&fi, path);
	file_sym_offset(path, "alpha", &start, &size);
	file_sym_offset(path, "beta", &next, &nsize);
	assert_true(next > start + size);
	/* Far past the file, the ELF header, the padding after alpha. */
	offs[0] = 1ull << 40;
	offs[1] = 0;
	offs[2] = start + size;
	assert_int_equal(dcp_symbolizer_resolve(s, &fi.info, -1, offs, 3, t),
			 0);
	/* No FDE covers them either: each is named after itself. */
	for (int i = 0; i < 3; i++)
		check_per_address(t, 7, offs[i], "padded");
	dcp_symtab_free(t);
	dcp_symbolizer_free(s);
}

static void test_stripped(void **state)
{
	char prog[256], full[256], dbg[600], dbgdir[256], want[128];
	char hex[2 * DCP_BUILD_ID_MAX + 1];
	uint64_t offs[2], size, start_hidden, start_alpha;
	struct dcp_symbolizer *s;
	struct dcp_symtab *t;
	struct file_info fi;
	struct dcp_symbol sym = { .sz = sizeof(sym) };

	build("full", prog_src, "-fPIE -pie -rdynamic");
	tmp_path(prog, sizeof(prog), "stripped");
	tmp_path(dbgdir, sizeof(dbgdir), "debug");
	run("cp %s/full %s && strip %s", tmpdir, prog, prog);
	file_info_init(&fi, prog);
	assert_true(fi.info.build_id_size > 1);
	dcp_build_id_hex(fi.info.build_id, fi.info.build_id_size, hex);
	snprintf(dbg, sizeof(dbg), "%s/.build-id/%.2s/%s.debug", dbgdir, hex,
		 hex + 2);
	run("mkdir -p %s/.build-id/%.2s && objcopy --only-keep-debug "
	    "%s/full %s",
	    dbgdir, hex, tmpdir, dbg);

	tmp_path(full, sizeof(full), "full");
	file_sym_offset(full, "alpha", &start_alpha, &size);
	file_sym_offset(full, "hidden_fn", &start_hidden, &size);
	offs[0] = start_alpha + 1;
	offs[1] = start_hidden + 1;

	/* The debug file, found by build id, names everything. */
	s = dcp_symbolizer_new(NULL);
	assert_int_equal(dcp_symbolizer_set_debuginfo_path(s, dbgdir), 0);
	check_functions(prog, full, s, -1);
	t = dcp_symtab_new();
	assert_int_equal(dcp_symbolizer_resolve(s, &fi.info, -1, offs, 2, t),
			 2);
	assert_string_equal(sym_name(t, 7, offs[1], &sym), "hidden_fn");
	assert_int_equal(sym.start, start_hidden);
	dcp_symtab_free(t);
	dcp_symbolizer_free(s);

	/* Without it only .dynsym is left: exported alpha; hidden_fn is
	 * found by its FDE and named after its start. */
	s = dcp_symbolizer_new(NULL);
	t = dcp_symtab_new();
	assert_int_equal(dcp_symbolizer_resolve(s, &fi.info, -1, offs, 2, t),
			 2);
	assert_string_equal(sym_name(t, 7, offs[0], &sym), "alpha");
	assert_int_equal(sym.start, start_alpha);
	assert_int_equal(sym.flags, 0); /* a symbol's name */
	snprintf(want, sizeof(want), "stripped+0x%" PRIx64, start_hidden);
	assert_string_equal(sym_name(t, 7, offs[1], &sym), want);
	assert_int_equal(sym.flags, DCP_SYMBOL_MADE_NAME);
	assert_int_equal(sym.start, start_hidden);
	assert_int_equal(sym.size, size);
	dcp_symtab_free(t);
	dcp_symbolizer_free(s);
}

/*
 * Start, middle and last byte of alpha, beta and gamma of path, stripped
 * of every symbol: named "base+0xSTART" with the start and size of the
 * symbol in symbols_from, when their FDEs are found; with fde false, one
 * name per address. Read through fd when not -1.
 */
static void check_fde_functions(const char *path, const char *base,
				const char *symbols_from, int fd, bool fde)
{
	uint64_t offs[9], start[3], size[3];
	struct dcp_symbolizer *s = dcp_symbolizer_new(NULL);
	struct dcp_symtab *t = dcp_symtab_new();
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	struct file_info fi;
	char want[128];

	assert_non_null(s);
	assert_non_null(t);
	file_info_init(&fi, path);
	for (int i = 0; i < 3; i++) {
		file_sym_offset(symbols_from, funcs[i], &start[i], &size[i]);
		offs[3 * i] = start[i];
		offs[3 * i + 1] = start[i] + size[i] / 2;
		offs[3 * i + 2] = start[i] + size[i] - 1;
	}
	assert_int_equal(dcp_symbolizer_resolve(s, &fi.info, fd, offs, 9, t),
			 fde ? 9 : 0);
	assert_int_equal(dcp_symtab_count(t), 9);
	for (int i = 0; i < 9; i++) {
		bool alone = true;

		if (!fde) {
			check_per_address(t, 7, offs[i], base);
			continue;
		}
		snprintf(want, sizeof(want), "%s+0x%" PRIx64, base,
			 start[i / 3]);
		assert_string_equal(sym_name(t, 7, offs[i], &sym), want);
		assert_int_equal(sym.start, start[i / 3]);
		assert_int_equal(sym.size, size[i / 3]);
		assert_true(dcp_symbol_name_is_made(sym.name, sym.start,
						    sym.size, offs[i], &alone));
		assert_false(alone);
		assert_true(sym.flags & DCP_SYMBOL_MADE_NAME);
	}
	dcp_symtab_free(t);
	dcp_symbolizer_free(s);
}

/* strip -s: the functions are found by their FDEs, PIE or not. */
static void test_fde(void **state)
{
	char full[256], prog[256];

	build("fde_pie", prog_src, "-fPIE -pie");
	build("fde_nopie", prog_src, "-fno-pie -no-pie");
	tmp_path(full, sizeof(full), "fde_pie");
	tmp_path(prog, sizeof(prog), "fde_pie_s");
	run("strip -s -o %s %s", prog, full);
	check_fde_functions(prog, "fde_pie_s", full, -1, true);
	tmp_path(full, sizeof(full), "fde_nopie");
	tmp_path(prog, sizeof(prog), "fde_nopie_s");
	run("strip -s -o %s %s", prog, full);
	check_fde_functions(prog, "fde_nopie_s", full, -1, true);
}

/* Without unwind tables: .debug_frame when kept, else one name each. */
static void test_fde_debug_frame(void **state)
{
	char full[256], prog[256];

	build("dframe", prog_src,
	      "-fPIE -pie -g -fno-asynchronous-unwind-tables "
	      "-fno-unwind-tables");
	tmp_path(full, sizeof(full), "dframe");
	tmp_path(prog, sizeof(prog), "dframe_s");
	run("strip -s --keep-section=.debug_frame -o %s %s", prog, full);
	check_fde_functions(prog, "dframe_s", full, -1, true);
	tmp_path(prog, sizeof(prog), "noframe_s");
	run("strip -s -o %s %s", prog, full);
	check_fde_functions(prog, "noframe_s", full, -1, false);
}

/* The file offset and size of section name of path. */
static void section_range(const char *path, const char *name, uint64_t *off,
			  uint64_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	Elf *e;

	assert_true(fd >= 0);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	*off = 0;
	*size = 0;
	while ((scn = elf_nextscn(e, scn))) {
		gelf_getshdr(scn, &sh);
		if (!strcmp(elf_strptr(e, shstrndx, sh.sh_name), name)) {
			*off = sh.sh_offset;
			*size = sh.sh_size;
		}
	}
	elf_end(e);
	close(fd);
	assert_true(*size > 0);
}

/*
 * A damaged .eh_frame: garbage falls back to a name per address; random
 * damage gives each sampled address some name that covers it, no crash.
 */
static void test_fde_damaged(void **state)
{
	char full[256], prog[256], bad[256];
	uint64_t off, size, offs[64];
	unsigned int seed = 17;
	uint8_t *junk;
	int fd;

	tmp_path(full, sizeof(full), "fde_pie");
	tmp_path(prog, sizeof(prog), "fde_pie_s");
	tmp_path(bad, sizeof(bad), "fde_bad");
	run("test -e %s || { cp %s %s && strip -s %s; }", prog, full, prog,
	    prog);
	section_range(prog, ".eh_frame", &off, &size);
	junk = malloc(size);
	assert_non_null(junk);
	memset(junk, 0xff, size);
	run("cp %s %s", prog, bad);
	fd = open(bad, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, junk, size, (off_t)off), (ssize_t)size);
	close(fd);
	check_fde_functions(bad, "fde_bad", full, -1, false);

	for (size_t i = 0; i < 64; i++)
		offs[i] = off / 2 + i * 61; /* over the code, in order */
	for (int round = 0; round < 200; round++) {
		struct dcp_symbolizer *s = dcp_symbolizer_new(NULL);
		struct dcp_symtab *t = dcp_symtab_new();
		struct dcp_symbol sym = { .sz = sizeof(sym) };
		struct file_info fi;

		run("cp %s %s", prog, bad);
		fd = open(bad, O_RDWR);
		assert_true(fd >= 0);
		for (int k = 0; k < 1 + round % 16; k++) {
			uint8_t b = (uint8_t)rand_r(&seed);

			assert_int_equal(
				pwrite(fd, &b, 1,
				       (off_t)(off +
					       (uint64_t)rand_r(&seed) % size)),
				1);
		}
		file_info_init(&fi, bad);
		assert_true(dcp_symbolizer_resolve(s, &fi.info, fd, offs, 64,
						   t) >= 0);
		close(fd);
		assert_int_equal(dcp_symtab_count(t), 64);
		for (size_t i = 0; i < 64; i++) {
			assert_non_null(sym_name(t, 7, offs[i], &sym));
			assert_true(sym.start <= offs[i] &&
				    offs[i] - sym.start < sym.size);
		}
		dcp_symtab_free(t);
		dcp_symbolizer_free(s);
	}
	free(junk);
}

/* The names made for functions without symbols are told from real ones. */
static void test_fde_names(void **state)
{
	bool alone = true;
	char *n = dcp_fde_name("libz.so.1", 0x1a2b0);

	assert_non_null(n);
	assert_string_equal(n, "libz.so.1+0x1a2b0");
	assert_true(dcp_symbol_name_is_made(n, 0x1a2b0, 0x40, 0x1a2c4, &alone));
	assert_false(alone);
	assert_true(dcp_symbol_name_is_made(n, 0x1a2b0, 1, 0x1a2b0, &alone));
	assert_true(alone);
	assert_false(dcp_symbol_name_is_made(n, 0x1a2b, 0x40, 0x1a2c4, NULL));
	assert_false(dcp_symbol_name_is_made("deflate", 0x1a2b0, 0x40, 0x1a2c4,
					     NULL));
	assert_false(dcp_symbol_name_is_made(NULL, 0, 1, 0, NULL));
	free(n);
}

static const char stubs_src[] =
	"#include <stdlib.h>\n"
	"static int impl(int x) { return x + 1; }\n"
	"static void *pick(void) { return (void *)impl; }\n"
	"int twice(int x) __attribute__((ifunc(\"pick\")));\n"
	"long (*volatile fp)(long) = labs;\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	(void)argv;\n"
	"	return twice(argc) + (int)labs(argc) + (int)fp(argc);\n"
	"}\n";

/*
 * The stubs no relocation names by a symbol: the IRELATIVE one of a
 * local ifunc, named after the ifunc (its resolver's address is the
 * addend), and the .plt.got one of __cxa_finalize (bound eagerly by a
 * GLOB_DAT relocation, which names it).
 */
static void test_plt_stubs(void **state)
{
	struct dcp_symbolizer *s = dcp_symbolizer_new(NULL);
	struct dcp_symtab *t = dcp_symtab_new();
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	uint64_t plt, plt_size, got, got_size, offs[2];
	struct file_info fi;
	char path[256];

	build("stubs", stubs_src, "-fPIE -pie");
	tmp_path(path, sizeof(path), "stubs");
	section_range(path, ".plt", &plt, &plt_size);
	section_range(path, ".plt.got", &got, &got_size);
	/* .plt: the header, labs's stub, then twice's (IRELATIVE). */
	assert_int_equal(plt_size, 3 * 16);
	offs[0] = plt + 2 * 16 + 3;
	offs[1] = got + 2;
	file_info_init(&fi, path);
	assert_int_equal(dcp_symbolizer_resolve(s, &fi.info, -1, offs, 2, t),
			 2);
	assert_string_equal(sym_name(t, 7, offs[0], &sym), "twice@plt");
	assert_int_equal(sym.start, plt + 2 * 16);
	assert_int_equal(sym.size, 16);
	assert_string_equal(sym_name(t, 7, offs[1], &sym),
			    "__cxa_finalize@plt");
	assert_int_equal(sym.start, got);
	assert_int_equal(sym.size, got_size);
	dcp_symtab_free(t);
	dcp_symbolizer_free(s);
}

static void test_pinned_deleted(void **state)
{
	struct dcp_symbolizer *s = dcp_symbolizer_new(NULL);
	struct dcp_symtab *t = dcp_symtab_new();
	uint64_t off, size;
	struct file_info fi;
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	char path[256];
	int fd;

	build("gone", prog_src, "");
	tmp_path(path, sizeof(path), "gone");
	file_sym_offset(path, "beta", &off, &size);
	file_info_init(&fi, path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(unlink(path), 0);

	assert_int_equal(dcp_symbolizer_resolve(s, &fi.info, fd, &off, 1, t),
			 1);
	assert_string_equal(sym_name(t, 7, off, &sym), "beta");
	/* The handle stays the caller's. */
	assert_true(fcntl(fd, F_GETFD) >= 0);

	/* Without the handle the path is gone: counted, not named. */
	dcp_symtab_free(t);
	t = dcp_symtab_new();
	assert_int_equal(dcp_symbolizer_resolve(s, &fi.info, -1, &off, 1, t),
			 -ENOENT);
	assert_null(sym_name(t, 7, off, &sym));
	close(fd);
	dcp_symtab_free(t);
	dcp_symbolizer_free(s);
}

/*
 * Kept files (the live view's naming thread): a file named once is named
 * again from what was kept, so a second call needs neither handle nor
 * path; another identity under the same cookie is not taken for it; past
 * the limit the least recently used is closed.
 */
/*
 * Two programs built as NAME_a and NAME_b with flags: *a with the offset of
 * its beta in *off_a (cookie 7), *b with its main's in *off_b (cookie 8);
 * path_a the first's path.
 */
static void build_two(const char *name, const char *flags, struct file_info *a,
		      uint64_t *off_a, struct file_info *b, uint64_t *off_b,
		      char *path_a, size_t size)
{
	char n[64], path_b[256];
	uint64_t sym_size;

	snprintf(n, sizeof(n), "%s_a", name);
	build(n, prog_src, flags);
	tmp_path(path_a, size, n);
	snprintf(n, sizeof(n), "%s_b", name);
	build(n, prog2_src, flags);
	tmp_path(path_b, sizeof(path_b), n);
	file_sym_offset(path_a, "beta", off_a, &sym_size);
	file_sym_offset(path_b, "main", off_b, &sym_size);
	file_info_init(a, path_a);
	file_info_init(b, path_b);
	b->info.cookie = 8;
}

static void test_kept_files(void **state)
{
	struct dcp_symbolizer *s = dcp_symbolizer_new(NULL);
	struct dcp_symtab *t = dcp_symtab_new();
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	struct file_info a, b;
	struct dcp_symbolizer_kept_stats st;
	uint64_t off_a, off_b;
	char path_a[256];

	build_two("kept", "", &a, &off_a, &b, &off_b, path_a, sizeof(path_a));
	dcp_symbolizer_keep_files(s, 1);

	assert_int_equal(dcp_symbolizer_resolve(s, &a.info, -1, &off_a, 1, t),
			 1);
	assert_int_equal(unlink(path_a), 0);
	dcp_symtab_free(t);
	t = dcp_symtab_new();
	/* gone from its path, named from the kept file */
	assert_int_equal(dcp_symbolizer_resolve(s, &a.info, -1, &off_a, 1, t),
			 1);
	assert_string_equal(sym_name(t, 7, off_a, &sym), "beta");

	/* the same cookie for another file (another build id, the identity
	 * of a file that has one): looked for, not found */
	a.info.build_id[0] ^= 1;
	dcp_symtab_free(t);
	t = dcp_symtab_new();
	assert_true(dcp_symbolizer_resolve(s, &a.info, -1, &off_a, 1, t) < 0);
	a.info.build_id[0] ^= 1;

	/* a second file takes the only place: the first is closed */
	assert_int_equal(dcp_symbolizer_resolve(s, &b.info, -1, &off_b, 1, t),
			 1);
	dcp_symtab_free(t);
	t = dcp_symtab_new();
	assert_int_equal(dcp_symbolizer_resolve(s, &a.info, -1, &off_a, 1, t),
			 -ENOENT);
	/* one hit (a again), four misses (a, a of another build, b, a
	 * gone), one file closed for b's place */
	dcp_symbolizer_kept_stats(s, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 4);
	assert_int_equal(st.evicted, 1);
	assert_int_equal(st.files, 1);
	dcp_symtab_free(t);
	dcp_symbolizer_free(s);
}

/* Whether mallinfo2() sees this process's allocations: not under a
 * sanitizer's allocator, which it does not know. */
static bool heap_is_seen(void)
{
	size_t before = mallinfo2().uordblks + mallinfo2().hblkhd;
	void *p = malloc(1 << 20);
	bool seen =
		mallinfo2().uordblks + mallinfo2().hblkhd >= before + (1 << 20);

	free(p);
	return seen;
}

static void test_kept_bytes(void **state)
{
	struct dcp_symbolizer *s = dcp_symbolizer_new(NULL);
	struct dcp_symtab *t = dcp_symtab_new();
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	struct dcp_symbolizer_kept_stats st;
	struct file_info a, b;
	uint64_t off_a, off_b;
	char path_a[256];
	bool seen = heap_is_seen();

	build_two("bytes", "-g", &a, &off_a, &b, &off_b, path_a,
		  sizeof(path_a));

	/* room for both: each kept, with the heap its reading took */
	dcp_symbolizer_keep_files(s, 4);
	dcp_symbolizer_keep_bytes(s, 64 << 20);
	assert_int_equal(dcp_symbolizer_resolve(s, &a.info, -1, &off_a, 1, t),
			 1);
	assert_int_equal(dcp_symbolizer_resolve(s, &b.info, -1, &off_b, 1, t),
			 1);
	dcp_symbolizer_kept_stats(s, &st);
	assert_int_equal(st.files, 2);
	assert_int_equal(st.evicted, 0);
	if (seen)
		assert_true(st.bytes > 0);

	/* a byte of room: each file closed once named, the names right */
	dcp_symbolizer_keep_files(s, 4);
	dcp_symbolizer_keep_bytes(s, 1);
	if (seen) {
		dcp_symtab_free(t);
		t = dcp_symtab_new();
		assert_int_equal(
			dcp_symbolizer_resolve(s, &a.info, -1, &off_a, 1, t),
			1);
		assert_int_equal(
			dcp_symbolizer_resolve(s, &b.info, -1, &off_b, 1, t),
			1);
		assert_string_equal(sym_name(t, 7, off_a, &sym), "beta");
		assert_string_equal(sym_name(t, 8, off_b, &sym), "main");
		dcp_symbolizer_kept_stats(s, &st);
		assert_int_equal(st.files, 0);
		assert_int_equal(st.bytes, 0);
		assert_int_equal(st.evicted, 2);
	}
	dcp_symtab_free(t);
	dcp_symbolizer_free(s);
}

static void check_replaced(const char *name, const char *flags)
{
	struct dcp_symbolizer *s = dcp_symbolizer_new(NULL);
	struct dcp_symtab *t = dcp_symtab_new();
	uint64_t off, size;
	struct file_info fi;
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	char path[256], src[256];

	build(name, prog_src, flags);
	tmp_path(path, sizeof(path), name);
	file_sym_offset(path, "alpha", &off, &size);
	file_info_init(&fi, path);
	assert_int_equal(dcp_symbolizer_resolve(s, &fi.info, -1, &off, 1, t),
			 1);
	assert_string_equal(sym_name(t, 7, off, &sym), "alpha");
	dcp_symtab_free(t);

	/* Rebuilt at the same path, as a new inode: no longer the file. */
	snprintf(src, sizeof(src), "%s.new", name);
	build(src, prog2_src, flags);
	run("mv -f %s/%s.new %s", tmpdir, name, path);
	t = dcp_symtab_new();
	assert_int_equal(dcp_symbolizer_resolve(s, &fi.info, -1, &off, 1, t),
			 -ESTALE);
	assert_null(sym_name(t, 7, off, &sym));
	dcp_symtab_free(t);
	dcp_symbolizer_free(s);
}

static void test_path_rebuilt(void **state)
{
	check_replaced("rebuilt", "");
}

static void test_path_rebuilt_no_build_id(void **state)
{
	char path[256];
	uint8_t id[DCP_BUILD_ID_MAX];

	check_replaced("rebuilt_noid", "-Wl,--build-id=none");
	tmp_path(path, sizeof(path), "rebuilt_noid");
	/* The dev/inode path really was the one taken. */
	assert_int_equal(dcp_build_id_read_path(path, id), 0);
}

/*
 * The address of the kallsyms text symbol want, or with want NULL of the
 * first module text symbol (its module name into module); 0 if none.
 */
static uint64_t kallsyms_addr(const char *want, char *module, size_t msize)
{
	char line[512], name[256], mod[128];
	uint64_t addr, found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");
	char type;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		int n = sscanf(line, "%" SCNx64 " %c %255s [%127[^]]]", &addr,
			       &type, name, mod);

		if (n < 3 || (type != 'T' && type != 't'))
			continue;
		if (want ? strcmp(name, want) != 0 : n != 4)
			continue;
		if (module)
			snprintf(module, msize, "%s", mod);
		found = addr;
		break;
	}
	fclose(f);
	return found;
}

static void test_kernel(void **state)
{
	struct dcp_cookie_table *ct = dcp_cookie_table_new();
	struct dcp_kernel_layout k;
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	struct dcp_symbolizer *s;
	struct dcp_symtab *t;
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	uint64_t addr, off, offs[2];
	uint32_t cookie;
	char mod[256];
	int err;

	assert_non_null(ct);
	err = dcp_kernel_layout_load(&k, ct);
	if (err == -EPERM) {
		fprintf(stderr, "SKIP: kernel addresses are hidden "
				"(kptr_restrict): kernel symbols untested\n");
		dcp_kernel_layout_free(&k);
		dcp_cookie_table_free(ct);
		skip();
	}
	assert_int_equal(err, 0);
	assert_true(k.text_start != 0);
	assert_int_equal(dcp_cookie_table_lookup(ct, k.kernel_cookie, &info),
			 0);
	assert_int_equal(info.kind, DCP_COOKIE_KIND_KERNEL);
	assert_string_equal(info.name, "[kernel.kallsyms]");
	for (size_t i = 1; i < k.nr_modules; i++)
		assert_true(k.modules[i - 1].start < k.modules[i].start);

	addr = kallsyms_addr("schedule", NULL, 0);
	if (!addr)
		addr = kallsyms_addr("do_syscall_64", NULL, 0);
	assert_true(addr != 0);
	cookie = dcp_kernel_layout_resolve(&k, addr + 2, &off);
	assert_int_equal(cookie, k.kernel_cookie);
	assert_int_equal(off, addr + 2 - k.text_start);

	s = dcp_symbolizer_new(&k);
	t = dcp_symtab_new();
	offs[0] = off;
	offs[1] = addr - k.text_start;
	assert_int_equal(dcp_symbolizer_resolve(s, &info, -1, offs, 2, t), 2);
	assert_non_null(sym_name(t, cookie, off, &sym));
	assert_true(strcmp(sym.name, "schedule") == 0 ||
		    strcmp(sym.name, "do_syscall_64") == 0);
	assert_int_equal(sym.start, addr - k.text_start);
	assert_true(sym.size > 2);
	assert_non_null(sym_name(t, cookie, offs[1], &sym));
	assert_int_equal(sym.start, offs[1]);

	/* A module symbol, when the kernel has modules loaded. */
	memset(mod, 0, sizeof(mod));
	addr = kallsyms_addr(NULL, mod, sizeof(mod));
	if (addr && k.nr_modules) {
		cookie = dcp_kernel_layout_resolve(&k, addr, &off);
		assert_int_equal(dcp_cookie_table_lookup(ct, cookie, &info), 0);
		assert_int_equal(info.kind, DCP_COOKIE_KIND_MODULE);
		assert_string_equal(info.name, mod);
		assert_int_equal(
			dcp_symbolizer_resolve(s, &info, -1, &off, 1, t), 1);
		assert_non_null(sym_name(t, cookie, off, &sym));
		assert_int_equal(sym.start, off);
	} else {
		fprintf(stderr, "note: no kernel modules, module symbols "
				"untested\n");
	}
	dcp_symtab_free(t);
	dcp_symbolizer_free(s);
	dcp_kernel_layout_free(&k);
	dcp_cookie_table_free(ct);
}

/* The file offset of an address in this process, from /proc/self/maps. */
static int self_file_offset(const void *p, char *path, size_t size,
			    uint64_t *off, uint64_t *map_start,
			    uint64_t *map_end)
{
	uint64_t a = (uintptr_t)p, start, end, pgoff;
	char line[1024], file[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = -1;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		file[0] = '\0';
		if (sscanf(line,
			   "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64
			   " %*s %*s %511s",
			   &start, &end, &pgoff, file) < 3)
			continue;
		if (a < start || a >= end)
			continue;
		snprintf(path, size, "%s", file);
		*off = a - start + pgoff;
		*map_start = pgoff;
		*map_end = end - start + pgoff;
		found = 0;
		break;
	}
	fclose(f);
	return found;
}

/* The one parser of /proc/kallsyms lines, kernel and module symbols. */
static void test_kallsyms_line(void **state)
{
	struct dcp_kallsyms_line l;

	assert_true(dcp_kallsyms_parse_line("ffffffff81000000 T _text\n", &l));
	assert_int_equal(l.addr, 0xffffffff81000000ull);
	assert_int_equal(l.type, 'T');
	assert_int_equal(l.name_len, 5);
	assert_memory_equal(l.name, "_text", 5);
	assert_null(l.module);

	assert_true(dcp_kallsyms_parse_line(
		"ffffffffc0a01010 t ext4_fill_super\t[ext4]\n", &l));
	assert_int_equal(l.type, 't');
	assert_int_equal(l.name_len, strlen("ext4_fill_super"));
	assert_memory_equal(l.name, "ext4_fill_super", l.name_len);
	assert_non_null(l.module);
	assert_int_equal(l.module_len, 4);
	assert_memory_equal(l.module, "ext4", 4);

	/* hidden addresses still parse (as 0); no newline at the end */
	assert_true(dcp_kallsyms_parse_line("0000000000000000 W weak", &l));
	assert_int_equal(l.addr, 0);
	assert_int_equal(l.name_len, 4);

	assert_false(dcp_kallsyms_parse_line("", &l));
	assert_false(dcp_kallsyms_parse_line("zzzz T name\n", &l));
	assert_false(dcp_kallsyms_parse_line("ffff  T name\n", &l));
	assert_false(dcp_kallsyms_parse_line("ffff TT name\n", &l));
	assert_false(dcp_kallsyms_parse_line("ffff T", &l));
}

static void test_libc_malloc(void **state)
{
	struct dcp_symbolizer *s = dcp_symbolizer_new(NULL);
	struct dcp_symtab *t = dcp_symtab_new();
	uint64_t off, lo = 0, hi = 0, *offs;
	struct file_info fi;
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	char path[512];
	void *libc, *fn;
	size_t n = 0;
	int fd, r;

	libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	assert_non_null(libc);
	/* libc's own malloc, whatever a sanitizer interposes. */
	fn = dlsym(libc, "malloc");
	assert_non_null(fn);
	assert_int_equal(
		self_file_offset(fn, path, sizeof(path), &off, &lo, &hi), 0);
	assert_non_null(strstr(path, "libc"));
	file_info_init(&fi, path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);

	assert_int_equal(dcp_symbolizer_resolve(s, &fi.info, fd, &off, 1, t),
			 1);
	assert_non_null(sym_name(t, 7, off, &sym));
	assert_non_null(strstr(sym.name, "malloc"));
	assert_true(sym.start <= off && off - sym.start < sym.size);

	/* Thousands of offsets over libc's text in one call. */
	offs = calloc(8192, sizeof(*offs));
	assert_non_null(offs);
	for (uint64_t o = lo + 1; o < hi && n < 8192; o += 97)
		offs[n++] = o;
	dcp_symtab_free(t);
	t = dcp_symtab_new();
	r = dcp_symbolizer_resolve(s, &fi.info, fd, offs, n, t);
	assert_true(r > 0 && (size_t)r <= n);
	assert_int_equal(dcp_symtab_count(t), n);
	for (size_t i = 0; i < n; i++) {
		if (!sym_name(t, 7, offs[i], &sym))
			continue;
		assert_true(sym.start <= offs[i]);
		assert_true(offs[i] - sym.start < sym.size);
	}
	free(offs);
	close(fd);
	dlclose(libc);
	dcp_symtab_free(t);
	dcp_symbolizer_free(s);
}

static void test_vdso(void **state)
{
	const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct dcp_symbolizer *s = dcp_symbolizer_new(NULL);
	struct dcp_symtab *t = dcp_symtab_new();
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	uint64_t off, size;
	size_t len;
	char *copy;
	Elf *e;

	if (!eh)
		skip();
	/* Section headers close the image. */
	len = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	copy = malloc(len);
	assert_non_null(copy);
	memcpy(copy, eh, len);
	e = elf_memory(copy, len);
	assert_non_null(e);
	assert_int_equal(elf_sym_offset(e, "__vdso_clock_gettime", &off, &size),
			 0);
	elf_end(e);
	free(copy);

	memset(&info, 0, sizeof(info));
	info.cookie = 3;
	info.kind = DCP_COOKIE_KIND_VDSO;
	info.name = "[vdso]";
	off += 1;
	assert_int_equal(dcp_symbolizer_resolve(s, &info, -1, &off, 1, t), 1);
	assert_non_null(sym_name(t, 3, off, &sym));
	assert_non_null(strstr(sym.name, "clock_gettime"));
	assert_int_equal(sym.start, off - 1);
	dcp_symtab_free(t);
	dcp_symbolizer_free(s);
}

static void test_no_symbols(void **state)
{
	static const enum dcp_cookie_kind kinds[] = { DCP_COOKIE_KIND_ANON,
						      DCP_COOKIE_KIND_JIT,
						      DCP_COOKIE_KIND_IDLE,
						      DCP_COOKIE_KIND_UNKNOWN };
	struct dcp_symbolizer *s = dcp_symbolizer_new(NULL);
	uint64_t offs[2] = { 0x10, 0x2000 };
	struct dcp_cookie_info info = { .sz = sizeof(info) };
	struct dcp_symbol sym = { .sz = sizeof(sym) };

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct dcp_symtab *t = dcp_symtab_new();

		memset(&info, 0, sizeof(info));
		info.cookie = (uint32_t)i + 1;
		info.kind = kinds[i];
		info.name = "[anon:exec]";
		assert_int_equal(
			dcp_symbolizer_resolve(s, &info, -1, offs, 2, t), 0);
		assert_int_equal(dcp_symtab_count(t), 2);
		assert_null(sym_name(t, info.cookie, 0x2000, &sym));
		dcp_symtab_free(t);
	}
	dcp_symbolizer_free(s);
}

static const char inline_src[] =
	"volatile int sink;\n"
	"static inline __attribute__((always_inline)) int inner(int x)\n"
	"{\n"
	"	for (int i = 0; i < x; i++)\n"
	"		sink += i * x;\n"
	"	return sink;\n"
	"}\n"
	"__attribute__((noinline)) int outer(int x)\n"
	"{\n"
	"	return inner(x) + 1;\n"
	"}\n"
	"__attribute__((noinline)) int rs(int x)\n"
	"	__asm__(\"_ZN7mycrate4spin17h0123456789abcdefE\");\n"
	"__attribute__((noinline)) int rs(int x) { return x * sink; }\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	(void)argv;\n"
	"	return outer(argc) + rs(argc);\n"
	"}\n";

/*
 * DWARF details: some address of outer() lies in the inlined loop of
 * inner(): one inlined call, inner at lines 4-5, called from line 10.
 * The Rust-named function is demangled; the symbol name stays raw.
 */
static void test_inline_and_demangle(void **state)
{
	struct dcp_symbolizer *s = dcp_symbolizer_new(NULL);
	struct dcp_symtab *t = dcp_symtab_new();
	uint64_t start, size, rstart, rsize, *offs;
	struct dcp_inline_frame inl = { .sz = sizeof(inl) };
	struct file_info fi;
	struct dcp_symbol sym = { .sz = sizeof(sym) };
	char path[256];
	size_t inlined = 0;

	build("inl", inline_src, "-O1 -g");
	tmp_path(path, sizeof(path), "inl");
	file_info_init(&fi, path);
	file_sym_offset(path, "outer", &start, &size);
	file_sym_offset(path, "_ZN7mycrate4spin17h0123456789abcdefE", &rstart,
			&rsize);
	offs = calloc(size + 1, sizeof(*offs));
	assert_non_null(offs);
	for (uint64_t i = 0; i < size; i++)
		offs[i] = start + i;
	offs[size] = rstart;
	assert_int_equal(
		dcp_symbolizer_resolve(s, &fi.info, -1, offs, size + 1, t),
		(int)size + 1);
	for (uint64_t i = 0; i < size; i++) {
		assert_int_equal(dcp_symtab_lookup(t, 7, offs[i], &sym), 0);
		assert_string_equal(sym.name, "outer");
		assert_null(sym.demangled);
		assert_non_null(sym.file);
		assert_non_null(strstr(sym.file, "inl.c"));
		assert_true(sym.file[0] == '/');
		if (!sym.nr_inline) {
			assert_true(sym.line >= 9 && sym.line <= 11);
			continue;
		}
		inlined++;
		assert_int_equal(sym.nr_inline, 1);
		/* the function's position is the call site */
		assert_int_equal(sym.line, 10);
		assert_int_equal(dcp_symtab_inline(t, 7, offs[i], 0, &inl), 0);
		assert_string_equal(inl.name, "inner");
		assert_null(inl.demangled);
		assert_non_null(strstr(inl.file, "inl.c"));
		assert_true(inl.line >= 3 && inl.line <= 6);
		assert_int_equal(dcp_symtab_inline(t, 7, offs[i], 1, &inl),
				 -ENOENT);
	}
	assert_true(inlined > 0);
	assert_int_equal(dcp_symtab_lookup(t, 7, rstart, &sym), 0);
	assert_string_equal(sym.name, "_ZN7mycrate4spin17h0123456789abcdefE");
	assert_string_equal(sym.demangled, "mycrate::spin");
	free(offs);
	dcp_symtab_free(t);
	dcp_symbolizer_free(s);
}

static void test_demangle(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "_ZN6shapes3BoxIiE4spinEm",
		  "shapes::Box<int>::spin(unsigned long)" },
		{ "_Z3maxIiET_S0_S0_", "int max<int>(int, int)" },
		{ "_ZN4core3fmt5write17h0123456789abcdefE",
		  "core::fmt::write" },
		{ "_RNvCs15kBYyAo9fc_7mycrate7example", "mycrate::example" },
		{ "_Z3foov.cold", "foo() [clone .cold]" },
		{ "main", NULL },
		{ "_start", NULL },
		{ "_Zgarbage", NULL },
		{ "", NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = dcp_demangle(cases[i].in);

		if (cases[i].out) {
			assert_non_null(d);
			assert_string_equal(d, cases[i].out);
		} else {
			assert_null(d);
		}
		free(d);
	}
	assert_null(dcp_demangle(NULL));
}

/* Details attach to an added address, go with a replacing add, and copy. */
static void test_symtab_detail(void **state)
{
	struct dcp_symtab *t = dcp_symtab_new(), *u = dcp_symtab_new();
	struct dcp_inline_frame in[2] = {
		{ sizeof(in[0]), "inner", NULL, "/src/a.h", 12 },
		{ sizeof(in[0]), "_ZN1a3midEv", "a::mid()", "/src/b.h", 30 },
	}, out = { .sz = sizeof(out) };
	struct dcp_symbol sym = { .sz = sizeof(sym) };

	assert_int_equal(
		dcp_symtab_set_detail(t, 1, 0x10, NULL, NULL, 0, NULL, 0),
		-ENOENT);
	assert_int_equal(dcp_symtab_add(t, 1, 0x10, "outer", 0x8, 0x40), 0);
	assert_int_equal(
		dcp_symtab_set_detail(t, 1, 0x10, "dm", "/src/c.c", 77, in, 2),
		0);
	assert_int_equal(dcp_symtab_copy(u, t, 1, 0x10), 0);
	assert_int_equal(dcp_symtab_copy(u, t, 1, 0x11), -ENOENT);
	assert_int_equal(dcp_symtab_lookup(u, 1, 0x10, &sym), 0);
	assert_string_equal(sym.name, "outer");
	assert_string_equal(sym.demangled, "dm");
	assert_string_equal(sym.file, "/src/c.c");
	assert_int_equal(sym.line, 77);
	assert_int_equal(sym.nr_inline, 2);
	assert_int_equal(dcp_symtab_inline(u, 1, 0x10, 1, &out), 0);
	assert_string_equal(out.name, "_ZN1a3midEv");
	assert_string_equal(out.demangled, "a::mid()");
	assert_string_equal(out.file, "/src/b.h");
	assert_int_equal(out.line, 30);
	/* a new answer for the address drops the old details */
	assert_int_equal(dcp_symtab_add(t, 1, 0x10, "other", 0, 4), 0);
	assert_int_equal(dcp_symtab_lookup(t, 1, 0x10, &sym), 0);
	assert_string_equal(sym.name, "other");
	assert_null(sym.demangled);
	assert_null(sym.file);
	assert_int_equal(sym.nr_inline, 0);
	assert_int_equal(dcp_symtab_inline(t, 1, 0x10, 0, &out), -ENOENT);
	dcp_symtab_free(t);
	dcp_symtab_free(u);
}

static int setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/dcp-symbolize-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	elf_version(EV_CURRENT);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_functions),
		cmocka_unit_test(test_file_no_symbol),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_fde),
		cmocka_unit_test(test_fde_debug_frame),
		cmocka_unit_test(test_fde_damaged),
		cmocka_unit_test(test_fde_names),
		cmocka_unit_test(test_plt_stubs),
		cmocka_unit_test(test_pinned_deleted),
		cmocka_unit_test(test_kept_files),
		cmocka_unit_test(test_kept_bytes),
		cmocka_unit_test(test_path_rebuilt),
		cmocka_unit_test(test_path_rebuilt_no_build_id),
		cmocka_unit_test(test_kernel),
		cmocka_unit_test(test_kallsyms_line),
		cmocka_unit_test(test_libc_malloc),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_no_symbols),
		cmocka_unit_test(test_inline_and_demangle),
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_symtab_detail),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
