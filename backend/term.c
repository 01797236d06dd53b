/* Raw mode for the console: keys go to the guest unprocessed (Ctrl-C
 * included; Ctrl-A x quits, see cmd_run.c), output processing stays on. */
#include "backend/term.h"

#include <signal.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>

static struct termios saved;
static volatile sig_atomic_t saved_valid;

void term_restore(void)
{
	/* tcsetattr is async-signal-safe. */
	if (saved_valid) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
		saved_valid = 0;
	}
}

bool term_raw_enable(void)
{
	struct termios raw;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved) < 0)
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
	atexit(term_restore);
	return true;
}
