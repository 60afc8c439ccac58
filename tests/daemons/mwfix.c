/* One master, at most one worker, store clients (see mwfix.h). */
#include "mwfix.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wait.h"

#define MWFIX_MAX_FLAGS 24

static void auth_up(struct mwfix *f)
{
	char err[256], path[400];
	FILE *file;

	ck_assert_int_eq(harness_auth_setup(&f->auth, f->opts.principals), 0);
	if (f->opts.auth_text) {
		file = fopen(f->auth.file, "a");
		ck_assert_ptr_nonnull(file);
		fputs(f->opts.auth_text, file);
		ck_assert_int_eq(fclose(file), 0);
	}
	for (size_t i = 0; i < f->auth.n; i++)
		ck_assert_msg(
		    auth_cred_load(f->auth.names[i],
				   harness_auth_secret_file(&f->auth,
							    f->auth.names[i],
							    path, sizeof(path)),
				   &f->cred[i], err, sizeof(err)) == 0,
		    "%s", err);
}

void mwfix_master(struct mwfix *f, const char *extra)
{
	char auth_flag[400];
	const char *flags[MWFIX_MAX_FLAGS];
	size_t n = 0;

	if (f->opts.principals) {
		snprintf(auth_flag, sizeof(auth_flag), "--auth_file=%s",
			 f->auth.file);
		flags[n++] = auth_flag;
	}
	for (const char *const *p = f->opts.master_flags; p && *p; p++) {
		ck_assert_uint_lt(n, MWFIX_MAX_FLAGS - 2);
		flags[n++] = *p;
	}
	flags[n++] = extra;
	flags[n] = NULL;
	ck_assert_int_eq(master_start(&f->master, flags), 0);
	f->port = (uint16_t)proc_field(&f->master, "rpc_port");
	f->http = (uint16_t)proc_field(&f->master, "metrics_port");
	snprintf(f->addr, sizeof(f->addr), "127.0.0.1:%u", f->port);
}

/* The index of principal name in f's auth file, or -1. */
static int principal_index(const struct mwfix *f, const char *name)
{
	for (size_t i = 0; i < f->auth.n; i++)
		if (strcmp(f->auth.names[i], name) == 0)
			return (int)i;
	return -1;
}

static void worker_up(struct mwfix *f)
{
	char bin[512], master[80], size[64];
	const char *argv[10] = {harness_bin("mcrepl-worker", bin, sizeof(bin)),
				master, "--host_id=host-a", size,
				"--transport=tcp"};
	size_t n = 5;
	int w = -1;

	snprintf(master, sizeof(master), "--master=%s", f->addr);
	snprintf(size, sizeof(size), "--segment_size=%s", f->opts.segment_size);
	if (f->opts.worker_principal) {
		w = principal_index(f, f->opts.worker_principal);
		ck_assert_int_ge(w, 0);
		argv[n++] = f->auth.principal_flag[w];
		argv[n++] = f->auth.secret_flag[w];
	}
	argv[n++] = f->opts.worker_flag;
	argv[n] = NULL;
	ck_assert_int_eq(proc_start(&f->worker, (char *const *)(uintptr_t)argv,
				    "mcrepl-worker ready", test_hang_ms()),
			 0);
}

void mwfix_start(struct mwfix *f, const struct mwfix_opts *o)
{
	memset(f, 0, sizeof(*f));
	f->master.pid = f->worker.pid = -1;
	f->opts = *o;
	if (o->principals)
		auth_up(f);
	mwfix_master(f, o->master_flag);
	if (o->segment_size)
		worker_up(f);
	if (o->wait_capacity)
		WAIT_UNTIL(mwfix_metric(f, "mcrepl_master_capacity_bytes") ==
			   (long long)o->wait_capacity);
}

int mwfix_stop(struct mwfix *f)
{
	int rc = 0;

	if (f->worker.pid > 0 && proc_stop(&f->worker) != 0)
		rc = -1;
	if (proc_stop(&f->master) != 0)
		rc = -1;
	harness_auth_cleanup(&f->auth);
	return rc;
}

long long mwfix_metric(const struct mwfix *f, const char *name)
{
	char *page = http_get(f->http, "/metrics");
	long long v;

	ck_assert_ptr_nonnull(page);
	v = metric_value(page, name);
	free(page);
	return v;
}

const struct auth_cred *mwfix_cred(const struct mwfix *f, const char *name)
{
	int i = principal_index(f, name);

	ck_assert_msg(i >= 0, "no principal '%s'", name);
	return &f->cred[i];
}

store_client *mwfix_client(const struct mwfix *f, const char *tenant,
			   const struct store_client_config *cfg)
{
	store_client *c = NULL;
	char err[512];

	ck_assert_msg(
	    store_client_open(&c, f->addr, tenant, cfg, err, sizeof(err)) == 0,
	    "%s", err);
	return c;
}

store_client *mwfix_client_as(const struct mwfix *f, const char *tenant,
			      const struct auth_cred *cred)
{
	struct store_client_config cfg;

	store_client_config_init(&cfg);
	cfg.cred = cred;
	return mwfix_client(f, tenant, &cfg);
}

void mwfix_assert_reads(store_client *c, const char *key, const void *obj,
			uint64_t len)
{
	uint64_t got = 0;
	void *buf = NULL;

	ck_assert_msg(store_client_get(c, key, &buf, &got, NULL) == 0,
		      "get %s: %s", key, store_client_error(c));
	ck_assert_uint_eq(got, len);
	ck_assert_mem_eq(buf, obj, len);
	free(buf);
}
