/* SPDX-License-Identifier: MIT */
/* A protobuf-c message written gzipped, encoded and compressed in chunks. */
#ifndef DCPROF_EXPORT_GZIP_H
#define DCPROF_EXPORT_GZIP_H

#include <stdio.h>

#include <protobuf-c/protobuf-c.h>

/*
 * Pack m into out with a gzip header and trailer (zlib's default level,
 * no file name or time in the header): 0, else -errno of the first
 * failure (a write to out, or memory). The caller checks out for errors
 * when it flushes.
 */
int gzip_pack(const ProtobufCMessage *m, FILE *out);

/* The same into memory: *out (malloc'd, *len bytes), or -errno. */
int gzip_pack_mem(const ProtobufCMessage *m, char **out, size_t *len);

#endif
