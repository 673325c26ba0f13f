/* Helpers shared by the subcommands. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "commands.h"
#include "dynpmu/perf.h"

int dpmu_tool_open_model(const char *cmd, const char *profile, struct dpmu_profile **p,
			 struct dpmu_model **m)
{
	struct dpmu_err err;
	dpmu_err_clear(&err);
	*p = NULL;
	*m = NULL;
	if (dpmu_profile_load(profile ? profile : DPMU_PROFILE_DEFAULT, p, &err) != 0) {
		fprintf(stderr, "dynpmu %s: %s\n", cmd, dpmu_errmsg(&err));
		return DPMU_EXIT_USAGE;
	}
	if (dpmu_model_create(*p, m, &err) != 0) {
		fprintf(stderr, "dynpmu %s: %s\n", cmd, dpmu_errmsg(&err));
		dpmu_profile_free(*p);
		*p = NULL;
		return DPMU_EXIT_USAGE;
	}
	return 0;
}

void dpmu_tool_program_status(const char *cmd, int status)
{
	if (WIFEXITED(status) && WEXITSTATUS(status))
		fprintf(stderr, "dynpmu %s: the program exited with status %d\n", cmd,
			WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		fprintf(stderr, "dynpmu %s: the program was killed by signal %d\n", cmd,
			WTERMSIG(status));
}

void dpmu_tool_perf_hint(const char *cmd)
{
#if defined(__aarch64__) && defined(__linux__)
	if (dpmu_perf_available())
		fprintf(stderr, "dynpmu %s: note: this machine's Arm PMUs are reachable through Linux "
				"perf_event: --backend perf counts on them (docs/hardware.md)\n",
			cmd);
#else
	(void)cmd;
#endif
}
