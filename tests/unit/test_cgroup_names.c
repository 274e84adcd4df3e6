// SPDX-License-Identifier: MIT
/*
 * dcp_cgroup_parse_path() on the layouts of systemd, docker, podman,
 * containerd, CRI-O and the kubelet (both cgroup drivers), and on paths
 * that say nothing of a service or container.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dcprof/dcprof.h"

#define ID64 "4b825dc642cb6eb9a060e54bf8d69288fbee4904a1b2c3d4e5f60718293a4b5c"
#define UID "8d4f1a2b-3c5d-4e6f-9a0b-1c2d3e4f5a6b"
#define UID_ "8d4f1a2b_3c5d_4e6f_9a0b_1c2d3e4f5a6b"

struct layout {
	const char *path;
	const char *unit, *slice, *runtime, *container_id, *pod_uid, *qos;
};

static const struct layout layouts[] = {
	{ "/system.slice/nginx.service", "nginx.service", "system.slice", "",
	  "", "", "" },
	{ "/user.slice/user-1000.slice/user@1000.service/app.slice/"
	  "app-gnome-firefox-4242.scope",
	  "app-gnome-firefox-4242.scope", "app.slice", "", "", "", "" },
	{ "/system.slice/docker-" ID64 ".scope", "docker-" ID64 ".scope",
	  "system.slice", "docker", ID64, "", "" },
	{ "/docker/" ID64, "", "", "docker", ID64, "", "" },
	{ "/machine.slice/libpod-" ID64 ".scope/container",
	  "libpod-" ID64 ".scope", "machine.slice", "podman", ID64, "", "" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	  ".slice/cri-containerd-" ID64 ".scope",
	  "cri-containerd-" ID64 ".scope",
	  "kubepods-burstable-pod" UID_ ".slice", "containerd", ID64, UID,
	  "burstable" },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/crio-" ID64 ".scope",
	  "crio-" ID64 ".scope", "kubepods-pod" UID_ ".slice", "cri-o", ID64,
	  UID, "guaranteed" },
	{ "/kubepods/besteffort/pod" UID "/" ID64, "", "", "", ID64, UID,
	  "besteffort" },
	{ "/kubepods/pod" UID "/" ID64, "", "", "", ID64, UID, "guaranteed" },
	/* a service named like a container id's prefix is a service */
	{ "/docker-build.service", "docker-build.service", "", "", "", "", "" },
	/* nothing known */
	{ "/", "", "", "", "", "", "" },
	{ "/batch/job-17", "", "", "", "", "", "" },
	{ "/docker/not-an-id", "", "", "", "", "", "" },
};

static void test_layouts(void **state)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		const struct layout *l = &layouts[i];
		struct dcp_cgroup_names n = { .sz = sizeof(n) };

		assert_int_equal(dcp_cgroup_parse_path(l->path, &n), 0);
		print_message("%s\n", l->path);
		assert_string_equal(n.unit, l->unit);
		assert_string_equal(n.slice, l->slice);
		assert_string_equal(n.runtime, l->runtime);
		assert_string_equal(n.container_id, l->container_id);
		assert_string_equal(n.pod_uid, l->pod_uid);
		assert_string_equal(n.qos, l->qos);
	}
}

static void test_bad_args(void **state)
{
	struct dcp_cgroup_names n = { .sz = sizeof(n) };
	struct dcp_cgroup_names small = { .sz = 8 };

	assert_int_equal(dcp_cgroup_parse_path(NULL, &n), -EINVAL);
	assert_int_equal(dcp_cgroup_parse_path("/a", &small), -EINVAL);
	assert_int_equal(dcp_cgroup_parse_path("/a", NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layouts),
		cmocka_unit_test(test_bad_args),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
