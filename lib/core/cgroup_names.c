// SPDX-License-Identifier: MIT
/*
 * What a cgroup's path says of the service or container in it. The
 * layouts differ by who made the cgroup: systemd names units and slices by
 * suffix, container runtimes put a container in a scope named by the
 * runtime and the container's id (systemd's cgroup driver) or in a
 * directory named by the id alone (the cgroupfs driver), and the kubelet
 * puts a pod's containers under a cgroup named by its QoS class and UID.
 * New layouts are new rows of the tables below.
 */
#include "api_internal.h"
#include "log_internal.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

/* A container's scope under systemd's cgroup driver: PREFIX<id>.scope. */
static const struct scope_rule {
	const char *prefix;
	const char *runtime;
} scope_rules[] = {
	{ "docker-", "docker" },
	{ "libpod-", "podman" },
	{ "cri-containerd-", "containerd" },
	{ "crio-", "cri-o" },
};

/* A directory of the cgroupfs driver: a container's id under PARENT. */
static const struct dir_rule {
	const char *parent;
	const char *runtime; /* "": the parent does not say */
} dir_rules[] = {
	{ "docker", "docker" }, { "libpod_parent", "podman" },
	{ "kubepods", "" },	{ "burstable", "" },
	{ "besteffort", "" },
};

struct part {
	const char *p;
	size_t len;
};

static bool ends_with(struct part c, const char *suffix)
{
	size_t n = strlen(suffix);

	return c.len >= n && !memcmp(c.p + c.len - n, suffix, n);
}

static bool starts_with(struct part c, const char *prefix)
{
	size_t n = strlen(prefix);

	return c.len >= n && !memcmp(c.p, prefix, n);
}

static bool is(struct part c, const char *s)
{
	return c.len == strlen(s) && !memcmp(c.p, s, c.len);
}

static void put(char *dst, size_t size, const char *src, size_t len)
{
	if (len >= size)
		len = size - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* A container id: 64 hex digits (docker, containerd, CRI-O, podman). */
static bool is_container_id(const char *p, size_t len)
{
	if (len != 64)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isxdigit((unsigned char)p[i]))
			return false;
	return true;
}

static void container_scope(struct part c, struct dcp_cgroup_names *out)
{
	for (size_t i = 0; i < sizeof(scope_rules) / sizeof(*scope_rules);
	     i++) {
		const struct scope_rule *r = &scope_rules[i];
		size_t n = strlen(r->prefix);

		if (!starts_with(c, r->prefix) || !ends_with(c, ".scope") ||
		    !is_container_id(c.p + n, c.len - n - 6))
			continue;
		put(out->runtime, sizeof(out->runtime), r->runtime,
		    strlen(r->runtime));
		put(out->container_id, sizeof(out->container_id), c.p + n,
		    c.len - n - 6);
		return;
	}
}

static void container_dir(struct part parent, struct part c,
			  struct dcp_cgroup_names *out)
{
	if (!is_container_id(c.p, c.len))
		return;
	for (size_t i = 0; i < sizeof(dir_rules) / sizeof(*dir_rules); i++) {
		if (!is(parent, dir_rules[i].parent) &&
		    !(starts_with(parent, "pod") && !dir_rules[i].runtime[0]))
			continue;
		put(out->runtime, sizeof(out->runtime), dir_rules[i].runtime,
		    strlen(dir_rules[i].runtime));
		put(out->container_id, sizeof(out->container_id), c.p, c.len);
		return;
	}
}

/* kubepods[-QOS]-pod<UID>.slice (systemd's driver, each '-' of the UID an
 * '_') or pod<UID> under kubepods[/QOS] (cgroupfs): no QOS is guaranteed. */
static void pod(struct part parent, struct part c, bool under_kubepods,
		struct dcp_cgroup_names *out)
{
	struct part uid, q = { "guaranteed", 10 };
	size_t i;

	if (starts_with(c, "kubepods-") && ends_with(c, ".slice")) {
		const char *s = c.p + 9, *end = c.p + c.len - 6;
		const char *at = memmem(s, (size_t)(end - s), "pod", 3);

		if (!at || (at > s && at[-1] != '-'))
			return;
		if (at > s) {
			q.p = s;
			q.len = (size_t)(at - 1 - s);
		}
		uid.p = at + 3;
		uid.len = (size_t)(end - uid.p);
	} else if (under_kubepods && starts_with(c, "pod")) {
		if (!is(parent, "kubepods"))
			q = parent;
		uid.p = c.p + 3;
		uid.len = c.len - 3;
	} else {
		return;
	}
	if (uid.len < 32 || uid.len >= sizeof(out->pod_uid))
		return;
	for (i = 0; i < uid.len; i++)
		out->pod_uid[i] = uid.p[i] == '_' ? '-' : uid.p[i];
	out->pod_uid[i] = '\0';
	put(out->qos, sizeof(out->qos), q.p, q.len);
}

DCPROF_API int dcp_cgroup_parse_path(const char *path,
				     struct dcp_cgroup_names *out)
{
	struct dcp_cgroup_names n = { .sz = sizeof(n) };
	struct part parent = { "", 0 }, c;
	bool kubepods = false;
	const char *p = path;

	if (!path)
		return dcp_error(EINVAL, "no cgroup path");
	if (!DCP_SZ_VALID(out))
		return DCP_SZ_ERROR(dcp_cgroup_names, out);
	while (*p) {
		while (*p == '/')
			p++;
		c.p = p;
		p += strcspn(p, "/");
		c.len = (size_t)(p - c.p);
		if (!c.len)
			break;
		if (ends_with(c, ".service") || ends_with(c, ".scope"))
			put(n.unit, sizeof(n.unit), c.p, c.len);
		else if (ends_with(c, ".slice"))
			put(n.slice, sizeof(n.slice), c.p, c.len);
		if (starts_with(c, "kubepods"))
			kubepods = true;
		if (kubepods)
			pod(parent, c,
			    is(parent, "kubepods") || is(parent, "burstable") ||
				    is(parent, "besteffort"),
			    &n);
		container_scope(c, &n);
		container_dir(parent, c, &n);
		parent = c;
	}
	dcp_sz_copy(out, &n, sizeof(n));
	return 0;
}
