/*
 * An acknowledged remove stays removed through failovers (docs/HA.md,
 * "Removed stays removed"), on check_ha.c's fixture (hafx.h): a remove
 * answered and the leader killed at once; a worker stopped while it holds
 * a replica of the key (the remove waits for its expiry, then the leader
 * is killed); a worker expired, re-mounted, and then a failover. In each,
 * the key stays not found at the next leader. Skipped without etcd.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "hafx.h"
#include "wait.h"

Suite *make_ha_remove_suite(void);

/* The client TTL of the fixture (--client_ttl=8). */
#define TTL_MS 8000

/* Kill -9 of leader 0; master 1 leads; the store client follows. */
static void failover(void)
{
	proc_kill9(hafx_master(0));
	ck_assert_int_eq(hafx_wait_leader(0), 1);
}

/* A remove answered, the leader killed -9 at once: before, the workers
 * learned of the drop one FetchTasks period later, still held the object
 * at the next leader and re-registered it. Now the Remove is answered
 * once both workers acknowledged the drop. */
START_TEST(test_ha_remove_acked_then_leader_killed_stays_gone)
{
	static uint8_t kept[5000];
	store_client *sc;

	if (hafx_skip())
		return;
	sc = hafx_start_clients(2, 2, 0);
	hafx_put_keys(sc, kept, 2);
	ck_assert_msg(store_client_remove(sc, "gone") == 0, "%s",
		      store_client_error(sc));
	failover();
	hafx_assert_gone_kept(sc, kept);
	ck_assert_int_eq(hafx_metric(1, "mcrepl_master_keys"), 1);
	ck_assert_int_eq(
	    hafx_metric(1, "mcrepl_master_ha_objects_recovered_total"), 1);
	ck_assert_int_eq(hafx_worker_metric(0, "mcrepl_worker_index_objects"),
			 1);
	ck_assert_int_eq(hafx_worker_metric(1, "mcrepl_worker_index_objects"),
			 1);
	store_client_close(sc);
	hafx_stop();
}
END_TEST

/* A worker holding a replica is stopped: the remove cannot be
 * acknowledged by it, so the leader expires it (--client_ttl) and then
 * answers (the client was told "recovering" meanwhile and asked again).
 * The leader is then killed and the worker resumed: silent past its TTL,
 * it forgets its index; the key stays gone at the next leader. Before,
 * the remove was answered at once and the resumed worker re-registered
 * the key there. */
START_TEST(test_ha_remove_waits_out_stopped_worker)
{
	static uint8_t kept[5000];
	store_client *sc;
	int64_t t0, took;

	if (hafx_skip())
		return;
	sc = hafx_start_clients(2, 2, 0);
	hafx_put_keys(sc, kept, 2);
	kill(hafx_worker(1)->pid, SIGSTOP);
	t0 = net_now_ms();
	ck_assert_msg(store_client_remove(sc, "gone") == 0, "%s",
		      store_client_error(sc));
	took = net_now_ms() - t0;
	ck_assert_int_ge(took, 2000); /* past the first "recovering" */
	ck_assert_int_lt(took, TTL_MS + 3000);
	/* answered once the stopped worker was expired */
	ck_assert_int_eq(hafx_metric(0, "mcrepl_master_segments"), 1);
	ck_assert_int_eq(hafx_metric(0, "mcrepl_master_remove_waits_total"), 1);
	failover();
	kill(hafx_worker(1)->pid, SIGCONT);
	WAIT_UNTIL(hafx_metric(1, "mcrepl_master_segments") == 2);
	hafx_assert_gone_kept(sc, kept);
	ck_assert_int_eq(
	    hafx_worker_metric(1, "mcrepl_worker_index_forgotten_total"), 1);
	ck_assert_int_eq(
	    hafx_worker_metric(1, "mcrepl_worker_fences_found_total"), 1);
	ck_assert_int_eq(
	    hafx_worker_metric(0, "mcrepl_worker_fences_found_total"), 0);
	ck_assert_int_eq(hafx_metric(1, "mcrepl_master_keys"), 1);
	store_client_close(sc);
	hafx_stop();
}
END_TEST

/* Both masters stopped past the workers' client TTL, then the standby
 * resumed (the leader stays stopped, then is killed): no master expired
 * a worker, so both re-register everything at the new leader and nothing
 * is lost. Before, a worker that had heard from no master for
 * --client_ttl forgot its index at any next leader, so a leader paused
 * that long lost every object. */
START_TEST(test_ha_leader_paused_past_client_ttl_loses_nothing)
{
	static uint8_t kept[5000];
	void *buf = NULL;
	size_t got = 0;
	store_client *sc;
	int64_t t0;

	if (hafx_skip())
		return;
	sc = hafx_start_clients(2, 2, 0);
	hafx_put_keys(sc, kept, 2);
	kill(hafx_master(1)->pid, SIGSTOP);
	kill(hafx_master(0)->pid, SIGSTOP);
	t0 = net_now_ms(); /* the fault lasts past the client TTL */
	WAIT_UNTIL(net_now_ms() - t0 > TTL_MS + 1000);
	kill(hafx_master(1)->pid, SIGCONT);
	ck_assert_int_eq(hafx_wait_leader(0), 1);
	proc_kill9(hafx_master(0));
	WAIT_UNTIL(hafx_metric(1, "mcrepl_master_segments") == 2 &&
		   hafx_metric(1, "mcrepl_master_keys") == 2);
	ck_assert_msg(store_client_get(sc, "kept", &buf, &got, NULL) == 0, "%s",
		      store_client_error(sc));
	ck_assert_uint_eq(got, sizeof(kept));
	ck_assert_int_eq(memcmp(buf, kept, sizeof(kept)), 0);
	free(buf);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(hafx_worker_metric(
				     i, "mcrepl_worker_index_forgotten_total"),
				 0);
		ck_assert_int_eq(
		    hafx_worker_metric(i, "mcrepl_worker_index_objects"), 2);
	}
	store_client_close(sc);
	hafx_stop();
}
END_TEST

/* A worker cut off past its TTL is expired; the key is removed while it
 * is away; it resumes and re-mounts at the same leader (which tells it it
 * was expired), then the leader fails over: before, it still held its
 * whole index and re-registered the removed key at the next leader. Now
 * it forgot the index when it was told. */
START_TEST(test_ha_expired_worker_remounted_brings_nothing_back)
{
	static uint8_t kept[5000];
	store_client *sc;

	if (hafx_skip())
		return;
	sc = hafx_start_clients(2, 2, 0);
	hafx_put_keys(sc, kept, 2);
	kill(hafx_worker(1)->pid, SIGSTOP);
	WAIT_UNTIL(hafx_metric(0, "mcrepl_master_segments") == 1);
	ck_assert_msg(store_client_remove(sc, "gone") == 0, "%s",
		      store_client_error(sc));
	kill(hafx_worker(1)->pid, SIGCONT);
	WAIT_UNTIL(
	    hafx_metric(0, "mcrepl_master_segments") == 2 &&
	    hafx_worker_metric(1, "mcrepl_worker_index_forgotten_total") == 1);
	failover();
	hafx_assert_gone_kept(sc, kept);
	WAIT_UNTIL(hafx_metric(1, "mcrepl_master_segments") == 2);
	ck_assert_int_eq(hafx_metric(1, "mcrepl_master_keys"), 1);
	ck_assert_int_eq(hafx_worker_metric(1, "mcrepl_worker_index_objects"),
			 0);
	store_client_close(sc);
	hafx_stop();
}
END_TEST

Suite *make_ha_remove_suite(void)
{
	Suite *s = suite_create("ha_remove");
	TCase *tc = tcase_create("etcd");

	tcase_add_test(tc, test_ha_remove_acked_then_leader_killed_stays_gone);
	tcase_add_test(tc, test_ha_leader_paused_past_client_ttl_loses_nothing);
	tcase_add_test(tc, test_ha_remove_waits_out_stopped_worker);
	tcase_add_test(tc,
		       test_ha_expired_worker_remounted_brings_nothing_back);
	suite_add_tcase(s, tc);
	return s;
}
