/*
 * Shared by the qemu front end's files (qemu.c, qemu_elf.c), not part of
 * the API.
 */
#ifndef DPMU_BACKEND_QEMU_INTERNAL_H
#define DPMU_BACKEND_QEMU_INTERNAL_H

#include <stddef.h>

/* The first executable regular file called `name` in the directories of
 * PATH, as execvp(3) finds a program: an empty entry is the current
 * directory, an unset PATH is the system's default (confstr _CS_PATH), a
 * candidate longer than `cap` is skipped. Writes its path to out; returns 0,
 * or -1 when there is none. */
int dpmu_qemu_find_in_path(const char *name, char *out, size_t cap);

#endif
