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

static uint32_t sw_update(uint32_t c, const unsigned char *p, size_t n)
{
	if (!__atomic_load_n(&tab_ready, __ATOMIC_ACQUIRE))
		tab_build();
	for (; n >= 8; n -= 8, p += 8) {
		uint32_t lo, hi;

		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		lo = __builtin_bswap32(lo);
		hi = __builtin_bswap32(hi);
#endif
		lo ^= c;
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
__attribute__((target("sse4.2"))) static uint32_t
hw_update(uint32_t c, const unsigned char *p, size_t n)
{
	uint64_t c64 = c;

	for (; n && ((uintptr_t)p & 7); n--)
		c64 = __builtin_ia32_crc32qi((uint32_t)c64, *p++);
	for (; n >= 8; n -= 8, p += 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		c64 = __builtin_ia32_crc32di(c64, v);
	}
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
