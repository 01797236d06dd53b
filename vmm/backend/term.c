/* Raw mode for the console: keys go to the guest unprocessed (Ctrl-C
 * included; Ctrl-A x quits, see cmd_run.c), output processing stays on. */
#include "backend/term.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>

static struct termios saved;
static volatile sig_atomic_t saved_valid;

bool term_is_tty(void)
{
	return isatty(STDIN_FILENO);
}

bool term_foreground(void)
{
	pid_t fg = tcgetpgrp(STDIN_FILENO);

	if (fg < 0)
		return errno == ENOTTY && isatty(STDIN_FILENO);
	return fg == getpgrp();
}

void term_restore(void)
{
	/* tcsetattr, tcgetpgrp and getpgrp are async-signal-safe. */
	if (saved_valid && term_foreground())
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
	saved_valid = 0;
}

bool term_raw_enable(void)
{
	static bool at_exit;
	struct termios raw;

	if (!term_foreground() || tcgetattr(STDIN_FILENO, &saved) < 0)
		return false;
	raw = saved;
	raw.c_iflag &= ~(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR |
			 ICRNL | IXON);
	raw.c_lflag &= ~(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
	raw.c_cflag = (raw.c_cflag & ~(CSIZE | PARENB)) | CS8;
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) < 0)
		return false;
	saved_valid = 1;
	if (!at_exit)
		at_exit = !atexit(term_restore);
	return true;
}

void term_ignore_job_signals(void)
{
	/* Ignored, a background read fails with EIO and a mode change or
	 * a write goes through; the callers check the foreground first. */
	signal(SIGTTIN, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
}
