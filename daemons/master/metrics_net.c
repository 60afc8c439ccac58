/* /metrics for mcrepl-master, the parts outside the store: the RPC
 * port's bounds, the HTTP port's, authentication's and HA's families
 * (metrics.h). */
#include "ha.h"
#include "httpcap.h"
#include "metrics.h"
#include "rpc_server.h"
#include "service.h"

/* The reason labels of the families below, by index. */
static const char *auth_fail_reason(int i)
{
	return rpc_auth_fail_name((enum rpc_auth_fail)i);
}

static const char *refusal_reason(int i)
{
	return svc_refusal_name((enum svc_refusal)i);
}

static const char *step_down_reason(int i)
{
	return ha_step_down_name((enum ha_step_down)i);
}

/* The caps a connection meets, in the order the families list them. */
static const char *cap_reason(int i)
{
	static const char *const caps[] = {"cap", "peer", "reserve"};

	return caps[i];
}

static const char *anon_reason(int i)
{
	static const char *const caps[] = {"share", "peer", "limit"};

	return caps[i];
}

/* Authentication: handshakes done, failed by reason, and
 * requests refused by authorization, by reason. */
static void auth_metrics(const struct metrics_sources *m, struct mcu_prom *t,
			 const rpc_server_stats *st)
{
	mcu_prom_metric(t, "mcrepl_master_auth_enabled", "gauge",
			"1 with --auth_file (every connection authenticates)",
			m->auth);
	mcu_prom_metric(t, "mcrepl_master_auth_handshakes_total", "counter",
			"RPC connections authenticated", st->auth_ok);
	mcu_prom_metric(t, "mcrepl_master_tls_enabled", "gauge",
			"1 with --tls_cert (RPC and HTTP over TLS)", m->tls);
	mcu_prom_metric(t, "mcrepl_master_tls_handshakes_total", "counter",
			"RPC connections whose TLS handshake completed",
			st->tls_ok);
	mcu_prom_reasons(t, "mcrepl_master_auth_failures_total",
			 "RPC handshakes failed (connection closed), by reason",
			 auth_fail_reason, st->auth_failed, 1,
			 RPC_AUTH_FAIL_COUNT);
	mcu_prom_reasons(t, "mcrepl_master_auth_refusals_total",
			 "Requests refused by authorization, by reason",
			 refusal_reason, m->auth_refused, 0, SVC_REFUSAL_COUNT);
}

/* With an auth file: connections not yet authenticated, and those closed
 * to make room, by the cap that was full. */
static void anon_metrics(struct mcu_prom *t, const rpc_server_stats *st)
{
	const uint64_t by[] = {st->anon_closed_share, st->anon_closed_peer,
			       st->anon_closed_limit};

	mcu_prom_metric(t, "mcrepl_master_rpc_unauthenticated_connections",
			"gauge", "RPC connections not yet authenticated",
			(uint64_t)st->unauth_now);
	mcu_prom_reasons(t, "mcrepl_master_rpc_unauthenticated_closed_total",
			 "Unauthenticated RPC connections closed (TOO_MANY) to "
			 "make room, by the cap that was full",
			 anon_reason, by, 0, (int)(sizeof(by) / sizeof(by[0])));
}

/* Open connections, and those refused, by the cap that was full. */
static void conn_metrics(const struct metrics_sources *m, struct mcu_prom *t,
			 const rpc_server_stats *st)
{
	const uint64_t refused[] = {st->refused_cap, st->refused_peer,
				    st->refused_reserve};

	mcu_prom_metric(t, "mcrepl_master_rpc_connections", "gauge",
			"Open RPC connections",
			(uint64_t)rpc_server_conn_count(m->rpc));
	mcu_prom_reasons(t, "mcrepl_master_rpc_refused_total",
			 "RPC connections refused (TOO_MANY), by cap",
			 cap_reason, refused, 0,
			 (int)(sizeof(refused) / sizeof(refused[0])));
}

/* What the RPC port's bounds did: refusals by reason,
 * closes, frames that waited for input budget, the budget now. */
void metrics_net(const struct metrics_sources *m, struct mcu_prom *t)
{
	rpc_server_stats st;

	if (!m->rpc)
		return;
	rpc_server_stats_get(m->rpc, &st);
	conn_metrics(m, t, &st);
	anon_metrics(t, &st);
	mcu_prom_metric(t, "mcrepl_master_rpc_idle_closed_total", "counter",
			"RPC connections closed idle", st.idle_closed);
	mcu_prom_metric(t, "mcrepl_master_rpc_frame_timeouts_total", "counter",
			"RPC connections closed with a frame or reply stalled",
			st.frame_timeouts);
	mcu_prom_metric(t, "mcrepl_master_rpc_budget_waits_total", "counter",
			"RPC frames that waited for input budget",
			st.budget_waits);
	mcu_prom_metric(t, "mcrepl_master_rpc_budget_used_bytes", "gauge",
			"RPC input budget granted now",
			(uint64_t)st.budget_used);
	httpcap_metrics(m->http_cap, "mcrepl_master_http", t);
	auth_metrics(m, t, &st);
}

/* The longest gap in seconds (base units), and in milliseconds under the
 * name it had before, kept one more release (docs/HA.md). */
static void pause_metrics(struct mcu_prom *t, uint64_t ms)
{
	static const char *const s = "mcrepl_master_ha_longest_pause_seconds";

	mcu_prom_head(t, s, "gauge", "The longest of those gaps");
	mcu_prom_printf(t, "%s %llu.%03llu\n", s, (unsigned long long)ms / 1000,
			(unsigned long long)ms % 1000);
	mcu_prom_metric(
	    t, "mcrepl_master_ha_longest_pause_ms", "gauge",
	    "Deprecated, removed in the next release: "
	    "mcrepl_master_ha_longest_pause_seconds in milliseconds",
	    ms);
}

/* HA: role, term, failovers, objects recovered (docs/HA.md). */
void metrics_ha(const struct metrics_sources *m,
		const struct store_ha_figures *r, struct mcu_prom *t)
{
	struct ha_figures f;

	if (!m->ha)
		return;
	ha_figures(m->ha, &f);
	mcu_prom_head(t, "mcrepl_master_ha_role", "gauge",
		      "1 for this master's role (leader or standby)");
	mcu_prom_u64(t, "mcrepl_master_ha_role",
		     (const struct mcu_prom_label[]){
			 {.name = "role", .value = "leader"}},
		     1, f.leader);
	mcu_prom_u64(t, "mcrepl_master_ha_role",
		     (const struct mcu_prom_label[]){
			 {.name = "role", .value = "standby"}},
		     1, !f.leader);
	mcu_prom_metric(t, "mcrepl_master_ha_term", "gauge",
			"Term this master leads (0: standby)", f.term);
	mcu_prom_metric(t, "mcrepl_master_ha_last_term_seen", "gauge",
			"Highest term seen in etcd", f.last_term_seen);
	mcu_prom_metric(t, "mcrepl_master_ha_elections_won_total", "counter",
			"Terms this master won", f.elections_won);
	mcu_prom_metric(t, "mcrepl_master_ha_failovers_total", "counter",
			"Leaderships taken over from another master",
			f.failovers);
	mcu_prom_metric(t, "mcrepl_master_ha_serving", "gauge",
			"1 while this master leads and its lease is certain to "
			"hold",
			f.serving);
	mcu_prom_reasons(t, "mcrepl_master_ha_step_downs_total",
			 "Leaderships given up, by reason (lease_expired: no "
			 "renewal confirmed for a whole TTL)",
			 step_down_reason, f.step_downs_by, 0, HA_SD_COUNT);
	mcu_prom_metric(t, "mcrepl_master_ha_suspensions_total", "counter",
			"Times the leader stopped serving for want of a "
			"confirmed renewal and kept its term",
			f.suspensions);
	mcu_prom_metric(t, "mcrepl_master_ha_pauses_total", "counter",
			"Gaps longer than TTL/4 in this master's runs (stopped "
			"or starved of CPU)",
			f.pauses);
	pause_metrics(t, f.longest_pause_ms);
	mcu_prom_metric(t, "mcrepl_master_ha_etcd_errors_total", "counter",
			"etcd requests that failed", f.etcd_errors);
	mcu_prom_metric(t, "mcrepl_master_ha_refused_total", "counter",
			"Requests refused as not the leader", m->ha_refused);
	mcu_prom_metric(
	    t, "mcrepl_master_ha_recovering_refused_total", "counter",
	    "Puts and empty reads answered 'recovering' (ask again)",
	    m->ha_deferred);
	mcu_prom_metric(t, "mcrepl_master_ha_objects_recovered_total",
			"counter",
			"Objects re-registered by workers in this term",
			r->objects_recovered);
	mcu_prom_metric(t, "mcrepl_master_ha_replicas_recovered_total",
			"counter",
			"Replicas re-registered by workers in this term",
			r->replicas_recovered);
	mcu_prom_metric(t, "mcrepl_master_ha_recover_refused_total", "counter",
			"Re-registered replicas refused (overlap, bad record)",
			r->recover_refused);
	mcu_prom_metric(t, "mcrepl_master_ha_orphans_total", "counter",
			"Keyless regions re-registered (puts the journal had "
			"not reached)",
			r->orphans);
	mcu_prom_metric(t, "mcrepl_master_ha_orphans_adopted_total", "counter",
			"Keyless regions adopted by a lookup of their key",
			r->orphans_adopted);
	mcu_prom_metric(t, "mcrepl_master_ha_orphans_expired_total", "counter",
			"Keyless regions freed unclaimed", r->orphans_expired);
	mcu_prom_metric(t, "mcrepl_master_ha_superseded_total", "counter",
			"Re-registered objects replaced by a newer version",
			r->superseded);
}
