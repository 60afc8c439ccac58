/* Revocation of WRITE grants (store.h: store_revokes): a region held
 * because a WRITE grant on it still runs is released as soon as the
 * grant's worker has acknowledged its revocation, instead of at the
 * grant's expiry. */
#include "store_priv.h"

/* out[0..n) sorted by seq: q goes in if it is among the max lowest. */
static size_t keep_lowest(struct write_revoke *out, size_t n, size_t max,
			  const struct quarantine *q)
{
	size_t i;

	if (n == max && q->seq >= out[n - 1].seq)
		return n;
	if (n < max)
		n++;
	for (i = n - 1; i > 0 && out[i - 1].seq > q->seq; i--)
		out[i] = out[i - 1];
	out[i] = (struct write_revoke){.seq = q->seq,
				       .segment_id = q->segment_id,
				       .offset = q->offset,
				       .length = q->bytes,
				       .object_id = q->object_id,
				       .until_ms = q->grant_until_ms};
	return n;
}

size_t store_revokes(struct store *s, uint64_t client_id, uint64_t ack,
		     struct write_revoke *out, size_t max)
{
	size_t n = 0;

	if (!client_id)
		return 0;
	for (size_t i = s->n_quar; i-- > 0;) {
		const struct quarantine *q = &s->quar[i];

		if (!q->seq || q->client_id != client_id)
			continue;
		if (q->seq <= ack) {
			s->ctr.grants_revoked++;
			store__quarantine_free(s, i);
		} else if (max) {
			n = keep_lowest(out, n, max, q);
		}
	}
	return n;
}
