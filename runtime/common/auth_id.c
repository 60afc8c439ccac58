/* Client-id spaces of worker principals (see auth.h). */
#include <string.h>

#include <openssl/sha.h>

#include "auth.h"

#define ID_LABEL "mcrepl client id"

uint32_t auth_id_tag(const char *name)
{
	uint8_t msg[sizeof(ID_LABEL) + AUTH_NAME_MAX], md[SHA256_DIGEST_LENGTH];
	size_t n = strnlen(name, AUTH_NAME_MAX);

	memcpy(msg, ID_LABEL, sizeof(ID_LABEL)); /* with its NUL */
	memcpy(msg + sizeof(ID_LABEL), name, n);
	SHA256(msg, sizeof(ID_LABEL) + n, md);
	return ((uint32_t)md[0] << 24 | (uint32_t)md[1] << 16 |
		(uint32_t)md[2] << 8 | md[3]) >>
	       1;
}

uint64_t auth_client_id(const char *name, uint32_t n)
{
	return (uint64_t)auth_id_tag(name) << AUTH_ID_TAG_SHIFT | (n ? n : 1);
}

bool auth_id_owned(const struct auth_principal *p, uint64_t id)
{
	return (uint32_t)id != 0 && id >> AUTH_ID_TAG_SHIFT == p->id_tag;
}
