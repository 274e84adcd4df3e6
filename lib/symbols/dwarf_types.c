// SPDX-License-Identifier: MIT
/*
 * Questions about a file's types answered from its DWARF
 * (dwarf_types_internal.h): the file reported to libdwfl, whose search for
 * a separate debug file is the symbolizer's (debuginfo.c), then one pass
 * over the units' top-level entries, where C puts its types, that ends as
 * soon as every question is settled.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dwarf_types_internal.h"
#include "log_internal.h"
#include "symbolizer_internal.h"

/* a chain of typedefs and qualifiers longer than this is taken as a loop */
#define MAX_TYPE_HOPS 32

struct walk {
	const struct dcp_dwarf_query *q;
	struct dcp_dwarf_answer *a;
	bool *settled; /* answered, or known to have no answer */
	size_t n, left;
};

static void settle(struct walk *w, size_t i, bool found, int64_t value)
{
	w->a[i].found = found;
	w->a[i].value = found ? value : 0;
	w->settled[i] = true;
	w->left--;
}

static bool is_declaration(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	bool flag = false;

	return dwarf_attr_integrate(die, DW_AT_declaration, &attr) &&
	       dwarf_formflag(&attr, &flag) == 0 && flag;
}

/* The type a DIE's DW_AT_type names, into *out: 0, or -ENOENT. */
static int type_of(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute attr;

	if (!dwarf_attr_integrate(die, DW_AT_type, &attr) ||
	    !dwarf_formref_die(&attr, out))
		return -ENOENT;
	return 0;
}

/* A type through its typedefs and qualifiers, in place: 0, or -ENOENT
 * (void, or a loop). */
static int strip_type(Dwarf_Die *die)
{
	for (int hops = 0; hops < MAX_TYPE_HOPS; hops++) {
		switch (dwarf_tag(die)) {
		case DW_TAG_typedef:
		case DW_TAG_const_type:
		case DW_TAG_volatile_type:
		case DW_TAG_restrict_type:
		case DW_TAG_atomic_type:
			if (type_of(die, die))
				return -ENOENT;
			break;
		default:
			return 0;
		}
	}
	return -ENOENT;
}

/* A member's offset in its structure (a union's members have none). */
static int member_location(Dwarf_Die *member, int64_t *off)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;
	Dwarf_Op *ops;
	size_t nops;

	*off = 0;
	if (!dwarf_attr_integrate(member, DW_AT_data_member_location, &attr))
		return 0;
	if (dwarf_formudata(&attr, &v) == 0) {
		*off = (int64_t)v;
		return 0;
	}
	/* DWARF 2's form: a location expression adding the offset */
	if (dwarf_getlocation(&attr, &ops, &nops) == 0 && nops == 1 &&
	    ops[0].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[0].number;
		return 0;
	}
	return -EINVAL;
}

static bool is_aggregate(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);

	return tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
	       tag == DW_TAG_class_type;
}

/*
 * The member called name (len bytes) of the structure or union agg, into
 * *member, its offset added to *off; the members of an anonymous member
 * (C11) are looked in as the structure's own. 0, -ENOENT, or -EINVAL when
 * its offset is written in a form not known here.
 */
static int find_member(Dwarf_Die *agg, const char *name, size_t len,
		       Dwarf_Die *member, int64_t *off)
{
	Dwarf_Die child;
	int ret;

	if (dwarf_child(agg, &child) != 0)
		return -ENOENT;
	do {
		const char *got;
		Dwarf_Die inner;
		int64_t at;

		if (dwarf_tag(&child) != DW_TAG_member)
			continue;
		got = dwarf_diename(&child);
		if (got) {
			if (strncmp(got, name, len) || got[len])
				continue;
			if (member_location(&child, &at))
				return -EINVAL;
			*member = child;
			*off += at;
			return 0;
		}
		if (member_location(&child, &at) || type_of(&child, &inner) ||
		    strip_type(&inner) || !is_aggregate(&inner))
			continue;
		ret = find_member(&inner, name, len, member, off);
		if (ret != -ENOENT) {
			if (ret == 0)
				*off += at;
			return ret;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return -ENOENT;
}

/* The offset of member path ("a.b.c") in the aggregate type: 0, or
 * -ENOENT (no such member), -EINVAL (a bit-field, or a form not known). */
static int member_offset(Dwarf_Die *type, const char *path, int64_t *off)
{
	Dwarf_Die agg = *type, member;
	const char *part = path;
	Dwarf_Attribute attr;

	*off = 0;
	for (;;) {
		size_t len = strcspn(part, ".");
		int ret;

		if (strip_type(&agg) || !is_aggregate(&agg) ||
		    is_declaration(&agg))
			return -ENOENT;
		ret = find_member(&agg, part, len, &member, off);
		if (ret)
			return ret;
		if (!part[len])
			break;
		part += len + 1;
		if (type_of(&member, &agg))
			return -ENOENT;
	}
	/* a bit-field has no byte offset of its own */
	if (dwarf_attr_integrate(&member, DW_AT_bit_size, &attr))
		return -EINVAL;
	return 0;
}

/* Whether the DIE die of tag tag, called name, is what type names. */
static bool names_type(const char *type, int tag, const char *name)
{
	static const struct {
		const char *word;
		int tag;
	} words[] = {
		{ "struct ", DW_TAG_structure_type },
		{ "struct ", DW_TAG_class_type },
		{ "union ", DW_TAG_union_type },
		{ "enum ", DW_TAG_enumeration_type },
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t len = strlen(words[i].word);

		if (!strncmp(type, words[i].word, len))
			return tag == words[i].tag && !strcmp(type + len, name);
	}
	return (tag == DW_TAG_typedef || tag == DW_TAG_base_type) &&
	       !strcmp(type, name);
}

/* The questions about the type that die (a definition) is. */
static void answer_type(struct walk *w, const char *type, Dwarf_Die *die)
{
	Dwarf_Die target = *die;
	Dwarf_Word size = 0;
	int64_t off = 0;
	bool found;

	/* a typedef of an incomplete type here: its definition is in
	 * another unit */
	if (dwarf_tag(die) == DW_TAG_typedef &&
	    (strip_type(&target) || is_declaration(&target)))
		return;
	for (size_t i = 0; i < w->n; i++) {
		const struct dcp_dwarf_query *q = &w->q[i];

		if (w->settled[i] || q->kind == DCP_DWARF_ENUMERATOR ||
		    strcmp(q->type, type))
			continue;
		if (q->kind == DCP_DWARF_TYPE_SIZE) {
			found = dwarf_aggregate_size(&target, &size) == 0;
			settle(w, i, found, (int64_t)size);
		} else {
			found = member_offset(&target, q->name, &off) == 0;
			settle(w, i, found, off);
		}
	}
}

/*
 * An enumerator's value: signed in the signed forms only, for compilers
 * write a negative value that way and a non-negative one in the smallest
 * data form, whatever the enumeration's type. 0, or -ENOENT.
 */
static int enumerator_value(Dwarf_Die *die, int64_t *value)
{
	Dwarf_Attribute attr;
	Dwarf_Sword s;
	Dwarf_Word u;

	if (!dwarf_attr_integrate(die, DW_AT_const_value, &attr))
		return -ENOENT;
	switch (dwarf_whatform(&attr)) {
	case DW_FORM_sdata:
	case DW_FORM_implicit_const:
		if (dwarf_formsdata(&attr, &s))
			return -ENOENT;
		*value = s;
		return 0;
	default:
		if (dwarf_formudata(&attr, &u))
			return -ENOENT;
		*value = (int64_t)u;
		return 0;
	}
}

static void answer_enumerators(struct walk *w, Dwarf_Die *die)
{
	Dwarf_Die child;

	if (dwarf_child(die, &child) != 0)
		return;
	do {
		const char *name = dwarf_diename(&child);
		int64_t v = 0;
		bool found;

		if (!name || dwarf_tag(&child) != DW_TAG_enumerator)
			continue;
		for (size_t i = 0; i < w->n; i++) {
			if (w->settled[i] ||
			    w->q[i].kind != DCP_DWARF_ENUMERATOR ||
			    strcmp(w->q[i].name, name))
				continue;
			found = enumerator_value(&child, &v) == 0;
			settle(w, i, found, v);
		}
	} while (w->left && dwarf_siblingof(&child, &child) == 0);
}

/* One top-level entry of a unit: the questions it answers. */
static void visit(struct walk *w, Dwarf_Die *die)
{
	int tag = dwarf_tag(die);
	const char *name;

	switch (tag) {
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
	case DW_TAG_enumeration_type:
	case DW_TAG_typedef:
	case DW_TAG_base_type:
		break;
	default:
		return;
	}
	if (is_declaration(die))
		return;
	if (tag == DW_TAG_enumeration_type)
		answer_enumerators(w, die);
	name = dwarf_diename(die);
	if (!name)
		return;
	for (size_t i = 0; i < w->n && w->left; i++) {
		const struct dcp_dwarf_query *q = &w->q[i];

		/* answer_type() settles every question about the type
		 * once it is defined */
		if (!w->settled[i] && q->kind != DCP_DWARF_ENUMERATOR &&
		    names_type(q->type, tag, name))
			answer_type(w, q->type, die);
	}
}

static void walk_units(Dwarf *dw, struct walk *w)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie, child;
	uint8_t unit_type;
	Dwarf_Half version;

	while (w->left && dwarf_get_units(dw, cu, &cu, &version, &unit_type,
					  &cudie, &subdie) == 0) {
		Dwarf_Die *unit =
			unit_type == DW_UT_skeleton ? &subdie : &cudie;

		if (dwarf_child(unit, &child) != 0)
			continue;
		do
			visit(w, &child);
		while (w->left && dwarf_siblingof(&child, &child) == 0);
	}
}

/* The file's DWARF through libdwfl, its session in *dwflp and module in
 * *modp: 0, or a negative errno (-ENOENT: no DWARF found). */
static int open_dwarf(struct dcp_symbolizer *s, const char *path, int fd,
		      Dwfl **dwflp, Dwfl_Module **modp, Dwarf **dwp)
{
	static char *default_path;
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dcp_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &default_path,
	};
	const char *base = strrchr(path, '/');
	void **userdata = NULL;
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	Dwfl *dwfl;
	int own = -1;

	if (fd >= 0) {
		own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (own < 0)
			return dcp_error(
				errno, "cannot duplicate handle of '%s'", path);
	}
	elf_version(EV_CURRENT);
	dwfl = dwfl_begin(s ? &s->cb : &cb);
	if (!dwfl) {
		if (own >= 0)
			close(own);
		return dcp_error(ENOMEM, "cannot start libdwfl: %s",
				 dwfl_errmsg(-1));
	}
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, base ? base + 1 : path, path, own, 0, true);
	if (!mod) {
		/* on failure the descriptor is still ours */
		if (own >= 0)
			close(own);
		dwfl_end(dwfl);
		return dcp_error(ENOEXEC, "cannot read ELF '%s': %s", path,
				 dwfl_errmsg(-1));
	}
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (userdata)
		*userdata = s; /* for dcp_find_debuginfo */
	if (dwfl_report_end(dwfl, NULL, NULL) != 0) {
		dwfl_end(dwfl);
		return dcp_error(ENOEXEC, "cannot report '%s': %s", path,
				 dwfl_errmsg(-1));
	}
	*dwp = dwfl_module_getdwarf(mod, &bias);
	if (!*dwp) {
		dwfl_end(dwfl);
		return dcp_error(ENOENT, "no DWARF for '%s'", path);
	}
	*dwflp = dwfl;
	*modp = mod;
	return 0;
}

/* The path of the file a module's DWARF is read from, malloc'd. */
static char *dwarf_file(Dwfl_Module *mod, const char *path)
{
	const char *main_file = NULL, *debug_file = NULL;

	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &main_file,
			 &debug_file);
	return strdup(debug_file ? debug_file : main_file ? main_file : path);
}

int dcp_dwarf_types_answer(struct dcp_symbolizer *s, const char *path, int fd,
			   const struct dcp_dwarf_query *q, size_t n,
			   struct dcp_dwarf_answer *a, char **dwarf_path)
{
	struct walk w = { .q = q, .a = a, .n = n, .left = n };
	size_t found = 0;
	Dwfl_Module *mod = NULL;
	Dwfl *dwfl = NULL;
	Dwarf *dw;
	int ret;

	if (dwarf_path)
		*dwarf_path = NULL;
	memset(a, 0, n * sizeof(*a));
	w.settled = calloc(n ? n : 1, sizeof(*w.settled));
	if (!w.settled)
		return dcp_error(ENOMEM, "out of memory");
	ret = open_dwarf(s, path, fd, &dwfl, &mod, &dw);
	if (ret) {
		free(w.settled);
		return ret;
	}
	walk_units(dw, &w);
	for (size_t i = 0; i < n; i++)
		found += a[i].found;
	if (dwarf_path) {
		*dwarf_path = dwarf_file(mod, path);
		if (!*dwarf_path)
			ret = dcp_error(ENOMEM, "out of memory");
	}
	dwfl_end(dwfl);
	free(w.settled);
	return ret ? ret : (int)found;
}
