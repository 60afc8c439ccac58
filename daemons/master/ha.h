/*
 * Master high availability on etcd (docs/HA.md): campaign, standby, step
 * down. Masters started with --etcd_endpoints campaign for one leader key:
 * a lease of ttl_ms, then a transaction that creates the key (its value the
 * master's advertised RPC address) only if it does not exist. The winner's
 * term is the key's create_revision: it grows with every new leader, and
 * the master uses it as its incarnation (stamps, descriptors, tasks) and as
 * the high 32 bits of the versions it hands out, so requests of an older
 * term are recognised and refused.
 *
 * The leader renews its lease every ttl/6 and stops serving (ha_serving()
 * false) once ttl/2 has passed since it SENT the last renewal etcd
 * confirmed: etcd started that lease's new TTL only when it received the
 * renewal, so the leader is silent for at least ttl/2 before any other
 * master can win. It keeps its term and keeps renewing: a renewal etcd
 * confirms, sent less than ttl/2 ago, lets it serve again (a loop slowed
 * by load or a slow etcd is a pause in serving, not a failover). It steps
 * down (the deposed callback) on evidence only: no renewal confirmed for a
 * whole ttl (the lease may have lapsed), etcd saying the lease is gone, or
 * the key holding another term. ha_serving() reads the clock itself, so a
 * leader resumed after SIGSTOP refuses its first request. On a step down
 * the lease is revoked (best effort) so a standby need not wait. A gap in
 * the master's own runs longer than ttl/4 is logged as a pause.
 *
 * Standbys read the key every poll_ms and campaign when it is absent.
 * Everything is asynchronous on the master's loop (etcd.h).
 */
#ifndef MCREPL_MASTER_HA_H
#define MCREPL_MASTER_HA_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>

struct ha_config {
	const char *endpoints; /* etcd "host:port[,host:port]" */
	const char *key;       /* leader key */
	const char *advertise; /* this master's RPC address, host:port */
	uint32_t lease_ttl_ms; /* etcd lease (whole seconds, >= 2 s) */
	uint32_t poll_ms;      /* standby look at the key */
};

struct ha_callbacks {
	/* This master won term (incarnation: the term with etcd's cluster id
	 * folded into its top 16 bits). */
	void (*elected)(void *arg, uint64_t term, uint64_t incarnation);
	/* It lost the leadership (why: one line). */
	void (*deposed)(void *arg, const char *why);
	/* The fence of mount (incarnation, segment_id) asked for with
	 * ha_fence() is in etcd (written), or its write failed. */
	void (*fenced)(void *arg, uint64_t incarnation, uint64_t segment_id,
		       bool written);
	void *arg;
};

/* Why a leader gave its term up (mcrepl_master_ha_step_downs_total). */
enum ha_step_down {
	HA_SD_LEASE_EXPIRED, /* no renewal confirmed for a whole ttl */
	HA_SD_LEASE_GONE,    /* etcd: the lease is gone */
	HA_SD_OTHER_TERM,    /* the leader key holds another term */
	HA_SD_COUNT
};

/* "lease_expired", "lease_gone", "other_term". */
const char *ha_step_down_name(enum ha_step_down r);

struct ha_figures {
	bool leader;
	bool serving;		 /* leader, and its lease is certain to hold */
	uint64_t term;		 /* current term held, 0 when standby */
	uint64_t last_term_seen; /* highest term seen in etcd */
	uint64_t elections_won;	 /* terms this master won */
	uint64_t failovers;	 /* of them, taken over from another leader */
	uint64_t step_downs;	 /* leaderships given up */
	uint64_t step_downs_by[HA_SD_COUNT];
	uint64_t suspensions;	   /* leader stopped serving, kept its term */
	uint64_t pauses;	   /* gaps in this master's runs > ttl/4 */
	uint64_t longest_pause_ms; /* the longest of them */
	uint64_t etcd_errors;	   /* etcd requests that failed */
	char leader_addr[256];	   /* the leader's address, "" unknown */
};

struct ha;

/* Starts campaigning on base. NULL with the reason in err. */
struct ha *ha_start(struct event_base *base, const struct ha_config *cfg,
		    const struct ha_callbacks *cb, char *err, size_t errlen);
/* True while this master is the leader and its renewal deadline has not
 * passed at now_ms (CLOCK_MONOTONIC ms); past it, steps down first. */
bool ha_serving(struct ha *h, int64_t now_ms);
void ha_figures(const struct ha *h, struct ha_figures *f);
/* Writes the fence of a worker's mount (hafence.h) to etcd; cb.fenced
 * says how it went. -1 when it cannot be sent now (HA_FENCES in flight
 * already, or no memory): ask again later. */
int ha_fence(struct ha *h, uint64_t incarnation, uint64_t segment_id);
/* Give up leadership (revoke the lease, waiting at most wait_ms on the
 * loop) and free. NULL is fine. */
void ha_stop(struct ha *h, int wait_ms);

#endif
