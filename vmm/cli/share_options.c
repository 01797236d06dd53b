/* The 9p shares of `thpvm run` (share_options.h). */
#include "cli/share_options.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/option_args.h"
#include "lib/log.h"

bool share_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Checks the share and adds it to cfg. */
static int share_add(struct machine_config *cfg, const char *opt,
		     const char *arg, const struct share_config *sc)
{
	struct stat st;
	unsigned i;

	if (cfg->nr_shares == MACHINE_MAX_SHARES) {
		pr_err("%s %s: at most %d shared directories", opt, arg,
		       MACHINE_MAX_SHARES);
		return -E2BIG;
	}
	if (stat(sc->dir, &st) < 0) {
		int err = -errno;

		pr_err("%s %s: %s: %s", opt, arg, sc->dir, strerror(-err));
		return err;
	}
	if (!S_ISDIR(st.st_mode)) {
		pr_err("%s %s: %s is not a directory", opt, arg, sc->dir);
		return -ENOTDIR;
	}
	for (i = 0; i < cfg->nr_shares; i++) {
		if (strcmp(cfg->shares[i].tag, sc->tag))
			continue;
		pr_err("%s %s: the mount tag \"%s\" is %s's already", opt, arg,
		       sc->tag, cfg->shares[i].dir);
		return -EEXIST;
	}
	if (arg_transport_offered(opt, arg, sc->transport))
		return -EINVAL;
	cfg->shares[cfg->nr_shares++] = *sc;
	return 0;
}

/* The options after the tag, taken off the end of spec while a tag is
 * left before them: "DIR,ro,ro" shares DIR read-only as "ro". */
static int take_options(char *spec, const char *opt, const char *arg,
			struct share_config *sc)
{
	char *comma = strrchr(spec, ',');

	if (!comma) {
		pr_err("%s %s: expected DIR,TAG[,ro][,pci|,mmio]", opt, arg);
		return -EINVAL;
	}
	while (comma != strchr(spec, ',')) {
		const char *word = comma + 1;

		if (!strcmp(word, "ro"))
			sc->read_only = true;
		else if (!arg_is_transport(word, &sc->transport))
			break;	/* the tag: the options are all taken */
		*comma = '\0';
		comma = strrchr(spec, ',');
	}
	return 0;
}

int share_option_parse(struct machine_config *cfg, const char *opt,
		       const char *arg)
{
	struct share_config sc = { .transport = VIRTIO_TRANSPORT_DEFAULT };
	char spec[sizeof(sc.dir) + sizeof(sc.tag)];
	const char *tag;
	char *comma;
	int err;

	if (strlen(arg) >= sizeof(spec))
		return arg_path(opt, arg, sizeof(spec));
	strcpy(spec, arg);
	err = take_options(spec, opt, arg, &sc);
	if (err)
		return err;
	comma = strrchr(spec, ',');
	*comma = '\0';
	tag = comma + 1;
	if (!spec[0] || !tag[0]) {
		pr_err("%s %s: expected DIR,TAG[,ro][,pci|,mmio]", opt, arg);
		return -EINVAL;
	}
	if (strlen(tag) > P9_TAG_MAX) {
		pr_err("%s %s: the mount tag must be 1 to %d bytes long, not "
		       "%zu", opt, arg, P9_TAG_MAX, strlen(tag));
		return -EINVAL;
	}
	if (arg_path(opt, spec, sizeof(sc.dir)))
		return -ENAMETOOLONG;
	/* dir,tag,rw: the tag is "rw" and the directory "dir,tag". */
	if (strchr(spec, ',') && access(spec, F_OK)) {
		pr_err("%s %s: unknown option \"%s\" after the mount tag "
		       "(expected ro, pci or mmio)", opt, arg, tag);
		return -EINVAL;
	}
	strcpy(sc.dir, spec);
	strcpy(sc.tag, tag);
	return share_add(cfg, opt, arg, &sc);
}

int share_option_root(struct machine_config *cfg, const char *opt,
		      const char *arg, const char *dir, bool read_only,
		      enum virtio_transport transport)
{
	struct share_config sc = {
		.tag = SHARE_ROOT_TAG, .read_only = read_only,
		.transport = transport,
	};

	if (arg_path(opt, dir, sizeof(sc.dir)))
		return -ENAMETOOLONG;
	strcpy(sc.dir, dir);
	return share_add(cfg, opt, arg, &sc);
}

int share_option_tagged(struct machine_config *cfg, const char *opt,
			const char *dir, const char *tag, bool read_only)
{
	struct share_config sc = {
		.read_only = read_only, .transport = VIRTIO_TRANSPORT_DEFAULT,
	};

	if (arg_path(opt, dir, sizeof(sc.dir)))
		return -ENAMETOOLONG;
	strcpy(sc.dir, dir);
	snprintf(sc.tag, sizeof(sc.tag), "%s", tag);
	return share_add(cfg, opt, dir, &sc);
}
