/* User-mode work on several CPUs at once: the boot CPU hands each other
 * CPU its function and argument and wakes it (arch_cpu_wake), runs its
 * own share, then waits for the others' results. The other CPUs pick
 * their work up in their idle loops (user_work_run). */
#include "guest.h"
#include "io.h"
#include "lib.h"

struct user_work {
	long (*volatile fn)(long);
	long arg;
	long result;
	volatile bool done;
};

static struct user_work work[USER_CPUS];

long run_user(long (*fn)(long), long arg)
{
	return run_user_on(0, fn, arg);
}

void user_work_run(unsigned n)
{
	struct user_work *w = &work[n];

	if (!__atomic_load_n(&w->fn, __ATOMIC_ACQUIRE) || w->done)
		return;
	w->result = run_user_on(n, w->fn, w->arg);
	__atomic_store_n(&w->done, true, __ATOMIC_RELEASE);
}

bool run_user_cpus(unsigned n, long (*fn)(long), const long *args,
		   long *results, uint64_t ms)
{
	uint64_t deadline;
	bool ok = true;

	if (!n || n > user_cpu_count())
		return false;
	/* A CPU that overran an earlier call would take this call's done
	 * for its own: it gets no more work. */
	for (unsigned i = 1; i < n; i++)
		if (work[i].fn && !work[i].done)
			return false;
	for (unsigned i = 1; i < n; i++) {
		arch_user_prepare(i);
		work[i] = (struct user_work){ .arg = args[i] };
		__atomic_store_n(&work[i].fn, fn, __ATOMIC_RELEASE);
		arch_cpu_wake(i);
	}
	results[0] = run_user(fn, args[0]);
	deadline = clock_deadline(ms);
	for (unsigned i = 1; i < n; i++) {
		while (!__atomic_load_n(&work[i].done, __ATOMIC_ACQUIRE) &&
		       clock_now() < deadline)
			cpu_relax();
		ok &= work[i].done;
		if (work[i].done)
			results[i] = work[i].result;
	}
	return ok;
}
