/* thpvm version: the release of this binary. */
#include <stdio.h>

#include "cli/cmd_util.h"

/* THPVM_VERSION comes from project() in meson.build. */

static int version_main(int argc, char **argv)
{
	struct cmd_args args;
	int rc;

	rc = cmd_args_parse(&cmd_version, argc, argv, 0, 0, &args);
	if (rc >= 0)
		return rc;
	if (!args.json) {
		printf("thpvm %s\n", THPVM_VERSION);
		return 0;
	}
	return cmd_print_json(json_pack("{s:s}", "version", THPVM_VERSION));
}

const struct command cmd_version = {
	.name = "version",
	.summary = "Print the version of thpvm",
	.usage = "usage: thpvm version [--json]\n"
		 "\n"
		 "Prints the version of thpvm (also: thpvm --version).\n"
		 "\n"
		 "  --json      print {\"version\":\"X.Y.Z\"}\n"
		 "  -h, --help  print this help\n",
	.main = version_main,
};
