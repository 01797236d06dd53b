/* GSI routing table and MSI irqfds (see irq_routing.h). */
#include "core/irq_routing.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lib/log.h"

int irq_routing_init(struct irq_routing *r, int vm_fd)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
	r->vm_fd = vm_fd;
	return 0;
}

void irq_routing_free(struct irq_routing *r)
{
	free(r->table);
	r->table = NULL;
	r->cap = 0;
	free(r->bindings);
	r->bindings = NULL;
	r->nr_bindings = 0;
	pthread_mutex_destroy(&r->lock);
}

static struct kvm_irq_routing_entry *find_entry(struct irq_routing *r,
						unsigned gsi, uint32_t type)
{
	unsigned i;

	for (i = 0; r->table && i < r->table->nr; i++) {
		if (r->table->entries[i].gsi == gsi &&
		    r->table->entries[i].type == type)
			return &r->table->entries[i];
	}
	return NULL;
}

static struct kvm_irq_routing_entry *new_entry(struct irq_routing *r)
{
	unsigned nr = r->table ? r->table->nr : 0;

	if (nr == r->cap) {
		unsigned cap = r->cap ? r->cap * 2 : 64;
		struct kvm_irq_routing *t;

		t = realloc(r->table, sizeof(*t) + cap * sizeof(t->entries[0]));
		if (!t)
			return NULL;
		if (!r->table)
			memset(t, 0, sizeof(*t));
		r->table = t;
		r->cap = cap;
	}
	memset(&r->table->entries[nr], 0, sizeof(r->table->entries[0]));
	r->table->nr = nr + 1;
	return &r->table->entries[nr];
}

int irq_routing_add_irqchip(struct irq_routing *r, unsigned gsi,
			    unsigned chip, unsigned pin)
{
	struct kvm_irq_routing_entry *e;

	pthread_mutex_lock(&r->lock);
	e = new_entry(r);
	if (e) {
		e->gsi = gsi;
		e->type = KVM_IRQ_ROUTING_IRQCHIP;
		e->u.irqchip.irqchip = chip;
		e->u.irqchip.pin = pin;
		if (gsi >= r->next_gsi)
			r->next_gsi = gsi + 1;
	}
	pthread_mutex_unlock(&r->lock);
	return e ? 0 : -ENOMEM;
}

void irq_routing_reserve(struct irq_routing *r, unsigned nr)
{
	pthread_mutex_lock(&r->lock);
	if (nr > r->next_gsi)
		r->next_gsi = nr;
	pthread_mutex_unlock(&r->lock);
}

static int commit_locked(struct irq_routing *r)
{
	if (ioctl(r->vm_fd, KVM_SET_GSI_ROUTING, r->table) < 0) {
		int err = -errno;

		/* Guests reprogram MSI-X at will: no flood from here. */
		pr_warn_ratelimited("KVM_SET_GSI_ROUTING: %s", strerror(-err));
		return err;
	}
	return 0;
}

int irq_routing_commit(struct irq_routing *r)
{
	int err;

	pthread_mutex_lock(&r->lock);
	err = r->table ? commit_locked(r) : 0;
	pthread_mutex_unlock(&r->lock);
	return err;
}

/* With msi_source: the eventfd waits unbound until a message names a
 * source (one raised meanwhile is delivered once it is bound). */
static int add_binding(struct irq_routing *r, int fd, unsigned *gsi)
{
	struct irq_msi_binding *b;

	b = realloc(r->bindings, (r->nr_bindings + 1) * sizeof(*b));
	if (!b)
		return -ENOMEM;
	r->bindings = b;
	if (!r->nr_bindings)
		r->first_msi_gsi = r->next_gsi;
	b[r->nr_bindings++] = (struct irq_msi_binding){ fd, -1 };
	*gsi = r->next_gsi++;
	return 0;
}

int irq_msi_create(struct irq_routing *r, unsigned *gsi, int *irqfd)
{
	struct kvm_irqfd req = { 0 };
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int err = 0;

	if (fd < 0) {
		err = -errno;
		pr_err("cannot make an MSI's eventfd: %s", strerror(-err));
		return err;
	}
	pthread_mutex_lock(&r->lock);
	if (r->msi_source)
		err = add_binding(r, fd, gsi);
	else
		req.gsi = r->next_gsi++;
	pthread_mutex_unlock(&r->lock);
	if (r->msi_source) {
		if (!err) {
			*irqfd = fd;
			return 0;
		}
		pr_err("cannot add an MSI: %s", strerror(-err));
		close(fd);
		return err;
	}
	req.fd = fd;
	if (ioctl(r->vm_fd, KVM_IRQFD, &req) < 0) {
		err = -errno;
		pr_err("KVM_IRQFD (GSI %u): %s", req.gsi, strerror(-err));
		close(fd);
		return err;
	}
	*gsi = req.gsi;
	*irqfd = fd;
	return 0;
}

/* With r->lock held: binds the MSI's eventfd to the source the message
 * names, in place of the one it had. */
static int bind_locked(struct irq_routing *r, unsigned gsi, uint64_t addr,
		       uint32_t data)
{
	struct irq_msi_binding *b;
	struct kvm_irqfd req = { 0 };
	int source = r->msi_source(addr, data);

	if (gsi < r->first_msi_gsi || gsi - r->first_msi_gsi >= r->nr_bindings)
		return -EINVAL;
	b = &r->bindings[gsi - r->first_msi_gsi];
	if (source == b->source)
		return 0;
	req.fd = b->fd;
	if (b->source >= 0) {
		req.gsi = b->source;
		req.flags = KVM_IRQFD_FLAG_DEASSIGN;
		if (ioctl(r->vm_fd, KVM_IRQFD, &req) < 0)
			return -errno;
		b->source = -1;
	}
	if (source < 0) {
		/* A message no interrupt controller takes, as on a bus. */
		pr_warn_ratelimited("MSI 0x%llx/0x%x reaches no interrupt "
				    "source", (unsigned long long)addr, data);
		return 0;
	}
	req.gsi = source;
	req.flags = 0;
	if (ioctl(r->vm_fd, KVM_IRQFD, &req) < 0) {
		int err = -errno;

		pr_warn_ratelimited("KVM_IRQFD (source %d): %s", source,
				    strerror(-err));
		return err;
	}
	b->source = source;
	return 0;
}

int irq_msi_set(struct irq_routing *r, unsigned gsi, uint64_t addr,
		uint32_t data, uint32_t devid)
{
	struct kvm_irq_routing_entry *e, old;
	bool added = false;
	int err = -ENOMEM;

	pthread_mutex_lock(&r->lock);
	if (r->msi_source) {
		err = bind_locked(r, gsi, addr, data);
		pthread_mutex_unlock(&r->lock);
		return err;
	}
	e = find_entry(r, gsi, KVM_IRQ_ROUTING_MSI);
	if (!e && (e = new_entry(r))) {
		e->gsi = gsi;
		e->type = KVM_IRQ_ROUTING_MSI;
		added = true;
	}
	if (e) {
		old = *e;
		e->u.msi.address_lo = (uint32_t)addr;
		e->u.msi.address_hi = addr >> 32;
		e->u.msi.data = data;
		if (r->msi_devid) {
			e->flags = KVM_MSI_VALID_DEVID;
			e->u.msi.devid = devid;
		}
		err = commit_locked(r);
	}
	/* Every commit sends the whole table: an entry KVM refused would
	 * make all later changes, of any device, fail too. */
	if (err && e && added)
		r->table->nr--;
	else if (err && e)
		*e = old;
	pthread_mutex_unlock(&r->lock);
	return err;
}
