/* loop N: run the known loop (loop.h, 2N+1 instructions) and exit 0.
 * The program the VM tests count whole, with dynpmu stat: two runs whose N
 * have the same number of digits differ by exactly 2 * (N2 - N1)
 * instructions (the same code runs around the loop, parsing the same
 * number of digits). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "loop.h"

int main(int argc, char **argv)
{
	char *end;
	unsigned long long n;

	if (argc != 2) {
		fprintf(stderr, "usage: loop N (N >= 1 iterations of a 2-instruction loop)\n");
		return 2;
	}
	errno = 0;
	n = strtoull(argv[1], &end, 10);
	if (errno || end == argv[1] || *end || n < 1 || argv[1][0] == '-') {
		fprintf(stderr, "loop: N must be a whole number >= 1, not '%s'\n", argv[1]);
		return 2;
	}
	dpmu_vm_loop(n);
	return 0;
}
