// SPDX-License-Identifier: MIT
/* libcurl loaded at run time (curl_load.h). */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#include "curl_load.h"

/* the soname the build's libcurl.so names (Makefile) */
#ifndef DCPROF_CURL_SONAME
#define DCPROF_CURL_SONAME "libcurl.so.4"
#endif

struct push_curl push_curl;

/* A symbol of the library into *slot; false when it has none. */
static bool resolve(void *lib, const char *name, void *slot)
{
	void *sym = dlsym(lib, name);

	if (!sym)
		return false;
	/* POSIX guarantees that a function's address converts this way */
	*(void **)slot = sym;
	return true;
}

int push_curl_load(struct push_error *err)
{
	static bool loaded;
	const struct {
		const char *name;
		void *slot;
	} syms[] = {
		{ "curl_global_init", &push_curl.global_init },
		{ "curl_global_cleanup", &push_curl.global_cleanup },
		{ "curl_free", &push_curl.free },
		{ "curl_url", &push_curl.url },
		{ "curl_url_set", &push_curl.url_set },
		{ "curl_url_get", &push_curl.url_get },
		{ "curl_url_cleanup", &push_curl.url_cleanup },
		{ "curl_easy_init", &push_curl.easy_init },
		{ "curl_easy_escape", &push_curl.easy_escape },
		{ "curl_easy_setopt", &push_curl.easy_setopt },
		{ "curl_easy_perform", &push_curl.easy_perform },
		{ "curl_easy_getinfo", &push_curl.easy_getinfo },
		{ "curl_easy_strerror", &push_curl.easy_strerror },
		{ "curl_easy_cleanup", &push_curl.easy_cleanup },
		{ "curl_slist_append", &push_curl.slist_append },
		{ "curl_slist_free_all", &push_curl.slist_free_all },
	};
	void *lib;

	if (loaded)
		return 0;
	/* never closed: libcurl and its TLS library keep global state */
	lib = dlopen(DCPROF_CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(err->msg, sizeof(err->msg), "--push needs libcurl: %s",
			 dlerror());
		return -ENOENT;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (!resolve(lib, syms[i].name, syms[i].slot)) {
			snprintf(err->msg, sizeof(err->msg),
				 "--push needs libcurl: %s has no %s",
				 DCPROF_CURL_SONAME, syms[i].name);
			return -ENOENT;
		}
	loaded = true;
	return 0;
}
