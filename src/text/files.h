/* src/text/files.h: the file constants of program text, read inside a
 * sandbox. A `file "PATH"` constant names a regular file under the
 * assembler's base directory: PATH must be relative, must not contain a
 * ".." component, and may not leave the directory through a symbolic link
 * (openat2's RESOLVE_BENEATH where the kernel has it; elsewhere every
 * symbolic link is refused). Refusals that do not depend on the filesystem
 * (absolute paths, "..") happen before anything is opened, and causes name
 * only the path the text wrote, never the base directory: text from an
 * untrusted source learns nothing about files outside the sandbox. */
#ifndef ACCY_TEXT_FILES_H
#define ACCY_TEXT_FILES_H

#include "src/internal.h"

/* Opens |path| (|path_len| bytes, as written in the text on |line|) under
 * |base_dir| (NULL or "": the current directory). On success *out_fd is a
 * read-only descriptor of a regular file and *out_size its size. Fails
 * with INVALID_PROGRAM and a "line N: ..." cause. */
ACCY_NODISCARD accy_status accy__text_open_confined(const char *base_dir, const char *path,
                                                    size_t path_len, uint32_t line, int *out_fd,
                                                    uint64_t *out_size);

/* Reads |n| bytes at |offset| of |fd| into |dst|. false on a short read. */
bool accy__text_read_at(int fd, uint64_t offset, void *dst, uint64_t n);

#endif /* ACCY_TEXT_FILES_H */
