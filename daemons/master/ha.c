/* Master election on etcd (see ha.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "clock.h"
#include "etcd.h"
#include "ha.h"

enum ha_state { ST_IDLE, ST_LOOK, ST_GRANT, ST_TXN, ST_LEADER };

#define HA_RENEWS 3

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
	/* keep-alives in flight: a slow one does not hold the next back */
	struct renew renews[HA_RENEWS];
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

static void step_down(struct ha *h, const char *why)
{
	bool was = h->st == ST_LEADER;

	if (h->lease_id)
		etcd_lease_revoke(h->etcd, h->lease_id, on_revoked, h);
	h->lease_id = 0;
	h->st = ST_IDLE;
	h->term = 0;
	h->fig.leader = false;
	h->fig.term = 0;
	forget_self(h);
	if (was) {
		h->fig.step_downs++;
		log_line(LOG_WARN, "ha: stepping down: %s", why);
		h->cb.deposed(h->cb.arg, why);
	}
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
		step_down(h, r->err);
		return;
	}
	if (!r->succeeded) { /* another master won first */
		snprintf(h->fig.leader_addr, sizeof(h->fig.leader_addr), "%s",
			 r->value);
		h->seen_other = true;
		step_down(h, "lost the race");
		return;
	}
	h->st = ST_LEADER;
	h->term = r->revision;
	h->renew_deadline_ms = h->grant_deadline_ms;
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
		step_down(h, "out of memory");
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

static void on_renewed(const struct etcd_result *r, void *arg)
{
	struct renew *rn = arg;
	struct ha *h = rn->h;
	int64_t sent = rn->sent_ms;
	bool ours = rn->lease_id == h->lease_id;

	rn->used = false;
	if (h->st != ST_LEADER || !ours)
		return; /* a keep-alive of an earlier leadership */
	if (r->status) {
		etcd_failed(h, r);
		return; /* the deadline decides */
	}
	if (r->ttl <= 0) {
		step_down(h, "etcd says the lease is gone");
		return;
	}
	if (sent + (int64_t)h->cfg.lease_ttl_ms / 2 > h->renew_deadline_ms)
		h->renew_deadline_ms = sent + (int64_t)h->cfg.lease_ttl_ms / 2;
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
		step_down(h, "the leader key holds another term");
	}
}

static void leader_tick(struct ha *h, int64_t now)
{
	struct renew *rn = NULL;

	if (now >= h->renew_deadline_ms) {
		step_down(h, "lease not renewed in time (etcd unreachable?)");
		return;
	}
	if (now < h->next_renew_ms)
		return;
	for (int i = 0; i < HA_RENEWS && !rn; i++)
		if (!h->renews[i].used)
			rn = &h->renews[i];
	if (!rn)
		return; /* HA_RENEWS in flight already */
	*rn = (struct renew){h, now, h->lease_id, true};
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

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct ha *h = arg;
	int64_t now = net_now_ms();

	(void)fd;
	(void)what;
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
	if (now_ms >= h->renew_deadline_ms) {
		step_down(h, "lease not renewed in time (etcd unreachable?)");
		return false;
	}
	return true;
}

void ha_figures(const struct ha *h, struct ha_figures *f)
{
	*f = h->fig;
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
