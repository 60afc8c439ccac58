/*
 * CRC-32C (Castagnoli, the iSCSI/ext4 polynomial 0x1EDC6F41, reflected
 * 0x82F63B78): a util shared by the daemons (util/). Not installed;
 * not part of libmcrepl's API.
 *
 * mcu_crc32c(0, p, n) is the standard CRC-32C of p[0..n) (initial value and
 * final xor 0xFFFFFFFF are applied inside); mcu_crc32c(c, q, m) continues a
 * CRC c over more bytes, so crc(a || b) == mcu_crc32c(mcu_crc32c(0, a),
 * b). Check value: mcu_crc32c(0, "123456789", 9) == 0xE3069283.
 * On x86-64 CPUs with SSE4.2 the crc32 instruction is used in three
 * interleaved streams (about 15 GB/s here; chosen per call from a cached
 * CPUID probe), else slicing-by-8 tables (about 2.6 GB/s). Reentrant.
 */
#ifndef MCU_CRC32C_H
#define MCU_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t mcu_crc32c(uint32_t crc, const void *data, size_t n);

/* The portable table path, whatever the CPU (for tests and benches). */
uint32_t mcu_crc32c_sw(uint32_t crc, const void *data, size_t n);

#endif
