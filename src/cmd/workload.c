// SPDX-License-Identifier: MIT
/*
 * The command of record -- CMD and top -- CMD: forked before the recorder
 * starts and let go once its events are on, so that none of its first
 * milliseconds or children is missed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "workload.h"

/* In the child, before exec: no output to a terminal that is not its. */
static void detach_stdio(void)
{
	int fd = open("/dev/null", O_RDWR);

	if (fd < 0)
		_exit(127);
	for (int i = 0; i < 3; i++)
		if (dup2(fd, i) < 0)
			_exit(127);
	if (fd > 2)
		close(fd);
}

int workload_prepare(char **command, bool detached, struct workload *w)
{
	int go[2], err[2];

	if (pipe2(go, O_CLOEXEC) < 0)
		return cmd_error("cannot create a pipe: %s", strerror(errno));
	if (pipe2(err, O_CLOEXEC) < 0) {
		close(go[0]);
		close(go[1]);
		return cmd_error("cannot create a pipe: %s", strerror(errno));
	}
	w->pid = fork();
	if (w->pid < 0)
		return cmd_error("cannot fork: %s", strerror(errno));
	if (w->pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(err[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		if (read(go[0], &c, 1) != 0)
			_exit(127); /* the recorder failed to start */
		if (detached)
			detach_stdio();
		execvp(command[0], command);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	w->go_fd = go[1];
	w->err_fd = err[0];
	return 0;
}

/* 0, or the errno execvp would fail with */
static int command_findable(const char *command)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	int err = ENOENT;

	if (strchr(command, '/'))
		return access(command, X_OK) == 0 ? 0 : errno;
	if (!path)
		path = "/bin:/usr/bin";
	while (*path) {
		size_t len = strcspn(path, ":");

		if (snprintf(buf, sizeof(buf), "%.*s%s%s", (int)len, path,
			     len ? "/" : "", command) < (int)sizeof(buf)) {
			if (access(buf, X_OK) == 0)
				return 0;
			if (errno != ENOENT && errno != ENOTDIR)
				err = errno;
		}
		path += len;
		if (*path == ':')
			path++;
	}
	return err;
}

int workload_check(const char *command)
{
	int e = command_findable(command);

	return e ? cmd_error("cannot run '%s': %s", command, strerror(e)) : 0;
}

int workload_start(struct workload *w, const char *name)
{
	int e = 0;

	close(w->go_fd);
	w->go_fd = -1;
	if (read(w->err_fd, &e, sizeof(e)) == sizeof(e)) {
		close(w->err_fd);
		w->err_fd = -1;
		return cmd_error("cannot run '%s': %s", name, strerror(e));
	}
	close(w->err_fd);
	w->err_fd = -1;
	return 0;
}

void workload_cancel(struct workload *w)
{
	int status;

	if (w->pid <= 0)
		return;
	kill(w->pid, SIGKILL);
	waitpid(w->pid, &status, 0);
	w->pid = -1;
	if (w->go_fd >= 0)
		close(w->go_fd);
	if (w->err_fd >= 0)
		close(w->err_fd);
	w->go_fd = w->err_fd = -1;
}

void workload_stop(struct workload *w, int grace_ms, int *status)
{
	struct timespec tick = { 0, 10 * 1000000 };

	kill(w->pid, SIGTERM);
	for (int waited = 0; grace_ms && waited < grace_ms; waited += 10) {
		if (waitpid(w->pid, status, WNOHANG) == w->pid)
			return;
		nanosleep(&tick, NULL);
	}
	if (grace_ms)
		kill(w->pid, SIGKILL);
	waitpid(w->pid, status, 0);
}

int workload_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}
