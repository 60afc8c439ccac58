/*
 * Principals and credentials of the control plane: the master's
 * auth file, a client's or worker's own credential, and the HMAC-SHA256
 * proofs of the RPC handshake (runtime/rpc/rpc_auth.h).
 *
 * The auth file, one principal a line (docs/SECURITY.md):
 *
 *     # kind   name    settings (key=value, no spaces inside a value)
 *     worker   w1      secret=<16..256 chars> hosts=h1,h2 domains=d1 \
 *                      max_capacity=64G
 *     client   app     secret=<...> tenants=default,t2 rights=read,write
 *     client   ops     secret=<...> tenants=* rights=read,write,remove,admin
 *     client   batch   secret=<...> tenants=t2 rights=write quota=10G \
 *                      reserve=1G
 *     tenant   t2      quota=40G integrity=on
 *     tenant   *       quota=100G
 *
 * Instead of secret=, auth=cert: the principal authenticates by a client
 * certificate whose CN is its name, on a master with mutual TLS (--tls_ca;
 * tls.h), and never by a secret.
 *
 * Blank lines and lines starting with # are skipped. A worker needs secret,
 * hosts, domains and max_capacity; a client secret, tenants and rights
 * (read, write, remove, admin). "*" in a list means any.
 *
 * Bounds on what puts hold (the master's store_quota.c; docs/SECURITY.md):
 * a client's quota=SIZE bounds the bytes (size x replicas) of the objects
 * it put, written or not (none by default); its reserve=SIZE or reserve=N%
 * (1..100, of the mounted capacity) bounds those it has not written yet
 * (AUTH_RESERVE_PCT_DEFAULT % by default). A line "tenant NAME quota=SIZE"
 * bounds every principal's puts into tenant NAME together; "tenant *"
 * does so for each tenant without a line of its own (no bound without
 * one). A tenant line's integrity=on (or off) says whether its puts must
 * carry a payload digest (the master's --integrity when unset); a tenant
 * line needs quota=, integrity= or both. Sizes take K, M, G, T suffixes and are > 0. Names are 1..64
 * characters of A-Z a-z 0-9 . _ -; secrets 16..256 printable characters
 * without spaces. Any other key, a duplicate name or key, or a missing one
 * is an error naming the file and line; so is a NUL byte anywhere (a name
 * "w1\0x" must not read as "w1"). Two workers whose client-id spaces
 * (below) are one are an error too. A file others may read or write
 * (mode & 007) is refused, as ssh refuses such a private key.
 *
 * A credential (--principal NAME --secret_file PATH on every binary that
 * calls the master): the secret is the first line of PATH (a trailing
 * newline dropped), a file with the same permission rule.
 *
 * Secrets are never logged: no function here prints one, and errors name
 * the file, the line and the key, never a value of secret=.
 *
 * Thread-safety: a loaded table is read-only and may be shared.
 */
#ifndef MCREPL_DAEMON_AUTH_H
#define MCREPL_DAEMON_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUTH_NAME_MAX 64
#define AUTH_SECRET_MIN 16
#define AUTH_SECRET_MAX 256
#define AUTH_NONCE_BYTES 32
#define AUTH_MAC_BYTES 32

enum auth_kind { AUTH_WORKER = 1, AUTH_CLIENT = 2 };

enum auth_right {
	AUTH_READ = 1u << 0,
	AUTH_WRITE = 1u << 1,
	AUTH_REMOVE = 1u << 2,
	AUTH_ADMIN = 1u << 3,
};

struct auth_principal {
	char name[AUTH_NAME_MAX + 1];
	enum auth_kind kind;
	uint8_t secret[AUTH_SECRET_MAX];
	size_t secret_len;
	bool cert; /* auth=cert: by client certificate only, no secret */
	/* comma-separated lists as written; "*" = any (the any_ flag set) */
	char *hosts, *domains, *tenants;
	bool any_host, any_domain, any_tenant;
	uint64_t max_capacity; /* worker: largest segment it may mount */
	unsigned rights;       /* client: enum auth_right bits */
	uint32_t id_tag;       /* auth_id_tag(name) */
	/* client: quota= (0: none); reserve= in bytes, or in percent of the
	 * mounted capacity (reserve_pct; both 0: the default percentage) */
	uint64_t quota, reserve;
	unsigned reserve_pct;
};

#define AUTH_RESERVE_PCT_DEFAULT 25u
#define AUTH_TENANT_MAX 255 /* a tenant line's name, as a tenants= item */

/* A tenant line's integrity= (docs/SECURITY.md "Payload digests"). */
enum auth_integrity {
	AUTH_INTEGRITY_UNSET,
	AUTH_INTEGRITY_OFF,
	AUTH_INTEGRITY_ON
};

/* A "tenant" line: name ("*": every tenant without a line), quota (0:
 * none on this line) and integrity. */
struct auth_tenant {
	char name[AUTH_TENANT_MAX + 1];
	uint64_t quota;
	enum auth_integrity integrity;
};

struct auth_table {
	struct auth_principal *p;
	size_t n;
	struct auth_tenant *t; /* tenant lines, in file order */
	size_t n_t;
};

/* Reads and checks the auth file at path. 0 with *out (auth_table_free),
 * or -1 with one line in err ("auth file F line N: ..."). */
int auth_table_load(const char *path, struct auth_table **out, char *err,
		    size_t errlen);
/* Parses text as an auth file named `name` in messages (no file access;
 * for tests). Same results as auth_table_load. */
int auth_table_parse(const char *text, const char *name,
		     struct auth_table **out, char *err, size_t errlen);
void auth_table_free(struct auth_table *t);

/* Whether name is a principal name: 1..AUTH_NAME_MAX characters of
 * A-Z a-z 0-9 . _ - (so no NUL inside, no space, nothing unprintable). */
bool auth_name_ok(const char *name);

/* The principal called name, or NULL. */
const struct auth_principal *auth_find(const struct auth_table *t,
				       const char *name);

/* Whether p may act on tenant, mount for host, in domain. */
bool auth_tenant_ok(const struct auth_principal *p, const char *tenant);
bool auth_host_ok(const struct auth_principal *p, const char *host);
bool auth_domain_ok(const struct auth_principal *p, const char *domain);
/* The bound on tenant's puts: its line's quota, else the "tenant *"
 * line's, else 0 (none). */
uint64_t auth_tenant_quota(const struct auth_table *t, const char *tenant);
/* Whether tenant's puts must carry a payload digest: its line's
 * integrity=, else the "tenant *" line's, else dflt (the master's
 * --integrity). t may be NULL (no auth file: dflt). */
bool auth_tenant_integrity(const struct auth_table *t, const char *tenant,
			   bool dflt);
/* The bound on p's unwritten puts when capacity bytes are mounted. */
uint64_t auth_reserve_bound(const struct auth_principal *p, uint64_t capacity);
/* The parser's part in auth_quota.c: a client's key k=v when it is
 * quota or reserve (0, or -1 with why), 1 when it is neither; a tenant
 * line's n words into t (0, or -1 with why). */
int auth__client_bound(struct auth_principal *p, const char *k, const char *v,
		       char *why, size_t len);
int auth__tenant_line(struct auth_table *t, char **w, size_t n, char *why,
		      size_t len);
/* "read", "write", "remove", "admin" for one right bit. */
const char *auth_right_name(unsigned right);

/* Client ids under an auth file. A worker principal owns the ids whose
 * bits 62..32 are its tag, the top 31 bits of SHA-256("mcrepl client id\0"
 * name); the low 32 bits (not 0) are its worker's choice. The master
 * refuses a worker call naming an id outside the caller's space, so no
 * principal can take another's id, while it is mounted, after it expired,
 * or after a master restart, and the master keeps no record for it.
 * auth_table_load refuses two worker principals with the same tag. */
#define AUTH_ID_TAG_SHIFT 32
uint32_t auth_id_tag(const char *name);
/* The id numbered n (0 taken as 1) in name's space. */
uint64_t auth_client_id(const char *name, uint32_t n);
/* Whether id is in p's space (its low 32 bits not 0). */
bool auth_id_owned(const struct auth_principal *p, uint64_t id);

/* One's own credential: a principal name and its secret. */
struct auth_cred {
	char name[AUTH_NAME_MAX + 1];
	uint8_t secret[AUTH_SECRET_MAX];
	size_t secret_len;
};

/* Loads name's credential from secret_file. 0, or -1 with err. */
int auth_cred_load(const char *name, const char *secret_file,
		   struct auth_cred *out, char *err, size_t errlen);

/* Whether a file may hold secrets: 0, or -1 with err naming its mode. */
int auth_file_private(const char *path, char *err, size_t errlen);

/* ---- the handshake's proofs ---- */

/* Which side proves (labels keep a client's proof from passing as the
 * server's and back); SESSION: the connection's session key, which both
 * sides derive once the handshake is done and which never travels. */
enum auth_side { AUTH_SIDE_CLIENT, AUTH_SIDE_SERVER, AUTH_SIDE_SESSION };

/* HMAC-SHA256(secret, "mcrepl-auth-v1 <side>\0" name "\0" cn sn) into
 * mac. 0, or -1 when libcrypto fails. */
int auth_mac(const uint8_t *secret, size_t secret_len, enum auth_side side,
	     const char *name, const uint8_t cn[AUTH_NONCE_BYTES],
	     const uint8_t sn[AUTH_NONCE_BYTES], uint8_t mac[AUTH_MAC_BYTES]);
/* Seals (or unseals: the same operation) len bytes of buf in place under
 * a session key: XOR with the keystream HMAC-SHA256(key, label "\0" be32
 * block). A secret sent to one authenticated peer (the data plane's key in
 * MountSegmentResponse) travels sealed, so a passive listener learns
 * nothing; each (session, label) pair seals one value. 0, or -1 when
 * libcrypto fails. */
int auth_seal(const uint8_t key[AUTH_MAC_BYTES], const char *label,
	      uint8_t *buf, size_t len);
/* Constant-time comparison of two MACs. */
bool auth_mac_equal(const uint8_t *a, const uint8_t *b);
/* Fills a nonce from the kernel's CSPRNG (OpenSSL RAND_bytes). 0 or -1. */
int auth_nonce(uint8_t nonce[AUTH_NONCE_BYTES]);

#endif
