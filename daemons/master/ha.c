/* Master election on etcd (see ha.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "clock.h"
#include "etcd.h"
#include "hafence.h"
#include "ha.h"

enum ha_state { ST_IDLE, ST_LOOK, ST_GRANT, ST_TXN, ST_LEADER };

const char *ha_step_down_name(enum ha_step_down r)
{
	static const char *const names[HA_SD_COUNT] = {
	    [HA_SD_LEASE_EXPIRED] = "lease_expired",
	    [HA_SD_LEASE_GONE] = "lease_gone",
	    [HA_SD_OTHER_TERM] = "other_term",
	};

	return (unsigned)r < HA_SD_COUNT ? names[r] : "unknown";
}

#define HA_RENEWS 3
#define HA_FENCES 32 /* fence writes in flight at once */

struct fence_write {
	struct ha *h;
	uint64_t incarnation, segment_id;
	bool used;
};

struct renew {
	struct ha *h;
	int64_t sent_ms;
	int64_t lease_id;
	bool used;
};

struct ha {
	struct event_base *base;
	struct ha_config cfg;
	char key[256], advertise[256], endpoints[1024];
	struct ha_callbacks cb;
	struct etcd *etcd;
	struct event *timer;
	enum ha_state st;
	int64_t lease_id;
	uint64_t term;
	int64_t renew_deadline_ms; /* leader: serve until then */
	int64_t grant_deadline_ms; /* the same, from the lease grant */
	int64_t grant_sent_ms;
	/* leader: when the last renewal etcd confirmed was sent; the lease
	 * lives at least ttl from then, and may be gone after */
	int64_t confirmed_sent_ms;
	bool suspended;	      /* leader past renew_deadline_ms */
	int64_t suspended_ms; /* since when */
	int64_t last_run_ms;  /* the loop last ran this module */
	/* keep-alives in flight: a slow one does not hold the next back */
	struct renew renews[HA_RENEWS];
	struct fence_write fences[HA_FENCES];
	bool check_pending;
	int64_t next_renew_ms;
	bool seen_other; /* a leader other than us was seen before we won */
	struct ha_figures fig;
};

static void arm(struct ha *h, uint32_t ms)
{
	struct timeval tv = net_timeval_ms(ms);

	evtimer_add(h->timer, &tv);
}

static uint32_t renew_every(const struct ha *h)
{
	return h->cfg.lease_ttl_ms / 6;
}

static void on_revoked(const struct etcd_result *r, void *arg)
{
	(void)r;
	(void)arg;
}

/* A master that does not lead never names itself as the leader: the key
 * may still hold its lapsed term's address. */
static void forget_self(struct ha *h)
{
	if (strcmp(h->fig.leader_addr, h->advertise) == 0)
		h->fig.leader_addr[0] = '\0';
}

/* Back to standby: the lease revoked (best effort, so a standby need not
 * wait for it to lapse), the term forgotten. */
static void give_up(struct ha *h)
{
	if (h->lease_id)
		etcd_lease_revoke(h->etcd, h->lease_id, on_revoked, h);
	h->lease_id = 0;
	h->st = ST_IDLE;
	h->term = 0;
	h->suspended = false;
	h->fig.leader = false;
	h->fig.serving = false;
	h->fig.term = 0;
	forget_self(h);
}

/* The leader gives its term up, for reason (why: its one-line account). */
static void step_down(struct ha *h, enum ha_step_down reason, const char *why)
{
	give_up(h);
	h->fig.step_downs++;
	h->fig.step_downs_by[reason]++;
	log_line(LOG_WARN, "ha: stepping down (%s): %s",
		 ha_step_down_name(reason), why);
	h->cb.deposed(h->cb.arg, why);
}

static void etcd_failed(struct ha *h, const struct etcd_result *r)
{
	h->fig.etcd_errors++;
	(void)r;
}

/* ---- standby: look, grant, transaction ---------------------------------- */

static void on_txn(const struct etcd_result *r, void *arg)
{
	struct ha *h = arg;
	uint64_t inc;

	if (h->st != ST_TXN)
		return;
	if (r->status) {
		etcd_failed(h, r);
		give_up(h);
		return;
	}
	if (!r->succeeded) { /* another master won first */
		snprintf(h->fig.leader_addr, sizeof(h->fig.leader_addr), "%s",
			 r->value);
		h->seen_other = true;
		give_up(h); /* lost the race */
		return;
	}
	h->st = ST_LEADER;
	h->term = r->revision;
	h->renew_deadline_ms = h->grant_deadline_ms;
	h->confirmed_sent_ms = h->grant_sent_ms;
	h->suspended = false;
	h->fig.serving = true;
	h->next_renew_ms = net_now_ms() + renew_every(h);
	if (h->term > h->fig.last_term_seen)
		h->fig.last_term_seen = h->term;
	h->fig.leader = true;
	h->fig.term = h->term;
	h->fig.elections_won++;
	if (h->seen_other)
		h->fig.failovers++;
	snprintf(h->fig.leader_addr, sizeof(h->fig.leader_addr), "%s",
		 h->advertise);
	/* the cluster id keeps incarnations apart across etcd clusters */
	inc = (r->cluster_id * 0x9e3779b97f4a7c15ULL & 0xffff000000000000ULL) |
	      (h->term & 0x0000ffffffffffffULL);
	log_line(LOG_INFO, "ha: leader, term %llu",
		 (unsigned long long)h->term);
	h->cb.elected(h->cb.arg, h->term, inc ? inc : 1);
}

static void on_grant(const struct etcd_result *r, void *arg)
{
	struct ha *h = arg;

	if (h->st != ST_GRANT)
		return;
	if (r->status || r->ttl <= 0) {
		etcd_failed(h, r);
		h->st = ST_IDLE;
		return;
	}
	h->lease_id = r->lease_id;
	/* the lease's TTL started after our request was sent: half of it
	 * from the sending is a conservative serving deadline */
	h->grant_deadline_ms =
	    h->grant_sent_ms + (int64_t)h->cfg.lease_ttl_ms / 2;
	h->st = ST_TXN;
	if (etcd_put_if_absent(h->etcd, h->key, h->advertise, h->lease_id,
			       on_txn, h) != 0)
		give_up(h); /* out of memory */
}

static void on_look(const struct etcd_result *r, void *arg)
{
	struct ha *h = arg;

	if (h->st != ST_LOOK)
		return;
	if (r->status) {
		etcd_failed(h, r);
		h->fig.leader_addr[0] = '\0';
		h->st = ST_IDLE;
		return;
	}
	if (r->found) {
		snprintf(h->fig.leader_addr, sizeof(h->fig.leader_addr), "%s",
			 r->value);
		forget_self(h);
		if (r->create_revision > h->fig.last_term_seen)
			h->fig.last_term_seen = r->create_revision;
		h->seen_other = true;
		h->st = ST_IDLE;
		return;
	}
	h->fig.leader_addr[0] = '\0';
	h->st = ST_GRANT;
	h->grant_sent_ms = net_now_ms();
	if (etcd_lease_grant(h->etcd, (h->cfg.lease_ttl_ms + 999) / 1000,
			     on_grant, h) != 0)
		h->st = ST_IDLE;
}

/* ---- leader: renew, check the key ---------------------------------------- */

/* The leader's lease checked at now: false once it stepped down. Past
 * renew_deadline_ms (ttl/2 after the last confirmed renewal was sent) it
 * stops serving, since the lease's end is no longer certain to be ttl/2
 * away; it keeps renewing, and serves again when etcd confirms a renewal
 * sent within the last ttl/2. Only a whole ttl without a confirmed
 * renewal, when the lease may have lapsed and a standby may be winning,
 * ends the term: a loop slowed by load (or etcd's slow answers) costs a
 * pause in serving, not a failover. */
static bool lease_holds(struct ha *h, int64_t now)
{
	int64_t since = now - h->confirmed_sent_ms;
	char why[160];

	if (since >= (int64_t)h->cfg.lease_ttl_ms) {
		snprintf(why, sizeof(why),
			 "no renewal confirmed for %lld ms, the whole lease "
			 "(etcd unreachable, or this master was stopped)",
			 (long long)since);
		step_down(h, HA_SD_LEASE_EXPIRED, why);
		return false;
	}
	if (now >= h->renew_deadline_ms && !h->suspended) {
		h->suspended = true;
		h->suspended_ms = now;
		h->fig.suspensions++;
		h->fig.serving = false;
		log_line(LOG_WARN,
			 "ha: not serving: no renewal confirmed for %lld ms "
			 "(half the lease); still renewing, stepping down at "
			 "%u ms",
			 (long long)since, h->cfg.lease_ttl_ms);
	}
	return true;
}

static void on_renewed(const struct etcd_result *r, void *arg)
{
	struct renew *rn = arg;
	struct ha *h = rn->h;
	int64_t sent = rn->sent_ms, now = net_now_ms();
	bool ours = rn->lease_id == h->lease_id;

	rn->used = false;
	if (h->st != ST_LEADER || !ours)
		return; /* a keep-alive of an earlier leadership */
	if (r->status) {
		etcd_failed(h, r);
		return; /* the deadline decides */
	}
	if (r->ttl <= 0) {
		step_down(h, HA_SD_LEASE_GONE, "etcd says the lease is gone");
		return;
	}
	if (sent > h->confirmed_sent_ms)
		h->confirmed_sent_ms = sent;
	if (sent + (int64_t)h->cfg.lease_ttl_ms / 2 > h->renew_deadline_ms)
		h->renew_deadline_ms = sent + (int64_t)h->cfg.lease_ttl_ms / 2;
	if (h->suspended && now < h->renew_deadline_ms) {
		h->suspended = false;
		h->fig.serving = true;
		log_line(LOG_INFO,
			 "ha: serving again after %lld ms: etcd confirmed a "
			 "renewal, term %llu kept",
			 (long long)(now - h->suspended_ms),
			 (unsigned long long)h->term);
	}
}

static void on_check(const struct etcd_result *r, void *arg)
{
	struct ha *h = arg;

	h->check_pending = false;
	if (h->st != ST_LEADER || r->status)
		return;
	if (!r->found || r->create_revision != h->term) {
		if (r->found && r->create_revision > h->fig.last_term_seen)
			h->fig.last_term_seen = r->create_revision;
		/* the key names the new leader, or none */
		snprintf(h->fig.leader_addr, sizeof(h->fig.leader_addr), "%s",
			 r->found ? r->value : "");
		step_down(h, HA_SD_OTHER_TERM,
			  "the leader key holds another term");
	}
}

static void leader_tick(struct ha *h, int64_t now)
{
	struct renew *rn = NULL;

	if (!lease_holds(h, now))
		return;
	if (now < h->next_renew_ms)
		return;
	for (int i = 0; i < HA_RENEWS && !rn; i++)
		if (!h->renews[i].used)
			rn = &h->renews[i];
	if (!rn)
		return; /* HA_RENEWS in flight already */
	*rn = (struct renew){
	    .h = h, .sent_ms = now, .lease_id = h->lease_id, .used = true};
	h->next_renew_ms = now + renew_every(h);
	if (etcd_lease_keepalive(h->etcd, h->lease_id, on_renewed, rn) != 0) {
		rn->used = false;
		return;
	}
	if (!h->check_pending) {
		h->check_pending = true;
		if (etcd_get(h->etcd, h->key, on_check, h) != 0)
			h->check_pending = false;
	}
}

/* A gap in this module's runs longer than a quarter of the lease: the
 * process was stopped (SIGSTOP, a VM pause) or starved of CPU. Said, with
 * its length, and counted: it explains the step down or pause in serving
 * that may follow. */
static void noticed_gap(struct ha *h, int64_t now)
{
	int64_t gap = now - h->last_run_ms;
	int64_t expected = h->cfg.poll_ms > 50 ? h->cfg.poll_ms : 50;

	if (h->last_run_ms && gap > expected + h->cfg.lease_ttl_ms / 4) {
		h->fig.pauses++;
		if ((uint64_t)gap > h->fig.longest_pause_ms)
			h->fig.longest_pause_ms = (uint64_t)gap;
		log_line(LOG_WARN,
			 "ha: this master did not run for %lld ms (stopped or "
			 "starved of CPU)%s",
			 (long long)gap,
			 h->st == ST_LEADER ? "; checking its lease" : "");
	}
	if (now > h->last_run_ms)
		h->last_run_ms = now;
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct ha *h = arg;
	int64_t now = net_now_ms();

	(void)fd;
	(void)what;
	noticed_gap(h, now);
	if (h->st == ST_LEADER) {
		leader_tick(h, now);
	} else if (h->st == ST_IDLE) {
		h->st = ST_LOOK;
		if (etcd_get(h->etcd, h->key, on_look, h) != 0)
			h->st = ST_IDLE;
	}
	arm(h, h->st == ST_LEADER ? 50 : h->cfg.poll_ms);
}

struct ha *ha_start(struct event_base *base, const struct ha_config *cfg,
		    const struct ha_callbacks *cb, char *err, size_t errlen)
{
	struct ha *h = calloc(1, sizeof(*h));
	int timeout;

	if (!h) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	h->base = base;
	h->cfg = *cfg;
	h->cb = *cb;
	snprintf(h->key, sizeof(h->key), "%s", cfg->key);
	snprintf(h->advertise, sizeof(h->advertise), "%s", cfg->advertise);
	snprintf(h->endpoints, sizeof(h->endpoints), "%s", cfg->endpoints);
	h->cfg.key = h->key;
	h->cfg.advertise = h->advertise;
	h->cfg.endpoints = h->endpoints;
	/* an exchange may take a third of the TTL before the next endpoint */
	timeout = (int)(cfg->lease_ttl_ms / 3);
	h->etcd = etcd_create(base, cfg->endpoints, timeout, err, errlen);
	h->timer = h->etcd ? evtimer_new(base, on_timer, h) : NULL;
	if (!h->timer) {
		if (h->etcd && !err[0])
			snprintf(err, errlen, "out of memory");
		etcd_destroy(h->etcd);
		free(h);
		return NULL;
	}
	arm(h, 0);
	return h;
}

bool ha_serving(struct ha *h, int64_t now_ms)
{
	if (!h || h->st != ST_LEADER)
		return false;
	noticed_gap(h, now_ms);
	return lease_holds(h, now_ms) && !h->suspended;
}

void ha_figures(const struct ha *h, struct ha_figures *f)
{
	*f = h->fig;
}

static void on_fence(const struct etcd_result *r, void *arg)
{
	struct fence_write *fw = arg;
	struct ha *h = fw->h;

	fw->used = false;
	if (r->status != 0)
		h->fig.etcd_errors++;
	if (h->cb.fenced) /* created now, or there already */
		h->cb.fenced(h->cb.arg, fw->incarnation, fw->segment_id,
			     r->status == 0);
}

int ha_fence(struct ha *h, uint64_t incarnation, uint64_t segment_id)
{
	struct fence_write *fw = NULL;
	char key[sizeof(h->key) + 64];

	for (int i = 0; i < HA_FENCES && !fw; i++)
		if (!h->fences[i].used)
			fw = &h->fences[i];
	if (!fw)
		return -1;
	*fw = (struct fence_write){.h = h,
				   .incarnation = incarnation,
				   .segment_id = segment_id,
				   .used = true};
	ha_fence_key(key, sizeof(key), h->key, incarnation, segment_id);
	if (etcd_put_if_absent(h->etcd, key, "expired", 0, on_fence, fw)) {
		fw->used = false;
		return -1;
	}
	return 0;
}

void ha_stop(struct ha *h, int wait_ms)
{
	int64_t until = net_now_ms() + wait_ms;

	if (!h)
		return;
	evtimer_del(h->timer);
	if (h->lease_id) {
		h->cb.deposed = NULL;
		h->st = ST_IDLE;
		etcd_lease_revoke(h->etcd, h->lease_id, on_revoked, h);
		h->lease_id = 0;
		while (etcd_pending(h->etcd) && net_now_ms() < until)
			event_base_loop(h->base, EVLOOP_ONCE);
	}
	etcd_destroy(h->etcd);
	event_free(h->timer);
	free(h);
}
