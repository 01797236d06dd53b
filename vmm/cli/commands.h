/* Subcommands of the thpvm binary: one file per subcommand (cmd_*.c), each
 * defining one struct command; cli/main.c dispatches on argv[1]. */
#ifndef THPVM_COMMANDS_H
#define THPVM_COMMANDS_H

struct command {
	const char *name;
	const char *summary;	/* one line, for `thpvm help` */
	/* The full text, for `thpvm help CMD` and --help (command_usage()
	 * gives it): usage, or what usage_make() writes where it states
	 * facts known only at run time. */
	const char *usage;
	const char *(*usage_make)(void);
	/* argv[0] is the command name. Returns the process exit status. */
	int (*main)(int argc, char **argv);
};

extern const struct command cmd_run;
extern const struct command cmd_sandbox;
extern const struct command cmd_list;
extern const struct command cmd_stop;
extern const struct command cmd_pause;
extern const struct command cmd_resume;
extern const struct command cmd_stat;
extern const struct command cmd_balloon;
extern const struct command cmd_mem;
extern const struct command cmd_console;
extern const struct command cmd_version;
extern const struct command cmd_help;

/* Exit statuses of thpvm itself (a guest's debug-exit value passes
 * through as is). */
#define EXIT_USAGE 2

#endif
