/* SPDX-License-Identifier: MIT */
/*
 * libcurl, loaded when a push is asked for: the other commands, and
 * recordings without --push, start without it and the thirty libraries
 * it brings (11 ms of every dcprof command's start), and dcprof runs
 * where libcurl is not installed. push.c calls libcurl through
 * push_curl only.
 */
#ifndef DCPROF_CURL_LOAD_H
#define DCPROF_CURL_LOAD_H

#include <curl/curl.h>

#include "push.h"

struct push_curl {
	typeof(curl_global_init) *global_init;
	typeof(curl_global_cleanup) *global_cleanup;
	typeof(curl_free) *free;
	typeof(curl_url) *url;
	typeof(curl_url_set) *url_set;
	typeof(curl_url_get) *url_get;
	typeof(curl_url_cleanup) *url_cleanup;
	typeof(curl_easy_init) *easy_init;
	typeof(curl_easy_escape) *easy_escape;
	typeof(curl_easy_setopt) *easy_setopt;
	typeof(curl_easy_perform) *easy_perform;
	typeof(curl_easy_getinfo) *easy_getinfo;
	typeof(curl_easy_strerror) *easy_strerror;
	typeof(curl_easy_cleanup) *easy_cleanup;
	typeof(curl_slist_append) *slist_append;
	typeof(curl_slist_free_all) *slist_free_all;
};

/* Filled by push_curl_load(). */
extern struct push_curl push_curl;

/*
 * Load libcurl (once; it stays loaded) and resolve push_curl. 0, or
 * -ENOENT with err saying which library or function is missing.
 */
int push_curl_load(struct push_error *err);

#endif
