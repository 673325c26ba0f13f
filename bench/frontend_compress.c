/* A small LZ77 compressor (hash-chained matches, byte-oriented output) for
 * the front end's guest-MIPS benchmark (bench/frontend_mips.sh): the same
 * source runs as an aarch64 guest and natively under cachegrind. Reads
 * stdin, writes the compressed size and a checksum. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIN (1 << 16)
#define HBITS 15
#define MINM 4
#define MAXM 255

int main(void)
{
	size_t cap = 1 << 20, n = 0;
	unsigned char *in = malloc(cap);
	size_t got;
	while (in && (got = fread(in + n, 1, cap - n, stdin)) > 0) {
		n += got;
		if (n == cap && !(in = realloc(in, cap *= 2)))
			return 1;
	}
	if (!in)
		return 1;
	int32_t *head = malloc(sizeof(int32_t) << HBITS), *prev = malloc(sizeof(int32_t) * WIN);
	unsigned char *out = malloc(n + n / 2 + 16);
	if (!head || !prev || !out)
		return 1;
	memset(head, 0xff, sizeof(int32_t) << HBITS);
	size_t o = 0, i = 0;
	while (i < n) {
		unsigned best = 0, dist = 0;
		if (i + MINM <= n) {
			uint32_t h = ((uint32_t)in[i] | in[i + 1] << 8 | in[i + 2] << 16 | (uint32_t)in[i + 3] << 24) *
				     2654435761u >> (32 - HBITS);
			int32_t c = head[h];
			for (int chain = 0; c >= 0 && i - (size_t)c < WIN && chain < 16; chain++) {
				unsigned l = 0;
				while (l < MAXM && i + l < n && in[c + l] == in[i + l])
					l++;
				if (l > best) {
					best = l;
					dist = (unsigned)(i - (size_t)c);
				}
				c = prev[c & (WIN - 1)];
			}
			prev[i & (WIN - 1)] = head[h];
			head[h] = (int32_t)i;
		}
		if (best >= MINM) {
			out[o++] = 0xff;
			out[o++] = (unsigned char)best;
			out[o++] = (unsigned char)dist;
			out[o++] = (unsigned char)(dist >> 8);
			i += best;
		} else {
			out[o++] = in[i] == 0xff ? 0xfe : in[i];
			i++;
		}
	}
	uint32_t sum = 0;
	for (size_t k = 0; k < o; k++)
		sum = sum * 31 + out[k];
	printf("%zu -> %zu bytes, checksum %08x\n", n, o, sum);
	return 0;
}
