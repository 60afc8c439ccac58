/* CRC-32C: SSE4.2 instruction where the CPU has it, else slicing-by-8. */
#include <string.h>

#include "crc32c.h"

#define POLY 0x82F63B78u

/* Slicing-by-8 tables, computed at compile time would need 8 KiB of
 * literals; they are built on first use instead (idempotent: racing
 * builders write the same values). */
static uint32_t tab[8][256];
static volatile int tab_ready;

static void tab_build(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
		tab[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			tab[t][i] =
			    (tab[t - 1][i] >> 8) ^ tab[0][tab[t - 1][i] & 0xff];
	__atomic_store_n(&tab_ready, 1, __ATOMIC_RELEASE);
}

/* Four bytes at p as a little-endian word, on either byte order. */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
static uint32_t load_le32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return __builtin_bswap32(v);
}
#else
static uint32_t load_le32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}
#endif

static uint32_t sw_update(uint32_t c, const unsigned char *p, size_t n)
{
	if (!__atomic_load_n(&tab_ready, __ATOMIC_ACQUIRE))
		tab_build();
	for (; n >= 8; n -= 8, p += 8) {
		uint32_t lo = load_le32(p) ^ c, hi = load_le32(p + 4);

		c = tab[7][lo & 0xff] ^ tab[6][(lo >> 8) & 0xff] ^
		    tab[5][(lo >> 16) & 0xff] ^ tab[4][lo >> 24] ^
		    tab[3][hi & 0xff] ^ tab[2][(hi >> 8) & 0xff] ^
		    tab[1][(hi >> 16) & 0xff] ^ tab[0][hi >> 24];
	}
	while (n--)
		c = (c >> 8) ^ tab[0][(c ^ *p++) & 0xff];
	return c;
}

uint32_t mcu_crc32c_sw(uint32_t crc, const void *data, size_t n)
{
	return ~sw_update(~crc, data, n);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* Three interleaved streams (the crc32 instruction has a latency of three
 * cycles and a throughput of one), joined by shifting a stream's CRC over
 * the bytes of the next ones: the "append n zero bytes" operator is linear,
 * kept as four 256-entry tables per length (Mark Adler's construction for
 * crc32c, as in zlib's crc32_combine). */
#define LONG 8192u
#define SHORT 256u

static uint32_t zlong[4][256], zshort[4][256];
static volatile int zeros_ready;

static uint32_t gf2_times(const uint32_t *mat, uint32_t vec)
{
	uint32_t sum = 0;

	for (; vec; vec >>= 1, mat++)
		if (vec & 1)
			sum ^= *mat;
	return sum;
}

static void gf2_square(uint32_t *square, const uint32_t *mat)
{
	for (int n = 0; n < 32; n++)
		square[n] = gf2_times(mat, mat[n]);
}

/* The operator appending len (a power of two) zero bytes to a CRC. */
static void zeros_op(uint32_t *even, size_t len)
{
	uint32_t odd[32], row = 1;

	odd[0] = POLY;
	for (int n = 1; n < 32; n++, row <<= 1)
		odd[n] = row;
	gf2_square(even, odd); /* two zero bits */
	gf2_square(odd, even); /* four */
	for (;;) {
		gf2_square(even, odd); /* 1, 4, 16, ... zero bytes */
		len >>= 1;
		if (!len)
			return;
		gf2_square(odd, even); /* 2, 8, 32, ... */
		len >>= 1;
		if (!len)
			break;
	}
	memcpy(even, odd, sizeof(odd));
}

static void zeros_table(uint32_t zeros[4][256], size_t len)
{
	uint32_t op[32];

	zeros_op(op, len);
	for (uint32_t n = 0; n < 256; n++)
		for (int k = 0; k < 4; k++)
			zeros[k][n] = gf2_times(op, n << (8 * k));
}

static uint32_t shift(uint32_t zeros[4][256], uint32_t crc)
{
	return zeros[0][crc & 0xff] ^ zeros[1][(crc >> 8) & 0xff] ^
	       zeros[2][(crc >> 16) & 0xff] ^ zeros[3][crc >> 24];
}

static void zeros_build(void)
{
	zeros_table(zlong, LONG);
	zeros_table(zshort, SHORT);
	__atomic_store_n(&zeros_ready, 1, __ATOMIC_RELEASE);
}

static inline uint64_t rd64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* Three streams of `lane` bytes each from *p, joined into c. */
__attribute__((target("sse4.2"))) static uint64_t
hw_lanes(uint64_t c, const unsigned char **p, size_t lane,
	 uint32_t zeros[4][256])
{
	const unsigned char *q = *p, *end = q + lane;
	uint64_t c1 = 0, c2 = 0;

	for (; q < end; q += 8) {
		c = __builtin_ia32_crc32di(c, rd64(q));
		c1 = __builtin_ia32_crc32di(c1, rd64(q + lane));
		c2 = __builtin_ia32_crc32di(c2, rd64(q + 2 * lane));
	}
	c = shift(zeros, (uint32_t)c) ^ c1;
	c = shift(zeros, (uint32_t)c) ^ c2;
	*p += 3 * lane;
	return c;
}

__attribute__((target("sse4.2"))) static uint32_t
hw_update(uint32_t c, const unsigned char *p, size_t n)
{
	uint64_t c64 = c;

	if (!__atomic_load_n(&zeros_ready, __ATOMIC_ACQUIRE))
		zeros_build();
	for (; n && ((uintptr_t)p & 7); n--)
		c64 = __builtin_ia32_crc32qi((uint32_t)c64, *p++);
	for (; n >= 3 * LONG; n -= 3 * LONG)
		c64 = hw_lanes(c64, &p, LONG, zlong);
	for (; n >= 3 * SHORT; n -= 3 * SHORT)
		c64 = hw_lanes(c64, &p, SHORT, zshort);
	for (; n >= 8; n -= 8, p += 8)
		c64 = __builtin_ia32_crc32di(c64, rd64(p));
	for (; n; n--)
		c64 = __builtin_ia32_crc32qi((uint32_t)c64, *p++);
	return (uint32_t)c64;
}

uint32_t mcu_crc32c(uint32_t crc, const void *data, size_t n)
{
	if (__builtin_cpu_supports("sse4.2"))
		return ~hw_update(~crc, data, n);
	return mcu_crc32c_sw(crc, data, n);
}
#else
uint32_t mcu_crc32c(uint32_t crc, const void *data, size_t n)
{
	return mcu_crc32c_sw(crc, data, n);
}
#endif
