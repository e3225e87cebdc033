// SPDX-License-Identifier: GPL-2.0
/*
 * dms-session: every ssh session on a node runs its command through this
 * (the payload's authorized_keys gives the nodes' key command="dms-session"),
 * so that a command ends when the session that started it is gone.
 *
 * The selftests reach their remote through ssh with a persistent master
 * connection (ControlMaster, as drivers/net/README.rst recommends: a
 * handshake costs about a second under TCG). They stop a remote command,
 * e.g. GenerateTraffic's 16-stream iperf3 client, by killing the local ssh.
 * Without a master that closes the connection, sshd closes the command's
 * pipes and the test reads end of file at once. Through a master only the
 * session is closed: sshd closes its ends of the command's stdout and
 * stderr, but a command without a terminal gets no signal, and the master
 * keeps the killed client's stderr until the remote command exits by
 * itself, so the test waits until its own timeout (ring_reconfig,
 * rss_ctx hitless_key_update).
 *
 * Here the command ($SSH_ORIGINAL_COMMAND, through $SHELL -c as sshd would run
 * it; a login shell when there is none; a terminal session's command runs
 * as it is, a hangup ends it) runs in a process group of its own,
 * and when sshd closes the reading end of the session's stdout or stderr
 * (POLLERR on a pipe, POLLHUP on a socket) that group gets SIGTERM, and
 * SIGKILL after KILL_AFTER_MS: what a command writing to that output would
 * get anyway (SIGPIPE). A command that ends by itself is not touched, nor
 * is what it left running in the background. The command's exit status, or
 * the signal that ended it, is this program's, so ssh reports it as before.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

#define KILL_AFTER_MS 5000

static pid_t start(const char *shell, const char *cmd)
{
	pid_t pid = fork();

	if (pid == 0) {
		setpgid(0, 0);
		execl(shell, shell, "-c", cmd, (char *)NULL);
		perror("dms-session: shell");
		_exit(127);
	}
	if (pid > 0)
		setpgid(pid, pid); /* whichever of the two runs first */
	return pid;
}

/* Wait for pid; end its group once the session's outputs lose their reader. */
static int watch(pid_t pid)
{
	struct pollfd fds[3] = {
		{.fd = pidfd_open(pid, 0), .events = POLLIN},
		{.fd = STDOUT_FILENO}, /* POLLERR/POLLHUP are always reported */
		{.fd = STDERR_FILENO},
	};
	int timeout = -1;
	int status;

	if (fds[0].fd < 0) {
		perror("dms-session: pidfd_open");
		fds[1].fd = fds[2].fd = -1; /* cannot watch: only wait */
	}
	while (fds[0].fd >= 0) {
		int n = poll(fds, 3, timeout);

		if (n < 0 && errno != EINTR)
			break;
		if (n == 0) { /* still running KILL_AFTER_MS after SIGTERM */
			kill(-pid, SIGKILL);
			timeout = -1;
			continue;
		}
		if (fds[0].revents)
			break;
		if ((fds[1].revents | fds[2].revents) & (POLLERR | POLLHUP)) {
			kill(-pid, SIGTERM);
			fds[1].fd = fds[2].fd = -1;
			timeout = KILL_AFTER_MS;
		}
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 255;
	if (WIFSIGNALED(status)) { /* end the same way, for ssh's exit-signal */
		signal(WTERMSIG(status), SIG_DFL);
		kill(getpid(), WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}

int main(void)
{
	const char *cmd = getenv("SSH_ORIGINAL_COMMAND");
	const char *shell = getenv("SHELL");
	pid_t pid;

	if (!shell)
		shell = "/bin/sh";
	if (!cmd) { /* an interactive login */
		execl(shell, "-sh", (char *)NULL);
		perror("dms-session: login shell");
		return 127;
	}
	if (isatty(STDIN_FILENO)) {
		/*
		 * A terminal session: the command stays in the foreground (its
		 * terminal reads), and closing the terminal hangs it up anyway.
		 */
		execl(shell, shell, "-c", cmd, (char *)NULL);
		perror("dms-session: shell");
		return 127;
	}
	unsetenv("SSH_ORIGINAL_COMMAND");
	pid = start(shell, cmd);
	if (pid < 0) {
		perror("dms-session: fork");
		return 255;
	}
	return watch(pid);
}
